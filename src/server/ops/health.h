/* GET /health and GET /ready on the metrics port, for load balancers,
 * Kubernetes probes and scripts: whether this node runs raft, and whether
 * it can write its log, knows a leader that commits, and has applied close
 * enough to the leader's commit index to be given clients. The bodies are
 * JSON (docs/operations.md). */
#ifndef SERVER_HEALTH_H
#define SERVER_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the answers are made of, gathered by the caller. */
struct health_facts {
        uint64_t node;          /* this node's id */
        uint8_t role;           /* enum baton_node_role */
        bool serving;           /* leader, a barrier of its term applied */
        uint64_t term;          /* current term */
        uint64_t leader;        /* known leader's id, 0: none */
        uint64_t commit_index;  /* this node's */
        uint64_t applied_index; /* this node's */
        uint64_t leader_commit; /* the leader's, as last heard (>= own) */
        uint32_t max_lag;       /* ready-max-lag */
        /* raft cannot write to the data directory: ENOSPC (a full disk),
         * EROFS, or EIO (not known why); 0: it can. For how long, in
         * milliseconds. */
        int disk_errno;
        uint64_t disk_failing_ms;
        /* On a leader: how long its oldest uncommitted entry has waited,
         * and the longest that is normal (election-timeout-ms). */
        uint64_t uncommitted_ms;
        uint32_t commit_bound_ms;
        /* This node's state machine digest at `diverged_index` differed
         * from the one the leader proposed (fsmdigest.h): its own, the
         * leader's. */
        bool diverged;
        uint64_t diverged_index;
        uint64_t diverged_own;
        uint64_t diverged_leader;
};

/* Why a node is not healthy or not ready: the "reason" of a 503 body.
 * This node's own faults come before the cluster's. */
enum health_reason {
        HEALTH_OK = 0,
        HEALTH_RAFT_NOT_RUNNING, /* "raft-not-running" */
        HEALTH_DIVERGED,         /* "diverged" */
        HEALTH_DISK_FULL,        /* "disk-full" */
        HEALTH_DISK_ERROR,       /* "disk-error" */
        HEALTH_NO_LEADER,        /* "no-leader" */
        HEALTH_CANNOT_COMMIT,    /* "cannot-commit" */
        HEALTH_NOT_SERVING,      /* "leader-not-serving" */
        HEALTH_LAGGING,          /* "lagging" */
};

/* How far the state machine is behind the leader's commit index. */
uint64_t health_lag(const struct health_facts *f);

/* The verdict of GET /health (HEALTH_OK or HEALTH_RAFT_NOT_RUNNING: a node
 * whose disk is full is alive, and restarting it frees no space) and of
 * GET /ready (any reason, checked in the order of the enum). */
enum health_reason health_check(const struct health_facts *f);
enum health_reason ready_check(const struct health_facts *f);

/* The reason's name in a body ("ok" for HEALTH_OK). */
const char *health_reason_name(enum health_reason r);

/*
 * The body of GET /health or GET /ready (`ready`) into `buf`
 * (NUL-terminated, ending with a newline), `*status` = 200 or 503.
 * Returns its length, or the length it would need when `cap` is too small.
 */
size_t health_render(const struct health_facts *f, bool ready, char *buf,
                     size_t cap, int *status);

/*
 * The same answer with liveness only, for plain HTTP from anywhere
 * (scrapegate.h): the same status code and verdict, as
 * {"status":..,"reason":..,"node":N}, without the role, term, indexes,
 * leader or message (which quotes them).
 */
size_t health_render_liveness(const struct health_facts *f, bool ready,
                              char *buf, size_t cap, int *status);

#endif /* SERVER_HEALTH_H */
