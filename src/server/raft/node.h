/* One batond Raft node, and batond's only way into libraft: raft_uv on a data
 * dir, bootstrap, leadership, proposals, barriers and membership changes. */
#ifndef SERVER_NODE_H
#define SERVER_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../lib/queue.h"
#include "../../proto/proto.h"
#include "../../proto/status.h"
#include "../config/config.h"

struct node;

/* libraft's instance, its I/O and transport, and the state machine glue
 * (raftfsm.h): node.c's alone, so that nothing else includes <raft.h>. */
struct node_core;

/*
 * Leadership as the rest of batond sees it. A node *serves* once it is
 * leader and a barrier of its own term has been applied: only then is its
 * state machine known to hold every entry an earlier leader committed (the
 * no-op a new leader appends is not visible through raft's public calls;
 * docs/raft.md). `ready` and `lost` alternate, starting with `ready`.
 * `restored` runs once for each snapshot installed from the leader, once
 * the node has adopted it and applied what was queued meanwhile (may be
 * NULL).
 */
struct node_callbacks {
        void (*ready)(void *data);
        void (*lost)(void *data);
        void (*restored)(void *data);
        void *data;
};

struct node_request;

/*
 * How a request ends: `status` is 0, or the BATON_E* code nearest to
 * libraft's error (with libraft's own description in req->errmsg).
 * Callers may start another request on `req` from inside the callback.
 */
typedef void (*node_request_cb)(struct node_request *req, int status);

/* Room for the libraft request behind a node_request; node.c checks at
 * compile time that every kind it uses fits. */
#define NODE_REQUEST_WORDS 16

/*
 * One asynchronous request to raft: node_apply(), node_barrier(),
 * node_add(), node_promote() or node_remove(). Caller-allocated, usually
 * inside the caller's own record (`data` finds that record again), so that
 * a request costs no allocation of its own. It must not move or be reused
 * from a successful call until its callback has run; the fields below
 * `data` are the node's. Following libuv: when the call returns an error the
 * callback never runs; when it returns 0 the callback runs exactly once,
 * including when the node closes (libraft 0.22.1 then fails what is pending
 * as leadership lost: BATON_EUNKNOWN).
 */
struct node_request {
        void *data; /* the caller's */
        /* Why the call or the request failed: libraft's description of its
         * error (static text), set before an error is returned or passed
         * to the callback. */
        const char *errmsg;
        /* node_apply() only, valid during a successful callback: what the
         * state machine made of the entry. libraft 0.22.1 runs callbacks on
         * a later loop phase, so later entries may have been applied over
         * it since (raftfsm.h); outcomes of lock commands are read from the
         * state machine's events instead. */
        const struct lockfsm_result *result;
        node_request_cb cb;                /* private */
        uint64_t priv[NODE_REQUEST_WORDS]; /* private: libraft's request */
};

/* One node, caller-allocated and not to move once started. Every field is
 * private except `loop` and `errmsg`. Used only from the loop's thread. */
/* Something that must end before raft closes its transport (a probe
 * dialling through it, say): node_close() calls `end`, which answers
 * whoever waits on it and stops its timers; it may take itself off the
 * list then or later. Lets node.c end what nodereq.c started without
 * calling into it. */
struct node_closer {
        struct queue link; /* node->closers */
        void (*end)(struct node_closer *c);
};

struct node {
        uv_loop_t *loop;
        const struct config *cfg;
        struct node_core *core;
        uv_prepare_t monitor;
        /* Active while entries queued behind a restore remain: keeps the
         * loop turning so that the monitor drains them a batch a turn. */
        uv_idle_t draining;
        /* Sent by the restore's worker when its state is decoded: wakes
         * the loop, whose monitor then adopts it. */
        uv_async_t restored;
        bool barrier_pending;
        bool serving;
        uint64_t serving_term;
        /* The term in which this node, diverged, last refused to serve as
         * leader (hand_over_diverged()). */
        uint64_t diverged_term;
        struct node_callbacks cb;
        uv_timer_t transfer_timer;
        /* The turns of a follower whose leader's connection closed
         * (leaderloss.h). */
        uv_timer_t loss_timer;
        void (*transfer_cb)(struct node *n);
        /* Or, for node_transfer_for(): its callback and what it is for. */
        void (*transfer_for_cb)(struct node *n, void *data);
        void *transfer_data;
        /* A transfer not yet handed to libraft: its transferee (0: any
         * voter) and when it began (uv_now); node_transfer(). */
        bool handover;
        uint64_t handover_to, handover_since;
        void (*close_cb)(struct node *n);
        /* The transports' data directory checks (NULL: none), and the
         * configuration index whose voters they were last told of. */
        struct peercheck *check;
        uint64_t voters_at;
        /* What must end before raft closes the transport it uses
         * (node_probe()'s probes, until freed): node_close() ends each. */
        struct queue closers;
        /* Whether a committed configuration had this node, and the
         * appended one without it, since when, and the last index then
         * (nodedir_tell_voters()). */
        bool was_member;
        uint64_t removed_at, removed_since, removed_last;
        bool dir_leading; /* led at the last nodedir_tell_voters() */
        char errmsg[640];
};

