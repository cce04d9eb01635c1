/* A recorder behind a simulated client network (tests/lib/simnet.h), for
 * its unit tests: every callback in one log, every stream per connection,
 * and the checks that hold whatever the test does. */
#ifndef TESTS_UNIT_SIMNETFIX_H
#define TESTS_UNIT_SIMNETFIX_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/rng.h"
#include "../lib/simnet.h"

/* A growable byte string. */
struct simnetfix_bytes {
        uint8_t *p;
        size_t n, cap;
};

/* What one side of a connection was told and sent. */
struct simnetfix_side {
        int established; /* times told */
        int closed;      /* times told */
        enum simnet_why why;
        uint64_t closed_at;
        int closed_self; /* the test closed its end */
        int gone;        /* its node was killed: must hear nothing */
        struct simnetfix_bytes sent, got;
        uint64_t first_got_seq; /* log position of its first bytes, or 0 */
        uint64_t last_got_seq;
};

struct simnetfix_conn {
        unsigned node; /* as the test opened it, if it says */
        int failed;
        enum simnet_why fail_why;
        uint64_t failed_at;
        struct simnetfix_side side[2];
};

/*
 * Each callback checks that it comes no earlier than the one before, at
 * `ok_at` unless that is SIMNET_NEVER, and that nothing reaches a side
 * after it was told closed, closed its end, or died with its node;
 * `hook`, if set, then runs inside the bytes callback.
 */
struct simnetfix {
        struct simnet *net;
        struct simnetfix_conn **blocks; /* by connection id */
        size_t n_blocks;
        struct simnetfix_bytes log; /* a line per callback */
        uint64_t seq;               /* callbacks so far */
        uint64_t last_now;          /* the last callback's time */
        uint64_t n_bytes_cb;
        uint64_t ok_at;
        void (*hook)(struct simnetfix *f, uint64_t conn, enum simnet_side to,
                     const uint8_t *p, size_t n, uint64_t now);
        void *data; /* the hook's */
};

/* A network on `cfg` with the recorder behind it; fails the test if it
 * cannot be made. */
struct simnetfix *simnetfix_new(const struct simnet_config *cfg);
void simnetfix_free(struct simnetfix *f);

/* The record of connection `conn`, zeroed until something happens to
 * it; it stays where it is for the fixture's life. */
struct simnetfix_conn *simnetfix_conn(struct simnetfix *f, uint64_t conn);

/* Send from `side`, which must succeed, and remember what was sent. */
void simnetfix_send(struct simnetfix *f, uint64_t conn, enum simnet_side side,
                    const void *p, size_t n, uint64_t now);

/* What `to` got is a prefix of what its peer sent (all of it when
 * `whole`). */
void simnetfix_check(struct simnetfix *f, uint64_t conn, enum simnet_side to,
                     int whole);

/* Run the network to `until` as an event loop would, by next-due times,
 * checking each: nothing before it, something at it, all of it at it. */
void simnetfix_drain(struct simnetfix *f, uint64_t until);

/* Connect `client` to `node` at *now and run a second: the client side
 * must be established by then. *now moves on by that second. */
uint64_t simnetfix_open(struct simnetfix *f, uint64_t client, unsigned node,
                        uint64_t *now);

void simnetfix_fill(struct rng *g, uint8_t *p, size_t n);

/* Connections established on the node side that a side may still hear
 * from. */
uint64_t simnetfix_still_open(struct simnetfix *f);

#endif /* TESTS_UNIT_SIMNETFIX_H */
