/* One batond Raft node, and batond's only way into libraft: raft_uv on a data
 * dir, bootstrap, leadership, proposals, barriers and membership changes. */
#include "node.h"

#include <errno.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <raft.h>
#include <raft/uv.h>

#include "../../../include/baton/cluster.h"
#include "../../../include/baton/errors.h"
#include "../base/log.h"
#include "../snap/snapspill.h"
#include "handover.h"
#include "heard.h"
#include "leaderloss.h"
#include "nodecore.h"
#include "peer.h"
#include "peercheck.h"
#include "plaintcp.h"
#include "rafterr.h"
#include "raftfsm.h"
#include "rafttcp.h"
#include "raftview.h"
#include "stallwatch.h"

/* configure requires 0.22.1 or later; so does the build. */
#if RAFT_VERSION_NUMBER < 2201
#error "Baton needs libraft 0.22.1 or later"
#endif

_Static_assert((int)BATON_ROLE_UNAVAILABLE == (int)RAFT_UNAVAILABLE &&
                   (int)BATON_ROLE_FOLLOWER == (int)RAFT_FOLLOWER &&
                   (int)BATON_ROLE_CANDIDATE == (int)RAFT_CANDIDATE &&
                   (int)BATON_ROLE_LEADER == (int)RAFT_LEADER,
               "node roles must be numbered as libraft numbers them");
_Static_assert((int)BATON_MEMBER_STANDBY == (int)RAFT_STANDBY &&
                   (int)BATON_MEMBER_VOTER == (int)RAFT_VOTER &&
                   (int)BATON_MEMBER_SPARE == (int)RAFT_SPARE,
               "member roles must be numbered as libraft numbers them");

/* How long a leader waits for a follower to answer an InstallSnapshot
 * before sending it again. A follower still installing an older snapshot
 * ignores a newer one (libraft 0.22.1, replicationInstallSnapshot), so
 * with libraft's 30 s a follower that fell behind twice stays behind that
 * long (docs/raft.md). */
#define INSTALL_SNAPSHOT_TIMEOUT_MS 5000

/* How soon raft dials a peer again after a connection failed. With
 * libraft's 1 s, a leader whose follower had just restarted reached it up
 * to a second later, and the follower was not ready until then. A refused
 * connection costs next to nothing, and a failure is logged at debug
 * level only (peer.c), except name resolution's (docs/raft.md). */
#define CONNECT_RETRY_DELAY_MS 200

static void on_barrier(struct raft_barrier *req, int status)
{
        struct node *n = req->data;
        struct raft *r = &n->core->raft;

        n->barrier_pending = false;
        if (status != 0 || raft_state(r) != RAFT_LEADER ||
            raft_current_term(r) != n->serving_term) {
                return; /* the monitor tries again if still leader */
        }
        n->serving = true;
        log_info("serving as leader in term %llu (applied %llu)",
                 (unsigned long long)n->serving_term,
                 (unsigned long long)raft_last_applied(r));
        if (n->cb.ready != NULL) {
                n->cb.ready(n->cb.data);
        }
}

/* Runs before every loop poll: the legacy (raft_io) interface of libraft
 * has no state-change callback. */
/* Say each snapshot installed from the leader once it is adopted, and
 * tell the node's user. */
static void log_restores(struct node *n)
{
        struct node_core *c = n->core;
        struct raftfsm_restores rs;

        raftfsm_restores(&c->rf, &rs);
        if (rs.started == c->restores_logged || rs.pending) {
                return;
        }
        c->restores_logged = rs.started;
        log_info("installed the leader's snapshot: applied through index "
                 "%llu, decoded in %.3f s off the loop",
                 (unsigned long long)raft_last_applied(&c->raft),
                 (double)rs.decode_us / 1e6);
        if (n->cb.restored != NULL) {
                n->cb.restored(n->cb.data);
        }
}

/* InstallSnapshots heard.h dropped: each comes again a little later. */
static void log_dropped_installs(struct node *n)
{
        struct node_core *c = n->core;

        if (c->heard.installs_dropped == c->drops_logged) {
                return;
        }
        c->drops_logged = c->heard.installs_dropped;
        log_info("held off the leader's snapshot while writing or installing "
                 "one (%llu so far); it comes again",
                 (unsigned long long)c->drops_logged);
}