/*
 * Set up raft on cfg->data_dir (created if missing) with the settings of
 * `cfg` (borrowed for the node's life), bootstrap the configured members if
 * the directory is pristine, and start. The raft transport checks every
 * peer's data directory with `check` (borrowed for the node's life; NULL:
 * no checks), which learns from the node which members are voters.
 * Returns 0 or a BATON_E* code with the reason in n->errmsg (BATON_EVERSION:
 * the directory holds a snapshot of a newer release, which is whole and
 * must not be wiped); on failure nothing is left to clean up.
 */
struct peercheck;
int node_start(struct node *n, uv_loop_t *loop, const struct config *cfg,
               const struct node_callbacks *cb, struct peercheck *check);

/* Stop raft and close every handle; `cb` runs once everything is closed
 * (pending requests have been failed by then). No other node_* call may
 * follow. */
void node_close(struct node *n, void (*cb)(struct node *n));

/* How long a leadership transfer may take before node_transfer() gives up
 * on it: three election timeouts, in milliseconds. */
#define NODE_TRANSFER_BOUND(cfg) (3 * (cfg)->election_timeout_ms)

/* How long a transfer waits for a voter that holds the whole log before
 * it is handed to libraft anyway: two election timeouts. */
#define NODE_HANDOVER_WAIT(cfg) (2 * (cfg)->election_timeout_ms)

/*
 * Hand leadership to another voter (0: any), then run `cb` at the latest
 * NODE_TRANSFER_BOUND() later, whether the transfer finished or not. The
 * node first stops proposing (node_apply() and the other requests answer
 * BATON_ENOTLEADER, as libraft does during a transfer) and waits, for up
 * to NODE_HANDOVER_WAIT(), until the transferee (or, for 0, any voter) has
 * stored every entry of its log: libraft 0.22.1 sends the transferee its
 * TimeoutNow at its first answer, caught up or not, and one that is not
 * ignores it, leaving the cluster an election timeout without a leader
 * that serves (docs/raft.md). Returns BATON_ENOTLEADER when this node does
 * not lead or already transfers, BATON_EINVAL when `to` is not another
 * voter (then `cb` never runs).
 */
int node_transfer(struct node *n, uint64_t to, void (*cb)(struct node *n));

/*
 * node_transfer() for a caller that waits on it (a client's TRANSFER):
 * `cb` gets `data` back, and also runs when the node closes first. Once
 * libraft has finished a transfer that this node lost, the callback runs
 * only when the node knows its new leader (libraft 0.22.1 closes the
 * transfer then), so node_leader() in it names where leadership went; it
 * names this node when the transfer failed, and no one when the bound ran
 * out first.
 */
int node_transfer_for(struct node *n, uint64_t to,
                      void (*cb)(struct node *n, void *data), void *data);

bool node_serving(const struct node *n);

/* The known leader's id and client address ("" and 0 when unknown). */
void node_leader(struct node *n, uint64_t *id, const char **client_address);

/* The client address of a member, or "" when it is not known. */
const char *node_client_address(const struct node *n, uint64_t id);

/* --- Proposals -------------------------------------------------------------
 */

/* A buffer for one log entry of `size` bytes, from the heap raft frees
 * entries with (NULL when out of memory); node_entry_free() accepts NULL. */
void *node_entry_alloc(size_t size);
void node_entry_free(void *buf);

