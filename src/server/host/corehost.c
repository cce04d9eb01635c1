/* batond's host of its request core (src/server/gateway/): it hands the
 * core every input from the raft node and the client connections, with
 * the time, and does the I/O the core leaves to it (the clocks and its
 * timer, the apply log, the ATTACH hash, backups, the log). */
#include "corehost.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../../include/baton/errors.h"
#include "../../proto/attach.h"
#include "../base/log.h"
#include "../raft/fsmdigest.h"
#include "coreconn.h"
#include "corereq.h"

/* --- Connections gone while the core was busy ------------------------- */

/* `c` went: its backup pins go, and the core forgets it. */
static void gone_now(struct corehost *h, struct conn *c)
{
        backup_forget_conn(&h->backups, c);
        gateway_conn_gone(&h->core, &c->gw);
}

void corehost_enter(struct corehost *h)
{
        h->depth++;
}

void corehost_leave(struct corehost *h)
{
        if (--h->depth > 0) {
                return;
        }
        /* The input is over: report what went meanwhile, in the order it
         * went. Their records stay until the loop's close phase. */
        while (!queue_empty(&h->gone)) {
                struct queue *q = queue_head(&h->gone);
                struct gateway_conn *gw =
                    QUEUE_DATA(q, struct gateway_conn, host_link);
                queue_remove(q);
                gone_now(h, coreconn_conn(gw));
        }
}

/* --- The clocks and the core's timer --------------------------------- */

/* The time of an input: the loop's milliseconds, which every deadline
 * counts in, and the monotonic nanoseconds of the latency histograms. */
struct gateway_now corehost_clocks(const struct corehost *h)
{
        struct gateway_now now = {uv_now(h->loop), uv_hrtime()};

        return now;
}

/* The wall clock, in ms since the Unix epoch. */
static uint64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The clock the core's timer is started and fired by: the loop's, which
 * no step of the wall clock moves. */
static uint64_t timer_ms(const struct corehost *h)
{
#ifdef BATON_CHAOS_BUG_WALLCLOCK
        /* A deliberate bug for the chaos suite's negative control
         * (tests/chaos/batond-wallclock): the leader times leases and
         * waits by the wall clock, so a step forward (clock-jump,
         * clock-strobe) expires sessions whose clients still hold a valid
         * lease. Never built into batond. */
        return (uint64_t)((int64_t)wall_ms() - h->bug_wall_base);
#else
        return uv_now(h->loop);
#endif
}

static void on_timer(uv_timer_t *t);

/* gateway_host.timer: the uv timer, for what is left of the wait on
 * timer_ms()'s clock, as the core counts it. */
static void timer_op(struct gateway_host *ops, uint64_t at_ms)
{
        struct corehost *h = ops->data;
        uint64_t now;

        if (at_ms == GATEWAY_NEVER) {
                uv_timer_stop(&h->timer);
                return;
        }
        now = timer_ms(h);
        uv_timer_start(&h->timer, on_timer, at_ms > now ? at_ms - now : 0, 0);
}

static void on_timer(uv_timer_t *t)
{
        struct corehost *h = t->data;
        struct gateway_now now = corehost_clocks(h);

        now.ms = timer_ms(h);
        corehost_enter(h);
        gateway_on_timer(&h->core, &now);
        corehost_leave(h);
}

/* --- Inputs from the node --------------------------------------------- */

/* The node serves from now on: its flag was set right before this call
 * (node.c), in the term its barrier was applied in, which is raft's
 * current one. */
static void on_ready(void *data)
{
        struct corehost *h = data;
        struct gateway_now now = corehost_clocks(h);

        corehost_enter(h);
        gateway_on_ready(&h->core, &now, node_term(h->node));
        corehost_leave(h);
}

static void on_lost(void *data)
{
        struct corehost *h = data;
        struct gateway_now now = corehost_clocks(h);

        corehost_enter(h);
        gateway_on_lost(&h->core, &now);
        corehost_leave(h);
}

static void on_restored(void *data)
{
        struct corehost *h = data;

        corehost_enter(h);
        gateway_on_restored(&h->core);
        corehost_leave(h);
}