/* A snapshot tail that could not be written into a file (snapspill.h),
 * most likely a full disk: it stays in memory, and each snapshot tries
 * again. Said at the 1st, 2nd, 4th, 8th... failure, so that a disk that
 * stays full fills the log with a line per doubling, not per snapshot;
 * and said again when a spill works after them. At most one spill ends
 * per turn of the loop, so one look per turn sees each. */
static void log_spills(struct node *n)
{
        struct node_core *c = n->core;
        const struct snapspill *sp = raftfsm_spills(&c->rf);

        if (sp->n_spilled != c->spills_seen) {
                c->spills_seen = sp->n_spilled;
                if (c->spill_failing) {
                        c->spill_failing = false;
                        log_info("snapshot tail: written into %s again, "
                                 "after %llu failures in all",
                                 n->cfg->data_dir,
                                 (unsigned long long)sp->n_failed);
                }
        }
        if (sp->n_failed == c->spill_fails_seen) {
                return;
        }
        c->spill_fails_seen = sp->n_failed;
        c->spill_failing = true;
        if ((sp->n_failed & (sp->n_failed - 1)) != 0) {
                return;
        }
        log_warn("snapshot tail: cannot write it into %s: %s; it stays in "
                 "memory, tried again at each snapshot (%llu such failures "
                 "so far)",
                 n->cfg->data_dir, strerror(sp->last_err),
                 (unsigned long long)sp->n_failed);
}

static void on_draining(uv_idle_t *h)
{
        (void)h; /* on_monitor() does the work */
}

static void on_restored(uv_async_t *h)
{
        (void)h; /* the wake-up is all: on_monitor() adopts the state */
}

/* On the restore's worker thread. */
static void wake_restored(void *data)
{
        struct node *n = data;
        uv_async_send(&n->restored);
}

static void on_monitor(uv_prepare_t *h)
{
        struct node *n = h->data;
        struct node_core *c = n->core;
        bool leader = raft_state(&c->raft) == RAFT_LEADER;
        raft_term term = raft_current_term(&c->raft);
        int rv;

        /* A snapshot decoded on the worker is taken as soon as it is
         * ready (its wake-up brings the loop here; the loop does not spin
         * meanwhile, which would take a core from the worker), and what
         * was queued meanwhile is applied a batch a turn (the idle handle
         * keeps the turns coming until it is all applied); failures go
         * to fsm_failed(). */
        if (raftfsm_decoding(&c->rf)) {
                uv_idle_stop(&n->draining);
        } else if (raftfsm_restoring(&c->rf) &&
                   raftfsm_adopt(&c->rf, false) == 1) {
                uv_idle_start(&n->draining, on_draining);
        } else {
                uv_idle_stop(&n->draining);
                log_restores(n);
                log_dropped_installs(n);
        }
        raftfsm_spill(&c->rf);
        fsmdigest_poll(&c->digest);
        log_spills(n);
        stallwatch_tick(&c->watch, leader, raft_commit_index(&c->raft),
                        raft_last_index(&c->raft));
        nodedir_tell_voters(n);
        node_watch_leader(n);
        if (n->serving && (!leader || term != n->serving_term)) {
                n->serving = false;
                log_info("stopped serving: now %s in term %llu",
                         leader ? "leader" : "not leader",
                         (unsigned long long)term);
                if (n->cb.lost != NULL) {
                        n->cb.lost(n->cb.data);
                }
        }
        if (n->handover) {
                nodetransfer_step(n);
                return; /* it may have closed the node (SIGTERM) */
        }
        if (leader && !n->serving && c->digest.diverged) {
                nodetransfer_diverged(n, term);
                return;
        }
        if (leader && !n->serving && !n->barrier_pending) {
                n->serving_term = term;
                c->barrier.data = n;
                rv = raft_barrier(&c->raft, &c->barrier, on_barrier);
                if (rv == 0) {
                        n->barrier_pending = true;
                }
        }
}

/* A turn that found raft still a follower (entries being stored, say)
 * is tried again this soon, within an election timeout of the close. */
#define LOSS_RETRY_MS 5

/* The step between turns (leaderloss.h): above a message's way between
 * two nodes and the loop's stalls, so that no two stand together. */
static unsigned loss_step_ms(const struct config *cfg)
{
        unsigned step = cfg->heartbeat_timeout_ms / 2;

        return step < 10 ? 10 : step;
}

static void on_loss_turn(uv_timer_t *t);