/*
 * Append one log entry holding `len` bytes of `buf` (from
 * node_entry_alloc()) and apply it once committed; `cb` runs after the
 * state machine applied it (req->result), or when it failed: BATON_EUNKNOWN
 * when leadership was lost first or the node closed (the entry may still
 * commit under another leader). On success `buf` is raft's; on error it is
 * still the caller's. Errors: BATON_ENOTLEADER, BATON_ENOMEM, BATON_EINVAL
 * (anything else libraft refuses).
 */
int node_apply(struct node *n, struct node_request *req, void *buf, size_t len,
               node_request_cb cb);

/*
 * Append a barrier entry; `cb` runs once it is applied, which proves that
 * this node led after the call and that every entry before it is applied
 * here. Errors as node_apply().
 */
int node_barrier(struct node *n, struct node_request *req, node_request_cb cb);

/* --- Membership ------------------------------------------------------------
 */

/*
 * Configuration changes, one at a time (libraft refuses another while one
 * is under way: BATON_ECANTCHANGE). node_add() adds member `id` at
 * `raft_address` (copied) as a spare, which receives the log but does not
 * vote; node_promote() makes it a voter; node_remove() takes it out. `cb`
 * runs once the new configuration is committed, or with the error that
 * stopped it. Errors: BATON_ENOTLEADER, BATON_ECANTCHANGE, BATON_ENOMEM,
 * BATON_EINVAL (an id or address libraft refuses).
 */
int node_add(struct node *n, struct node_request *req, uint64_t id,
             const char *raft_address, node_request_cb cb);
int node_promote(struct node *n, struct node_request *req, uint64_t id,
                 node_request_cb cb);
int node_remove(struct node *n, struct node_request *req, uint64_t id,
                node_request_cb cb);

/* Whether raft's configuration has a member with this id or, unless
 * `raft_address` is NULL, with this raft address. */
bool node_has_member(struct node *n, uint64_t id, const char *raft_address);

/* How a node_probe() ends: 0 when the address answered, else
 * BATON_EUNREACHABLE (BATON_ESHUTDOWN when the node closed first). */
typedef void (*node_probe_cb)(void *data, int status);

/*
 * Whether a node answers at `address` (copied) as member `id`: a
 * connection through the raft transport, as the leader would open to
 * replicate to it (with TLS, the handshake and the check that its
 * certificate is that member's), closed at once; one that fails is tried
 * again every 100 ms, for a node still starting. `cb` runs once a
 * connection is made, or `timeout_ms` passed without one, and also when
 * the node closes meanwhile; `data` must stay valid until then. 0, or
 * BATON_ENOMEM / BATON_EUNREACHABLE (refused at once: then `cb` never
 * runs).
 */
int node_probe(struct node *n, uint64_t id, const char *address,
               unsigned timeout_ms, node_probe_cb cb, void *data);

/* --- What the node knows ---------------------------------------------------
 */

/* Roles are baton.h's enum baton_node_role and enum baton_member_role,
 * which the STATUS reply carries; node.c checks that libraft numbers its
 * own the same way. */

/*
 * Raft's view of this node, for STATUS and metrics: role, term, leader,
 * commit, applied and last index, and every member of raft's configuration
 * with its raft and client addresses (borrowed from raft and the
 * directory until control returns to the loop). `*st` is zeroed first;
 * the caller adds what is not raft's (its id, the lock counts).
 */
void node_status(struct node *n, struct proto_status *st);

/* The highest commit index known here: this node's own, or the one a
 * leader of the current term last sent it (heard.h), whichever is higher. */
uint64_t node_leader_commit(struct node *n);

/* The index of the last entry applied to the state machine, and of the
 * last entry in the log; the current term. */
uint64_t node_last_applied(struct node *n);
uint64_t node_last_index(struct node *n);
uint64_t node_term(struct node *n);

/* --- The state machine -----------------------------------------------------
 */

/* The lock state machine, borrowed for lookups: only raft applies entries
 * to it (raftfsm_lockfsm()). */
struct lockfsm *node_lockfsm(struct node *n);

/* The same without waiting for a snapshot being restored on the worker
 * (raftfsm_lockfsm_nowait()): for counts only. */
