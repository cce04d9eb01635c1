/* Prometheus text metrics over a minimal HTTP endpoint (optional). */
#include "metrics.h"

#include <inttypes.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "../config/roles.h"
#include "../gateway/access.h"
#include "../raft/fsmdigest.h"
#include "../raft/raftfsm.h"
#include "../raft/stallwatch.h"
#include "../snap/snapimage.h"
#include "../snap/snapkeep.h"
#include "../snap/snapspill.h"
#include "metricsnode.h"
#include "promtext.h"
#include "quotametrics.h"

static const char *const kind_names[GATEWAY_N_KINDS] = {
    "open",      "close", "acquire", "release", "cancel",
    "keepalive", "query", "check",   "list"};

static const char *const stage_names[GATEWAY_N_STAGES] = {"queued", "raft"};

/* The label of result `r` (gateway_stats.results): "ok", or the error's
 * name lower-cased without its BATON_ prefix ("ebusy"). */
static const char *result_name(unsigned r, char *buf, size_t size)
{
        const char *name = baton_errname(-(int)r);
        size_t i;

        if (r == 0) {
                return "ok";
        }
        name += strncmp(name, "BATON_", 6) == 0 ? 6 : 0;
        for (i = 0; name[i] != '\0' && i + 1 < size; i++) {
                buf[i] = (char)tolower((unsigned char)name[i]);
        }
        buf[i] = '\0';
        return buf;
}

/* Answers by type and result: ok always, each error once it was seen, so
 * the series are bounded by the types times the error codes. */
static void requests(struct promtext *o, const struct gateway_stats *st)
{
        char buf[32];
        unsigned k, r;

        promtext_put(o, "# HELP baton_requests_total Client requests "
                        "answered, by type and result (ok, or the error "
                        "code: ebusy, enotleader, eperm...), redirects and "
                        "refusals included.\n"
                        "# TYPE baton_requests_total counter\n");
        for (k = 0; k < GATEWAY_N_KINDS; k++) {
                for (r = 0; r < GATEWAY_N_RESULTS; r++) {
                        if (r != 0 && st->results[k][r] == 0) {
                                continue;
                        }
                        promtext_put(o,
                                     "baton_requests_total{type=\"%s\","
                                     "result=\"%s\"} %" PRIu64 "\n",
                                     kind_names[k],
                                     result_name(r, buf, sizeof buf),
                                     st->results[k][r]);
                }
        }
}

static void latencies(struct promtext *o, const struct gateway_stats *st)
{
        unsigned k;

        requests(o, st);
        promtext_put(
            o, "# HELP baton_request_duration_seconds Time from a request's "
               "arrival to its answer, by type.\n"
               "# TYPE baton_request_duration_seconds histogram\n");
        for (k = 0; k < GATEWAY_N_KINDS; k++) {
                promtext_histogram(o, "baton_request_duration_seconds", "type",
                                   kind_names[k], &st->latency[k],
                                   histogram_bounds_us);
        }
        promtext_put(
            o, "# HELP baton_command_stage_seconds Where a command's time "
               "went on the leader: queued (arrival to raft_apply, the group "
               "commit wait) and raft (raft_apply to its entry applied: the "
               "leader's disk write and a majority's acknowledgements).\n"
               "# TYPE baton_command_stage_seconds histogram\n");
        for (k = 0; k < GATEWAY_N_STAGES; k++) {
                promtext_histogram(o, "baton_command_stage_seconds", "stage",
                                   stage_names[k], &st->stages[k],
                                   histogram_bounds_us);
        }
}

/* What a node keeps to hand over at its next snapshot (snapkeep.h), and
 * how much of its tail moved into files (snapspill.h). */
