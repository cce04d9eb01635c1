/* What the gateway's modules share of it: struct gateway, its statistics
 * and the request kinds they count. Private to src/server/gateway/; the
 * rest of batond uses gateway.h. */
#ifndef SERVER_GATEWAY_CORE_H
#define SERVER_GATEWAY_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/acl.h"
#include "../../lib/hmap.h"
#include "../../lib/queue.h"
#include "../base/histogram.h"
#include "../base/log.h"
#include "../../proto/proto.h"
#include "deadlines.h"
#include "watches.h"

struct admin;
struct gateway_host;

/* The host's clocks for one input (gateway.h says who reads them, and
 * when): every path in the core that needs the time is given this. */
struct gateway_now {
        uint64_t ms; /* what deadlines count in: batond's uv_now() */
        uint64_t ns; /* monotonic, for the latency histograms only */
};

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
        GATEWAY_STAGE_QUEUED = 0, /* arrival -> proposed */
        GATEWAY_STAGE_RAFT,       /* proposed -> its entry applied */
        GATEWAY_N_STAGES,
};

/* An answer's result for metrics: 0 ok, else the BATON_E* code negated,
 * below GATEWAY_N_RESULTS (the codes run from -1 down, with no gap). */
#define GATEWAY_COUNT_CODE_(name, code, text) +1
enum { GATEWAY_N_RESULTS = 1 BATON_ERROR_MAP(GATEWAY_COUNT_CODE_) };
#undef GATEWAY_COUNT_CODE_

struct gateway_stats {
        struct histogram latency[GATEWAY_N_KINDS];
        /* Answers by kind and result, redirects and refusals included. */
        uint64_t results[GATEWAY_N_KINDS][GATEWAY_N_RESULTS];
        /* Arrival to grant of the ACQUIREs this node answered after they
         * queued; the time grants were held, from the log's clock, as
         * they end; a session's time between keepalives, on the serving
         * leader. The last two are of long durations (histogram_add_long). */
        struct histogram acquire_wait;
        struct histogram hold;
        struct histogram keepalive_gap;
        uint64_t sessions_expired; /* ENDs of an EXPIRE applied */
        uint64_t grants_revoked;   /* grants a REVOKE or REVOKE_LOCK ended */
        struct histogram stages[GATEWAY_N_STAGES];
        uint64_t requests[PROTO_BACKUP + 1]; /* by request type */
        uint64_t proposed;                   /* commands proposed */
        uint64_t batches;                    /* entries proposed */
        uint64_t applied;                    /* commands applied (RESULTs) */
        uint64_t barriers;                   /* read/keepalive barriers */
        uint64_t redirects;                  /* NOT_LEADER answers */
        uint64_t unknown;                    /* EUNKNOWN answers */
        uint64_t expirations;                /* EXPIRE proposals */
        uint64_t timeouts;                   /* TIMEOUT proposals */
        uint64_t elections_won;              /* ready transitions */
        uint64_t refused; /* BATON_EPERM: the role, or not attached */
        /* BATON_EQUOTA answers, by quota (enum acl_quota_kind): the
         * state machine's, and this node's own (rate, watches). */
        uint64_t quota_refused[5];
};

/*
 * The gateway and what its modules share: pending.h (a request's record),
 * admit.h (who may do what), reply.h (answers), reads.h (barrier reads and
 * keepalives), admin.h (membership and leadership transfer), fanout.h (the
 * state machine's events), leader.h (the serving leader's clocks and own
 * proposals). A command's or read's record (pending.h) waits on `unsent`,
 * `held` or `reads`, then among the members of one proposal or read barrier; a
 * client command, once proposed, is in `pending` until answered.
 * Caller-allocated; used only from the loop's thread.
 */
struct gateway {
        struct gateway_host *host; /* what the core asks of its host */
        enum log_level log_level;  /* the least severe line it writes */
        /* From gateway_on_ready() to gateway_on_lost(): this node serves
         * as leader, in `term`, which its batches are stamped with. */
        bool serving;
        uint64_t term;
        const struct config *cfg;
        struct deadlines deadlines;
        /* The sessions whose EXPIRE this core proposed and whose END it
         * has not seen applied (leases.h, keyed by session, `at` the
         * first proposal's time): kept across leadership changes, since
         * that EXPIRE may still commit under the next term. A keepalive
         * of such a session is never answered OK (leader.h). */
        struct leases expiring;
        /* EXPIREs queued or proposed and not yet applied or failed
         * (leader.h, LEADER_EXPIRIES_MAX). */
        uint32_t expiries_out;
        struct hmap pending; /* proposed client commands, by key */
        struct queue unsent; /* commands for the next proposal */
        struct queue held;   /* arrived while the leader was not serving */
        struct queue reads;  /* QUERY, CHECK, KEEPALIVE for the next barrier */
        struct queue conns;  /* gateway_conn.core_link: every one that sent */
        struct hmap rates;   /* quotas.c: requests per identity, by principal */
        unsigned inflight;   /* batches proposed and not yet answered */
        unsigned read_barriers_out; /* 0 or 1 (reads.h) */
        uint64_t clock_sent;        /* wall_ms of the last CLOCK proposed */
        struct gateway_stats stats;
        struct watches watches;
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
        uint64_t acl_due_ms; /* now->ms when the seed is due */
        /* gwreq.h: the requests with the host, not completed yet, in the
         * order they went out and by address, and whether
         * gateway_close() ran (then completions only free). */
        struct queue reqs;
        struct hmap reqs_by_ptr;
        unsigned reqs_out;
        bool closed;
};

#endif /* SERVER_GATEWAY_CORE_H */
