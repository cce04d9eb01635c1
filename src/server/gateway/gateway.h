/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <stdint.h>

#include <uv.h>

#include "../../fsm/acl.h"
#include "../../lib/hmap.h"
#include "../../lib/queue.h"
#include "applylog.h"
#include "backup.h"
#include "../net/conn.h"
#include "deadlines.h"
#include "../base/histogram.h"
#include "../raft/node.h"
#include "watches.h"

struct admin;

/* Request kinds for metrics: the five client commands, then the reads. */
enum gateway_kind {
        GATEWAY_OPEN = 0,
        GATEWAY_CLOSE,
        GATEWAY_ACQUIRE,
        GATEWAY_RELEASE,
        GATEWAY_CANCEL,
        GATEWAY_KEEPALIVE,
        GATEWAY_QUERY,
        GATEWAY_CHECK,
        GATEWAY_LIST,
        GATEWAY_N_KINDS,
};

/* Where a command's time goes on the leader (metrics). */
enum gateway_stage {
        GATEWAY_STAGE_QUEUED = 0, /* arrival -> node_apply */
        GATEWAY_STAGE_RAFT,       /* node_apply -> its entry applied */
        GATEWAY_N_STAGES,
};

struct gateway_stats {
        struct histogram latency[GATEWAY_N_KINDS];
        struct histogram stages[GATEWAY_N_STAGES];
        uint64_t requests[PROTO_BACKUP + 1]; /* by request type */
        uint64_t proposed;                   /* commands proposed */
        uint64_t batches;                    /* node_apply calls (entries) */
        uint64_t applied;                    /* commands applied (RESULTs) */
        uint64_t barriers;                   /* read/keepalive barriers */
        uint64_t redirects;                  /* NOT_LEADER answers */
        uint64_t unknown;                    /* EUNKNOWN answers */
        uint64_t expirations;                /* EXPIRE proposals */
        uint64_t timeouts;                   /* TIMEOUT proposals */
        uint64_t leader_changes;             /* ready transitions */
        uint64_t refused; /* BATON_EPERM: the role, or not attached */
};

/*
 * The gateway and what its modules share: pending.h (a request's record),
 * reply.h (answers), reads.h (barrier reads and keepalives), admin.h
 * (membership and leadership transfer), fanout.h (the state machine's
 * events), leader.h (the serving leader's clocks and own proposals). A
 * command's or read's record (pending.h) waits on `unsent`, `held` or
 * `reads`, then among the members of one proposal or read barrier; a client
 * command, once proposed, is in `pending` until answered. Caller-allocated;
 * used only from the loop's thread.
 */
struct gateway {
        uv_loop_t *loop;
        struct node *node;
        const struct config *cfg;
        struct deadlines deadlines;
        struct applylog applylog;
        struct hmap pending; /* proposed client commands, by key */
        struct queue unsent; /* commands for the next node_apply */
        struct queue held;   /* arrived while the leader was not serving */
        struct queue reads;  /* QUERY, CHECK, KEEPALIVE for the next barrier */
        unsigned inflight;   /* batches proposed and not yet answered */
        uint64_t clock_sent; /* wall ms of the last CLOCK proposed */
        struct gateway_stats stats;
        struct watches watches;
        struct backups backups;
        /* admin.c's MEMBER_ADD under way (NULL: none), which a retry of
         * the same add joins rather than being refused. */
        struct admin *adding;
        /* access.c: the config's role lines as a list (the seed, and the
         * fallback until the cluster has one), ACL changes waiting for
         * their entries, and whether the config was compared with the
         * cluster's list. */
        struct acl config_acl;
        struct queue acl_inflight;
        bool acl_compared;
        uint64_t acl_due_ms; /* uv_now() when the seed is due */
};

/* Set up on a started node (`node` and `cfg` borrowed for the gateway's
 * life). Installs itself as the node's event sink. 0 or a BATON_E* code
 * (the apply log could not be opened); on failure nothing is left to clean
 * up. */
int gateway_init(struct gateway *g, uv_loop_t *loop, struct node *node,
                 const struct config *cfg);
/* Answer everything pending (NOT_LEADER, or outcome unknown for what was
 * proposed), close the deadline timer and the apply log. */
void gateway_close(struct gateway *g);

/* conn_frame_cb (`data` is the gateway): answer or queue the request. */
void gateway_on_frame(void *data, struct conn *c, const struct proto_header *h,
                      const uint8_t *body);
/* conn_gone_cb: requests of `c` already proposed still run; only their
 * answers are dropped. */
void gateway_on_gone(void *data, struct conn *c);

/* node_callbacks (`data` is the gateway). ready: restart the leader's
 * clocks and queue what was held for proposal or a barrier. lost: drop the
 * clocks and answer what this node holds, as gateway_close() does. */
void gateway_on_ready(void *data);
void gateway_on_lost(void *data);
/* node_callbacks.restored: the node installed a leader's snapshot; every
 * watch that had not seen everything up to it ends (watches_reset()) now,
 * not at the next event the node applies, which may be long in coming. */
void gateway_on_restored(void *data);

/* End of a loop iteration: propose what arrived, start the read barrier. */
void gateway_flush(struct gateway *g);

#endif /* SERVER_GATEWAY_H */
