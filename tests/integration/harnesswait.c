/* Waiting for a harness's cluster to elect a leader that serves, and for
 * every node to follow it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../lib/tclient.h"
#include "harness.h"

#define STATUS_MS 300 /* one STATUS poll of one node */
#define POLL_MS   20  /* between polls of the cluster's state */

static void poll_pause(void)
{
        struct timespec ts = {0, POLL_MS * 1000000};

        nanosleep(&ts, NULL);
}

/* The running node that claims leadership in the highest term, or 0. */
static unsigned claimed_leader(struct harness *h, struct baton_status *out)
{
        struct baton_status st;
        unsigned i, best = 0;
        uint64_t best_term = 0;

        for (i = 1; i <= h->n; i++) {
                if (!harness_running(h, i) ||
                    tclient_status_of(harness_client_address(h, i), STATUS_MS,
                                      &st) != 0) {
                        continue;
                }
                if (st.role == BATON_ROLE_LEADER && st.term > best_term) {
                        best = i;
                        best_term = st.term;
                        if (out != NULL) {
                                *out = st;
                        }
                }
        }
        return best;
}

/* Whether `id` answers a linearizable QUERY itself: it serves. */
static bool serves(struct harness *h, unsigned id, int timeout_ms)
{
        struct tclient c;
        struct tclient_result res;
        int rv;

        if (tclient_init(&c, harness_client_address(h, id)) != 0) {
                return false;
        }
        c.follow = false;
        c.try_ms = 0;
        rv = tclient_query(&c, "harness-probe", timeout_ms, &res);
        tclient_close(&c);
        return rv == 0;
}

int harness_wait_leader(struct harness *h, int timeout_ms, unsigned *leader)
{
        int64_t deadline = tclient_now_ms() + timeout_ms;

        for (;;) {
                unsigned id;
                int64_t left;
                harness_reap(h);
                id = claimed_leader(h, NULL);
                left = deadline - tclient_now_ms();
                if (id != 0 && left > 0 &&
                    serves(h, id, left < 1000 ? (int)left : 1000)) {
                        if (leader != NULL) {
                                *leader = id;
                        }
                        return 0;
                }
                if (tclient_now_ms() >= deadline) {
                        harness_set_err(h, "no serving leader within %d ms",
                                        timeout_ms);
                        return -1;
                }
                poll_pause();
        }
}

int harness_wait_healthy(struct harness *h, int timeout_ms, unsigned *leader)
{
        int64_t deadline = tclient_now_ms() + timeout_ms;
        unsigned id = 0;
        char why[256] = "";

        /* The serving check is a QUERY, whose barrier is a new entry: done
         * once per leader, or the followers would chase it forever. */
        for (;;) {
                struct baton_status ls, st;
                unsigned i;
                bool ok = true;
                int64_t left = deadline - tclient_now_ms();

                if (left <= 0 ||
                    (id == 0 && harness_wait_leader(h, (int)left, &id) != 0)) {
                        harness_set_err(h,
                                        "cluster not healthy within %d ms%s%s",
                                        timeout_ms, why[0] ? ": " : "", why);
                        return -1;
                }
                if (!harness_running(h, id) ||
                    tclient_status_of(harness_client_address(h, id), STATUS_MS,
                                      &ls) != 0 ||
                    ls.role != BATON_ROLE_LEADER) {
                        snprintf(why, sizeof why, "leader %u went away", id);
                        id = 0;
                        continue;
                }
                for (i = 1; i <= h->n && ok; i++) {
                        if (!harness_running(h, i) || i == id) {
                                continue;
                        }
                        if (tclient_status_of(harness_client_address(h, i),
                                              STATUS_MS, &st) != 0) {
                                snprintf(why, sizeof why,
                                         "node %u does not answer STATUS", i);
                                ok = false;
                        } else if (st.term != ls.term || st.leader_id != id ||
                                   st.applied_index < ls.commit_index) {
                                snprintf(why, sizeof why,
                                         "node %u: term %" PRIu64
                                         " leader %" PRIu64 " applied %" PRIu64
                                         "; leader %u: term %" PRIu64
                                         " commit %" PRIu64,
                                         i, st.term, st.leader_id,
                                         st.applied_index, id, ls.term,
                                         ls.commit_index);
                                ok = false;
                        }
                }
                if (ok) {
                        if (leader != NULL) {
                                *leader = id;
                        }
                        return 0;
                }
                harness_reap(h);
                poll_pause();
        }
}
