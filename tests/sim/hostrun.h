/* One seeded run of batond's request cores on the simulated cluster, as
 * test_simhost and test_simclient make it: its constants, clients and
 * what they were told, its start and end (hostrun.c), and the checks of
 * its log against what they were told (hostcheck.c). */
#ifndef TESTS_SIM_HOSTRUN_H
#define TESTS_SIM_HOSTRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../../src/proto/attach.h"
#include "../../src/proto/command.h"
#include "../../src/proto/reply.h"
#include "hostadmin.h"
#include "hostwatch.h"
#include "sim.h"
#include "simhost.h"

#define HOST_CLIENTS_MAX 10
#define N_LOCKS          3
#define RUN_MS           20000
#define SETTLE_MS        15000
#define CONVERGE_MS      20000
#define MAX_ACKS         512
#define MAX_GHOSTS       64
#define MAX_ANSWERS      2048
#define FRAME_MAX        (PROTO_HEADER_SIZE + COMMAND_ANY_MAX_SIZE)
/* After the settling, how long the clients stay silent before every
 * session must have ended: twice the longest TTL and then some. */
#define HOST_QUIET_MS 12000
/* How many of a client's latest request ids are followed. */
#define HOST_OWED 64

/* What a negative control's core does wrong (Makefile.am builds
 * test_simhost on a core compiled with each bug; CONTROL_RUN: this binary
 * is one, and passes when some seed's checks fail). EARLYACK: an ACQUIRE
 * answered GRANTED when proposed; FORGET: a retried (session, seq) run
 * again as new; TWICE: a request answered from the log answered once
 * more later; SKIPDEADLINE: a lease that runs out never expired. */
#if defined(BATON_CHAOS_BUG_SHORT_TTL)
#define CONTROL_BUG "a new leader that expires sessions at once"
#elif defined(BATON_CHAOS_BUG_WATCHSKIP)
#define CONTROL_BUG "a node that skips every 7th watch event"
#elif defined(BATON_CHAOS_BUG_EARLYACK)
#define CONTROL_BUG "a leader that answers an ACQUIRE when it proposes it"
#elif defined(BATON_CHAOS_BUG_FORGET)
#define CONTROL_BUG "a state machine that forgets the outcomes it answered"
#elif defined(BATON_CHAOS_BUG_TWICE)
#define CONTROL_BUG "a core that answers a request twice"
#elif defined(BATON_CHAOS_BUG_SKIPDEADLINE)
#define CONTROL_BUG "a leader that never expires a lease"
#endif
#ifdef CONTROL_BUG
#define CONTROL_RUN 1
#else
#define CONTROL_RUN 0
#define CONTROL_BUG "nothing"
#endif

/* The locks the clients take, by number (hostcheck.c). */
extern const char *const hostrun_locks[N_LOCKS];

/* A grant a client was told of. */
struct ack {
        uint64_t session;
        uint64_t seq;
        uint64_t token;
        unsigned lock;
};

/* A request out, sent again until it has a final answer. */
struct out {
        bool busy;
        uint8_t type; /* COMMAND_OPEN, _ACQUIRE, _RELEASE; 0: KEEPALIVE */
        uint8_t frame[FRAME_MAX];
        size_t len;
        uint64_t id;
        raft_time sent_at;   /* last sent */
        raft_time first_at;  /* first sent: the lease it would start */
        raft_time resend_at; /* 0: not waiting to be sent again */
        unsigned sends;
        uint64_t session, seq, nonce; /* a command's */
};

/* A final answer to a command, as a client was told it. */
struct answer {
        uint8_t type;
        uint64_t session, seq, nonce;
        struct proto_result res;
};

/* Negative controls of the checks: what is broken in a run's record
 * before the checks of the log read it; the last three, what the
 * operator checks its answers against (hostadmin.h). */
enum brk {
        BREAK_NONE,
        BREAK_ACK,
        BREAK_HOLDER,
        BREAK_ANSWER,
        BREAK_TRANSFER,
        BREAK_MEMBER,
        BREAK_REFUSAL,
        N_BREAKS
};

/* The sends of request `id` on a client's connection number `conn` that
 * were not answered yet: the core answers each at most once. */
struct owed {
        uint64_t id;
        unsigned conn;
        unsigned n;
};

struct rclient {
        unsigned id;
        struct simconn *conn;
        unsigned node; /* where it connects next */
        uint64_t nonce;
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        uint64_t session;
        uint64_t next_seq;
        uint64_t next_id;
        raft_time lease_until; /* its own view: see the header */
        bool held;
        unsigned lock;
        uint64_t token;
        raft_time release_at;
        raft_time next_at; /* when it asks for the next lock */
        struct out req;    /* OPEN, ACQUIRE or RELEASE */
        struct out ka;     /* KEEPALIVE */
        raft_time ka_next;
        unsigned conn_no;            /* its connections so far */
        struct owed owed[HOST_OWED]; /* by id % HOST_OWED */
};