static void loss_arm(struct node *n, unsigned round)
{
        struct leaderloss *l = &n->core->loss;
        uint64_t due =
            l->since + leaderloss_due(l, round, loss_step_ms(n->cfg));
        uint64_t now = uv_now(n->loop);

        l->round = round;
        uv_timer_start(&n->loss_timer, on_loss_turn, due > now ? due - now : 0,
                       0);
}

static void on_loss_turn(uv_timer_t *t)
{
        struct node *n = t->data;
        struct node_core *c = n->core;
        struct leaderloss *l = &c->loss;
        unsigned round = l->round;

        if (!leaderloss_stands(l, &c->raft, &c->heard, round)) {
                l->leader = 0;
                return;
        }
        if (leaderloss_timeout_now(&c->raft, &c->heard,
                                   n->cfg->election_timeout_ms,
                                   n->cfg->heartbeat_timeout_ms)) {
                log_info("leader %llu's connection closed: %s in term %llu "
                         "(turn %u of %u, round %u, %llu ms after)",
                         (unsigned long long)l->leader,
                         raft_state(&c->raft) == RAFT_CANDIDATE
                             ? "standing"
                             : raft_state_name(raft_state(&c->raft)),
                         (unsigned long long)raft_current_term(&c->raft),
                         l->rank + 1, l->voters, round + 1,
                         (unsigned long long)(uv_now(n->loop) - l->since));
                if (round + 1 < LEADERLOSS_ROUNDS) {
                        loss_arm(n, round + 1);
                } else {
                        l->leader = 0;
                }
                return;
        }
        if (uv_now(n->loop) - l->since < n->cfg->election_timeout_ms) {
                uv_timer_start(&n->loss_timer, on_loss_turn, LOSS_RETRY_MS, 0);
                return;
        }
        l->leader = 0; /* raft's own timer, from here */
}

/* The transport: peer `id` closed a connection raft had. If it is the
 * leader this node follows, the leader's process has most likely ended:
 * stand at this node's turn rather than an election timeout later. */
static void on_peer_closed(void *data, uint64_t id)
{
        struct node *n = data;
        struct node_core *c = n->core;
        struct leaderloss *l;
        raft_id leader = 0;
        const char *address = NULL;

        if (c == NULL || n->close_cb != NULL) {
                return;
        }
        l = &c->loss;
        if (l->leader == id || raft_state(&c->raft) != RAFT_FOLLOWER) {
                return;
        }
        raft_leader(&c->raft, &leader, &address);
        if (leader == 0 || leader != id ||
            !leaderloss_rank(&c->raft.configuration, n->cfg->id, id, &l->rank,
                             &l->voters)) {
                return;
        }
        l->leader = id;
        l->appends = c->heard.appends;
        l->since = uv_now(n->loop);
        loss_arm(n, 0);
}

/* raft counts the snapshot as restored, but the worker could not build its
 * state: stop rather than serve a state raft does not have. A restart
 * restores the snapshot from disk again, inline, and says why it fails. */
static void fsm_failed(void *data, const char *why)
{
        (void)data;
        log_error("%s; stopping", why);
        exit(1);
}

static int make_dir(const char *path)
{
        char buf[PATH_MAX];
        size_t i, len = strlen(path);

        if (len == 0 || len >= sizeof buf) {
                return -1;
        }
        memcpy(buf, path, len + 1);
        for (i = 1; i <= len; i++) {
                if (buf[i] == '/' || buf[i] == '\0') {
                        char c = buf[i];
                        buf[i] = '\0';
                        if (mkdir(buf, 0750) != 0 && errno != EEXIST) {
                                return -1;
                        }
                        buf[i] = c;
                }
        }
        return 0;
}

static int bootstrap(struct node *n)
{
        struct raft_configuration conf;
        unsigned i;
        int rv = 0;

        raft_configuration_init(&conf);
        for (i = 0; i < n->cfg->n_members && rv == 0; i++) {
                const struct config_member *m = &n->cfg->members[i];
                rv = raft_configuration_add(&conf, m->id, m->raft_address,
                                            RAFT_VOTER);
        }
        if (rv == 0) {
                rv = raft_bootstrap(&n->core->raft, &conf);
        }
        raft_configuration_close(&conf);
        if (rv == RAFT_CANTBOOTSTRAP) {
                return 0; /* an existing data dir: restart from it */
        }
        if (rv == 0) {
                log_info("bootstrapped a %u-node cluster", n->cfg->n_members);
        }
        return rv;
}

