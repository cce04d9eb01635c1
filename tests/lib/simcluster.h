/* A simulated Baton cluster for tests: raft_fixture nodes running raftfsm. */
#ifndef TESTS_SIMCLUSTER_H
#define TESTS_SIMCLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>
#include <raft/fixture.h>

#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/server/raft/raftfsm.h"
#include "../../src/server/gateway/watchfeed.h"
#include "rng.h"
#include "simstore.h"
#include "simwire.h"

/*
 * What the wrapper adds to raft_fixture (docs/raft.md):
 *
 * - every node runs the real lock state machine through the real raft glue
 *   (struct raftfsm), and the wrapper records, per node, every entry applied
 *   (its bytes and outcome) and every lockfsm event (copied, names too), so
 *   tests can compare replicas and check invariants over the applied log;
 * - a "server" side that proposes one encoded command per raft_apply() on the
 *   current leader: a new leader first commits a barrier, as batond does, the
 *   number of proposals in flight per leader is bounded, and each proposal's
 *   outcome is tracked (acknowledged with the leader's result, or unknown);
 * - fault helpers with reference counts, so that overlapping faults heal
 *   independently (simlinks.h); beside them, a watch for what libraft must
 *   never do (raftcheck.h), snapshot checks (simsnap.h) and one-line
 *   renderings for traces (simformat.h).
 *
 * Everything runs on the caller's thread in virtual time; nothing here is
 * thread-safe. A struct simcluster must not move once initialized: raft
 * holds pointers into it.
 */

#define SIMCLUSTER_MAX_NODES 5
#define SIMCLUSTER_MAX_BOGUS 64

/* One lockfsm event as recorded on one node: a flat copy of struct
 * lockfsm_event (the name and result copied, not borrowed). */
struct simevent {
        uint8_t type;  /* enum lockfsm_event_type */
        uint8_t cause; /* enum command_type */
        uint8_t name_len;
        bool has_result; /* RESULT events */
        int status;
        uint32_t wait_ms;
        uint8_t mode;     /* GRANT, RELEASE, QUEUE, UNQUEUE: COMMAND_MODE_* */
        uint32_t permits; /* the same, of a semaphore */
        uint64_t index;
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        uint64_t nonce;
        struct lockfsm_result result;
        char name[COMMAND_NAME_MAX];
};

/* One command entry as applied on one node (recorded only when the apply
 * succeeded, so an entry retried after RAFT_NOMEM appears once). */
struct simentry {
        uint64_t index; /* raftfsm_result.index */
        struct lockfsm_result res;
        size_t len;
        uint8_t *bytes; /* the entry, as committed: `len` bytes, owned */
        /* An ACL entry: the digest of the node's whole access list once
         * it applied the entry (simacl.h); 0 for any other entry. */
        uint64_t acl;
};

/* Decode a recorded entry. `c->name` borrows from `e`. 0 or BATON_E*. */
int simentry_command(const struct simentry *e, struct command *c);

struct simcluster;

struct simnode {
        struct simcluster *c;
        unsigned i;
        struct raftfsm rf;
        /* What raft calls: forwards to rf.fsm and records what it applied. */
        struct raft_fsm shim;
        struct simevent *events;
        size_t n_events;
        size_t cap_events;
        struct simentry *entries;
        size_t n_entries;
        size_t cap_entries;
        /* What a watch of every name on this node is told: each event's
         * WATCH_EVENT frame (src/server/gateway/watchfeed.h), end to end. */
        struct watchfeed feed;
        uint8_t *watched;
        size_t n_watched; /* bytes */
        size_t cap_watched;
        size_t n_watch_events;
        struct simstore store;     /* what the node has durably stored */
        struct simwire wire;       /* what it sends and receives */
        struct raft_tracer tracer; /* raft's diagnostics, when verbose */
};

/* The entry node `n` applied at `index`, as recorded then, or NULL. */
const struct simentry *simnode_entry_at(const struct simnode *n,
                                        uint64_t index);

/* The state of a proposal (one raft_apply() of one command). */
enum simprop_state {
        SIMPROP_PENDING = 0,
        SIMPROP_ACKED,   /* status 0: committed and applied on the leader */
        SIMPROP_UNKNOWN, /* RAFT_LEADERSHIPLOST/NOTLEADER/SHUTDOWN: retry */
        SIMPROP_FAILED,  /* any other status */
};

