/* One batond Raft node: raft_uv on a data dir, bootstrap, leadership. */
#include "node.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../include/baton.h"
#include "log.h"

/* --- Peer connections without Nagle ---------------------------------------
 *
 * raft_uv_tcp (still in libraft 0.22.1) leaves Nagle's algorithm on. A leader
 * that sends AppendEntries while an earlier small message is unacknowledged
 * then waits for the follower's delayed ACK (40 ms on Linux): the p99 of a
 * lock operation was ~42 ms under load. The node wraps the transport's
 * listen and connect to set TCP_NODELAY on every peer stream. */

#define NODE_OF(t)                                                             \
        ((struct node *)((char *)(t)-offsetof(struct node, transport)))

static void no_nagle(struct uv_stream_s *stream)
{
        /* raft_uv_tcp's streams are TCP handles. */
        if (stream != NULL && stream->type == UV_TCP) {
                uv_tcp_nodelay((uv_tcp_t *)stream, 1);
        }
}

static void accepted(struct raft_uv_transport *t, raft_id id,
                     const char *address, struct uv_stream_s *stream)
{
        no_nagle(stream);
        NODE_OF(t)->raft_accept(t, id, address, stream);
}

static int listen_wrapped(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
        struct node *n = NODE_OF(t);

        n->raft_accept = cb;
        return n->tcp_listen(t, accepted);
}

/* One outgoing connection: raft's request and callback, around ours. */
struct dial {
        struct raft_uv_connect req;
        struct raft_uv_connect *raft_req;
        raft_uv_connect_cb cb;
};

static void dialed(struct raft_uv_connect *req, struct uv_stream_s *stream,
                   int status)
{
        struct dial *d = (struct dial *)req;
        struct raft_uv_connect *raft_req = d->raft_req;
        raft_uv_connect_cb cb = d->cb;

        free(d);
        if (status == 0) {
                no_nagle(stream);
        }
        cb(raft_req, stream, status);
}

static int connect_wrapped(struct raft_uv_transport *t,
                           struct raft_uv_connect *req, raft_id id,
                           const char *address, raft_uv_connect_cb cb)
{
        struct dial *d = malloc(sizeof *d);
        int rv;

        if (d == NULL) {
                return RAFT_NOMEM;
        }
        memset(d, 0, sizeof *d);
        d->raft_req = req;
        d->cb = cb;
        rv = NODE_OF(t)->tcp_connect(t, &d->req, id, address, dialed);
        if (rv != 0) {
                free(d); /* the callback never runs */
        }
        return rv;
}

int node_error(int raft_rv)
{
        switch (raft_rv) {
        case 0:
                return 0;
        case RAFT_NOMEM:
                return BATON_ENOMEM;
        case RAFT_NOTLEADER:
                return BATON_ENOTLEADER;
        case RAFT_LEADERSHIPLOST:
                return BATON_EUNKNOWN;
        case RAFT_SHUTDOWN:
                return BATON_ESHUTDOWN;
        case RAFT_CANTCHANGE:
                return BATON_ECANTCHANGE;
        case RAFT_NOSPACE:
                return BATON_ENOSPC;
        case RAFT_IOERR:
                return BATON_EIO;
        case RAFT_CORRUPT:
                return BATON_ECORRUPT;
        case RAFT_NOCONNECTION:
                return BATON_EUNAVAILABLE;
        default:
                return BATON_EINVAL;
        }
}

static void on_barrier(struct raft_barrier *req, int status)
{
        struct node *n = req->data;

        n->barrier_pending = false;
        if (status != 0 || raft_state(&n->raft) != RAFT_LEADER ||
            raft_current_term(&n->raft) != n->serving_term) {
                return; /* the monitor tries again if still leader */
        }
        n->serving = true;
        log_info("serving as leader in term %llu (applied %llu)",
                 (unsigned long long)n->serving_term,
                 (unsigned long long)raft_last_applied(&n->raft));
        if (n->cb.ready != NULL) {
                n->cb.ready(n->cb.data);
        }
}

/* Runs before every loop poll: the legacy (raft_io) interface of libraft
 * has no state-change callback. */