void corehost_node_callbacks(struct corehost *h, struct node_callbacks *cb)
{
        cb->ready = on_ready;
        cb->lost = on_lost;
        cb->restored = on_restored;
        cb->data = h;
}

/* A state machine event: its line is written before the core acts on it,
 * so that the line's mono_ns comes before every answer the event gives
 * (the checkers place applies between client operations by it). The
 * nanoseconds are read once per entry: a batch's events answer up to 256
 * requests. */
static void on_event(void *data, const struct lockfsm_event *ev)
{
        struct corehost *h = data;
        uint64_t term = node_entry_term(h->node);
        struct gateway_now now;

        applylog_write(&h->applylog, term, ev);
        if (ev->index != h->ev_index) {
                h->ev_index = ev->index;
                h->ev_ns = uv_hrtime();
        }
        now.ms = uv_now(h->loop);
        now.ns = h->ev_ns;
        corehost_enter(h);
        gateway_on_event(&h->core, &now, term, ev);
        corehost_leave(h);
}

/* The end of an entry's events: the apply log's alone. */
static void on_entry(void *data, uint64_t index, uint8_t kind)
{
        struct corehost *h = data;

        applylog_write_entry(&h->applylog, node_entry_term(h->node), index,
                             kind);
}

/* An ACL entry: its line comes after the lock state machine's answer to
 * it and before its ENTRY line, as for any entry; term 0, as ACL lines
 * have always had. */
static void on_acl(void *data, uint64_t index, const struct command *c,
                   int status)
{
        struct corehost *h = data;

        applylog_write_acl(&h->applylog, 0, index, c, status);
        corehost_enter(h);
        gateway_on_acl(&h->core, index, c, status);
        corehost_leave(h);
}

/* gateway_host.hash_secret: as the client hashed it for OPEN. */
static int hash_secret(struct gateway_host *ops, const uint8_t *secret,
                       uint8_t *hash)
{
        (void)ops;
        return attach_hash(secret, hash);
}

/* gateway_host.backup_start and backup_chunk: backup.h. */
static int backup_start_op(struct gateway_host *ops, struct gateway_conn *c,
                           uint64_t id)
{
        struct corehost *h = ops->data;

        return backup_start(&h->backups, coreconn_conn(c), id);
}

static int backup_chunk_op(struct gateway_host *ops, struct gateway_conn *c,
                           uint64_t id, const struct proto_backup *req)
{
        struct corehost *h = ops->data;

        return backup_chunk(&h->backups, coreconn_conn(c), id, req);
}

/* gateway_host.alarms: the state machine's digest differed from the
 * leader's (fsmdigest.h), as GET /ready's "diverged". */
static void alarms_op(struct gateway_host *ops, struct proto_alarms *out)
{
        struct corehost *h = ops->data;
        const struct fsmdigest *d = node_digest(h->node);

        if (d->diverged) {
                out->alarms |= PROTO_ALARM_DIVERGED;
                out->diverged_index = d->diverged_index;
                out->digest = d->diverged_own;
                out->leader_digest = d->diverged_leader;
        }
}

/* gateway_host.log: the core's line, as it formatted it. */
static void log_op(struct gateway_host *ops, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        (void)ops;
        log_write_fields(level, f, "%s", message);
}

/* gateway_host.audit: the core's line, to audit-log. */
static void audit_op(struct gateway_host *ops, const struct audit_event *e)
{
        struct corehost *h = ops->data;

        audit_write(&h->audit, e);
}

