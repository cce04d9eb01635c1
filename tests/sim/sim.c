/* What the parts of a simulated run share: its log and failure messages,
 * the leader a NOT_LEADER names and the search of a node's events. */
#include "sim.h"

#include <stdlib.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "../../src/proto/reply.h"

void say(struct sim *s, const char *fmt, ...)
{
        va_list ap;

        if (!s->verbose) {
                return;
        }
        printf("# t=%" PRIu64 " ", (uint64_t)simcluster_now(&s->c));
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
}

int fail(char *reason, size_t cap, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, cap, fmt, ap);
        va_end(ap);
        return -1;
}

bool sim_leader_named(const uint8_t *body, size_t len, unsigned n,
                      unsigned *node)
{
        uint64_t leader = 0;
        struct proto_string address;

        if (proto_read_not_leader(body, len, &leader, &address) != 0 ||
            leader < 1 || leader > n) {
                return false;
        }
        *node = (unsigned)leader - 1;
        return true;
}

size_t sim_first_event(const struct simnode *n, uint64_t index)
{
        size_t lo = 0;
        size_t hi = n->n_events;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (n->events[mid].index < index) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo;
}

bool sim_grow(void **p, size_t *cap, size_t n, size_t size)
{
        size_t next = *cap != 0 ? *cap : 16;
        void *q;

        if (n <= *cap) {
                return true;
        }
        while (next < n) {
                next *= 2;
        }
        q = realloc(*p, next * size);
        if (q == NULL) {
                return false;
        }
        *p = q;
        *cap = next;
        return true;
}
