/* batond's request core: client frames, raft's events and answers,
 * leadership and the time go in, and proposals, barriers, replies, one
 * timer and connection closes go out through its host, with no I/O. */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../proto/backup.h"
#include "../../proto/status.h"
#include "../base/audit.h"
#include "../base/log.h"
#include "core.h"
#include "gwconn.h"

/*
 * The contract between the core and its host: who calls each input and
 * when (1), the time (2), which ops each input may call (3), what the
 * core guarantees of its proposals (4), of its answers (5) and of its
 * deadlines and timer (6), and its close (7). The comments at each input
 * and op below give the details. batond's host is
 * src/server/host/corehost.h; tests/unit/test_gateway.c checks this on a
 * fake host that records every op the core calls (tests/unit/corefix.h),
 * and test_conngone.c what a connection gone gets.
 *
 * 1. Inputs. The host calls every input from one thread (batond: the
 * loop's), one at a time. A turn of the host is any number of
 * gateway_on_frame(), gateway_conn_gone(), gateway_on_event(),
 * gateway_on_acl(), gateway_on_done(), gateway_on_timer(),
 * gateway_on_ready(), gateway_on_lost() and gateway_on_restored(), in the
 * order they happen, then gateway_flush() once; what the core committed
 * to a connection goes out after that (batond: the flush is a uv_check
 * handle, after the poll phase of each loop iteration, and
 * conn_flush_all() follows it). Only gateway_flush() proposes batch
 * entries and starts read barriers, so what arrives in one turn goes to
 * raft together. The core holds no raft node and no socket: what it needs
 * to know of the node it asks through the host's queries; what it asks
 * raft to do are the host's request ops (struct gateway_req), answered by
 * gateway_on_done(); of each client connection it keeps a struct
 * gateway_conn (gwconn.h) the host embeds in its own record, and writes
 * to it through the connection ops.
 *
 * 2. Time is an argument: the host reads its clocks once for each input
 * that needs the time and hands them in as `now` (struct gateway_now,
 * core.h): now->ms on the clock every deadline counts in (batond:
 * uv_now(), one value per loop turn, never the wall clock), now->ns for
 * the latency histograms only; neither goes back. gateway_flush() also
 * takes the wall clock, for the CLOCK command alone. Nothing in the core
 * reads a clock.
 *
 * 3. Re-entrancy. No op calls an input of the core before it returns,
 * except lockfsm() (struct gateway_host): on a node whose restore is
 * still pending it applies the entries queued behind it, delivering their
 * gateway_on_event()s inside the call, inside whichever input asked. So
 * every op call happens inside an input, and each input calls only these
 * ("queries": lockfsm() to digest_to_propose(), status(), alarms();
 * "connection ops": reserve(), commit(), fail(), backlog(); log() and
 * audit() may come from any input but gateway_conn_gone(), and fail()
 * from any that writes a reply, for a reply that does not encode):
 *   - gateway_init(): queries. No reply, no request, no timer.
 *   - gateway_on_frame(): the connection ops on the frame's connection
 *     (on others' only for a WATCH that finds a restore the watches have
 *     not seen: theirs end, BATON_ECOMPACTED); queries; hash_secret() (an
 *     ATTACH on the serving leader); backup_chunk() (a BACKUP after the
 *     first); and, as the request arrives, the request ops of an ACL
 *     change (entry_alloc(), propose()) or an admin request (change(),
 *     probe(), transfer()). Never barrier(), never timer().
 *   - gateway_on_event(): the connection ops (answers; watch events,
 *     with commit(later) and backlog()); restores() for every event,
 *     lockfsm() for an OPEN; timer() while serving, and for an END on any
 *     node. No request op.
 *   - gateway_on_acl(): acl().
 *   - gateway_on_done(): what the request's record does next: answers
 *     (connection ops), queries, timer() (a keepalive's lease),
 *     backup_start() (a first BACKUP's barrier applied), and an admin
 *     request's next step (entry_alloc() and propose() of its MEMBER
 *     entry, change()). Never barrier(). After gateway_close(): no op.
 *   - gateway_on_timer(): timer(). The deadlines it fires are only
 *     queued (section 6): no request op, no reply.
 *   - gateway_on_ready(): queries, timer(), and hash_secret() and the
 *     connection ops for the held requests it admits (an ATTACH is
 *     answered then; a request in a session its connection is not
 *     attached to is refused then). No request op.
 *   - gateway_on_lost(): the connection ops (section 5), leader(),
 *     timer(GATEWAY_NEVER). No request op.
 *   - gateway_on_restored(): restores(), last_applied(), the connection
 *     ops of the watches it ends.
 *   - gateway_conn_gone(): no op.
 *   - gateway_flush(): queries, entry_alloc(), entry_free(), propose(),
 *     barrier(); the connection ops only to send on (NOT_LEADER) the
 *     clients of an entry or barrier raft refused. Never timer().
 *   - gateway_close(): the connection ops (section 7), leader(),
 *     timer(GATEWAY_NEVER).
 * A connection that goes while the core is inside an input (fail() found
 * it closing, say, or could not queue the ERROR frame, and so dropped it)
 * is reported with gateway_conn_gone() only after the outermost input
 * returned: the host defers it, and the core may call the connection ops
 * on it until then (reserve() answers NULL for it, so nothing more is
 * written). The core can thus walk its lists of answers and watches while
 * it writes to them without one of them being freed under it. batond's
 * host keeps its connection record until the loop's close phase, after
 * every input of the turn (corehost.h).
 *
 * 4. Proposals. Only the serving leader flushes (gateway_on_ready() to
 * gateway_on_lost()). Each gateway_flush() proposes what is queued, in
 * the order it was queued: the commands of frames and the leader's own
 * (at ready: a new cluster's MEMBER entries, before the requests it held;
 * at the timer: EXPIRE, TIMEOUT, UNBLOCK; a removed member's MEMBER
 * entry), then an ACL seed that is due and the digest the host has to
 * propose. A MEMBER, ACL or DIGEST command is an entry of its own (one
 * command, no batch); each run of other commands between them goes in
 * batch entries of at most ENTRY_MAX_COMMANDS (256) stamped with the term
 * given at ready: n commands, ceil(n/256) entries. Each batch starts with
 * a CLOCK of the flush's wall clock when the last CLOCK the core put at
 * the head of a batch is 1000 ms or more older (the CLOCK counts in the
 * 256): at most one a second, never in an entry of its own, never
 * without a batch. When an applied entry left a lock between holders
 * (lockfsm_deferred()) and no entry of the flush's is out, the flush
 * proposes a batch even with nothing queued (the nudge: empty, or just
 * the CLOCK), for the next entry hands the lock on. Before each entry the flush
 * checks last_index() - last_applied() < max-inflight-entries and stops when
 * not: what is left stays queued, in order, for a later flush. So it does when
 * memory runs out or raft refuses an entry (whose clients are sent on,
 * NOT_LEADER, as if it was never proposed). Last, one barrier() for every read
 * queued since the last flush (QUERY, CHECK, LIST, KEEPALIVE, a first BACKUP),
 * whatever the bound, unless a read barrier is still out: the reads then
 * wait for the first flush after it completes (reads.h). ACL changes and
 * an admin request's MEMBER entry are not queued: each is proposed alone as its
 * request (ACL, on the serving leader) or the probe before it (MEMBER, even if
 * leadership was lost meanwhile: raft then refuses it) completes, outside the
 * bound.
 */

