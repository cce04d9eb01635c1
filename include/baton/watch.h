/*
 * Watches through a libbaton handle: every grant, release and proclaim of
 * a lock name, or of every name with a prefix, in the cluster's log order.
 */
#ifndef BATON_WATCH_H
#define BATON_WATCH_H

#include <stdint.h>

#include "api.h"
#include "client.h"
#include "elections.h"
#include "locks.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A watch: every change of a lock name, or of every name with a prefix,
 * in the order of the cluster's log (baton_watch_open()). */
typedef struct baton_watch baton_watch;

/* baton_watch_open() flags. */
#define BATON_WATCH_PREFIX 1 /* `name` is a prefix: every name it begins */

/* What happened, in struct baton_event. */
enum baton_event_kind {
        BATON_EVENT_GRANTED = 1,  /* a grant (or an election's leadership) */
        BATON_EVENT_RELEASED = 2, /* a grant ended; `cause` says how */
        BATON_EVENT_PROCLAIMED =
            3, /* a grant's new value (set_value, proclaim) */
};

/* What caused an event: the kind of log entry (a client's or the
 * leader's command) that made the change. */
enum baton_cause {
        BATON_CAUSE_CLOSE = 2,        /* the holder's session closed */
        BATON_CAUSE_EXPIRE = 3,       /* its session expired */
        BATON_CAUSE_ACQUIRE = 4,      /* granted at once */
        BATON_CAUSE_RELEASE = 5,      /* released (or handed on by one) */
        BATON_CAUSE_CANCEL = 6,       /* handed on as a waiter left */
        BATON_CAUSE_TIMEOUT = 7,      /* the same, by a wait running out */
        BATON_CAUSE_ENTRY = 11,       /* handed on at an entry's start */
        BATON_CAUSE_REVOKE = 12,      /* an administrator ended the session */
        BATON_CAUSE_UNBLOCK = 13,     /* a lock-delay ended */
        BATON_CAUSE_MULTI = 14,       /* a multi-lock granted at once */
        BATON_CAUSE_REVOKE_LOCK = 15, /* an administrator took the grant */
        BATON_CAUSE_PROCLAIM = 17,    /* an election's leader proclaimed */
        BATON_CAUSE_SET_VALUE = 20,   /* the holder changed its value */
        BATON_CAUSE_EXPIRE_HOLD = 22, /* the grant's hold time ran out */
};

/** One change, as a watch reports it. */
struct baton_event {
        int kind;  /* enum baton_event_kind */
        int cause; /* enum baton_cause */
        /* Where it is in the log: the Raft index of the entry that made
         * it, and its order among that entry's events (from 1). Events
         * come in (index, ord) order; pass the last one seen to
         * baton_watch_open() to go on from there. */
        uint64_t index;
        uint32_t ord;
        uint64_t session; /* the grant's session */
        uint64_t owner;   /* its owner tag */
        uint64_t token;   /* its fencing token */
        int mode;         /* enum baton_mode */
        uint32_t permits; /* a semaphore grant's */
        char name[256];   /* the lock name, NUL-terminated */
        /* GRANTED and PROCLAIMED: the grant's value ("": none). */
        char value[BATON_VALUE_MAX + 1];
};

/**
 * Watch `name` (with BATON_WATCH_PREFIX in `flags`, every name that
 * begins with it; "" with it: every name) from the log position after
 * (`from_index`, `from_ord`), or from now when `from_index` is 0. Every
 * grant, release and proclaim comes in log order with no gap: when the
 * connection drops or the leader changes, the library resumes the watch
 * on the next node from the last event delivered. A node keeps a bounded
 * history of events (its watch-history key); a watch that must resume
 * from before it ends with BATON_ECOMPACTED: read the state again
 * (baton_holders(), baton_leader()) and open a new watch from now.
 * Needs no session. 0 with `*w` set (the server has started the watch),
 * or BATON_ENAME, BATON_EINVAL, BATON_ECOMPACTED, BATON_ETOOMANYWATCHES,
 * BATON_EPERM, BATON_ENOMEM, BATON_ENOANSWER. Thread-safe; one thread at
 * a time calls baton_watch_next() on a watch.
 */
BATON_API int baton_watch_open(baton_client *c, const char *name, int flags,
                               uint64_t from_index, uint32_t from_ord,
                               baton_watch **w);

/**
 * The next event of `w`, waiting up to `wait_ms` (BATON_WAIT_FOREVER:
 * until one comes): 0 with `*ev` filled, BATON_ETIMEDOUT when none came,
 * or why the watch ended (after every event before it was delivered):
 * BATON_ECOMPACTED, BATON_ESLOW (the server, or this library, which
 * keeps at most 65,536 undelivered events, cut off a watcher that fell
 * behind: resume from the last event), BATON_ETOOMANYWATCHES, BATON_ENOMEM,
 * or another status a server ended it with; BATON_EINVAL for a NULL
 * argument or a `wait_ms` below BATON_WAIT_FOREVER.
 */
BATON_API int baton_watch_next(baton_watch *w, struct baton_event *ev,
                               int64_t wait_ms);

/**
 * Events of a watch opened with baton_watch_open_cb(): `ev` (borrowed for
 * the call) with `status` 0 for each event, in order; then, once, `ev`
 * NULL and why the watch ended (as baton_watch_next() says it). It runs on
 * the handle's background thread, like on_lock_lost, with no lock of the
 * library held; as the other callbacks, it must not call back into the
 * handle (that thread brings the handle's answers), except
 * baton_watch_close() of its own watch. The handle's other callbacks and
 * its connection's traffic wait while it runs: keep it short.
 */
typedef void (*baton_watch_cb)(void *data, const struct baton_event *ev,
                               int status);

/**
 * baton_watch_open() with the events delivered to `cb` (with `data`)
 * rather than read with baton_watch_next(); the cheaper form for many
 * watches: the watches of one handle keep one copy of each event between
 * them, which a callback is lent where baton_watch_next() copies it out,
 * and no thread of the caller's has to visit each watch.
 * baton_watch_next() then answers BATON_EINVAL. BATON_EINVAL for a NULL
 * `cb`; else as baton_watch_open().
 */
BATON_API int baton_watch_open_cb(baton_client *c, const char *name, int flags,
                                  uint64_t from_index, uint32_t from_ord,
                                  baton_watch_cb cb, void *data,
                                  baton_watch **w);

/** Stop the watch and free it (accepts NULL). Close every watch before
 * destroying its handle. Once it returns, a callback watch's callback
 * runs no more: called from another thread while the callback runs, it
 * waits for it; called from inside the callback, the watch is freed when
 * the callback returns. */
BATON_API void baton_watch_close(baton_watch *w);

#ifdef __cplusplus
}
#endif

#endif /* BATON_WATCH_H */