const struct lockfsm *node_lockfsm_nowait(const struct node *n);
/* The snapshot image maker's counters and timings. */
const struct snapimage *node_snapimage(const struct node *n);
/* The snapshot image kept and its tail (snapkeep.h). */
struct snapkeep;
const struct snapkeep *node_snapkeep(const struct node *n);
/* Its tail's writes into files (snapspill.h). */
struct snapspill;
const struct snapspill *node_snapspill(const struct node *n);
/* Its data directory's writes and room, and a leader's uncommitted
 * entries (stallwatch.h). */
struct stallwatch;
const struct stallwatch *node_stallwatch(const struct node *n);

struct histogram;
/* nodestats.c: what the node's raft says for metrics. */
struct node_raft_stats {
        uint64_t leader_changes; /* the leader known changed to another */
        bool has_leader;         /* a leader is known */
        bool leader;             /* this node is raft's leader */
        unsigned voters;         /* in raft's configuration */
        /* Of those, on the leader: itself and those heard from within an
         * election timeout (not meant for a follower's use). */
        unsigned reachable;
        const struct histogram *disk_writes; /* appends, call to callback */
};
/* Fill `s` from node `n`, started. */
void node_raft_stats(const struct node *n, struct node_raft_stats *s);
/* Note the leader raft knows now (every turn of the loop: node.c's
 * monitor), counting each change to another. */
void node_watch_leader(struct node *n);
/* The index of the last snapshot node `n` took, installed, or handed to a
 * backup (raftfsm_last_snapshot()); 0: none. */
uint64_t node_last_snapshot(const struct node *n);

/* The digests of the state and how their comparisons went (fsmdigest.h;
 * nodedigest.c). */
struct fsmdigest;
const struct fsmdigest *node_digest(const struct node *n);
/* The newest digest this node made and has not proposed yet: true once
 * per digest, for the leader to propose as a DIGEST entry. */
bool node_digest_to_propose(struct node *n, uint64_t *index, uint64_t *digest);

/* Snapshots installed from the leader and restored on the worker. */
struct raftfsm_restores;
void node_restores(const struct node *n, struct raftfsm_restores *out);

/* The state at the last applied entry as snapshot bytes, for an online
 * backup: raftfsm_backup() (its buffers freed by node_backup_release()). */
struct raft_buffer;
int node_backup(struct node *n, struct raft_buffer *bufs[], unsigned *n_bufs,
                uint64_t *index);
void node_backup_release(struct raft_buffer *bufs, unsigned n_bufs);

/* The replicated member directory, borrowed (raftfsm_directory()). */
const struct directory *node_directory(const struct node *n);

/* The replicated access list, borrowed, and its epoch (raftfsm_acl(),
 * raftfsm_acl_epoch(); nodeacl.c). */
const struct acl *node_acl(const struct node *n);
uint64_t node_acl_epoch(const struct node *n);
/* raftfsm_set_acl_cb() on the node's state machine. */
void node_set_acl_cb(struct node *n,
                     void (*cb)(void *data, uint64_t index,
                                const struct command *c, int status),
                     void *data);

/* The term that the entry being applied (or last applied) names
 * (raftfsm_entry_term()). */
uint64_t node_entry_term(const struct node *n);

/* The index of the node's last snapshot, taken or installed
 * (raftfsm_snapshot_index()). */
uint64_t node_snapshot_index(const struct node *n);
/* Whether raft is still writing that snapshot, if it is this node's own
 * (raftfsm_snapshot_writing()). */
bool node_snapshot_writing(const struct node *n);

/* Forward the state machine's events, and the end of every entry it
 * applied in full, as raftfsm_set_event_cb() and raftfsm_set_entry_cb()
 * do; `data` is borrowed, NULL callbacks turn them off. */
void node_set_event_cb(struct node *n, lockfsm_event_cb cb, void *data);
void node_set_entry_cb(struct node *n,
                       void (*cb)(void *data, uint64_t index, uint8_t kind),
                       void *data);

/* The libraft version batond was built against, "MAJOR.MINOR.RELEASE". */
void node_raft_version(char *buf, size_t cap);

/* Read the raft port's certificate, key and CRL again for connections
 * made from now on (SIGHUP). 0 (also with tls = off), or BATON_ETLS with
 * the reason in `errmsg` and the old credentials kept. */
int node_reload_tls(struct node *n, char *errmsg, size_t size);

#endif /* SERVER_NODE_H */