struct simprop {
        struct raft_apply req; /* req.data = this */
        struct simcluster *c;
        unsigned id;   /* 1, 2, ... in proposal order */
        unsigned node; /* the leader it was proposed on */
        int state;     /* enum simprop_state */
        int status;    /* the callback's RAFT_* status */
        unsigned n_callbacks;
        struct command cmd; /* cmd.name points at name, cmd.list at list */
        char name[COMMAND_NAME_MAX];
        uint64_t raft_index;          /* req.index, set by raft_apply() */
        struct raftfsm_result result; /* copied from the callback, ACKED */
        raft_time proposed_at;
        raft_time done_at;
        uint8_t list[]; /* a MULTI's list: cmd.list points here */
};

/* Called for every event applied on a node that is leader at that moment
 * (test_simclient checks its clients' beliefs against each grant). */
typedef void (*simcluster_listener)(void *data, unsigned node,
                                    const struct simevent *ev);

/* Called for every event applied on any node, after it was recorded,
 * with the state machine's own event (borrowed for the call): what a
 * host hands its request core (tests/sim/simhost.h). */
typedef void (*simcluster_event_hook)(void *data, unsigned node,
                                      const struct lockfsm_event *ev);

struct simcluster_config {
        unsigned n; /* nodes, 1..SIMCLUSTER_MAX_NODES */
        struct lockfsm_limits limits;
        unsigned election_timeout;  /* ms, default 1000 */
        unsigned heartbeat_timeout; /* ms, default 100 */
        unsigned snapshot_threshold;
        unsigned snapshot_trailing;
        bool pre_vote;
        unsigned max_inflight; /* proposals pending on one leader */
        /* Refuse proposals while the leader's last index is more than this
         * ahead of where it may have to replicate some node from (0: never).
         * See simcluster_may_append(). */
        unsigned max_lag;
        /* Seeds the election timeouts that simcluster draws, uniformly in
         * [election_timeout, 2 * election_timeout], for a node each time its
         * term changes: the fixture's io->random returns one fixed value per
         * node, so without this two nodes with equal timeouts can split
         * every vote forever, which no real deployment does. */
        uint64_t seed;
};

/* Defaults: 3 nodes, default limits, election 1000 ms, heartbeat 100 ms,
 * snapshot threshold 32, trailing 96 (the fixture copies the leader's whole
 * in-memory log at every step, so keep it short), pre-vote on, 8 in
 * flight, max_lag 64 (< trailing - max_inflight). */
void simcluster_config_default(struct simcluster_config *cfg);

struct simbarrier;

struct simcluster {
        struct raft_fixture f;
        struct simcluster_config cfg;
        struct simnode nodes[SIMCLUSTER_MAX_NODES];
        raft_term ready_term[SIMCLUSTER_MAX_NODES];   /* barrier done in */
        raft_term barrier_term[SIMCLUSTER_MAX_NODES]; /* barrier issued in */
        unsigned inflight[SIMCLUSTER_MAX_NODES];
        int seen_state[SIMCLUSTER_MAX_NODES]; /* for traces */
        raft_term seen_term[SIMCLUSTER_MAX_NODES];
        unsigned killed[SIMCLUSTER_MAX_NODES]; /* fault reference counts */
        unsigned saturated[SIMCLUSTER_MAX_NODES][SIMCLUSTER_MAX_NODES];
        unsigned disconnected[SIMCLUSTER_MAX_NODES][SIMCLUSTER_MAX_NODES];
        /* What the fixture was last told about each link. */
        bool fx_saturated[SIMCLUSTER_MAX_NODES][SIMCLUSTER_MAX_NODES];
        bool fx_disconnected[SIMCLUSTER_MAX_NODES][SIMCLUSTER_MAX_NODES];
        struct simprop **props; /* every proposal, owned, in id order */
        size_t n_props;
        size_t cap_props;
        struct simbarrier *barriers; /* owned, freed at destroy */
        simcluster_listener listener;
        void *listener_data;
        simcluster_event_hook event_hook;
        void *event_hook_data;
        bool verbose;       /* trace proposals and outcomes on stdout as "# " */
        bool closing;       /* no user callback runs during destroy */
        bool failed;        /* out of memory while recording: results invalid */
        unsigned anomalies; /* callbacks fired twice and the like */
        /* What libraft must never do, seen after some step (see
         * simcluster_step): how often, and the first description. */
        unsigned violations;
        char violation[512];
        bool unavailable[SIMCLUSTER_MAX_NODES]; /* raft shut the node down */
        unsigned n_unavailable;
        /* Ranges (from, to] a leader committed while fewer than a majority
         * held them (the first SIMCLUSTER_MAX_BOGUS). */
        struct {
                raft_index from;
                raft_index to;
                raft_term term;
                unsigned leader;
        } bogus[SIMCLUSTER_MAX_BOGUS];
        unsigned n_bogus;
        raft_index seen_commit[SIMCLUSTER_MAX_NODES];
        struct rng rng; /* for election timeouts */
        raft_term timeout_term[SIMCLUSTER_MAX_NODES]; /* drawn for this term */
        unsigned n_install_snapshot;                  /* last count traced */
        uint64_t n_steps; /* fixture events so far */
        char errmsg[512]; /* first anomaly or recording failure */
};

