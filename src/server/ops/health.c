/* GET /health and GET /ready on the metrics port (see health.h). */
#include "health.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../../include/baton/cluster.h"
#include "../../lib/rolename.h"

const char *health_reason_name(enum health_reason r)
{
        switch (r) {
        case HEALTH_OK:
                return "ok";
        case HEALTH_RAFT_NOT_RUNNING:
                return "raft-not-running";
        case HEALTH_DIVERGED:
                return "diverged";
        case HEALTH_DISK_FULL:
                return "disk-full";
        case HEALTH_DISK_ERROR:
                return "disk-error";
        case HEALTH_NO_LEADER:
                return "no-leader";
        case HEALTH_CANNOT_COMMIT:
                return "cannot-commit";
        case HEALTH_NOT_SERVING:
                return "leader-not-serving";
        case HEALTH_LAGGING:
                return "lagging";
        }
        return "unknown";
}

uint64_t health_lag(const struct health_facts *f)
{
        uint64_t commit = f->leader_commit > f->commit_index ? f->leader_commit
                                                             : f->commit_index;

        return commit > f->applied_index ? commit - f->applied_index : 0;
}

enum health_reason health_check(const struct health_facts *f)
{
        return f->role == BATON_ROLE_UNAVAILABLE ? HEALTH_RAFT_NOT_RUNNING
                                                 : HEALTH_OK;
}

enum health_reason ready_check(const struct health_facts *f)
{
        if (f->role == BATON_ROLE_UNAVAILABLE) {
                return HEALTH_RAFT_NOT_RUNNING;
        }
        /* Its state is not the leader's: its answers cannot be trusted,
         * and only a wipe and a rejoin mend it (docs/operations.md,
         * "Diverged replicas"). */
        if (f->diverged) {
                return HEALTH_DIVERGED;
        }
        /* A node that cannot write its log stores nothing it is sent and,
         * leading, nothing it appends; it catches up by itself once it
         * can (docs/operations.md, "Full disk"). */
        if (f->disk_errno != 0) {
                return f->disk_errno == ENOSPC ? HEALTH_DISK_FULL
                                               : HEALTH_DISK_ERROR;
        }
        if (f->leader == 0 || f->role == BATON_ROLE_CANDIDATE) {
                return HEALTH_NO_LEADER;
        }
        /* A leader that appends and cannot commit answers no client: a
         * majority does not store its entries. Under load entries always
         * wait a round trip; one waiting an election timeout does not. */
        if (f->leader == f->node && f->role == BATON_ROLE_LEADER &&
            f->uncommitted_ms > f->commit_bound_ms) {
                return HEALTH_CANNOT_COMMIT;
        }
        /* A new leader answers no client until a barrier of its term is
         * applied (docs/raft.md): not ready until then. */
        if (f->leader == f->node && !f->serving) {
                return HEALTH_NOT_SERVING;
        }
        if (health_lag(f) > f->max_lag) {
                return HEALTH_LAGGING;
        }
        return HEALTH_OK;
}

/* One sentence for a person reading the body. */
static int explain(char *buf, size_t cap, enum health_reason r,
                   const struct health_facts *f)
{
        switch (r) {
        case HEALTH_RAFT_NOT_RUNNING:
                return snprintf(buf, cap,
                                "raft is not running on this node "
                                "(starting or stopping)");
        case HEALTH_DIVERGED:
                return snprintf(
                    buf, cap,
                    "this node's state machine digest at index "
                    "%" PRIu64 " is %016" PRIx64 ", the leader's %016" PRIx64
                    ": its state diverged; wipe its data "
                    "directory and let it rejoin",
                    f->diverged_index, f->diverged_own, f->diverged_leader);
        case HEALTH_DISK_FULL:
        case HEALTH_DISK_ERROR:
                return snprintf(buf, cap,
                                "raft cannot write to this node's data "
                                "directory (%s) and has not for %.1f s",
                                strerror(f->disk_errno),
                                (double)f->disk_failing_ms / 1e3);
        case HEALTH_NO_LEADER:
                return snprintf(buf, cap,
                                "this node knows no leader in term %" PRIu64,
                                f->term);
        case HEALTH_CANNOT_COMMIT:
                return snprintf(buf, cap,
                                "this node leads term %" PRIu64
                                " and has not committed for %.1f s, more "
                                "than an election timeout (%" PRIu32
                                " ms): a majority of voters does not store "
                                "its entries",
                                f->term, (double)f->uncommitted_ms / 1e3,
                                f->commit_bound_ms);
        case HEALTH_NOT_SERVING:
                return snprintf(buf, cap,
                                "this node leads term %" PRIu64
                                " but has not yet applied a barrier of it",
                                f->term);
        case HEALTH_LAGGING:
                return snprintf(buf, cap,
                                "applied index %" PRIu64 " is %" PRIu64
                                " entries behind the leader's commit index, "
                                "more than ready-max-lag (%" PRIu32 ")",
                                f->applied_index, health_lag(f), f->max_lag);
        case HEALTH_OK:
                break;
        }
        return snprintf(buf, cap, "ok");
}

/* The body's "status": /ready's words, or /health's. */
static const char *status_word(enum health_reason r, bool ready)
{
        if (ready) {
                return r == HEALTH_OK ? "ready" : "not-ready";
        }
        return r == HEALTH_OK ? "ok" : "unavailable";
}

size_t health_render(const struct health_facts *f, bool ready, char *buf,
                     size_t cap, int *status)
{
        enum health_reason r = ready ? ready_check(f) : health_check(f);
        char why[256];
        int n;

        *status = r == HEALTH_OK ? 200 : 503;
        explain(why, sizeof why, r, f);
        if (!ready) {
                n = snprintf(buf, cap,
                             "{\"status\":\"%s\",\"reason\":\"%s\","
                             "\"message\":\"%s\",\"node\":%" PRIu64
                             ",\"role\":\"%s\",\"term\":%" PRIu64 "}\n",
                             status_word(r, ready), health_reason_name(r), why,
                             f->node, role_name(f->role), f->term);
        } else {
                n = snprintf(
                    buf, cap,
                    "{\"status\":\"%s\",\"reason\":\"%s\",\"message\":\"%s\","
                    "\"node\":%" PRIu64 ",\"role\":\"%s\",\"term\":%" PRIu64
                    ",\"leader\":%" PRIu64 ",\"commit_index\":%" PRIu64
                    ",\"applied_index\":%" PRIu64
                    ",\"leader_commit_index\":%" PRIu64 ",\"lag\":%" PRIu64
                    ",\"max_lag\":%" PRIu32 "}\n",
                    status_word(r, ready), health_reason_name(r), why, f->node,
                    role_name(f->role), f->term, f->leader, f->commit_index,
                    f->applied_index, f->leader_commit, health_lag(f),
                    f->max_lag);
        }
        return n < 0 ? 0 : (size_t)n;
}

size_t health_render_liveness(const struct health_facts *f, bool ready,
                              char *buf, size_t cap, int *status)
{
        enum health_reason r = ready ? ready_check(f) : health_check(f);
        int n;

        *status = r == HEALTH_OK ? 200 : 503;
        n = snprintf(buf, cap,
                     "{\"status\":\"%s\",\"reason\":\"%s\",\"node\":%" PRIu64
                     "}\n",
                     status_word(r, ready), health_reason_name(r), f->node);
        return n < 0 ? 0 : (size_t)n;
}
