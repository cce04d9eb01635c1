/* batonctl ping: one linearizable round trip through the cluster's leader,
 * and which node served it. A leader counts once it serves: it has
 * committed an entry of its term and a majority confirms it, which is
 * what a holder query needs; a node that merely says "leader" (elected a
 * moment ago, or cut off from its majority) does not answer one. */
#include "ping.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "print.h"

#define EXIT_OK    0
#define EXIT_ERROR 3

/* The lock name the read asks about; nobody needs to hold it. */
#define PING_NAME "batonctl-ping"
/* Between two tries of --wait that failed at once (every endpoint
 * refused): nodes that are starting listen within moments. */
#define RETRY_MS 50

/* The leader that served one try. */
struct served {
        struct baton_status st;
        int64_t rtt_us;
};

static int64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void pause_ms(int64_t ms)
{
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

        nanosleep(&ts, NULL);
}

/* One try: the read through the leader, twice (the first connects and
 * finds the leader; the second's round trip is the one printed), then the
 * leader's status (the node the handle reached, or the leader it names).
 * 0, or the first error; BATON_EUNAVAILABLE when the node asked no longer
 * leads (leadership moved meanwhile). */
static int try_once(baton_client *c, struct served *s)
{
        struct baton_holder h;
        int64_t t0;
        int rv = baton_holder(c, PING_NAME, &h);

        if (rv != 0) {
                return rv;
        }
        t0 = now_us();
        rv = baton_holder(c, PING_NAME, &h);
        if (rv != 0) {
                return rv;
        }
        s->rtt_us = now_us() - t0;
        rv = baton_status(c, NULL, &s->st);
        if (rv != 0) {
                return rv;
        }
        return s->st.role == BATON_ROLE_LEADER ? 0 : BATON_EUNAVAILABLE;
}

static void print_served(const struct args *o, const struct served *s)
{
        if (!o->json) {
                printf("%s id=%" PRIu64 " term=%" PRIu64 " rtt_us=%" PRId64
                       "\n",
                       s->st.endpoint, s->st.id, s->st.term, s->rtt_us);
                return;
        }
        fputs("{\"endpoint\":", stdout);
        print_json_string(stdout, s->st.endpoint);
        printf(",\"id\":%" PRIu64 ",\"term\":%" PRIu64 ",\"rtt_us\":%" PRId64
               "}\n",
               s->st.id, s->st.term, s->rtt_us);
}

int cli_ping(baton_client *c, const struct args *o)
{
        /* No --wait (BATON_WAIT_FOREVER, as args_parse() leaves it): one
         * try. */
        int64_t wait_us = o->wait_ms < 0 ? 0 : o->wait_ms * 1000;
        int64_t deadline = now_us() + wait_us;
        struct served s;
        int rv;

        for (;;) {
                int64_t left;

                rv = try_once(c, &s);
                if (rv == 0) {
                        print_served(o, &s);
                        return EXIT_OK;
                }
                left = (deadline - now_us()) / 1000;
                if (left <= 0) {
                        break;
                }
                pause_ms(left < RETRY_MS ? left : RETRY_MS);
        }
        print_error(o->json, "ping", rv);
        return EXIT_ERROR;
}