static void snapshot_kept(struct promtext *o, const struct snapkeep *k,
                          const struct snapspill *sp)
{
        const struct snapimage_bytes *image =
            k->image != NULL ? snapkeep_image(k) : NULL;

        promtext_gauge(o, "baton_snapshot_kept_image_bytes",
                       "The snapshot image kept to hand over again, in bytes.",
                       image != NULL ? image->len : 0);
        promtext_gauge(
            o, "baton_snapshot_kept_image_on_disk",
            "1 when that image is in a file of the data directory, whose "
            "pages the kernel may drop, 0 when it is in memory.",
            image != NULL && image->on_disk);
        promtext_gauge(
            o, "baton_snapshot_kept_tail_bytes",
            "The entries applied since that image, kept to hand over "
            "with it, in bytes.",
            snapkeep_size(k) - (image != NULL ? image->len : 0));
        promtext_gauge(
            o, "baton_snapshot_kept_tail_on_disk_bytes",
            "Of those, the bytes in files of the data directory; the "
            "rest is in memory.",
            snapkeep_spilled(k));
        promtext_counter(
            o, "baton_snapshot_tail_spills_total",
            "Tail segments written into files of the data directory.",
            sp->n_spilled);
        promtext_counter(
            o, "baton_snapshot_tail_spill_failures_total",
            "Tail segments that could not be written into a file (a "
            "full disk): the tail stays in memory, tried again at each "
            "snapshot.",
            sp->n_failed);
}

/* Snapshot images (snapimage.h): what they cost the loop and how they
 * fared. */
static void snapshot_images(struct promtext *o, const struct snapimage *im)
{
        promtext_counter(o, "baton_snapshot_images_total",
                         "Snapshot images made of the state.", im->n_made);
        promtext_counter(
            o, "baton_snapshot_image_failures_total",
            "Snapshot image children that failed; the next snapshot "
            "starts a new one.",
            im->n_failed);
        promtext_counter(
            o, "baton_snapshot_images_cancelled_total",
            "Snapshot image children killed before they finished: the "
            "state they were of was replaced, or they took so long that "
            "a newer image was started.",
            im->n_cancelled);
        promtext_counter(
            o, "baton_snapshot_images_inline_total",
            "Snapshot images encoded on the event loop because fork() "
            "failed.",
            im->n_inline);
        promtext_put(
            o,
            "# HELP baton_snapshot_fork_seconds What the event loop paid "
            "for fork() at the last snapshot image (it grows with the "
            "state's memory).\n# TYPE baton_snapshot_fork_seconds gauge\n"
            "baton_snapshot_fork_seconds %.6f\n"
            "# HELP baton_snapshot_fork_max_seconds The longest fork() "
            "since start.\n# TYPE baton_snapshot_fork_max_seconds gauge\n"
            "baton_snapshot_fork_max_seconds %.6f\n"
            "# HELP baton_snapshot_image_seconds How long the last snapshot "
            "image took to make, off the loop.\n"
            "# TYPE baton_snapshot_image_seconds gauge\n"
            "baton_snapshot_image_seconds %.6f\n",
            (double)im->fork_us_last / 1e6, (double)im->fork_us_max / 1e6,
            (double)im->make_us_last / 1e6);
}

/* Snapshots installed from the leader, decoded on a worker thread. */
static void snapshot_restores(struct promtext *o,
                              const struct raftfsm_restores *r)
{
        promtext_counter(
            o, "baton_snapshot_restores_total",
            "Snapshots installed from the leader and decoded off the "
            "event loop.",
            r->started);
        promtext_gauge(
            o, "baton_snapshot_restoring",
            "1 while a snapshot is being decoded off the loop, or the "
            "entries applied meanwhile wait to be applied to it.",
            r->pending ? 1 : 0);
        promtext_put(o,
                     "# HELP baton_snapshot_restore_seconds How long the last "
                     "snapshot installed took to decode, off the loop.\n"
                     "# TYPE baton_snapshot_restore_seconds gauge\n"
                     "baton_snapshot_restore_seconds %.6f\n",
                     (double)r->decode_us / 1e6);
}

/* Snapshots taken and installed. */
static void snapshots(struct promtext *o, struct node *n)
{
        struct raftfsm_restores rs;

        snapshot_images(o, node_snapimage(n));
        snapshot_kept(o, node_snapkeep(n), node_snapspill(n));
        node_restores(n, &rs);
        snapshot_restores(o, &rs);
        promtext_gauge(
            o, "baton_snapshot_index",
            "Index of the last snapshot of the state this node made: "
            "taken for raft, installed from the leader, or handed to a "
            "backup (batonctl snapshot save).",
            node_last_snapshot(n));
}