/* No timer (gateway_host.timer). */
#define GATEWAY_NEVER UINT64_MAX

/* Room for the host's own record of a request behind a gateway_req:
 * batond keeps a node_request there (corereq.c checks that it fits). */
#define GATEWAY_REQ_HOST_WORDS 24

struct gateway_req;

/* The core's: what gateway_on_done() runs. */
typedef void (*gateway_req_cb)(struct gateway_req *req,
                               const struct gateway_now *now, int status);

/*
 * One asynchronous request of the core's to raft (a proposal, a barrier,
 * a membership change, a probe, a leadership transfer), inside the
 * core's record of it, which `data` finds again. The core fills the
 * fields above `errmsg` (gwreq.h) and hands it to one of the host's
 * request ops (struct gateway_host). Following libuv: an op that returns
 * an error never completes the request; one that returns 0 completes it
 * exactly once, with gateway_on_done(), never inside the op itself, and
 * also after gateway_close() (batond closes raft after the core), when
 * the core only frees its record. The request must not move or be
 * handed to another op until then.
 */
struct gateway_req {
        void *data;        /* the core's record */
        struct gateway *g; /* the core's */
        gateway_req_cb cb; /* the core's: runs at gateway_on_done() */
        /* The core's, at gateway_close(): answer the clients the record
         * still answers for (NULL: none); the record stays for `cb`. */
        void (*abandon)(struct gateway_req *req, const struct gateway_now *now);
        struct queue link;   /* the core's: its requests out (gwreq.h) */
        struct hnode by_ptr; /* the core's: the same, by address */
        bool out;            /* the core's: with the host, not done yet */
        /* The host's: why the request failed (static text, or NULL), set
         * before an op returns an error or the request completes. */
        const char *errmsg;
        /* The host's, propose only, valid in `cb` when it succeeded: what
         * the state machine made of the entry (a MEMBER entry's outcome).
         * Later entries may have been applied over it since. */
        const struct lockfsm_result *result;
        uint64_t host[GATEWAY_REQ_HOST_WORDS]; /* the host's */
};

