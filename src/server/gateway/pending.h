/* A client request of the write path or of a read, from its arrival to its
 * answer: its record, where it waits, and how it is answered. */
#ifndef SERVER_PENDING_H
#define SERVER_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../lib/hmap.h"
#include "../../lib/queue.h"
#include "../../proto/command.h"
#include "core.h"
#include "gwaudit.h"
#include "reply.h"

/*
 * A request between its arrival and its answer. Client commands are keyed
 * by (session, seq), or (0, nonce) for OPEN, which is what the state
 * machine's events name, so whichever entry settles a request (its own, or
 * another client's RELEASE that hands it a lock) finds it. A record is
 * heap-allocated by pending_new() and freed by whichever call answers it
 * (pending_settle(), pending_settle_status(), pending_redirect()) or by
 * pending_free(); each of those takes it off every list it is on.
 */
struct pending {
        struct hnode by_key;
        struct queue link;  /* unsent, held, reads, or a proposal's members */
        struct reply_to to; /* to.conn NULL: the client left, or internal */
        struct gateway *g;
        uint64_t key_a;
        uint64_t key_b;
        uint64_t received;    /* now->ms at arrival */
        uint64_t received_ns; /* now->ns at arrival, for latency */
        uint64_t proposed_ns; /* proposed to raft; 0 never */
        uint64_t applied_ns;  /* its own entry applied; 0 not yet */
        uint64_t token;       /* CHECK */
        uint32_t limit;       /* LIST */
        uint16_t flags;       /* QUERY, LIST: the frame's PROTO_FLAG_NAMES */
        uint8_t frame_type;
        bool in_map;
        /* An administrator's command (REVOKE, REVOKE_LOCK): its answer
         * goes into the audit trail, naming `who` sent it (owned; NULL:
         * out of memory, no one). */
        bool audited;
        struct gwaudit_who *who;
#ifdef BATON_CHAOS_BUG_TWICE
        bool bug_answered; /* test_simhost_twice's: answered, kept */
#endif
        bool internal;      /* the leader's own EXPIRE, TIMEOUT or MEMBER */
        bool queued;        /* an ACQUIRE whose entry queued it */
        int status;         /* its answer's, for metrics: 0 or BATON_E* */
        struct command cmd; /* decoded; cmd.name points into buf */
        size_t len;
        size_t room; /* bytes of buf: a command's, or a read's name */
        uint8_t buf[];
};

/* A record for request `req_id` of type `type` from `c` (borrowed),
 * arrived at `now`, with `room` bytes of buf, on no list yet; NULL when
 * out of memory. */
struct pending *pending_new(struct gateway *g, const struct gateway_now *now,
                            struct gateway_conn *c, uint64_t req_id,
                            uint8_t type, size_t room);

/* Forget `p` without an answer, after recording how long an answered
 * client request took, up to `now`. */
void pending_free(struct pending *p, const struct gateway_now *now);

/* Count an answer `status` (0 or a BATON_E* code) to a request of frame
 * `frame_type` carrying a command of `cmd_type` (0: none), by kind and
 * result; requests of no kind (admin, watches) are not counted. */
void pending_count(struct gateway *g, uint8_t frame_type, int cmd_type,
                   int status);

/* Queue a command of the leader's own (EXPIRE, TIMEOUT, MEMBER) on
 * g->unsent for the next proposal; `c` is encoded (copied). Nothing is
 * queued when out of memory: the caller's retry (a deadline that fires
 * again) covers it. */
void pending_queue_own(struct gateway *g, const struct command *c);

/* Key a proposed client command by (key_a, key_b) in g->pending, where the
 * state machine's events find it. The map must have room (hmap_reserve()). */
void pending_track(struct pending *p);

/* The first tracked request keyed (a, b), or the next after `p` with p's
 * key; NULL when there is none. */
struct pending *pending_find(struct gateway *g, uint64_t a, uint64_t b);
struct pending *pending_find_next(const struct pending *p);

/* Answer `p` at `now` with the outcome of the entry at `index`, and
 * forget it. */
void pending_settle(struct pending *p, const struct gateway_now *now,
                    uint64_t index, const struct lockfsm_result *res);

/* Encode p->cmd, changed by the leader (who asked, a principal), into
 * p->buf again (it holds COMMAND_MAX_SIZE bytes) and decode it there, so
 * that p->cmd borrows from it as before: 0, or the status that answers
 * it. */
int pending_recode(struct pending *p);

/* Answer `p` at `now` refused with `status` and the RESULT's `count` and
 * `waiters` that say why (docs/protocol.md, "RESULT": BATON_ETTL's
 * range, BATON_EPERM's missing permission), and forget it. */
void pending_settle_rejected(struct pending *p, const struct gateway_now *now,
                             int status, uint32_t count, uint32_t waiters);

/* Answer `p` at `now` with a bare status (counted when BATON_EUNKNOWN),
 * and forget it. */
void pending_settle_status(struct pending *p, const struct gateway_now *now,
                           int status);

/* NOT_LEADER to request `id` of `c` (NULL: nobody to answer), naming the
 * leader this node knows of, counted in g's stats when written; a leader
 * that does not serve yet names none, so that its clients retry shortly
 * rather than come back to it. */
void pending_not_leader(struct gateway *g, struct gateway_conn *c, uint64_t id);

/* Send `p` elsewhere (NOT_LEADER) and forget it; it does not count as
 * served, so no time is taken. */
void pending_redirect(struct pending *p);

/* pending_redirect() every request on `list`: requests never proposed,
 * which the client may send anywhere, safely. */
void pending_redirect_all(struct queue *list);

/* Answer every tracked request BATON_EUNKNOWN at `now`: proposed, it may
 * still commit under the next leader. */
void pending_abandon_tracked(struct gateway *g, const struct gateway_now *now);

#endif /* SERVER_PENDING_H */