/* The state digests compared through the log (fsmdigest.h). */
static void digests(struct promtext *o, const struct fsmdigest *d)
{
        promtext_counter(
            o, "baton_fsm_digests_total",
            "Digests of the state machine this node made, one every "
            "digest-interval entries, in a forked child.",
            d->n_made);
        promtext_counter(
            o, "baton_fsm_digest_checked_total",
            "DIGEST entries whose digest this node compared with its "
            "own of the same index.",
            d->n_checked);
        promtext_counter(
            o, "baton_fsm_digest_mismatch_total",
            "Of those, digests that differed: this node's state is not "
            "the leader's (GET /ready: diverged).",
            d->n_mismatch);
        promtext_counter(
            o, "baton_fsm_digest_unknown_total",
            "DIGEST entries of an index this node has no digest of "
            "(installed a snapshot past it, or missed it): skipped.",
            d->n_unknown + d->n_missed);
        promtext_gauge(
            o, "baton_fsm_diverged",
            "1 once this node's state machine digest differed from the "
            "leader's, until it restarts.",
            d->diverged ? 1 : 0);
        promtext_put(
            o,
            "# HELP baton_fsm_digest_fork_seconds What the event loop paid "
            "for fork() at the last digest.\n"
            "# TYPE baton_fsm_digest_fork_seconds gauge\n"
            "baton_fsm_digest_fork_seconds %.6f\n"
            "# HELP baton_fsm_digest_fork_max_seconds The longest of them "
            "since start.\n# TYPE baton_fsm_digest_fork_max_seconds gauge\n"
            "baton_fsm_digest_fork_max_seconds %.6f\n"
            "# HELP baton_fsm_digest_seconds How long the last digest took "
            "to make, off the loop.\n"
            "# TYPE baton_fsm_digest_seconds gauge\n"
            "baton_fsm_digest_seconds %.6f\n",
            (double)d->image.fork_us_last / 1e6,
            (double)d->image.fork_us_max / 1e6,
            (double)d->image.make_us_last / 1e6);
}

/* What the lock state machine holds, and the memory its records take. */
static void state_gauges(struct promtext *o, const struct lockfsm_stats *fs)
{
        promtext_gauge(o, "baton_sessions", "Live sessions.", fs->sessions);
        promtext_gauge(o, "baton_locks", "Locks held.", fs->locks);
        promtext_gauge(o, "baton_waiters", "Queued waiters.", fs->waiters);
        promtext_gauge(o, "baton_state_record_bytes",
                       "Bytes the state machine's sessions, locks, holds and "
                       "outcomes take, each rounded to 8.",
                       fs->record_bytes);
        promtext_gauge(
            o, "baton_state_slab_bytes",
            "Bytes committed in slabs for those records; freed records' "
            "room stays committed for new ones.",
            fs->slab_bytes);
}

/* The data directory's room and raft's writes into it, and how long a
 * leader's entries wait to be committed (stallwatch.h). */
static void disk(struct promtext *o, const struct stallwatch *w)
{
        unsigned k;

        /* Not sampled yet (the first sample is taken at start), or not
         * counted by the file system: left out rather than 0. */
        if (w->space.known) {
                promtext_gauge(
                    o, "baton_data_dir_free_bytes",
                    "Bytes free in the data directory's file system for an "
                    "unprivileged process (statvfs f_bavail), sampled "
                    "every second; raft needs 8 MiB free to start a new "
                    "log segment.",
                    w->space.free_bytes);
                promtext_gauge(o, "baton_data_dir_size_bytes",
                               "Size of the data directory's file system.",
                               w->space.size_bytes);
        }
        if (w->space.known && w->space.free_inodes != UINT64_MAX) {
                promtext_gauge(
                    o, "baton_data_dir_free_inodes",
                    "Inodes free in the data directory's file system.",
                    w->space.free_inodes);
        }
        promtext_put(
            o, "# HELP baton_disk_write_errors_total Writes into the data "
               "directory that raft tried and that failed (each is retried "
               "every second), by kind: creating a log segment, writing "
               "entries into one, creating a snapshot's files.\n"
               "# TYPE baton_disk_write_errors_total counter\n");
        for (k = 0; k < DISKFULL_N_KINDS; k++) {
                promtext_put(
                    o,
                    "baton_disk_write_errors_total{kind=\"%s\"} %" PRIu64 "\n",
                    diskfull_kind_name(k), w->disk.errors[k]);
        }
        promtext_gauge(
            o, "baton_disk_write_failing",
            "1 while raft cannot write to the data directory: its writes "
            "fail, or its log has no room left and the file system none "
            "to give (GET /ready: disk-full or disk-error); 0 otherwise.",
            stallwatch_disk_errno(w) != 0 ? 1 : 0);
        promtext_counter(
            o, "baton_disk_write_episodes_total",
            "Times raft could not write to the data directory, each "
            "from its first sign until it writes again.",
            w->disk.episodes);
        promtext_put(
            o,
            "# HELP baton_raft_uncommitted_seconds On the leader, how long "
            "its oldest uncommitted entry has waited (GET /ready: "
            "cannot-commit past an election timeout); 0 elsewhere.\n"
            "# TYPE baton_raft_uncommitted_seconds gauge\n"
            "baton_raft_uncommitted_seconds %.3f\n",
            (double)stallwatch_uncommitted_ms(w) / 1e3);
}

