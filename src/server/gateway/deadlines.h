/* The leader's clocks: session lease deadlines and waiter wait deadlines. */
#ifndef SERVER_DEADLINES_H
#define SERVER_DEADLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/hmap.h"
#include "../../proto/command.h"
#include "leases.h"

/*
 * Only the serving leader keeps deadlines, in milliseconds of the clock
 * its host gives the core (batond: the loop's monotonic uv_now()). Nothing
 * here reads a clock: the owner asks, through `arm`, to be called back
 * with deadlines_run() once the earliest deadline is due, and
 * deadlines_run() takes the time. When one passes it calls `fire` once, to
 * propose EXPIRE (seq 0: a session's lease) or TIMEOUT (a waiter, by its
 * ACQUIRE seq); the item then re-arms `retry_ms` later in case that
 * proposal is lost, until the caller drops it on the END, GRANT or UNQUEUE
 * event that settles it.
 */
struct deadline {
        struct hnode by_key;
        uint64_t session;
        uint64_t seq; /* 0: the session's lease */
        uint64_t at;  /* milliseconds of the core's clock */
        uint32_t pos; /* index in the heap */
        uint8_t name_len;
        char name[]; /* a waiter's lock name; a lease has none */
};

/* No deadline left to wait for (deadlines_arm_cb). */
#define DEADLINES_NEVER UINT64_MAX

typedef void (*deadlines_fire_cb)(void *data, const struct deadline *d);
/* Call deadlines_run() at `at` or after (DEADLINES_NEVER: not at all);
 * each call replaces the one before. */
typedef void (*deadlines_arm_cb)(void *data, uint64_t at);

struct deadlines {
        /* Sessions' leases (seq 0), one per session: packed. */
        struct leases leases;
        /* Everything else (waiters, lock-delays): a record each. */
        struct hmap items;
        struct deadline **heap;
        uint32_t n;
        uint32_t cap;
        uint64_t retry_ms;
        bool held; /* leases are due that deadlines_run() left unfired */
        uint64_t held_until; /* then: retry_ms after that run */
        deadlines_fire_cb fire;
        deadlines_arm_cb arm;
        void *data; /* given to fire and arm */
};

/* Empty; `fire` and `arm` run with `data` (borrowed for d's life). Arms
 * nothing yet. */
void deadlines_init(struct deadlines *d, uint64_t retry_ms,
                    deadlines_fire_cb fire, deadlines_arm_cb arm, void *data);
/* Free every item; arms DEADLINES_NEVER. */
void deadlines_close(struct deadlines *d);

/* Set or move the deadline of (session, seq) to `at`, and arm for the
 * earliest. `name` is copied; it is only needed for waiters. 0 or
 * BATON_ENOMEM. deadlines_drop() and deadlines_clear() arm likewise. */
int deadlines_set(struct deadlines *d, uint64_t session, uint64_t seq,
                  const char *name, size_t name_len, uint64_t at);
void deadlines_drop(struct deadlines *d, uint64_t session, uint64_t seq);
/* Drop everything (leadership lost). */
void deadlines_clear(struct deadlines *d);

/* The earliest deadline, or DEADLINES_NEVER when there is none; while
 * leases are held (deadlines_run()), the earliest that is not a lease, or
 * retry_ms after the run that held them if that is earlier. */
uint64_t deadlines_next(const struct deadlines *d);

/* The time is `now` (the armed time or later; earlier is harmless): every
 * deadline at or before it fires, earliest first, each moved to
 * now + retry_ms before it fires (the callback may drop it), but at most
 * `max_leases` leases: once that many fired, the leases still due are
 * held, unmoved, and arm only for a run retry_ms later (when the owner
 * may have room again even if no kick came), until deadlines_kick(). Then
 * arm for the earliest left. So the owner bounds how many expiries it has out
 * at once: a hundred thousand leases running out together would otherwise be a
 * hundred thousand EXPIRE proposals in one turn of the loop, each fired
 * again every retry_ms until it applies. */
void deadlines_run(struct deadlines *d, uint64_t now, uint32_t max_leases);

/* Leases held by deadlines_run() may fire again: arm for the earliest
 * deadline, held leases included (at once when one is due). Nothing when
 * none is held. */
void deadlines_kick(struct deadlines *d);

#endif /* SERVER_DEADLINES_H */