/*
 * Create and start a cluster: grow the fixture by cfg->n nodes with a
 * raftfsm each (and a simstore on its raft_io, for what it stores),
 * bootstrap them all with the same configuration, apply the raft settings
 * and start. `cfg` is copied. Returns 0 or a RAFT_* code with the reason in
 * c->errmsg; on failure there is nothing to destroy.
 */
int simcluster_init(struct simcluster *c, const struct simcluster_config *cfg);

/* Close the fixture (pending callbacks fire with no user callback running),
 * then free every node, proposal and recording. Accepts NULL. */
void simcluster_close(struct simcluster *c);

/* Receive events applied on the leader. `data` is borrowed. */
void simcluster_set_listener(struct simcluster *c, simcluster_listener cb,
                             void *data);

/* Receive every event applied on every node. `data` is borrowed. */
void simcluster_set_event_hook(struct simcluster *c, simcluster_event_hook cb,
                               void *data);

/* Whether leader `l` may append one more entry: RAFT_BUSY while its last
 * index is more than cfg.max_lag ahead of where it may have to replicate
 * some node from, else 0: so that the entries it may have to send stay in
 * its log, below snapshot_trailing, and no follower ever needs an
 * InstallSnapshot, which the fixture cannot survive (its in-memory
 * truncate assumes the log starts at index 1, still in libraft 0.22.1).
 * batond's request cores on the fixture (tests/sim/simops.c) and
 * simcluster_converge() propose only when it allows. */
int simcluster_may_append(struct simcluster *c, unsigned l);

/*
 * Step the fixture once (one event), then: issue the barrier of any node
 * that has just become leader; draw a new election timeout for any node
 * whose term changed; and
 * watch libraft for two things it must never do, recording them as
 * violations: a node going RAFT_UNAVAILABLE (0.15.0 did that when a leader
 * contradicted an entry it took as committed), and a leader advancing its
 * commit index over entries that fewer than a majority of the nodes have
 * stored (seen through their raft_io by simstore; recorded in bogus[]; it
 * found libraft 0.15.0 committing without a majority). Returns the
 * fixture's event.
 */
struct raft_fixture_event *simcluster_step(struct simcluster *c);

/* Step until `ms` of virtual time have passed. */
void simcluster_step_for(struct simcluster *c, unsigned ms);

raft_time simcluster_now(struct simcluster *c);
struct raft *simcluster_raft(struct simcluster *c, unsigned i);
struct lockfsm *simcluster_lockfsm(struct simcluster *c, unsigned i);

/* The alive node in leader state with the highest term, or cfg.n. */
unsigned simcluster_leader(struct simcluster *c);

/* The leader, if it has committed its barrier in its current term (so it
 * may serve), or cfg.n. */
unsigned simcluster_ready_leader(struct simcluster *c);

/*
 * Change node i's disk latency, unless it has a write in flight: libraft's
 * raft_io completes a node's appends in the order they were issued, while
 * the fixture's in-memory disk completes each after its own latency, so a
 * latency lowered under a pending write would store a later append first
 * (a disk no raft_io is). Returns whether it changed.
 */
bool simcluster_set_disk_latency(struct simcluster *c, unsigned i, unsigned ms);

/* Proposals still pending, on any node. */
size_t simcluster_pending(struct simcluster *c);

/*
 * Heal, then drive the cluster until a leader is ready, propose `final` and
 * retry it until acknowledged, then step until every node has applied the
 * same last index and no proposal is pending. Returns 0 with *out the
 * acknowledged proposal, or -1 with the reason in c->errmsg if that takes
 * more than `max_ms` of virtual time.
 */
int simcluster_converge(struct simcluster *c, const struct command *final,
                        unsigned max_ms, struct simprop **out);

/* Whether a leader committed `index` while fewer than a majority held it
 * (see simcluster_step). */
bool simcluster_bogus_commit(const struct simcluster *c, uint64_t index);

/* In verbose runs, prints "# t=TIME " and the message as a TAP comment. */
void simcluster_trace(struct simcluster *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TESTS_SIMCLUSTER_H */
