/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <stdbool.h>
#include <stdint.h>

#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../proto/backup.h"
#include "../../proto/status.h"
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
 *
 * Leadership is an input too: the core serves (answers leader-only
 * requests, proposes, keeps the leader's clocks) from gateway_on_ready()
 * to gateway_on_lost(), and asks nothing about it. What else it needs to
 * know of the raft node and its state machine it asks through the
 * host's queries (struct gateway_host), which have no effect on the node
 * (but see lockfsm there); raft's requests (proposals, barriers,
 * membership changes) still go to the node itself.
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
 * input of the core before it returns, except lockfsm() (below).
 */
struct gateway_host {
        void *data; /* the host's */
        /*
         * What the node knows. Queries: they change nothing the core can
         * see, except that lockfsm() may take a restore and
         * digest_to_propose() takes the digest it returns. Whatever they
         * return or point to is borrowed until the input that asked
         * returns (a state machine: or until a later lockfsm() takes a
         * restore).
         *
         * lockfsm: the lock state machine, for lookups only (raft alone
         * applies entries to it). A snapshot still being decoded on the
         * worker is waited for and taken first, and the entries queued
         * behind it are applied, which delivers their gateway_on_event()s
         * inside this call: the one op that calls an input (batond:
         * raftfsm_lockfsm()). That happens only on a node whose restore is
         * pending, whose events it makes current; inside an event's own
         * lookup the entries are being applied already, and it takes
         * nothing. It is an op rather than a pointer the core keeps, for
         * two reasons: a restore replaces the state machine, and may do
         * so inside the lookup that waits for it, so a kept pointer would
         * outlive its state; and of the events, which are the busiest
         * path, only an OPEN's two lookups need the state machine, so a
         * call there costs the grants and results nothing, where handing
         * the state in with every event would cost each of them a read.
         * lockfsm_nowait: the same without waiting for a restore (the
         * state before it, meanwhile), for counts only (STATUS).
         */
        const struct lockfsm *(*lockfsm)(struct gateway_host *h);
        const struct lockfsm *(*lockfsm_nowait)(struct gateway_host *h);
        /* The leader this node knows of: its id and client address (0
         * and "" when it knows none). It may name this node when it
         * leads without serving yet, or no longer. */
        void (*leader)(struct gateway_host *h, uint64_t *id,
                       const char **client_address);
        /* The index of the last entry applied to the state machine (a
         * barrier counts), and of the last entry in raft's log. */
        uint64_t (*last_applied)(struct gateway_host *h);
        uint64_t (*last_index)(struct gateway_host *h);
        /* Raft's view of the node for a STATUS reply (node_status(): the
         * core adds its id and the lock counts), and with `v` (NULL: not
         * asked) what this node runs and writes: its release, and the
         * command, snapshot and container versions. */
        void (*status)(struct gateway_host *h, struct proto_status *st,
                       struct proto_versions *v);
        /* Snapshots installed from the leader: how many restores have
         * started on the worker so far, and whether one (or the entries
         * queued behind it) is still pending. */
        void (*restores)(struct gateway_host *h, uint64_t *started,
                         bool *pending);
        /* The replicated access list and its epoch, which moves with every
         * change of it (an ACL entry, a restore); the member directory. */
        const struct acl *(*acl)(struct gateway_host *h);
        uint64_t (*acl_epoch)(struct gateway_host *h);
        const struct directory *(*directory)(struct gateway_host *h);
        /* Whether raft's configuration has member `id`. */
        bool (*has_member)(struct gateway_host *h, uint64_t id);
        /* The newest digest of the state this node made and has not
         * proposed yet: true once per digest, with its entry index and
         * value, for the serving leader to propose. */
        bool (*digest_to_propose)(struct gateway_host *h, uint64_t *index,
                                  uint64_t *digest);
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
        /* What is wrong with this node, for a STATUS that asks
         * (PROTO_FLAG_ALARMS): the alarms GET /ready would give as its
         * reason and that last until a restart, into `*out` (zeroed by
         * the core). */
        void (*alarms)(struct gateway_host *h, struct proto_alarms *out);
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
 * gateway's life; `node` only for the requests it makes of raft),
 * logging lines at `level` and more severe ones. It asks the host's
 * queries what the node applied and restored, and starts not serving
 * (gateway_on_ready()). 0 or BATON_ENOMEM; on failure nothing is left to
 * clean up. Arms no timer. */
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

/*
 * Leadership. The core starts not serving, and serves from ready to lost:
 * only then does it answer leader-only requests itself, propose, start
 * read barriers and keep the leader's clocks; otherwise it sends clients
 * on (NOT_LEADER), or holds their requests while the leader op names this
 * node, until ready or lost. The two alternate, starting with ready.
 *
 * ready: the node serves as leader in `term`: it leads in `term` and a
 * barrier it proposed in `term` has been applied, so its state machine
 * holds every entry an earlier leader committed, their events delivered
 * while the core did not serve; or will, once a restore still pending is
 * taken, which the core's first lookup does (gateway_host.lockfsm, in
 * ready itself), delivering the events of the entries queued behind it.
 * batond calls it from the node's barrier callback, in the loop's poll
 * phase, at the very moment node_serving() becomes true (node.c: nothing
 * reaches the core in between), with the node's current term, which is
 * the barrier's. The core restarts the leader's clocks from the state
 * machine, stamps `term` on every batch it proposes until lost (raft
 * refuses a proposal once it no longer leads in `term`), and queues what
 * it held for the next gateway_flush().
 *
 * lost: the node no longer serves: raft stepped down or its term moved.
 * batond calls it from the node's monitor (uv_prepare, before the poll
 * phase's inputs of the same turn) at the moment node_serving() becomes
 * false. raft may have stepped down earlier, in an earlier poll phase:
 * until lost the core still serves, and raft refuses what it proposes
 * then (NOT_LEADER to their clients, as for any refusal); events applied
 * in that window still start the leader's clocks, which lost drops. The
 * core drops the clocks and answers what it holds, as gateway_close() does.
 *
 * restored: the node installed a leader's snapshot, and applied what was
 * queued behind it (the monitor, once the restore is taken): every watch
 * that had not seen everything up to it ends (watches_reset()) now, not at
 * the next event the node applies, which may be long in coming.
 */
void gateway_on_ready(struct gateway *g, const struct gateway_now *now,
                      uint64_t term);
void gateway_on_lost(struct gateway *g, const struct gateway_now *now);
void gateway_on_restored(struct gateway *g);

/* A state machine event, from inside the apply of its entry, on every
 * node, in log order (fanout.h); `term` is the one the entry's leader
 * wrote in it (raftfsm_entry_term(): 0 for an entry that is not a batch);
 * `ev` is borrowed for the call. */
void gateway_on_event(struct gateway *g, const struct gateway_now *now,
                      uint64_t term, const struct lockfsm_event *ev);
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
