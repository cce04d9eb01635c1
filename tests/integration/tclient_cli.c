/* tclient-cli: STATUS, serving leader and PING of a Baton cluster, for
 * scripts/cluster until batonctl exists. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/baton.h"
#include "../lib/tclient.h"

static const char *role_name(unsigned role)
{
        static const char *const names[] = {"unavailable", "follower",
                                            "candidate", "leader"};

        return role < 4 ? names[role] : "unknown";
}

static void usage(FILE *out)
{
        fprintf(out,
                "usage: tclient-cli --endpoints A:P,B:Q,... [--timeout MS] "
                "[--wait MS] status|leader|ping\n\n"
                "  status  every endpoint's view: id, role, term, leader, "
                "indexes\n"
                "  leader  \"ID ENDPOINT\" of the serving leader (highest "
                "term wins;\n"
                "          it must answer a linearizable QUERY); --wait "
                "polls that long\n"
                "  ping    every endpoint's PING round trip\n");
}

static int cmd_status(const struct tclient *list, int timeout_ms)
{
        struct baton_status st;
        unsigned i;
        int bad = 0;

        for (i = 0; i < list->n_endpoints; i++) {
                const char *ep = list->endpoints[i];
                int rv = tclient_status_of(ep, timeout_ms, &st);
                if (rv != 0) {
                        printf("%s unreachable (%s)\n", ep, baton_strerror(rv));
                        bad = 1;
                        continue;
                }
                printf("%s id=%" PRIu64 " role=%s term=%" PRIu64
                       " leader=%" PRIu64 " commit=%" PRIu64 " applied=%" PRIu64
                       " last=%" PRIu64 " sessions=%" PRIu64 " locks=%" PRIu64
                       " waiters=%" PRIu64 "\n",
                       ep, st.id, role_name(st.role), st.term, st.leader_id,
                       st.commit_index, st.applied_index, st.last_index,
                       st.sessions, st.locks, st.waiters);
        }
        return bad;
}

/* The endpoint index of the serving leader, or -1. */
static int find_leader(const struct tclient *list, int timeout_ms, uint64_t *id)
{
        struct baton_status st;
        struct tclient c;
        struct tclient_result res;
        uint64_t best_term = 0;
        unsigned i;
        int best = -1, rv;

        for (i = 0; i < list->n_endpoints; i++) {
                if (tclient_status_of(list->endpoints[i], timeout_ms, &st) ==
                        0 &&
                    st.role == BATON_ROLE_LEADER && st.term > best_term) {
                        best = (int)i;
                        best_term = st.term;
                        *id = st.id;
                }
        }
        if (best < 0 || tclient_init(&c, list->endpoints[best]) != 0) {
                return -1;
        }
        /* Serving: a linearizable read goes through it, not elsewhere. */
        c.follow = false;
        c.try_ms = 0;
        rv = tclient_query(&c, "tclient-cli-probe", timeout_ms, &res);
        tclient_close(&c);
        return rv == 0 ? best : -1;
}

static int cmd_leader(const struct tclient *list, int timeout_ms, int wait_ms)
{
        int64_t deadline = tclient_now_ms() + wait_ms;
        uint64_t id = 0;
        int i;

        for (;;) {
                i = find_leader(list, timeout_ms, &id);
                if (i >= 0) {
                        printf("%" PRIu64 " %s\n", id, list->endpoints[i]);
                        return 0;
                }
                if (tclient_now_ms() >= deadline) {
                        fprintf(stderr, "tclient-cli: no serving leader\n");
                        return 1;
                }
                {
                        struct timespec ts = {0, 50 * 1000000};
                        nanosleep(&ts, NULL);
                }
        }
}

static int cmd_ping(const struct tclient *list, int timeout_ms)
{
        unsigned i;
        int bad = 0;

        for (i = 0; i < list->n_endpoints; i++) {
                struct tclient c;
                int64_t rtt = 0;
                int rv = tclient_init(&c, list->endpoints[i]);
                if (rv == 0) {
                        c.try_ms = 0;
                        rv = tclient_ping(&c, timeout_ms, &rtt);
                }
                tclient_close(&c);
                if (rv != 0) {
                        printf("%s unreachable (%s)\n", list->endpoints[i],
                               baton_strerror(rv));
                        bad = 1;
                } else {
                        printf("%s pong %" PRId64 " us\n", list->endpoints[i],
                               rtt);
                }
        }
        return bad;
}

int main(int argc, char **argv)
{
        const char *endpoints = getenv("BATON_ENDPOINTS");
        const char *what = NULL;
        struct tclient list;
        int timeout_ms = 1000, wait_ms = 0, rv, a;

        for (a = 1; a < argc; a++) {
                if (strcmp(argv[a], "--endpoints") == 0 && a + 1 < argc) {
                        endpoints = argv[++a];
                } else if (strcmp(argv[a], "--timeout") == 0 && a + 1 < argc) {
                        timeout_ms = atoi(argv[++a]);
                } else if (strcmp(argv[a], "--wait") == 0 && a + 1 < argc) {
                        wait_ms = atoi(argv[++a]);
                } else if (strcmp(argv[a], "--help") == 0 ||
                           strcmp(argv[a], "-h") == 0) {
                        usage(stdout);
                        return 0;
                } else if (argv[a][0] != '-' && what == NULL) {
                        what = argv[a];
                } else {
                        usage(stderr);
                        return 2;
                }
        }
        if (what == NULL || endpoints == NULL) {
                usage(stderr);
                return 2;
        }
        if (tclient_init(&list, endpoints) != 0) {
                fprintf(stderr, "tclient-cli: bad endpoint list: %s\n",
                        endpoints);
                return 2;
        }
        if (strcmp(what, "status") == 0) {
                rv = cmd_status(&list, timeout_ms);
        } else if (strcmp(what, "leader") == 0) {
                rv = cmd_leader(&list, timeout_ms, wait_ms);
        } else if (strcmp(what, "ping") == 0) {
                rv = cmd_ping(&list, timeout_ms);
        } else {
                usage(stderr);
                rv = 2;
        }
        tclient_close(&list);
        return rv;
}
