/* The integration test's failover measurement (--failover-rounds). */
#include "failover.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

/* The samples of `done` rounds in `ms`, sorted for min, median and max,
 * and how many rounds found their lock still held (`lost`). */
static void print_summary(unsigned n, const double *ms, unsigned done,
                          unsigned lost)
{
        double *sorted;
        unsigned i;

        if (done == 0) {
                return;
        }
        sorted = calloc(done, sizeof *sorted);
        if (sorted != NULL) {
                memcpy(sorted, ms, done * sizeof *sorted);
                qsort(sorted, done, sizeof *sorted, cmp_double);
                printf("failover, %u nodes, kill -9 of the leader to "
                       "the next granted ACQUIRE, %u samples: "
                       "min %.1f ms, median %.1f ms, max %.1f ms\n",
                       n, done, sorted[0],
                       done % 2 ? sorted[done / 2]
                                : (sorted[done / 2 - 1] + sorted[done / 2]) / 2,
                       sorted[done - 1]);
                if (lost > 0) {
                        printf("# %u rounds found the lock still "
                               "held: releases were lost\n",
                               lost);
                }
                printf("samples (ms):");
                for (i = 0; i < done; i++) {
                        printf(" %.1f", ms[i]);
                }
                printf("\n");
                free(sorted);
        }
}

int failover(struct run *r, unsigned n, unsigned rounds)
{
        struct harness h;
        struct tclient p;
        struct tclient_result res;
        struct command k;
        double *ms = calloc(rounds, sizeof *ms);
        char text[256];
        unsigned i, done = 0, lost = 0, leader, killed;
        int64_t killed_at;
        int rv, status = 1;

        if (ms == NULL) {
                return 1;
        }
        if (harness_start(&h, n, NULL, r->argv0, r->base_port) != 0) {
                printf("failover: cannot start the cluster: %s\n", h.errmsg);
                harness_close(&h);
                free(ms);
                return 1;
        }
        h.keep = r->keep;
        if (tclient_init(&p, h.endpoints) != 0 ||
            harness_wait_healthy(&h, 30000, &leader) != 0) {
                printf("failover: %s\n", h.errmsg);
                goto out;
        }
        /* Short tries across every endpoint, short pauses between them. */
        p.try_ms = 300;
        p.backoff_ms = 20;
        if (tclient_session_open(&p, TTL_MS, "failover", OP_MS, &res) != 0) {
                printf("failover: OPEN: %s\n", p.errmsg);
                goto out;
        }
        printf("# failover: %u nodes in %s, clients on %s, %u rounds\n", n,
               h.dir, h.endpoints, rounds);
        for (i = 0; i < rounds; i++) {
                if (harness_wait_healthy(&h, 30000, &leader) != 0 ||
                    tclient_keepalive(&p, OP_MS, NULL) != 0) {
                        printf("failover: round %u: %s %s\n", i + 1, h.errmsg,
                               p.errmsg);
                        goto out;
                }
                memset(&k, 0, sizeof k);
                k.type = COMMAND_ACQUIRE;
                k.owner = 1;
                k.wait_ms = COMMAND_WAIT_TRY;
                k.name = "failover";
                k.name_len = 8;
                if (harness_kill(&h, leader, &killed_at) != 0) {
                        printf("failover: %s\n", h.errmsg);
                        goto out;
                }
                killed = leader;
                /* One ACQUIRE, retried with its seq until it is granted;
                 * a session the new leader does not know is replaced. */
                rv = tclient_command(&p, &k, 30000, &res);
                while (rv == BATON_ENOSESSION || rv == BATON_EEXPIRED) {
                        printf("# round %u: the session is gone (%s): a "
                               "fresh one\n",
                               i + 1, baton_strerror(rv));
                        rv = tclient_session_open(&p, TTL_MS, "failover", 30000,
                                                  &res);
                        if (rv == 0) {
                                rv = tclient_command(&p, &k, 30000, &res);
                        }
                }
                if (rv != 0 || (res.kind != PROTO_KIND_GRANTED &&
                                res.kind != PROTO_KIND_REENTERED)) {
                        printf("failover: round %u: ACQUIRE %d %s (%s)\n",
                               i + 1, rv,
                               tclient_result_str(&res, text, sizeof text),
                               p.errmsg);
                        goto out;
                }
                ms[i] = (double)(tclient_now_ns() - killed_at) / 1e6;
                if (res.kind == PROTO_KIND_REENTERED) {
                        printf("# round %u: REENTERED (count %u): the "
                               "previous round's RELEASE was lost\n",
                               i + 1, res.count);
                        lost++;
                }
                done++;
                printf("sample %u: %.1f ms (killed leader %u, granted by "
                       "%s, token %" PRIu64 ")\n",
                       i + 1, ms[i], killed, p.peer, res.token);
                fflush(stdout);
                do {
                        rv = tclient_release(&p, "failover", 1, res.token,
                                             OP_MS, &res);
                } while (rv == 0 && res.count > 0);
                if (rv != 0) {
                        printf("failover: release: %d (%s)\n", rv, p.errmsg);
                        goto out;
                }
                if (harness_restart(&h, killed) != 0) {
                        printf("failover: restart: %s\n", h.errmsg);
                        goto out;
                }
        }
        status = lost > 0 ? 1 : 0;
out:
        print_summary(n, ms, done, lost);
        if (status != 0) {
                h.failed = true;
        }
        tclient_close(&p);
        harness_close(&h);
        free(ms);
        return status;
}