/* The raft transport: TCP with TLS (peer.h), or with tls = off raft's own
 * TCP transport without Nagle. 0 or a libraft code, with the reason in
 * n->errmsg. */
static int init_transport(struct node *n)
{
        struct node_core *c = n->core;
        int rv;

        if (n->cfg->tls) {
                rv = peer_init(&c->net.transport, n->loop, n->cfg, n->check,
                               n->errmsg, sizeof n->errmsg);
                return rv == 0 ? 0 : RAFT_INVALID;
        }
        rv = plaintcp_init(&c->net, n->loop, n->check,
                           n->cfg->handshake_timeout_ms, n->cfg->raft_listen);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft transport: %s",
                         raft_strerror(rv));
        }
        return rv;
}

/* What init_transport() allocated, once raft is done with it. */
static void free_transport(struct node *n)
{
        if (n->cfg->tls) {
                peer_free(&n->core->net.transport);
        } else {
                plaintcp_close(&n->core->net);
        }
}

int node_reload_tls(struct node *n, char *errmsg, size_t size)
{
        if (!n->cfg->tls || n->core == NULL) {
                return 0;
        }
        return peer_reload(&n->core->net.transport, errmsg, size);
}

/*
 * The seed of raft's election timeouts. libraft 0.22.1 takes it from
 * rand(), which raft_uv_init() seeds with the loop's clock XOR the wall
 * clock in milliseconds, before the node's id is known: nodes started in
 * the same moment get seeds a few units apart, or equal ones when the two
 * clocks' carries line up, and two followers with the same timeouts stand
 * as candidates in step and split the vote round after round. Election
 * timeouts are what keeps candidates apart, so they come from the kernel's
 * random source instead.
 */
static unsigned election_seed(uint64_t id)
{
        unsigned seed;
        struct timespec ts;

        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == sizeof seed) {
                return seed;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (unsigned)(id * 2654435761u) ^ (unsigned)getpid() ^
               (unsigned)ts.tv_nsec;
}

/* Set up the transport (wrapped), raft's I/O on the data dir and the raft
 * instance with the node's settings, on a state machine already set up.
 * 0 or a libraft code, with the reason in n->errmsg and nothing of these
 * steps left to clean up. */
static int init_raft(struct node *n, const char *raft_address)
{
        struct node_core *c = n->core;
        const struct config *cfg = n->cfg;
        int rv;

        rv = init_transport(n);
        if (rv != 0) {
                return rv;
        }
        rv = raft_uv_init(&c->heard.io, n->loop, cfg->data_dir,
                          &c->net.transport);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft io on %.200s: %s",
                         cfg->data_dir, raft_strerror(rv));
                goto err_after_transport;
        }
        /* Auto-recovery (still on by default in 0.22.1) would silently drop
         * entries of a corrupt segment, possibly acknowledged ones: fail
         * loudly instead (docs/raft.md). */
        raft_uv_set_auto_recovery(&c->heard.io, false);
        raft_uv_set_connect_retry_delay(&c->heard.io, CONNECT_RETRY_DELAY_MS);
        /* libraft says of a failed disk write only to its tracer. */
        stallwatch_init(&c->watch, n->loop, cfg, raftfsm_keep(&c->rf),
                        &c->heard.io);
        heard_wrap(&c->heard);
        /* libraft 0.22.1 steps on past a failed store of its term, vote or
         * a snapshot (storefail.h). */
        storefail_wrap(c, cfg->data_dir);
        diskwrite_wrap(c);
#ifdef BATON_CHAOS_EARLYACK
        if (earlyack_wrap(&c->early, n->loop, &c->heard.io) != 0) {
                rv = RAFT_NOMEM;
                goto err_after_io;
        }
#endif
        c->heard.writing = &c->rf.snaps.writing;
        c->heard.installing = &c->raft.snapshot.installing;
        CRASHIO_WRAP(c);
        rv = raft_init(&c->raft, &c->heard.io, &c->rf.fsm, cfg->id,
                       raft_address);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft init: %s",
                         raft_errmsg(&c->raft));
                goto err_after_io;
        }
        raftfsm_attach(&c->rf, &c->raft);
        /* No refusals for a majority short of room: with them a cluster
         * whose followers started on full disks never recovered once space
         * was freed (docs/raft.md). The leader appends, the followers'
         * segment creation is retried, and once it works they store and
         * the entries commit. */
        raft_set_capacity_threshold(&c->raft, 0);
        raft_seed(&c->raft, election_seed(cfg->id));
        raft_set_election_timeout(&c->raft, cfg->election_timeout_ms);
        raft_set_heartbeat_timeout(&c->raft, cfg->heartbeat_timeout_ms);
        /* The defaults and why are in docs/raft.md. The threshold is
         * raftfsm's to set, at each snapshot (raftfsm_set_snapshots). */
        raft_set_snapshot_trailing(&c->raft, cfg->snapshot_trailing);
        raft_set_install_snapshot_timeout(&c->raft,
                                          INSTALL_SNAPSHOT_TIMEOUT_MS);
        raft_set_pre_vote(&c->raft, true);
        return 0;

