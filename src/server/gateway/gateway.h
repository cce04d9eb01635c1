/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <stdint.h>

#include "../../fsm/lockfsm.h"
#include "../../proto/backup.h"
#include "../base/log.h"
#include "../net/conn.h"
#include "../raft/node.h"
#include "core.h"

/*
 * Its inputs come from its host (src/server/host/corehost.h), which
 * registers itself with the node and the connections and calls these.
 *
 * Time is an argument: the host reads its clocks once for each input that
 * needs the time and hands them in as `now` (struct gateway_now, core.h):
 * now->ms on the clock every deadline counts in (batond: uv_now(), one
 * value per loop turn, never the wall clock), now->ns for the latency
 * histograms only; neither goes back. Nothing in the core reads a clock,
 * and its one timer is the host's (gateway_host.timer).
 */

/* No timer (gateway_host.timer). */
#define GATEWAY_NEVER UINT64_MAX

/*
 * A request of the core's to the raft node (a batch entry, a read
 * barrier) whose answer comes back through the host with the time: the
 * core hands `node` to node_apply() or node_barrier() with the host's
 * `done` op as its callback (node.data is this struct), and the host
 * calls gateway_on_done(), which runs `cb`. Inside the core's record,
 * which `data` finds again.
 */
struct gateway_req {
        struct node_request node;
        struct gateway *g;
        void (*cb)(struct gateway_req *req, const struct gateway_now *now,
                   int status);
        void *data;
};

/*
 * What the core asks of its host, which does it (batond: corehost.c).
 * Caller-allocated; the core borrows it for its life. No op calls an
 * input of the core before it returns.
 */
struct gateway_host {
        void *data; /* the host's */
        /* The SHA-256 of an ATTACH secret (ATTACH_SECRET_SIZE bytes, borrowed
         * for the call) into `hash` (ATTACH_HASH_SIZE bytes): 0, or
         * BATON_ENOMEM. */
        int (*hash_secret)(struct gateway_host *h, const uint8_t *secret,
                           uint8_t *hash);
        /*
         * Backups: the host pins the state and streams it; the core has
         * admitted the request (an admin's; a first one only on the
         * serving leader) and answers what the op returns when it is not
         * 0, for the op has then written nothing. `c` and `req` are borrowed
         * for the call; the host lets go of c's pins when c goes
         * (gateway_on_gone()). backup_start: request `id`, a first BACKUP
         * (backup 0, offset 0), whose read barrier has applied: pin the state,
         * which then holds everything acknowledged before it arrived, and
         * answer with its first chunk. backup_chunk: request `id` asks for the
         * chunk of pin req->backup (not 0) at req->offset.
         * 0 when answered (or c is closing), else a BATON_E* status.
         */
        int (*backup_start)(struct gateway_host *h, struct conn *c,
                            uint64_t id);
        int (*backup_chunk)(struct gateway_host *h, struct conn *c, uint64_t id,
                            const struct proto_backup *req);
        /* One line of the core's log at `level`, which is the level
         * given to gateway_init() or more severe, about `f` (NULL:
         * nothing in particular): `message`, formatted. Both borrowed
         * for the call. */
        void (*log)(struct gateway_host *h, enum log_level level,
                    const struct log_fields *f, const char *message);
        /* The core's one timer, for its deadlines: gateway_on_timer() at
         * `at_ms` (on now->ms's clock) or later; each call replaces the
         * one before, and GATEWAY_NEVER stops it. */
        void (*timer)(struct gateway_host *h, uint64_t at_ms);
        /* The node's callback for every gateway_req: the answer, with the
         * time, into gateway_on_done(). */
        node_request_cb done;
};

/* Set up on a started node (`host`, `node` and `cfg` borrowed for the
 * gateway's life), logging lines at `level` and more severe ones. 0 or
 * BATON_ENOMEM; on failure nothing is left to clean up. Arms no timer. */
int gateway_init(struct gateway *g, struct gateway_host *host,
                 struct node *node, const struct config *cfg,
                 enum log_level level);
/* Answer everything pending (NOT_LEADER, or outcome unknown for what was
 * proposed) and stop the timer (GATEWAY_NEVER). Requests still with the
 * node end later through gateway_on_done(). */
void gateway_close(struct gateway *g, const struct gateway_now *now);

/* A frame from `c`: answer or queue the request. */
void gateway_on_frame(struct gateway *g, const struct gateway_now *now,
                      struct conn *c, const struct proto_header *h,
                      const uint8_t *body);
/* `c` is going away: requests of `c` already proposed still run; only
 * their answers are dropped. */
void gateway_on_gone(struct gateway *g, struct conn *c);

/* Leadership (node_callbacks). ready: restart the leader's clocks and
 * queue what was held for proposal or a barrier. lost: drop the clocks
 * and answer what this node holds, as gateway_close() does. */
void gateway_on_ready(struct gateway *g, const struct gateway_now *now);
void gateway_on_lost(struct gateway *g, const struct gateway_now *now);
/* The node installed a leader's snapshot; every watch that had not seen
 * everything up to it ends (watches_reset()) now, not at the next event
 * the node applies, which may be long in coming. */
void gateway_on_restored(struct gateway *g);

/* A state machine event, from inside the apply of its entry, on every
 * node, in log order (fanout.h); `ev` is borrowed for the call. */
void gateway_on_event(struct gateway *g, const struct gateway_now *now,
                      const struct lockfsm_event *ev);
/* An ACL entry at `index` was applied with `status`, after its events
 * (access_on_applied()); `c` is borrowed for the call. */
void gateway_on_acl(struct gateway *g, uint64_t index, const struct command *c,
                    int status);

/* The timer the core armed is due (a call before it is harmless): propose
 * EXPIRE, TIMEOUT or UNBLOCK for every deadline passed, and arm again. */
void gateway_on_timer(struct gateway *g, const struct gateway_now *now);

/* The node answered `req` with `status` (gateway_host.done). */
void gateway_on_done(struct gateway *g, const struct gateway_now *now,
                     struct gateway_req *req, int status);

/* End of a loop iteration: propose what arrived, start the read barrier.
 * `wall_ms`: the wall clock (ms since the Unix epoch), which the leader
 * puts in the log as a CLOCK command at most once a second. */
void gateway_flush(struct gateway *g, const struct gateway_now *now,
                   uint64_t wall_ms);

#endif /* SERVER_GATEWAY_H */