/* Durations as a histogram, NAME_seconds, and the longest of them,
 * NAME_max_seconds; `what` names one in the second's help. */
static void durations(struct promtext *o, const char *name, const char *help,
                      const char *what, const struct histogram *h)
{
        char full[64];

        snprintf(full, sizeof full, "%s_seconds", name);
        promtext_put(o, "# HELP %s %s\n# TYPE %s histogram\n", full, help,
                     full);
        promtext_histogram(o, full, NULL, NULL, h, histogram_bounds_us);
        promtext_put(o,
                     "# HELP %s_max_seconds The longest %s since start.\n"
                     "# TYPE %s_max_seconds gauge\n%s_max_seconds %.6f\n",
                     name, what, name, name, (double)h->max_us / 1e6);
}

/* The client port's connections and the metrics port's requests. */
static void ports(struct promtext *o, const struct metrics *m)
{
        promtext_gauge(o, "baton_connections", "Open client connections.",
                       m->conns->n);
        promtext_counter(o, "baton_connections_refused_total",
                         "Client connections refused at a connection limit.",
                         m->conns->refused);
        promtext_counter(o, "baton_connections_tls_refused_total",
                         "Client connections refused for their TLS: a failed "
                         "handshake, a refused certificate, plain text.",
                         m->conns->tls_refused);
        promtext_counter(
            o, "baton_connections_timed_out_total",
            "Client connections closed at the handshake or idle timeout.",
            m->conns->timed_out);
        promtext_counter(
            o, "baton_tls_handshakes_deferred_total",
            "TLS handshake steps that waited for a later turn of the "
            "loop: a turn gives handshakes at most 5 ms.",
            m->conns->handshakes.deferred);
        promtext_counter(
            o, "baton_metrics_scrapes_total",
            "Requests the metrics port answered (health, readiness, "
            "metrics, refusals).",
            m->http.served);
        promtext_counter(
            o, "baton_metrics_forbidden_total",
            "Metrics-port requests answered 403: metrics over plain "
            "HTTP, or over TLS with a certificate of neither the read nor "
            "the admin role.",
            m->http.forbidden);
}

/* The HTTP API's connections and requests, when it is on. */
static void api_counts(struct promtext *o, const struct httpapi *a)
{
        if (a == NULL || !a->active) {
                return;
        }
        promtext_gauge(o, "baton_http_connections",
                       "Open HTTP API connections.", a->conns.n);
        promtext_counter(
            o, "baton_http_connections_refused_total",
            "HTTP API connections refused at a connection limit (429).",
            a->conns.refused);
        promtext_counter(
            o, "baton_http_connections_timed_out_total",
            "HTTP API connections closed at the handshake, idle or "
            "request timeout.",
            a->conns.timed_out);
        promtext_counter(
            o, "baton_http_requests_total",
            "HTTP API requests answered (a watch counts once, when its "
            "stream starts).",
            a->served);
        promtext_counter(
            o, "baton_http_refused_total",
            "HTTP API requests refused before they reached the cluster: "
            "unreadable, too large, too slow, no such endpoint, a bad "
            "body or header.",
            a->refused);
}

