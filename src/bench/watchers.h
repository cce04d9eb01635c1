/* baton-bench --watchers: a load of watches on the contended workloads'
 * lock, spread over connections of their own, each read as fast as it
 * can be, to measure what watching costs the lock's handoffs. The watches
 * are read either with baton_watch_next() by a thread per connection, or
 * (--watch-callbacks) by their callbacks on each handle's own thread. */
#ifndef BENCH_WATCHERS_H
#define BENCH_WATCHERS_H

#include <stdbool.h>
#include <stdint.h>

struct watchers;

/* What the watchers saw once stopped. */
struct watchers_result {
        uint64_t events; /* delivered to all of them together */
        uint64_t ended;  /* watches that ended early (cut off, compacted) */
        uint64_t failed; /* watches that did not open */
};

/* Open `n` watches of `name` over `conns` handles to `endpoints` (each
 * handle one connection, drained by a thread of its own, or with
 * `callbacks` by the watches' callbacks). NULL when out of memory or a
 * thread cannot start; a watch that does not open is counted in `failed`.
 * Returns once every watch was opened or failed. */
struct watchers *watchers_start(const char *endpoints, const char *name, long n,
                                long conns, long ttl_ms, bool callbacks);

/* Stop them all, free them, and say what they saw. */
void watchers_stop(struct watchers *w, struct watchers_result *out);

#endif /* BENCH_WATCHERS_H */