/* A membership change (gateway_host.change). */
enum gateway_change { GATEWAY_ADD, GATEWAY_PROMOTE, GATEWAY_REMOVE };

/*
 * What the core asks of its host, which does it (batond: corehost.c).
 * Caller-allocated; the core borrows it for its life. No op calls an
 * input of the core before it returns, except lockfsm() (below).
 */
struct gateway_host {
        void *data; /* the host's */
        /*
         * Client connections (gwconn.h): `c` is one the host gave the core
         * (a frame's) and has not reported gone yet, or one it found
         * closing inside the current input (see above).
         *
         * reserve: room for `n` bytes of frame at the end of c's output,
         * written in place and valid until commit() or the next reserve()
         * on `c`; NULL when `c` is closing or out of memory (then nothing
         * is written: the client sees the connection end).
         * commit: `n` bytes of the room reserve() gave are a whole frame,
         * to go out at the end of the host's turn; with `later`, they may
         * wait up to watch-batch-ms for company (watch events).
         * fail: an ERROR frame for request `id` (0: none) with `status`
         * and `message` (borrowed for the call), then close `c` once it is
         * written (a protocol error); `c` reads no more frames.
         * backlog: the bytes of output queued on `c` and not yet written,
         * which a watcher's cut-off (BATON_ESLOW) is measured by (0 will
         * do for one the host found closed inside the input: the report
         * that it went ends its watches anyway).
         */
        uint8_t *(*reserve)(struct gateway_host *h, struct gateway_conn *c,
                            size_t n);
        void (*commit)(struct gateway_host *h, struct gateway_conn *c, size_t n,
                       bool later);
        void (*fail)(struct gateway_host *h, struct gateway_conn *c,
                     uint64_t id, int status, const char *message);
        size_t (*backlog)(struct gateway_host *h, const struct gateway_conn *c);
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
         * (gateway_conn_gone()). backup_start: request `id`, a first BACKUP
         * (backup 0, offset 0), whose read barrier has applied: pin the state,
         * which then holds everything acknowledged before it arrived, and
         * answer with its first chunk. backup_chunk: request `id` asks for the
         * chunk of pin req->backup (not 0) at req->offset.
         * 0 when answered (or c is closing), else a BATON_E* status.
         */
        int (*backup_start)(struct gateway_host *h, struct gateway_conn *c,
                            uint64_t id);
        int (*backup_chunk)(struct gateway_host *h, struct gateway_conn *c,
                            uint64_t id, const struct proto_backup *req);
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
        /* One line of the audit trail (base/audit.h): an administrator's
         * request answered, or a request refused for want of permission
         * (gwaudit.h); `e` borrowed for the call. batond writes it to
         * audit-log, when set. */
        void (*audit)(struct gateway_host *h, const struct audit_event *e);
        /* The core's one timer, for its deadlines: gateway_on_timer() at
         * `at_ms` (on now->ms's clock) or later; each call replaces the
         * one before, and GATEWAY_NEVER stops it. Called after every
         * change of the deadlines, often with the time already asked for
         * (section 6 above). */
        void (*timer)(struct gateway_host *h, uint64_t at_ms);
        /*
         * Raft's requests. Each op below is called only from an input of
         * the core, mostly while it serves; `req` is the core's (struct
         * gateway_req) and completes as gateway_req says, with
         * gateway_on_done(): status 0, or the BATON_E* code nearest to
         * raft's error, with req->errmsg. An op that refuses returns that
         * code at once (req->errmsg set), and the request never
         * completes. Every request still out when raft closes completes
         * then (batond: a proposal, barrier or change with
         * BATON_EUNKNOWN, a probe with BATON_ESHUTDOWN, a transfer with
         * 0).
         *
         * entry_alloc: a buffer for one log entry of `size` bytes, from
         * the heap raft frees entries with (NULL when out of memory);
         * entry_free: give back one that was not proposed (NULL is fine).
         * propose: append one entry of `len` bytes of `buf` (from
         * entry_alloc()) and apply it once committed; on 0 `buf` is the
         * host's, on error still the core's. It completes after the
         * state machine applied the entry (req->result; its events were
         * delivered before) with 0, or BATON_EUNKNOWN when leadership
         * was lost first (the entry may still commit under another
         * leader). Refusals: BATON_ENOTLEADER, BATON_ENOMEM,
         * BATON_EINVAL.
         * barrier: append a barrier; it completes once applied, which
         * proves this node led after the call and applied every entry
         * before it. Refusals as propose().
         * change: add member `id` at `raft_address` (borrowed for the
         * call; GATEWAY_ADD only) as a spare, promote it to a voter, or
         * remove it: one at a time; it completes once the new
         * configuration is committed (BATON_EUNAVAILABLE: a promoted
         * member stopped answering while it caught up). Refusals:
         * BATON_ENOTLEADER, BATON_ECANTCHANGE, BATON_ENOMEM,
         * BATON_EINVAL.
         * probe: whether a node answers at raft address `address`
         * (borrowed for the call) as member `id`, trying for up to
         * `timeout_ms`: it completes with 0, or BATON_EUNREACHABLE.
         * Refusals: BATON_ENOMEM, BATON_EUNREACHABLE.
         * transfer: hand leadership to voter `to` (0: any other voter);
         * it completes, always with 0, once the transfer ended, at most
         * three election timeouts later: leader() then names where
         * leadership went, this node when it failed, or no one when
         * time ran out first. Refusals: BATON_ENOTLEADER (not leading, or
         * transferring already), BATON_EINVAL (`to` is no other voter).
         */
        void *(*entry_alloc)(struct gateway_host *h, size_t size);
        void (*entry_free)(struct gateway_host *h, void *buf);
        int (*propose)(struct gateway_host *h, struct gateway_req *req,
                       void *buf, size_t len);
        int (*barrier)(struct gateway_host *h, struct gateway_req *req);
        int (*change)(struct gateway_host *h, struct gateway_req *req,
                      enum gateway_change kind, uint64_t id,
                      const char *raft_address);
        int (*probe)(struct gateway_host *h, struct gateway_req *req,
                     uint64_t id, const char *address, unsigned timeout_ms);
        int (*transfer)(struct gateway_host *h, struct gateway_req *req,
                        uint64_t to);
};

