/* An acquire call of libbaton (a lock, a read lock, a semaphore's permits,
 * a campaign, a multi-lock) as an operation stepped in the client core:
 * what goes out next and what the call answers, from the answers and the
 * time it is given, with the waits left to its host. */
#ifndef CLIENT_ACQOP_H
#define CLIENT_ACQOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/command.h"
#include "../proto/reply.h"
#include "request.h"

struct core;

/* What an ACQUIRE asks for: a mode, and a semaphore's permits of limit,
 * or an election candidate's value; or a MULTI's names (`list`, as
 * command.h has it; its first name is the one acqop_init() is given).
 * Every pointer is borrowed for the operation's life. */
struct acqop_ask {
        uint8_t mode;
        uint32_t permits;
        uint32_t limit;
        const uint8_t *list;
        uint16_t list_len;
        uint8_t n_names;
        const char *value;
        uint8_t value_len;
        uint32_t hold_ms; /* 0: none */
};

/*
 * Where the operation stands. An ACQUIRE that the cluster answers
 * BATON_ESEQ (it forgot the outcome while the wait was queued, and the
 * answer was lost with a connection) is recovered: CANCEL withdraws the
 * wait if it is still queued (then the call asks AGAIN for what is left of
 * its wait), else an exclusive lock's QUERY, or a TRY of the same for a
 * reader, a semaphore's holder or a multi-lock (whom QUERY may not name
 * among many), says whether it was granted; a try that re-entered a hold
 * the forgotten ACQUIRE already had gives its own hold back (GIVE_BACK).
 */
enum acqop_phase {
        ACQOP_ENSURE,    /* a live session (session_ensure_step()) */
        ACQOP_ASK,       /* the ACQUIRE: room in the window, then its answer */
        ACQOP_CANCEL,    /* BATON_ESEQ: withdraw the wait if still queued */
        ACQOP_QUERY,     /* not waiting, exclusive: who holds the lock? */
        ACQOP_TRY,       /* not waiting, anything else: try the same */
        ACQOP_GIVE_BACK, /* the try re-entered the forgotten grant */
        ACQOP_DONE,      /* the call has its answer */
};

/*
 * One call's operation, on its caller's stack. The host (acquire.c, or a
 * simulation) sets it up with acqop_init(), then steps it: acqop_step()
 * at any time; while it returns 1 the host asks acqop_verdict() whether
 * to give up now, waits for a change of the core (its `changed` flag) or
 * until acqop_deadline(), and at the deadline ends the call with
 * acqop_verdict(.., true, ..). Between the steps, the core's input may
 * come from any thread holding the host's lock.
 */
struct acqop {
        enum acqop_phase phase;
        /* The call. */
        const char *name; /* borrowed; `len` bytes, checked */
        uint8_t len;
        uint64_t owner;
        struct acqop_ask ask;
        int64_t wait_ms;  /* as asked: < 0 forever, 0 a try */
        int64_t start;    /* when the call began */
        int64_t deadline; /* of the call: the wait and a request timeout */
        int64_t opening;  /* of the wait for a session */
        /* Where it stands. */
        uint64_t seen;     /* the session's epoch when the call began */
        uint64_t mark;     /* the registry's pass when the wait began */
        bool first;        /* no ACQUIRE asked yet */
        uint32_t wait;     /* the wait of the ACQUIRE asked last */
        uint32_t before;   /* the owner's holds when it was asked */
        uint64_t seq;      /* its seq, once answered */
        uint64_t session;  /* the session it was asked in, once answered */
        struct command k;  /* the command of the phase, until submitted */
        struct request *r; /* the request of the phase, while in flight */
        struct proto_result ans; /* the phase's answer */
        struct proto_result res; /* the grant, once the call has it */
};

/* Set up `a` in `k` for a call at `now` that began then: `name` (`len` bytes)
 * for `owner` (the owner tag itself, never BATON_OWNER_THREAD) asking for
 * `ask`, waiting `wait_ms` (< 0: forever), each request of it given
 * `timeout_ms` to be answered. `name` and the pointers of `ask` are
 * borrowed for the operation's life. */
void acqop_init(const struct core *k, struct acqop *a, const char *name,
                uint8_t len, uint64_t owner, const struct acqop_ask *ask,
                int64_t wait_ms, int64_t timeout_ms, int64_t now);

/*
 * Step `a` at `now` as far as it goes without waiting: 0 when the call is
 * granted (a->res.token the grant), 1 while it waits for an answer, a
 * session or room in the window (the host waits, then steps again), or
 * the call's negative BATON_E* code (BATON_ENOSESSION as the cluster says
 * it). `why` (`size` bytes) holds the detail of a refused session, and is
 * empty for a code without detail.
 */
int acqop_step(struct core *k, struct acqop *a, int64_t now, char *why,
               size_t size);

/*
 * Whether the call waiting in `a` gives up at `now`: 0 (wait on), or the
 * code it ends with (core_verdict() for what it waits on: no node reached
 * for a request never sent, or, once `expired`, no answer by the
 * deadline; an ACQUIRE's own wait that ran out is BATON_ETIMEDOUT), with
 * the detail in `why` (`size` bytes). Ending, it leaves the request in
 * flight to the core (registry_abandon(): a wait sent is withdrawn, a
 * grant that comes late given back).
 */
int acqop_verdict(struct core *k, struct acqop *a, bool expired, int64_t now,
                  char *why, size_t size);

/* Until when the host waits between steps of `a`. */
int64_t acqop_deadline(const struct acqop *a);

#endif /* CLIENT_ACQOP_H */