err_after_io:
        raft_uv_close(&c->heard.io);
err_after_transport:
        free_transport(n);
        uv_run(n->loop, UV_RUN_NOWAIT);
        return rv;
}

static void on_raft_closed(struct raft *r);

/* raft_start() failed: the state machine's reason, when it refused a
 * snapshot, is the one that says what is wrong. */
static void start_failed(struct node *n, int rv)
{
        struct node_core *c = n->core;

        const char *r = raft_errmsg(&c->raft), *f = raftfsm_errmsg(&c->rf);

        if (raftfsm_refused_newer(&c->rf)) {
                /* raft's words ("persisted data is corrupted") would say
                 * damage: the state machine's say what it is. */
                snprintf(n->errmsg, sizeof n->errmsg, "%s", f);
                return;
        }
        snprintf(n->errmsg, sizeof n->errmsg, "raft start: %s (%s%s%s)",
                 raft_strerror(rv), r, r[0] != '\0' && f[0] != '\0' ? "; " : "",
                 f);
}

/* The state machine, with the configured limits (defaults for the rest)
 * and snapshot settings. 0, or a BATON_E* code with n->errmsg set and
 * nothing of it left. */
static int init_fsm(struct node *n, struct node_core *c)
{
        const struct config *cfg = n->cfg;
        struct lockfsm_limits limits;
        int rv;

        config_fsm_limits(cfg, &limits);
        rv = raftfsm_init(&c->rf, &limits);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "state machine: %s",
                         raftfsm_errmsg(&c->rf));
                return rv;
        }
        raftfsm_set_compression(&c->rf, cfg->snapshot_compression);
        /* Digests of the state, in a forked child too (fsmdigest.h). */
        fsmdigest_init(&c->digest, &c->rf, SNAPIMAGE_FORK,
                       cfg->digest_interval);
        raftfsm_set_applied_cb(&c->rf, fsmdigest_applied, &c->digest);
        /* Snapshots are encoded in a forked child, never on the loop, into
         * a file of the data directory rather than memory. */
        rv = raftfsm_set_snapshots(&c->rf, SNAPIMAGE_FORK,
                                   cfg->snapshot_threshold, cfg->data_dir);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "%s",
                         raftfsm_image(&c->rf)->errmsg);
                raftfsm_close(&c->rf);
        }
        return rv;
}

/* Long, so that its unwinding (goto err_after_<step>) reads in one place;
 * init_raft() does the steps that unwind among themselves. */
/* Raft started: the loop's part of the node from now on. */
static void start_running(struct node *n)
{
        struct node_core *c = n->core;

        /* From now on snapshots installed from the leader are decoded on a
         * worker, so that the loop keeps serving heartbeats meanwhile. */
        uv_async_init(n->loop, &n->restored, on_restored);
        raftfsm_set_restore_wake(&c->rf, wake_restored, n);
        raftfsm_set_restore(&c->rf, RAFTFSM_RESTORE_THREAD, fsm_failed, n);
        uv_prepare_init(n->loop, &n->monitor);
        n->monitor.data = n;
        uv_prepare_start(&n->monitor, on_monitor);
        uv_idle_init(n->loop, &n->draining);
        uv_timer_init(n->loop, &n->transfer_timer);
        n->transfer_timer.data = n;
        uv_timer_init(n->loop, &n->loss_timer);
        n->loss_timer.data = n;
        rafttcp_set_peer_closed(&c->net.transport, on_peer_closed, n);
        queue_init(&n->closers);
}