/* Set up on a started node (`host` and `cfg` borrowed for the gateway's
 * life), logging lines at `level` and more severe ones. It asks the host's
 * queries what the node applied and restored, and starts not serving
 * (gateway_on_ready()). 0 or BATON_ENOMEM; on failure nothing is left to
 * clean up. Arms no timer. */
int gateway_init(struct gateway *g, struct gateway_host *host,
                 const struct config *cfg, enum log_level level);
/* Answer everything pending (NOT_LEADER, or outcome unknown for what was
 * proposed, including what waits on a request still out) and stop the
 * timer (GATEWAY_NEVER). Requests still out complete later through
 * gateway_on_done(), which then only frees their records: nothing is
 * answered twice, and nothing is proposed any more. After it, the only
 * inputs are gateway_on_done() and gateway_conn_gone() (section 7 above).
 * `g` must stay until the last request has completed
 * (gateway_requests_out()). */
void gateway_close(struct gateway *g, const struct gateway_now *now);
/* How many of the core's requests are with its host, not completed yet:
 * 0 once raft has closed (batond's main.c checks it). */
unsigned gateway_requests_out(const struct gateway *g);

/* A frame from `c` (gateway_conn_init()ed, not reported gone): answer or
 * queue the request. `h` and `body` are borrowed for the call; the frame
 * is whole and within max-frame (proto/reader.h checked it). */
void gateway_on_frame(struct gateway *g, const struct gateway_now *now,
                      struct gateway_conn *c, const struct proto_header *h,
                      const uint8_t *body);
/* `c` is going away: requests of `c` already proposed still run, only
 * their answers are dropped; its watches end. The core holds no pointer
 * to `c` once this returns, and calls no op on it again. Never from
 * inside another input or an op (see above); also after gateway_close(). */
void gateway_conn_gone(struct gateway *g, struct gateway_conn *c);

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
 * core drops the clocks and answers what it holds (section 5 above):
 * BATON_EUNKNOWN to proposed commands, NOT_LEADER to the rest, except
 * reads whose barrier is out, ACL changes and admin requests, which their
 * requests' completions answer.
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

/* The timer the core armed is due (a call before it is harmless): queue
 * EXPIRE, TIMEOUT or UNBLOCK for every deadline passed, for the next
 * gateway_flush() to propose, and ask for the timer again (section 6). */
void gateway_on_timer(struct gateway *g, const struct gateway_now *now);

/* Raft answered `req`, a request the core handed to one of the host's
 * request ops that returned 0, with `status` (gateway_host says which):
 * exactly once per request, before or after gateway_close(). */
void gateway_on_done(struct gateway *g, const struct gateway_now *now,
                     struct gateway_req *req, int status);

/* End of the host's turn: on the serving leader, propose what was queued
 * and start one barrier for the reads (section 4 above); elsewhere,
 * nothing. `wall_ms`: the wall clock (ms since the Unix epoch), which the
 * leader puts in the log as a CLOCK command at most once a second. */
void gateway_flush(struct gateway *g, const struct gateway_now *now,
                   uint64_t wall_ms);

#endif /* SERVER_GATEWAY_H */