/* The audit trail's lines, when audit-log is set. */
static void audit_counts(struct promtext *o, const struct audit *a)
{
        if (!audit_on(a)) {
                return;
        }
        promtext_counter(o, "baton_audit_lines_total",
                         "Lines this node wrote to its audit log: admin "
                         "requests served, requests refused.",
                         a->lines);
        promtext_counter(o, "baton_audit_write_errors_total",
                         "Audit log lines lost: a write that failed or was "
                         "cut short (a full disk).",
                         a->lost);
}

/* With TLS: the time the node's certificate has left. */
static void cert_expiry(struct promtext *o, const struct certwatch *w)
{
        if (w == NULL || w->not_after == 0) {
                return;
        }
        promtext_put(
            o,
            "# HELP baton_tls_cert_expiry_seconds Seconds until this node's "
            "certificate (tls-cert) expires; negative once it has.\n"
            "# TYPE baton_tls_cert_expiry_seconds gauge\n"
            "baton_tls_cert_expiry_seconds %lld\n",
            (long long)certwatch_left(w, (int64_t)time(NULL)));
}

size_t metrics_render(const struct metrics *m, char *buf, size_t cap)
{
        const struct gateway_stats *st = &m->gateway->stats;
        struct proto_status ns;
        struct lockfsm_stats fs;
        struct promtext o = {buf, cap, 0};
        char help[128];

        lockfsm_stats(node_lockfsm_nowait(m->node), &fs);
        node_status(m->node, &ns);
        latencies(&o, st);
        snprintf(help, sizeof help,
                 "How late a timer due every %d ms fired: time the event "
                 "loop spent on one task.",
                 LOOPLAG_PERIOD_MS);
        durations(&o, "baton_loop_lag", help, "loop lag", &m->looplag->lag);
        durations(&o, "baton_heap_trim",
                  "How long giving the heap's free memory back to the kernel "
                  "took, after a snapshot.",
                  "heap trim", &m->memtrim->took);
        promtext_gauge(&o, "baton_is_leader",
                       "1 when this node is the serving leader.",
                       node_serving(m->node) ? 1 : 0);
        state_gauges(&o, &fs);
        quotametrics_render(&o, node_acl(m->node), node_lockfsm_nowait(m->node),
                            st->quota_refused);
        promtext_counter(&o, "baton_expirations_total",
                         "Session expiries this node proposed as leader.",
                         st->expirations);
        promtext_counter(&o, "baton_wait_timeouts_total",
                         "Wait deadlines this node proposed as leader.",
                         st->timeouts);
        promtext_counter(&o, "baton_proposed_commands_total",
                         "Commands this node proposed as leader.",
                         st->proposed);
        promtext_counter(
            &o, "baton_proposed_entries_total",
            "Log entries (batches of commands) this node proposed as "
            "leader.",
            st->batches);
        promtext_counter(&o, "baton_applied_commands_total",
                         "Commands this node's state machine applied.",
                         st->applied);
        promtext_counter(&o, "baton_barriers_total",
                         "Barriers for linearizable reads and keepalives.",
                         st->barriers);
        promtext_counter(&o, "baton_redirects_total", "NOT_LEADER answers.",
                         st->redirects);
        promtext_counter(
            &o, "baton_refused_total",
            "Requests refused BATON_EPERM: the client's role, or a "
            "session it has not attached to.",
            st->refused);
        promtext_counter(
            &o, "baton_unknown_outcomes_total",
            "Requests answered 'outcome unknown' after losing leadership.",
            st->unknown);
        snapshots(&o, m->node);
        digests(&o, node_digest(m->node));
        disk(&o, node_stallwatch(m->node));
        promtext_gauge(&o, "baton_raft_term", "Current raft term.", ns.term);
        promtext_gauge(&o, "baton_raft_commit_index", "Raft commit index.",
                       ns.commit_index);
        promtext_gauge(&o, "baton_raft_applied_index",
                       "Last applied raft index.", ns.applied_index);
        promtext_gauge(&o, "baton_raft_last_index", "Last raft log index.",
                       ns.last_index);
        ports(&o, m);
        api_counts(&o, m->api);
        audit_counts(&o, m->audit);
        cert_expiry(&o, m->certwatch);
        metricsnode_render(&o, m);
        return o.len;
}