int node_start(struct node *n, uv_loop_t *loop, const struct config *cfg,
               const struct node_callbacks *cb, struct peercheck *check)
{
        const struct config_member *self = settings_member(cfg, cfg->id);
        struct node_core *c;
        bool newer = false;
        int rv;

        memset(n, 0, sizeof *n);
        n->loop = loop;
        n->cfg = cfg;
        nodedir_attach(n, check);
        if (cb != NULL) {
                n->cb = *cb;
        }
        if (self == NULL || make_dir(cfg->data_dir) != 0) {
                snprintf(n->errmsg, sizeof n->errmsg,
                         "cannot create data dir %.200s: %s", cfg->data_dir,
                         strerror(errno));
                return BATON_EIO;
        }
        c = calloc(1, sizeof *c);
        if (c == NULL) {
                snprintf(n->errmsg, sizeof n->errmsg, "out of memory");
                return BATON_ENOMEM;
        }
        c->node = n;
        n->core = c;
        rv = init_fsm(n, c);
        if (rv != 0) {
                goto err_after_core;
        }
        rv = init_raft(n, self->raft_address);
        if (rv != 0) {
                goto err_after_fsm;
        }
        /* A joining node starts empty and waits for the leader to add it;
         * bootstrapping it too would give it a log of its own. */
        rv = cfg->join ? 0 : bootstrap(n);
        if (rv == 0) {
                rv = raft_start(&c->raft);
        }
        if (rv != 0) {
                start_failed(n, rv);
                newer = raftfsm_refused_newer(&c->rf);
                goto err_after_raft;
        }
        rv = nodedir_own_address(n, self->raft_address);
        if (rv != 0) {
                goto err_after_raft; /* before the loop runs: nothing sent */
        }
        start_running(n);
        return 0;

err_after_raft:
        /* raft_init succeeded: raft closes its I/O asynchronously, and its
         * close callback (as on a normal shutdown) frees the rest. Nothing
         * else runs on the loop yet, so run it until that is done. A newer
         * release's data is not damage (node.h). */
        rv = newer                    ? BATON_EVERSION
             : rafterr_baton(rv) != 0 ? rafterr_baton(rv)
                                      : BATON_EIO;
        n->close_cb = NULL;
        c->raft.data = n;
        stallwatch_close(&c->watch);
        raft_close(&c->raft, on_raft_closed);
        uv_run(loop, UV_RUN_DEFAULT);
        return rv;
err_after_fsm:
        raftfsm_close(&c->rf);
        rv = rafterr_baton(rv) != 0 ? rafterr_baton(rv) : BATON_EIO;
err_after_core:
        free(c);
        n->core = NULL;
        return rv;
}

/* The last step of closing: raft's close callback, after which libraft
 * touches nothing of the node's. */
static void on_raft_closed(struct raft *r)
{
        struct node *n = r->data;
        struct node_core *c = n->core;

        raft_uv_close(&c->heard.io);
        free_transport(n);
        fsmdigest_close(&c->digest);
        raftfsm_close(&c->rf);
        free(c);
        n->core = NULL;
        if (n->close_cb != NULL) {
                n->close_cb(n);
        }
}

/* End what must not outlive raft's transport (node_closer). */
static void end_closers(struct node *n)
{
        struct queue *q = queue_head(&n->closers);

        while (q != &n->closers) {
                struct node_closer *c = QUEUE_DATA(q, struct node_closer, link);

                q = q->next; /* `end` may take c off the list */
                c->end(c);
        }
}

void node_close(struct node *n, void (*cb)(struct node *n))
{
        n->close_cb = cb;
        n->core->raft.data = n;
        n->transfer_cb = NULL;
        if (n->transfer_for_cb != NULL) {
                /* Its caller waits for an answer: give it now. */
                nodetransfer_done(n, false);
        }
        n->handover = false;
        /* Nothing may be left on the worker once raft closes, and so
         * nothing can wake `restored` once it is closed. */
        raftfsm_set_restore(&n->core->rf, RAFTFSM_RESTORE_INLINE, NULL, NULL);
        uv_close((uv_handle_t *)&n->restored, NULL);
        uv_prepare_stop(&n->monitor);
        uv_close((uv_handle_t *)&n->monitor, NULL);
        uv_close((uv_handle_t *)&n->draining, NULL);
        uv_close((uv_handle_t *)&n->transfer_timer, NULL);
        rafttcp_set_peer_closed(&n->core->net.transport, NULL, NULL);
        uv_close((uv_handle_t *)&n->loss_timer, NULL);
        stallwatch_close(&n->core->watch);
        end_closers(n);
        raft_close(&n->core->raft, on_raft_closed);
}