static void on_monitor(uv_prepare_t *h)
{
        struct node *n = h->data;
        bool leader = raft_state(&n->raft) == RAFT_LEADER;
        raft_term term = raft_current_term(&n->raft);
        int rv;

        if (n->serving && (!leader || term != n->serving_term)) {
                n->serving = false;
                log_info("stopped serving: now %s in term %llu",
                         leader ? "leader" : "not leader",
                         (unsigned long long)term);
                if (n->cb.lost != NULL) {
                        n->cb.lost(n->cb.data);
                }
        }
        if (leader && !n->serving && !n->barrier_pending) {
                n->serving_term = term;
                n->barrier.data = n;
                rv = raft_barrier(&n->raft, &n->barrier, on_barrier);
                if (rv == 0) {
                        n->barrier_pending = true;
                }
        }
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
                rv = raft_bootstrap(&n->raft, &conf);
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

static void on_raft_closed(struct raft *r);

int node_start(struct node *n, uv_loop_t *loop, const struct config *cfg,
               const struct node_callbacks *cb)
{
        const struct config_member *self = config_member(cfg, cfg->id);
        struct lockfsm_limits limits;
        int rv;

        memset(n, 0, sizeof *n);
        n->loop = loop;
        n->cfg = cfg;
        if (cb != NULL) {
                n->cb = *cb;
        }
        if (self == NULL || make_dir(cfg->data_dir) != 0) {
                snprintf(n->errmsg, sizeof n->errmsg,
                         "cannot create data dir %.200s: %s", cfg->data_dir,
                         strerror(errno));
                return BATON_EIO;
        }
        lockfsm_limits_default(&limits);
        limits.max_sessions = cfg->max_sessions;
        limits.max_locks_per_session = cfg->max_locks_per_session;
        limits.max_waiters_per_lock = cfg->max_waiters_per_lock;
        limits.max_ttl_ms = cfg->max_ttl_ms;
        rv = raftfsm_init(&n->rf, &limits);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "state machine: %s",
                         raftfsm_errmsg(&n->rf));
                return rv;
        }
        raftfsm_set_compression(&n->rf, cfg->snapshot_compression);
        /* 0.22.1 refuses a transport whose version is not set first. */
        n->transport.version = 1;
        rv = raft_uv_tcp_init(&n->transport, loop);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft transport: %s",
                         raft_strerror(rv));
                goto err_after_fsm;
        }
        n->tcp_listen = n->transport.listen;
        n->tcp_connect = n->transport.connect;
        n->transport.listen = listen_wrapped;
        n->transport.connect = connect_wrapped;
        rv = raft_uv_init(&n->io, loop, cfg->data_dir, &n->transport);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft io on %.200s: %s",
                         cfg->data_dir, raft_strerror(rv));
                goto err_after_transport;
        }
        /* Auto-recovery (still on by default in 0.22.1) would silently drop
         * entries of a corrupt segment, possibly acknowledged ones: fail
         * loudly instead (docs/raft.md). */
        raft_uv_set_auto_recovery(&n->io, false);
        rv = raft_init(&n->raft, &n->io, &n->rf.fsm, cfg->id,
                       self->raft_address);
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft init: %s",
                         raft_errmsg(&n->raft));
                goto err_after_io;
        }
        raftfsm_attach(&n->rf, &n->raft);
        raft_set_election_timeout(&n->raft, cfg->election_timeout_ms);
        raft_set_heartbeat_timeout(&n->raft, cfg->heartbeat_timeout_ms);
        /* The defaults and why are in docs/raft.md. */
        raft_set_snapshot_threshold(&n->raft, cfg->snapshot_threshold);
        raft_set_snapshot_trailing(&n->raft, cfg->snapshot_trailing);
        raft_set_pre_vote(&n->raft, true);
        /* A joining node starts empty and waits for the leader to add it;
         * bootstrapping it too would give it a log of its own. */
        rv = cfg->join ? 0 : bootstrap(n);
        if (rv == 0) {
                rv = raft_start(&n->raft);
        }
        if (rv != 0) {
                snprintf(n->errmsg, sizeof n->errmsg, "raft start: %s (%s)",
                         raft_strerror(rv), raft_errmsg(&n->raft));
                goto err_after_raft;
        }
        uv_prepare_init(loop, &n->monitor);
        n->monitor.data = n;
        uv_prepare_start(&n->monitor, on_monitor);
        uv_timer_init(loop, &n->transfer_timer);
        n->transfer_timer.data = n;
        return 0;