void metrics_health_facts(const struct metrics *m, struct health_facts *f)
{
        const struct stallwatch *w = node_stallwatch(m->node);
        const struct fsmdigest *d = node_digest(m->node);
        struct proto_status ns;

        node_status(m->node, &ns);
        f->node = m->node->cfg->id;
        f->role = ns.role;
        f->serving = node_serving(m->node);
        f->term = ns.term;
        f->leader = ns.leader_id;
        f->commit_index = ns.commit_index;
        f->applied_index = ns.applied_index;
        f->leader_commit = node_leader_commit(m->node);
        f->max_lag = m->node->cfg->ready_max_lag;
        f->disk_errno = stallwatch_disk_errno(w);
        f->disk_failing_ms = stallwatch_disk_failing_ms(w);
        f->uncommitted_ms = stallwatch_uncommitted_ms(w);
        f->commit_bound_ms = m->node->cfg->election_timeout_ms;
        f->diverged = d->diverged;
        f->diverged_index = d->diverged_index;
        f->diverged_own = d->diverged_own;
        f->diverged_leader = d->diverged_leader;
}

/* The role of a scraper's certificate identity, the one lookup of the
 * metrics port: the client port's (access.h: the cluster's access list
 * once applied, else the config's lines). No certificate (identity "") is role
 * none, whatever default-role says: the port lets such a client in for
 * /health and /ready only. */
static enum roles_role scraper_role(const struct metrics *m,
                                    const char *identity)
{
        if (identity == NULL || identity[0] == '\0') {
                return ROLES_NONE;
        }
        return access_role(m->gateway, identity);
}

/* GET /health and GET /ready get their JSON; every other path, metrics;
 * each as scrapegate_decide() allows. */
static size_t render(void *data, const struct scrape_request *req,
                     struct scrape_reply *r, char *buf, size_t cap)
{
        const struct metrics *m = data;
        enum scrapegate_path path = scrapegate_path(req->path);
        int role = req->tls && path == SCRAPEGATE_METRICS
                       ? (int)scraper_role(m, req->identity)
                       : ROLES_NONE;
        enum scrapegate_answer a =
            scrapegate_decide(&m->port, req->tls, path, role);
        struct health_facts f;
        bool ready = path == SCRAPEGATE_READY;

        if (a == SCRAPEGATE_NEEDS_TLS || a == SCRAPEGATE_NEEDS_ROLE) {
                r->status = 403;
                r->content_type = "text/plain; charset=utf-8";
                return scrapegate_refusal(
                    a, &m->port, req->identity,
                    a == SCRAPEGATE_NEEDS_ROLE ? roles_name(role) : NULL, buf,
                    cap);
        }
        if (path == SCRAPEGATE_METRICS) {
                return metrics_render(m, buf, cap);
        }
        metrics_health_facts(m, &f);
        r->content_type = "application/json";
        if (a == SCRAPEGATE_LIVENESS) {
                return health_render_liveness(&f, ready, buf, cap, &r->status);
        }
        return health_render(&f, ready, buf, cap, &r->status);
}

int metrics_start(struct metrics *m, uv_loop_t *loop,
                  const struct metrics_settings *set, struct gateway *g,
                  struct node *n, struct conn_set *conns,
                  const struct looplag *lag, const struct memtrim *trim)
{
        int rv;

        memset(m, 0, sizeof *m);
        m->loop = loop;
        m->gateway = g;
        m->node = n;
        m->conns = conns;
        m->looplag = lag;
        m->memtrim = trim;
        m->port.tls = set->tls != NULL;
        m->port.loopback = set->loopback;
        if (set->address == NULL || set->address[0] == '\0') {
                return 0;
        }
        rv = scrape_listen(&m->http, loop, set->address, set->max_conns,
                           set->timeout_ms, set->tls, render, m);
        if (rv != 0) {
                return rv;
        }
        m->active = 1;
        return 0;
}

void metrics_set_audit(struct metrics *m, struct audit *a)
{
        m->audit = a;
        m->http.audit = a;
}

void metrics_close(struct metrics *m)
{
        if (m->active) {
                scrape_close(&m->http);
                m->active = 0;
        }
}