bool node_serving(const struct node *n)
{
        return n->serving;
}

const char *node_client_address(const struct node *n, uint64_t id)
{
        const struct directory_member *d =
            directory_find(raftfsm_directory(&n->core->rf), id);
        const struct config_member *m;

        /* The replicated directory knows members added since bootstrap;
         * the config file knows the bootstrap members from the start. */
        if (d != NULL) {
                return d->client_address;
        }
        m = settings_member(n->cfg, id);
        return m != NULL ? m->client_address : "";
}

void node_leader(struct node *n, uint64_t *id, const char **client_address)
{
        raft_id leader = 0;
        const char *raft_address = NULL;

        raft_leader(&n->core->raft, &leader, &raft_address);
        *id = leader;
        *client_address = leader != 0 ? node_client_address(n, leader) : "";
}

/* --- What the node knows ---------------------------------------------------
 */

bool node_has_member(struct node *n, uint64_t id, const char *raft_address)
{
        return raftview_has_member(&n->core->raft, id, raft_address);
}

/* raftview_address_fn over node_client_address(). */
static const char *member_client_address(void *data, uint64_t id)
{
        return node_client_address(data, id);
}

void node_status(struct node *n, struct proto_status *st)
{
        raftview_status(&n->core->raft, member_client_address, n, st);
}

uint64_t node_leader_commit(struct node *n)
{
        struct raft *r = &n->core->raft;
        uint64_t heard =
            heard_leader_commit(&n->core->heard, raft_current_term(r));
        uint64_t own = raft_commit_index(r);

        return heard > own ? heard : own;
}

uint64_t node_last_applied(struct node *n)
{
        return raft_last_applied(&n->core->raft);
}

uint64_t node_last_index(struct node *n)
{
        return raft_last_index(&n->core->raft);
}

uint64_t node_term(struct node *n)
{
        return raft_current_term(&n->core->raft);
}

struct lockfsm *node_lockfsm(struct node *n)
{
        return raftfsm_lockfsm(&n->core->rf);
}

const struct lockfsm *node_lockfsm_nowait(const struct node *n)
{
        return raftfsm_lockfsm_nowait(&n->core->rf);
}

const struct snapimage *node_snapimage(const struct node *n)
{
        return raftfsm_image(&n->core->rf);
}

const struct snapkeep *node_snapkeep(const struct node *n)
{
        return raftfsm_keep(&n->core->rf);
}

const struct snapspill *node_snapspill(const struct node *n)
{
        return raftfsm_spills(&n->core->rf);
}

const struct stallwatch *node_stallwatch(const struct node *n)
{
        return &n->core->watch;
}

void node_restores(const struct node *n, struct raftfsm_restores *out)
{
        raftfsm_restores(&n->core->rf, out);
}

int node_backup(struct node *n, struct raft_buffer *bufs[], unsigned *n_bufs,
                uint64_t *index)
{
        return raftfsm_backup(&n->core->rf, bufs, n_bufs, index);
}

void node_backup_release(struct raft_buffer *bufs, unsigned n_bufs)
{
        raftfsm_backup_release(bufs, n_bufs);
}

const struct directory *node_directory(const struct node *n)
{
        return raftfsm_directory(&n->core->rf);
}

uint64_t node_entry_term(const struct node *n)
{
        return raftfsm_entry_term(&n->core->rf);
}

uint64_t node_snapshot_index(const struct node *n)
{
        return raftfsm_snapshot_index(&n->core->rf);
}

bool node_snapshot_writing(const struct node *n)
{
        return raftfsm_snapshot_writing(&n->core->rf);
}

void node_set_event_cb(struct node *n, lockfsm_event_cb cb, void *data)
{
        raftfsm_set_event_cb(&n->core->rf, cb, data);
}

void node_set_entry_cb(struct node *n,
                       void (*cb)(void *data, uint64_t index, uint8_t kind),
                       void *data)
{
        raftfsm_set_entry_cb(&n->core->rf, cb, data);
}

/* Debian's libraft 0.22.1 declares raft_version_number() but does not
 * export it, so the run-time version cannot be asked for; the soname
 * (libraft.so.0, the maintained line) is what the loader checks. */
void node_raft_version(char *buf, size_t cap)
{
        snprintf(buf, cap, "%d.%d.%d", RAFT_VERSION_MAJOR, RAFT_VERSION_MINOR,
                 RAFT_VERSION_RELEASE);
}
