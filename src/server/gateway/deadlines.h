/* The leader's clocks: session lease deadlines and waiter wait deadlines. */
#ifndef SERVER_DEADLINES_H
#define SERVER_DEADLINES_H

#include <stdint.h>

#include <uv.h>

#include "../../lib/hmap.h"
#include "../../proto/command.h"
#include "leases.h"

/*
 * Only the serving leader keeps deadlines, on its monotonic loop clock
 * (uv_now). When one passes it calls `fire` once, to propose EXPIRE (seq 0:
 * a session's lease) or TIMEOUT (a waiter, by its ACQUIRE seq); the item
 * then re-arms `retry_ms` later in case that proposal is lost, until the
 * caller drops it on the END, GRANT or UNQUEUE event that settles it.
 */
struct deadline {
        struct hnode by_key;
        uint64_t session;
        uint64_t seq; /* 0: the session's lease */
        uint64_t at;  /* uv_now() milliseconds */
        uint32_t pos; /* index in the heap */
        uint8_t name_len;
        char name[]; /* a waiter's lock name; a lease has none */
};

typedef void (*deadlines_fire_cb)(void *data, const struct deadline *d);

struct deadlines {
        uv_loop_t *loop;
        uv_timer_t timer;
        /* Sessions' leases (seq 0), one per session: packed. */
        struct leases leases;
        /* Everything else (waiters, lock-delays): a record each. */
        struct hmap items;
        struct deadline **heap;
        uint32_t n;
        uint32_t cap;
        uint64_t retry_ms;
        deadlines_fire_cb fire;
        void *data;
#ifdef BATON_CHAOS_BUG_WALLCLOCK
        int64_t bug_wall_base; /* wall ms minus uv_now() at init */
#endif
};

int deadlines_init(struct deadlines *d, uv_loop_t *loop, uint64_t retry_ms,
                   deadlines_fire_cb fire, void *data);
/* Close the timer handle (the loop finishes it) and free every item. */
void deadlines_close(struct deadlines *d);

/* Set or move the deadline of (session, seq) to `at`. `name` is copied;
 * it is only needed for waiters. 0 or BATON_ENOMEM. */
int deadlines_set(struct deadlines *d, uint64_t session, uint64_t seq,
                  const char *name, size_t name_len, uint64_t at);
void deadlines_drop(struct deadlines *d, uint64_t session, uint64_t seq);
/* Drop everything (leadership lost). */
void deadlines_clear(struct deadlines *d);

#endif /* SERVER_DEADLINES_H */