/* A lock a crashed client held: its lease runs on without it. */
struct ghost {
        unsigned client;
        unsigned lock;
        uint64_t token;
        raft_time lease_until;
};

struct run {
        struct sim
            s; /* the cluster, the seed's rng, and what the checks read */
        struct simhost h;
        unsigned n_clients;    /* 4; --stress: 10 */
        uint32_t ttl_ms;       /* their sessions' TTL: 5000; --stress: 2500 */
        uint32_t keepalive_ms; /* how often they renew: 1000; --stress: 800 */
        struct rclient cl[HOST_CLIENTS_MAX];
        struct hostwatch watch[SIMCLUSTER_MAX_NODES];  /* one per node */
        raft_time watch_drop_at[SIMCLUSTER_MAX_NODES]; /* its next hang-up */
        struct ack acks[MAX_ACKS];
        unsigned n_acks;
        struct answer answers[MAX_ANSWERS];
        unsigned n_answers;
        struct ghost ghosts[MAX_GHOSTS];
        unsigned n_ghosts;
        unsigned crashes;
        bool stopping; /* no new requests */
        raft_time kill_at;
        unsigned killed; /* the node down, or n */
        bool isolated;   /* cut off from the others rather than killed */
        struct raft_transfer transfer; /* a leader's handover, when out */
        bool transferring;             /* `transfer` is with raft */
        unsigned transfers;            /* handovers started */
        raft_time revive_at;
        unsigned redirects, unknowns, resends, expired;
        size_t watched;     /* events the watchers were sent */
        size_t watches;     /* watches they opened */
        unsigned compacted; /* resumptions a node could not serve */
        char clash[300];    /* the first lease clash seen */
        char twice[300];    /* the first request answered twice */
        int brk;            /* enum brk: a negative control of the checks */
        uint64_t digest;    /* of the whole run (test_simhost.c) */
        bool all_faults;    /* test_sim's faults (faults.c), not only kills */
        struct hostadmin admin; /* test_simhost's operator */
};

/* The cluster of `nodes` and a request core on each node, drawing from
 * `seed` (r->s.rng too); 0, or -1 with the failure in `reason`. */
int hostrun_start(struct run *r, uint64_t seed, unsigned nodes, bool verbose,
                  char *reason, size_t cap);
/* The cluster converges on a final QUERY, and the host saw nothing
 * broken; 0, or -1 with the failure in `reason`. */
int hostrun_converge(struct run *r, char *reason, size_t cap);
/* Shut the cores and the cluster down and free them: the run's verdict
 * `rv`, or -1 if the host broke on the way down. */
int hostrun_stop(struct run *r, int rv, char *reason, size_t cap);
/* "# <runs> runs in <s> s: <rate> seeds/s" since `t0` (CLOCK_MONOTONIC),
 * as a TAP comment. */
void hostrun_rate(const struct timespec *t0, unsigned runs);

/* Each lock has one holder at a time, and each grant's token is its
 * entry's index, above the lock's last one, in node 0's log. */
int hostcheck_log(struct run *r, char *reason, size_t cap);
/* Every grant a client was told of is a GRANT event to its session and
 * seq at index == token. */
int hostcheck_acks(struct run *r, char *reason, size_t cap);
/* Every final answer a client was told came from the log: the RESULT,
 * GRANT or UNQUEUE event of its request at the answer's index, with the
 * outcome told. */
int hostcheck_answers(struct run *r, char *reason, size_t cap);
/* Exactly once: in node 0's log, no (session, seq) runs twice (a RESULT
 * that is not its remembered outcome's duplicate, after another). */
int hostcheck_once(struct run *r, char *reason, size_t cap);
/* Every session opened in node 0's log ended in it: run once the clients
 * fell silent for HOST_QUIET_MS, so every lease ran out. */
int hostcheck_ended(struct run *r, char *reason, size_t cap);
/* Client `cl` sent request `id` on its current connection. */
void hostcheck_sent(struct rclient *cl, uint64_t id);
/* It was answered on it: more answers than sends go in r->twice. */
void hostcheck_answered(struct run *r, struct rclient *cl, uint64_t id,
                        raft_time now);
/* Break the record as r->brk says, for a negative control. */
void hostcheck_break(struct run *r);

#endif /* TESTS_SIM_HOSTRUN_H */