err_after_raft:
        /* raft_init succeeded: raft closes its I/O asynchronously, and its
         * close callback (as on a normal shutdown) frees the rest. Nothing
         * else runs on the loop yet, so run it until that is done. */
        rv = node_error(rv) != 0 ? node_error(rv) : BATON_EIO;
        n->close_cb = NULL;
        n->raft.data = n;
        raft_close(&n->raft, on_raft_closed);
        uv_run(loop, UV_RUN_DEFAULT);
        return rv;
err_after_io:
        raft_uv_close(&n->io);
err_after_transport:
        raft_uv_tcp_close(&n->transport);
        uv_run(loop, UV_RUN_NOWAIT);
err_after_fsm:
        raftfsm_close(&n->rf);
        return node_error(rv) != 0 ? node_error(rv) : BATON_EIO;
}

static void on_raft_closed(struct raft *r)
{
        struct node *n = r->data;

        raft_uv_close(&n->io);
        raft_uv_tcp_close(&n->transport);
        raftfsm_close(&n->rf);
        if (n->close_cb != NULL) {
                n->close_cb(n);
        }
}

void node_close(struct node *n, void (*cb)(struct node *n))
{
        n->close_cb = cb;
        n->raft.data = n;
        n->transfer_cb = NULL;
        uv_prepare_stop(&n->monitor);
        uv_close((uv_handle_t *)&n->monitor, NULL);
        uv_close((uv_handle_t *)&n->transfer_timer, NULL);
        raft_close(&n->raft, on_raft_closed);
}

/* The transfer ended (raft's callback), or took too long (the timer):
 * whichever comes first runs the caller's callback, once. */
static void transfer_done(struct node *n, bool timed_out)
{
        void (*cb)(struct node *) = n->transfer_cb;

        n->transfer_cb = NULL;
        uv_timer_stop(&n->transfer_timer);
        if (cb == NULL) {
                return;
        }
        if (timed_out) {
                log_warn("leadership transfer did not finish in %u ms; "
                         "going on without it",
                         NODE_TRANSFER_BOUND(n->cfg));
        }
        cb(n);
}

static void on_transfer(struct raft_transfer *req)
{
        transfer_done(req->data, false);
}

static void on_transfer_timeout(uv_timer_t *t)
{
        transfer_done(t->data, true);
}

int node_transfer(struct node *n, uint64_t to, void (*cb)(struct node *n))
{
        int rv;

        if (raft_state(&n->raft) != RAFT_LEADER) {
                return BATON_ENOTLEADER;
        }
        n->transfer.data = n;
        n->transfer_cb = cb;
        rv = raft_transfer(&n->raft, &n->transfer, to, on_transfer);
        if (rv != 0) {
                n->transfer_cb = NULL;
                return node_error(rv);
        }
        /* libraft 0.22.1 never runs the callback when the node ends up
         * candidate or without a leader (every peer stopping too): bound
         * the wait so that a SIGTERM always ends the process. */
        uv_timer_start(&n->transfer_timer, on_transfer_timeout,
                       NODE_TRANSFER_BOUND(n->cfg), 0);
        return 0;
}

bool node_serving(const struct node *n)
{
        return n->serving;
}

const char *node_client_address(const struct node *n, uint64_t id)
{
        const struct directory_member *d =
            directory_find(raftfsm_directory(&n->rf), id);
        const struct config_member *m;

        /* The replicated directory knows members added since bootstrap;
         * the config file knows the bootstrap members from the start. */
        if (d != NULL) {
                return d->client_address;
        }
        m = config_member(n->cfg, id);
        return m != NULL ? m->client_address : "";
}

void node_leader(struct node *n, uint64_t *id, const char **client_address)
{
        raft_id leader = 0;
        const char *raft_address = NULL;

        raft_leader(&n->raft, &leader, &raft_address);
        *id = leader;
        *client_address = leader != 0 ? node_client_address(n, leader) : "";
}