int corehost_init(struct corehost *h, uv_loop_t *loop, struct node *node,
                  const struct config *cfg)
{
        int rv;

        h->loop = loop;
        h->node = node;
        h->cfg = cfg;
        h->ev_index = 0;
        h->depth = 0;
        queue_init(&h->gone);
        corequery_init(&h->query, node);
        h->query.ops.data = h;
        h->query.ops.hash_secret = hash_secret;
        h->query.ops.backup_start = backup_start_op;
        h->query.ops.backup_chunk = backup_chunk_op;
        h->query.ops.alarms = alarms_op;
        h->query.ops.log = log_op;
        h->query.ops.audit = audit_op;
        h->query.ops.timer = timer_op;
        corereq_init(&h->query.ops);
        coreconn_init(&h->query.ops);
#ifdef BATON_CHAOS_BUG_WALLCLOCK
        h->bug_wall_base = (int64_t)wall_ms() - (int64_t)uv_now(loop);
#endif
        backups_init(&h->backups, loop, node);
        rv = applylog_open(&h->applylog, cfg->apply_log);
        if (rv != 0) {
                snprintf(h->errmsg, sizeof h->errmsg,
                         "cannot open the apply log %s: %s", cfg->apply_log,
                         strerror(errno));
                goto err;
        }
        rv = audit_open(&h->audit, cfg->audit_log, cfg->id);
        if (rv != 0) {
                snprintf(h->errmsg, sizeof h->errmsg,
                         "cannot open the audit log %s: %s", cfg->audit_log,
                         strerror(errno));
                goto err_after_applylog;
        }
        rv = gateway_init(&h->core, &h->query.ops, cfg, cfg->log_level);
        if (rv != 0) {
                snprintf(h->errmsg, sizeof h->errmsg,
                         "cannot set up the request core: %s",
                         baton_strerror(rv));
                goto err_after_audit;
        }
        /* After the core: a failed init leaves no handle to close, and the
         * core arms nothing before its first input. */
        uv_timer_init(loop, &h->timer);
        h->timer.data = h;
        node_set_event_cb(node, on_event, h);
        node_set_entry_cb(node, on_entry, h);
        node_set_acl_cb(node, on_acl, h);
        return 0;

err_after_audit:
        audit_close(&h->audit);
err_after_applylog:
        applylog_close(&h->applylog);
err:
        return rv;
}

void corehost_close(struct corehost *h)
{
        struct gateway_now now = corehost_clocks(h);

        node_set_event_cb(h->node, NULL, NULL);
        node_set_entry_cb(h->node, NULL, NULL);
        node_set_acl_cb(h->node, NULL, NULL);
        corehost_enter(h);
        gateway_close(&h->core, &now);
        corehost_leave(h);
        uv_close((uv_handle_t *)&h->timer, NULL);
        backup_forget_conn(&h->backups, NULL);
        applylog_close(&h->applylog);
        audit_close(&h->audit);
}

void corehost_reopen_logs(struct corehost *h)
{
        const char *what[] = {"apply log", "audit log"};
        const char *path[] = {h->cfg->apply_log, h->cfg->audit_log};
        unsigned i;
        int rv;

        for (i = 0; i < 2; i++) {
                if (path[i][0] == '\0') {
                        continue;
                }
                rv = i == 0 ? applylog_reopen(&h->applylog, path[i])
                            : audit_reopen(&h->audit);
                if (rv != 0) {
                        log_error("SIGHUP: cannot reopen the %s %s: %s; "
                                  "writing to the file it had open",
                                  what[i], path[i], strerror(errno));
                        continue;
                }
                log_info("SIGHUP: %s %s reopened", what[i], path[i]);
        }
}

void corehost_on_frame(void *data, struct conn *c,
                       const struct proto_header *hdr, const uint8_t *body)
{
        struct corehost *h = data;
        struct gateway_now now = corehost_clocks(h);

        corehost_enter(h);
        gateway_on_frame(&h->core, &now, &c->gw, hdr, body);
        corehost_leave(h);
}

/* Net drops a connection inside one of the core's connection ops when
 * conn_fail() cannot queue its ERROR frame (it was closing already, or
 * out of memory): the core may be walking the very list the report would
 * take the connection's records off (watches.c's deliver()), so the
 * report waits for the input to return (corehost_leave()). */
void corehost_on_gone(void *data, struct conn *c)
{
        struct corehost *h = data;

        if (h->depth > 0) {
                queue_push_tail(&h->gone, &c->gw.host_link);
                return;
        }
        gone_now(h, c);
}

void corehost_flush(struct corehost *h)
{
        struct gateway_now now;

        /* Only a serving leader proposes: a follower's loop turns read no
         * clock for a flush that would do nothing (the wall clock costs
         * about 5 us a read under the chaos suite's libfaketime). */
        if (!h->core.serving) {
                return;
        }
        now = corehost_clocks(h);
        corehost_enter(h);
        gateway_flush(&h->core, &now, wall_ms());
        corehost_leave(h);
}
