/* batond: one Baton node — raft, client connections and timers on one loop. */
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lz4.h>
#include <uv.h>

#include "../../include/baton/errors.h"
#include "../lib/address.h"
#include "base/log.h"
#include "config/certcheck.h"
#include "config/config.h"
#include "config/tlsconfig.h"
#include "disk/datadir.h"
#include "disk/diskscan.h"
#include "disk/disksettle.h"
#include "host/corehost.h"
#include "net/conn.h"
#include "net/listen.h"
#include "offline/recover.h"
#include "offline/restore.h"
#include "http/httpapi.h"
#include "ops/certwatch.h"
#include "ops/looplag.h"
#include "ops/memtrim.h"
#include "ops/metrics.h"
#include "ops/service.h"
#include "raft/node.h"
#include "raft/peercheck.h"

struct server {
        uv_loop_t loop;
        struct config cfg;
        struct datadir dir;
        struct peercheck check;
        struct node node;
        struct corehost host;
        struct conn_set conns;
        struct httpapi http;
        struct metrics metrics;
        struct looplag looplag;
        struct memtrim memtrim;
        struct service service;
        struct certwatch certwatch;
        uv_check_t flush;
        uv_signal_t sigint;
        uv_signal_t sigterm;
        uv_signal_t sighup;
        uv_timer_t watchdog;
        uv_timer_t refused; /* the cluster refused the data dir: stop */
        /* The client port's credentials, read before the data dir is
         * touched so that a wrong file changes nothing; the listener
         * takes them over. */
        struct tls_ctx *client_tls;
        int64_t cert_not_after; /* of tls-cert, once checked; 0: no TLS */
        bool stopping;
        int exit_code;
};

/* How long closing raft and every handle may take once shutdown starts. */
#define SHUTDOWN_BOUND_MS 5000

/* After every loop iteration's I/O: what arrived is proposed in one batch,
 * and every connection's replies go out in one write. */
static void on_flush(uv_check_t *h)
{
        struct server *s = h->data;

        /* HTTP requests whose answer led to another frame in the flush
         * (an ATTACH answered, then the call) go in the same turn. */
        httpapi_drive(&s->http);
        do {
                corehost_flush(&s->host);
        } while (httpapi_drive(&s->http));
        conn_flush_all(&s->conns);
        httpapi_flush(&s->http);
}

static void on_node_closed(struct node *n)
{
        struct server *s =
            (struct server *)(void *)((char *)n -
                                      offsetof(struct server, node));

        /* The node answered every request of the core's as it closed,
         * each into the closed core, which freed its record. */
        assert(gateway_requests_out(&s->host.core) == 0);
        (void)s;
        log_info("raft closed");
}

/* Raft and the disk hold everything acknowledged, so a close that hangs
 * can be cut short: end the process rather than never exit. */
static void on_watchdog(uv_timer_t *t)
{
        (void)t;
        log_error("shutdown did not finish in %d ms; exiting anyway",
                  SHUTDOWN_BOUND_MS);
        exit(1);
}

static void shutdown_now(struct server *s)
{
        log_info("shutting down");
        service_stopping(&s->service, "shutting down");
        service_close(&s->service);
        uv_timer_init(&s->loop, &s->watchdog);
        uv_timer_start(&s->watchdog, on_watchdog, SHUTDOWN_BOUND_MS, 0);
        uv_unref((uv_handle_t *)&s->watchdog); /* never keeps the loop up */
        metrics_close(&s->metrics);
        certwatch_close(&s->certwatch);
        looplag_close(&s->looplag);
        memtrim_close(&s->memtrim);
        conn_close_all(&s->conns);
        httpapi_close(&s->http);
        corehost_close(&s->host);
        uv_check_stop(&s->flush);
        uv_close((uv_handle_t *)&s->flush, NULL);
        uv_close((uv_handle_t *)&s->sigint, NULL);
        uv_close((uv_handle_t *)&s->sigterm, NULL);
        uv_close((uv_handle_t *)&s->sighup, NULL);
        uv_close((uv_handle_t *)&s->refused, NULL);
        node_close(&s->node, on_node_closed);
}

static void on_refused_timer(uv_timer_t *t)
{
        struct server *s = t->data;

        if (!s->stopping) {
                s->stopping = true;
                shutdown_now(s);
        }
}

/* The peers refused this node's data directory (peercheck.h has logged
 * why): stop with status 1, or 0 when it was removed from the cluster
 * (nothing is wrong: it was asked to go), from a callback of its own
 * rather than from inside the raft transport's. */
static void on_refused(void *data)
{
        struct server *s = data;

        s->exit_code = s->check.removed ? 0 : 1;
        uv_timer_start(&s->refused, on_refused_timer, 0, 0);
}

static void on_transferred(struct node *n)
{
        shutdown_now(n->loop->data);
}

static void on_signal(uv_signal_t *h, int signum)
{
        struct server *s = h->data;

        if (s->stopping) {
                return;
        }
        s->stopping = true;
        /* SIGTERM (a rolling restart) hands leadership over first, so the
         * cluster does not wait an election timeout for a new leader. */
        if (signum == SIGTERM && node_serving(&s->node) &&
            node_transfer(&s->node, 0, on_transferred) == 0) {
                log_info("SIGTERM: transferring leadership before exit");
                service_stopping(&s->service,
                                 "transferring leadership before exit");
                return;
        }
        shutdown_now(s);
}

static void print_version(void)
{
        char raft[32];

        node_raft_version(raft, sizeof raft);
        printf("batond %s (libraft %s, libuv %s, liblz4 %s, %s)\n",
               PACKAGE_VERSION, raft, uv_version_string(), LZ4_versionString(),
               tls_library_version());
}

static bool wants_version(int argc, char **argv)
{
        int i;

        for (i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--version") == 0) {
                        return true;
                }
        }
        return false;
}

/* `flag` anywhere on the command line, with a value after it when
 * `valued` (--restore FILE) or alone (--recover): taken out of argv (the
 * rest is the node's config as usual). Its value, or `flag` itself when it
 * takes none; NULL when absent. */
static const char *take_flag(int *argc, char **argv, const char *flag,
                             bool valued)
{
        int i, j, n = valued ? 2 : 1;
        const char *found;

        for (i = 1; i + n - 1 < *argc; i++) {
                if (strcmp(argv[i], flag) == 0) {
                        found = valued ? argv[i + 1] : flag;
                        for (j = i; j + n <= *argc; j++) {
                                argv[j] = argv[j + n];
                        }
                        *argc -= n;
                        return found;
                }
        }
        return NULL;
}

static void print_seed(const char *what, const struct config *cfg,
                       const struct seed_report *r)
{
        printf("%s into %s: %llu sessions, %llu locks (%llu grants, %llu "
               "waiters), highest token %llu, last index %llu; this node's "
               "log starts after index %llu, so every new token is above it\n",
               what, cfg->data_dir, (unsigned long long)r->sessions,
               (unsigned long long)r->locks, (unsigned long long)r->grants,
               (unsigned long long)r->waiters, (unsigned long long)r->max_token,
               (unsigned long long)r->from_index,
               (unsigned long long)r->start_index);
}

/* After losing a majority: this node as a one-node cluster (recover.h). */
static int run_recover(const struct config *cfg)
{
        struct seed_report r;
        char err[PATH_MAX + 512];

        if (recover_node(cfg, &r, err, sizeof err) != 0) {
                fprintf(stderr, "batond: recover: %s\n", err);
                return 1;
        }
        print_seed("recovered this node's data", cfg, &r);
        printf("its old data is in %s%s; start batond, then add members "
               "back with batonctl member add (their data dirs empty, "
               "join = true)\n",
               cfg->data_dir, RECOVER_SUFFIX);
        return 0;
}

/* Seed the data dir from a backup and exit (restore.h). */
static int run_restore(const struct config *cfg, struct datadir *dir,
                       const char *path)
{
        struct seed_report r;
        char err[PATH_MAX + 512];
        char what[600];

        if (restore_backup(cfg, dir, path, &r, err, sizeof err) != 0) {
                fprintf(stderr, "batond: restore: %s\n", err);
                return 1;
        }
        snprintf(what, sizeof what, "restored %s", path);
        print_seed(what, cfg, &r);
        return 0;
}

/* --restore and --recover hold the data directory as a running node does
 * (datadir.h), so that neither writes under a node that serves from it: a
 * lock file there is taken now, and a restore makes and takes it once the
 * backup has loaded. */
static int run_offline(struct server *s, const char *restore)
{
        int rv;

        rv = datadir_check(&s->dir, s->cfg.data_dir, s->cfg.id);
        if (rv == 0 && restore == NULL && s->dir.state == DATADIR_MISSING) {
                fprintf(stderr,
                        "batond: recover: data directory %s does not "
                        "exist: nothing to recover\n",
                        s->cfg.data_dir);
                return 1;
        }
        if (rv != 0) {
                fprintf(
                    stderr, "batond: %s %s\n",
                    restore != NULL ? "restore:" : "recover:", s->dir.errmsg);
                datadir_close(&s->dir);
                return 1;
        }
        rv = restore != NULL ? run_restore(&s->cfg, &s->dir, restore)
                             : run_recover(&s->cfg);
        datadir_close(&s->dir);
        return rv;
}

static void usage(FILE *out)
{
        fprintf(out,
                "usage: batond --config FILE [--KEY VALUE ...]\n"
                "       batond --id N --data-dir DIR --member 'ID RAFT CLIENT' "
                "... [--KEY VALUE ...]\n"
                "       batond --config FILE --restore BACKUP  (seed an empty "
                "data dir from `batonctl snapshot save`, then exit)\n"
                "       batond --config FILE --recover  (after losing a "
                "majority: this node's data as a one-node cluster, then "
                "exit)\n\n"
                "Runs one node of a Baton lock cluster. Flags override the "
                "config file.\n\nKeys:\n");
        config_print_help(out);
}

/* The TLS settings of a port clients come to (the client port, the
 * metrics port when `on`): the node's certificate, and the client CA
 * (tls-client-ca, else the cluster's). 0, or 1 after logging what
 * failed. */
static int client_tls(const struct config *cfg, bool on, struct tls_ctx **out)
{
        char err[TLS_ERRMSG_MAX];

        *out = NULL;
        if (on && tlsconfig_client_port(cfg, out, err, sizeof err) != 0) {
                log_error("TLS: %s", err);
                return 1;
        }
        return 0;
}

/* The metrics port's credentials when `on` (client certificates optional:
 * scrapegate.h decides per request), else NULL. 0, or 1 after logging
 * what failed. */
static int metrics_tls(const struct config *cfg, bool on, struct tls_ctx **out)
{
        char err[TLS_ERRMSG_MAX];

        *out = NULL;
        if (on && tlsconfig_metrics_port(cfg, out, err, sizeof err) != 0) {
                log_error("TLS: %s", err);
                return 1;
        }
        return 0;
}

/* SIGHUP: the apply log and the audit trail are reopened; certificates,
 * keys and CRLs are read again, for new connections; those open keep the
 * credentials they started with. A file that does not load leaves the old
 * settings in place. */
static void on_sighup(uv_signal_t *h, int signum)
{
        struct server *s = h->data;
        char err[TLS_ERRMSG_MAX];
        struct tls_ctx *x;

        (void)signum;
        corehost_reopen_logs(&s->host);
        if (!s->cfg.tls) {
                log_info("SIGHUP: tls is off; nothing to reload");
                return;
        }
        if (client_tls(&s->cfg, true, &x) != 0) {
                log_warn("SIGHUP: keeping the client port's current "
                         "certificates");
                return;
        }
        conn_set_tls(&s->conns, x);
        httpapi_reload_tls(&s->http);
        if (node_reload_tls(&s->node, err, sizeof err) != 0) {
                log_warn("SIGHUP: keeping the raft port's current "
                         "certificates: %s",
                         err);
        }
        if (s->metrics.active && s->cfg.metrics_tls &&
            metrics_tls(&s->cfg, true, &x) == 0) {
                scrape_set_tls(&s->metrics.http, x);
        }
        certwatch_reread(&s->certwatch);
        log_info("SIGHUP: certificates reloaded for new connections");
}

static int start_metrics(struct server *s);

/*
 * Whether node_start() failed on the one data directory libraft 0.22.1
 * refuses once and then loads: the one a kill leaves after an installed
 * snapshot is written and before the segments it replaces are removed
 * (docs/raft.md, section 2). There, every segment is behind the snapshot,
 * and the empty open segments libraft keeps ready make it load them all
 * "hoping" they follow the snapshot; the entries it finds end behind it,
 * so it fails with RAFT_CORRUPT and this message. That failed load has
 * already removed the empty open segments (and closed any written ones),
 * so the next load drops the segments as behind the snapshot, as it does
 * for any, and starts from the snapshot: nothing is lost, since every
 * entry on disk is behind it, and the leader sends what follows.
 */
static bool start_failed_behind_snapshot(const struct node *n)
{
        return strstr(n->errmsg, "which is behind last snapshot's index") !=
               NULL;
}

/* The exit status of a node that refuses a damaged data directory, and
 * what its one line tells the operator to do. */
#define EXIT_DAMAGED 3
#define DAMAGED_REMEDY                                                         \
        "this node refuses to start (exit status 3): if the other members "    \
        "serve, remove it, wipe the directory and add it again; if another "   \
        "member refuses too, or none leads, wipe nothing and keep a copy of "  \
        "every directory (docs/operations.md, \"A damaged data directory\")"

/* Raft's files, before raft reads them: checked (diskscan.h), then made
 * durable as they read (disksettle.h). 0, or EXIT_DAMAGED (1 when they
 * cannot be read or written back) after the one line that says why. */
static int check_raft_files(const struct server *s)
{
        struct diskscan scan;
        struct disksettle settle;
        int rv = diskscan_check(&scan, s->dir.path);

        if (scan.note[0] != '\0') {
                log_warn("data directory %s: %s", s->dir.path, scan.note);
        }
        if (rv == BATON_ECORRUPT) {
                log_error("data directory %s is damaged: %s; " DAMAGED_REMEDY,
                          s->dir.path, scan.errmsg);
                return EXIT_DAMAGED;
        }
        if (rv != 0) {
                log_error("data directory %s: cannot read raft's files: %s",
                          s->dir.path, scan.errmsg);
                return 1;
        }
        if (disksettle_run(&settle, s->dir.path, NULL) != 0) {
                log_error("data directory %s: cannot make raft's files "
                          "durable before raft loads them: %s; stopping: "
                          "start batond again once the disk works",
                          s->dir.path, settle.errmsg);
                return 1;
        }
        return 0;
}

/* Start the node, the gateway, the client listener, the loop-lag probe and
 * metrics, each on the one before it. 0, or 1 (EXIT_DAMAGED for a data
 * directory raft finds damaged) after logging what failed. */
static int start_services(struct server *s)
{
        struct node_callbacks cb;
        struct conn_limits limits;
        struct tls_ctx *tls;
        int rv;

        corehost_node_callbacks(&s->host, &cb);
        rv = node_start(&s->node, &s->loop, &s->cfg, &cb, &s->check);
        if (rv != 0 && start_failed_behind_snapshot(&s->node)) {
                log_warn("node %llu: %s: starting again from the snapshot, "
                         "as a kill during its install leaves it",
                         (unsigned long long)s->cfg.id, s->node.errmsg);
                rv = node_start(&s->node, &s->loop, &s->cfg, &cb, &s->check);
        }
        if (rv == BATON_EVERSION) {
                /* Whole, written by a newer release: never "damaged", whose
                 * remedy (wipe and rejoin) would throw it away. */
                log_error("cannot start node %llu on data directory %s: %s",
                          (unsigned long long)s->cfg.id, s->dir.path,
                          s->node.errmsg);
                return 1;
        }
        if (rv != 0 && strstr(s->node.errmsg, "persisted data is corrupted")) {
                log_error("data directory %s is damaged: cannot start node "
                          "%llu: %s; " DAMAGED_REMEDY,
                          s->dir.path, (unsigned long long)s->cfg.id,
                          s->node.errmsg);
                return EXIT_DAMAGED;
        }
        if (rv != 0) {
                log_error("cannot start node %llu: %s",
                          (unsigned long long)s->cfg.id, s->node.errmsg);
                return 1;
        }
        rv = corehost_init(&s->host, &s->loop, &s->node, &s->cfg);
        if (rv != 0) {
                log_error("%s", s->host.errmsg);
                return 1;
        }
        limits.max_conns = s->cfg.max_connections;
        limits.max_per_address = s->cfg.max_connections_per_address;
        limits.max_frame = s->cfg.max_frame;
        limits.output_limit = s->cfg.output_limit;
        limits.handshake_timeout_ms = s->cfg.handshake_timeout_ms;
        limits.idle_timeout_ms = s->cfg.idle_timeout_ms;
        limits.watch_batch_ms = s->cfg.watch_batch_ms;
        tls = s->client_tls;
        s->client_tls = NULL;
        rv = conn_listen(&s->conns, &s->loop, s->cfg.client_listen, &limits,
                         tls, corehost_on_frame, corehost_on_gone, &s->host);
        if (rv != 0) {
                tls_ctx_destroy(tls);
                log_error("cannot listen for clients on %s",
                          s->cfg.client_listen);
                return 1;
        }
        s->conns.cfg = &s->cfg; /* the roles of TLS identities */
        s->conns.audit = &s->host.audit;
        if (httpapi_start(&s->http, &s->loop, &s->host, &s->cfg) != 0) {
                return 1;
        }
        looplag_start(&s->looplag, &s->loop);
        memtrim_start(&s->memtrim, &s->loop, &s->node);
        return start_metrics(s);
}

/* Whether `address` can only be reached from this host. */
static bool loopback(const char *address)
{
        struct address a;

        if (address_parse(address, &a) != 0) {
                return false;
        }
        return (a.kind == ADDRESS_IPV4 && strncmp(a.host, "127.", 4) == 0) ||
               (a.kind == ADDRESS_IPV6 && strcmp(a.host, "::1") == 0) ||
               (a.kind == ADDRESS_NAME && strcmp(a.host, "localhost") == 0);
}

/* Metrics, when configured. 0, or 1 after logging what failed. */
static int start_metrics(struct server *s)
{
        struct metrics_settings set;
        int rv;

        set.address = s->cfg.metrics_address;
        set.loopback = loopback(set.address);
        if (set.address[0] != '\0' && s->cfg.metrics_tls) {
                log_info("metrics on %s: /health and /ready over plain HTTP "
                         "(liveness only) or TLS; /metrics over TLS for a "
                         "client certificate of role read or admin",
                         set.address);
        } else if (set.address[0] != '\0' && !set.loopback) {
                log_warn("metrics on %s without metrics-tls: not on "
                         "loopback, so /health and /ready answer liveness "
                         "only and /metrics answers 403; set metrics-tls = "
                         "true to scrape it with a client certificate of "
                         "role read or admin",
                         set.address);
        }
        set.max_conns = s->cfg.metrics_max_connections;
        set.timeout_ms = s->cfg.handshake_timeout_ms;
        if (metrics_tls(&s->cfg, s->cfg.metrics_tls, &set.tls) != 0) {
                return 1;
        }
        rv = metrics_start(&s->metrics, &s->loop, &set, &s->host.core, &s->node,
                           &s->conns, &s->looplag, &s->memtrim);
        if (rv != 0) {
                tls_ctx_destroy(set.tls);
                log_error("cannot serve metrics on %s", s->cfg.metrics_address);
                return 1;
        }
        return 0;
}

/* The loop's own handles: the per-iteration flush and the signals that stop
 * the node. */
static void start_loop_handles(struct server *s)
{
        uv_check_init(&s->loop, &s->flush);
        s->flush.data = s;
        uv_check_start(&s->flush, on_flush);
        uv_signal_init(&s->loop, &s->sigint);
        uv_signal_init(&s->loop, &s->sigterm);
        s->sigint.data = s;
        s->sigterm.data = s;
        uv_signal_start(&s->sigint, on_signal, SIGINT);
        uv_signal_start(&s->sigterm, on_signal, SIGTERM);
        uv_signal_init(&s->loop, &s->sighup);
        s->sighup.data = s;
        uv_signal_start(&s->sighup, on_sighup, SIGHUP);
}

/* Each port this node listens on can be listened on: asked before the data
 * directory is touched, so that a busy port costs nothing. 0, or 1 after
 * logging which port and why. */
static int ports_free(const struct server *s, const struct config_member *self)
{
        const char *what[] = {"raft", "client", "metrics", "HTTP API"};
        const char *key[] = {"raft-listen", "client-listen", "", ""};
        const char *where[] = {s->cfg.raft_listen, s->cfg.client_listen,
                               s->cfg.metrics_address, s->cfg.http_listen};
        const char *told[] = {self->raft_address, self->client_address, "", ""};
        char err[256];
        unsigned i;

        for (i = 0; i < 4; i++) {
                if (where[i][0] == '\0' ||
                    listen_probe(where[i], err, sizeof err) == 0) {
                        continue;
                }
                /* Named as the operator wrote it: the listen key when it
                 * differs from the member line. */
                if (strcmp(where[i], told[i]) != 0 && key[i][0] != '\0') {
                        log_error("cannot start node %llu: %s address "
                                  "(%s, advertised as %s) %s; data "
                                  "directory %s not touched",
                                  (unsigned long long)s->cfg.id, what[i],
                                  key[i], told[i], err, s->cfg.data_dir);
                } else {
                        log_error("cannot start node %llu: %s address %s; "
                                  "data directory %s not touched",
                                  (unsigned long long)s->cfg.id, what[i], err,
                                  s->cfg.data_dir);
                }
                return 1;
        }
        return 0;
}

/* With TLS, the node's certificate is one its clients and peers accept
 * (certcheck.h): asked before the data directory is touched, like the
 * ports. 0, or 1 after logging the file and what is wrong. */
static int own_cert_ok(struct server *s, const struct config_member *self)
{
        const struct config *cfg = &s->cfg;
        char err[CERTCHECK_ERRMSG_MAX];

        if (!cfg->tls) {
                return 0;
        }
        if (certcheck_start(cfg->tls_cert, cfg->tls_ca, self->client_address,
                            (int64_t)time(NULL), &s->cert_not_after, err,
                            sizeof err) != 0) {
                log_error("cannot start node %llu: %s; data directory %s not "
                          "touched",
                          (unsigned long long)cfg->id, err, cfg->data_dir);
                return 1;
        }
        return 0;
}

/* What the peers taught the data directory's identity (peercheck.h). */
static void save_identity(void *data)
{
        struct datadir *d = data;

        if (datadir_save(d) != 0) {
                log_error("%s", d->errmsg);
        }
}

/* The data dir could not be checked or claimed: say why, when the check
 * left a reason (the port probe logs its own). Returns 1. */
static int not_claimed(const struct config *cfg, const struct datadir *d)
{
        if (d->errmsg[0] != '\0') {
                log_error("cannot start node %llu: %s",
                          (unsigned long long)cfg->id, d->errmsg);
        }
        return 1;
}

/* The data directory, this node's alone (datadir.h), and the checks of
 * the peers' (peercheck.h); each port free and the client port's TLS
 * files read before anything is written. 0, or 1 after logging the one
 * line that says why not. */
static int claim_data_dir(struct server *s, const struct config_member *self)
{
        const struct config *cfg = &s->cfg;
        uint64_t cluster = cfg->join
                               ? 0
                               : dirid_cluster_of(cfg->members, cfg->n_members,
                                                  cfg->cluster_name, "");
        struct datadir *d = &s->dir;

        if (datadir_check(d, cfg->data_dir, cfg->id) != 0 ||
            ports_free(s, self) != 0) {
                return not_claimed(cfg, d);
        }
        /* The certificate, key and CA files too, before anything is
         * written: a mistake in them leaves the directory as it was. */
        if (client_tls(cfg, cfg->tls, &s->client_tls) != 0) {
                return 1;
        }
        if (own_cert_ok(s, self) != 0) {
                tls_ctx_destroy(s->client_tls);
                s->client_tls = NULL;
                return 1;
        }
        if (datadir_claim(d, cfg->id, cluster, true) != 0) {
                tls_ctx_destroy(s->client_tls);
                s->client_tls = NULL;
                return not_claimed(cfg, d);
        }
        if (d->made) {
                log_info("data directory %s: %s node %llu, cluster %016llx%s, "
                         "incarnation %016llx",
                         d->path,
                         d->adopted ? "adopted (an older batond's) for"
                                    : "made for",
                         (unsigned long long)cfg->id,
                         (unsigned long long)d->id.cluster,
                         d->id.cluster == 0 ? " (unknown: learned from the "
                                              "peers)"
                                            : "",
                         (unsigned long long)d->id.incarnation);
        }
        if (cfg->tls && strlen(self->raft_address) > RAFTHELLO_ADDRESS_FITS) {
                log_warn("raft address %s is over %d bytes: its hellos have "
                         "no room for this data directory's cluster and "
                         "incarnation, and the peers accept it unchecked",
                         self->raft_address, RAFTHELLO_ADDRESS_FITS);
        }
        peercheck_init(&s->check, &d->id, d->path, cfg);
        s->check.save = save_identity;
        s->check.save_data = d;
        s->check.refused = on_refused;
        s->check.refused_data = s;
        return 0;
}

/* Run the loop until shutdown has closed every handle, then close it. */
static void run_until_stopped(struct server *s)
{
        int rv;

        uv_run(&s->loop, UV_RUN_DEFAULT);
        if (s->stopping) {
                uv_close((uv_handle_t *)&s->watchdog, NULL);
                uv_run(&s->loop, UV_RUN_NOWAIT);
        }
        rv = uv_loop_close(&s->loop);
        if (rv != 0) {
                log_warn("loop closed with handles open: %s", uv_strerror(rv));
        }
        log_info("stopped");
}

/* An address the peers or clients are told, and what this node binds
 * for it when that differs (client-listen, raft-listen). */
static const char *shown(char *buf, size_t size, const char *told,
                         const char *bound)
{
        if (strcmp(told, bound) == 0) {
                return told;
        }
        snprintf(buf, size, "%.*s (listening on %.*s)", CONFIG_ADDRESS_MAX,
                 told, CONFIG_ADDRESS_MAX, bound);
        return buf;
}

/* Descriptors kept apart from client connections: raft peers (one each
 * way), the data directory's segments and snapshots, the listeners. */
#define FD_RESERVE 128

/*
 * One descriptor per client and metrics connection: raise the soft limit
 * (often 1024 outside systemd) up to the hard one as far as max-connections
 * needs, and say so when even the hard limit is short, since connections
 * past it fail at accept.
 */
static void descriptors(const struct config *cfg)
{
        rlim_t need = (rlim_t)cfg->max_connections +
                      cfg->metrics_max_connections + 2u * cfg->n_members +
                      FD_RESERVE;
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need) {
                return;
        }
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need
                          ? need
                          : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need) {
                log_warn("max-connections = %u needs about %llu file "
                         "descriptors and the limit is %llu: connections "
                         "past it are refused at accept; raise LimitNOFILE "
                         "(systemd) or ulimit -n, or lower max-connections",
                         cfg->max_connections, (unsigned long long)need,
                         (unsigned long long)rl.rlim_cur);
        }
}

/* The line that says the node serves, and where. */
static void log_serving(const struct server *s,
                        const struct config_member *self)
{
        char raft[32];
        char rbuf[2 * CONFIG_ADDRESS_MAX + 32];
        char cbuf[2 * CONFIG_ADDRESS_MAX + 32];

        node_raft_version(raft, sizeof raft);
        log_info(
            "node %llu: raft %s, clients %s, data %s, %u members; "
            "batond %s, libraft %s",
            (unsigned long long)s->cfg.id,
            shown(rbuf, sizeof rbuf, self->raft_address, s->cfg.raft_listen),
            shown(cbuf, sizeof cbuf, self->client_address,
                  s->cfg.client_listen),
            s->cfg.data_dir, s->cfg.n_members, PACKAGE_VERSION, raft);
}

/* Startup reads top to bottom, each part on the one before it: config, the
 * data directory (held, checked, each port free before it is written),
 * node, gateway, listener, metrics, the loop's own handles. */
int main(int argc, char **argv)
{
        static struct server srv; /* large (read buffer); lives until exit */
        struct server *s = &srv;
        char errmsg[CONFIG_ERRMSG_MAX];
        const struct config_member *self;
        const char *restore, *recover;
        int rv;

        /* No fastbins: glibc keeps small chunks freed there uncoalesced
         * until a large request merges them all at once, on whichever
         * thread makes it. A million-lock state freed off the loop (after
         * an install, bgrestore.h) left two million such chunks, and the
         * loop's next large malloc merged them, with a copy-on-write
         * fault per page after the snapshot image's fork(): a 381 ms
         * freeze (docs/history/scale.md, "Tables that never write into a
         * record"). The per-thread caches keep small allocations fast. */
#ifdef M_MXFAST
        mallopt(M_MXFAST, 0);
#endif
        if (config_wants_help(argc, argv)) {
                usage(stdout);
                return 0;
        }
        if (wants_version(argc, argv)) {
                print_version();
                return 0;
        }
        restore = take_flag(&argc, argv, "--restore", true);
        recover = take_flag(&argc, argv, "--recover", false);
        config_defaults(&s->cfg);
        if (config_parse_args(&s->cfg, argc, argv, errmsg, sizeof errmsg) !=
                0 ||
            config_validate(&s->cfg, errmsg, sizeof errmsg) != 0) {
                fprintf(stderr, "batond: %s\n", errmsg);
                return 2;
        }
        if (restore != NULL || recover != NULL) {
                return run_offline(s, restore);
        }
        log_set_level(s->cfg.log_level);
        log_set_format(s->cfg.log_format, s->cfg.id);
        if (!s->cfg.tls) {
                log_warn("tls is off: anyone who can reach this node's "
                         "ports can read and change every lock; use it only "
                         "on a trusted single host");
        }
        descriptors(&s->cfg);
        signal(SIGPIPE, SIG_IGN);
        self = settings_member(&s->cfg, s->cfg.id);
        if (claim_data_dir(s, self) != 0) {
                return 1;
        }
        uv_loop_init(&s->loop);
        s->loop.data = s;
        /* Ready before raft starts: the peers may refuse this node as
         * soon as it connects. */
        uv_timer_init(&s->loop, &s->refused);
        s->refused.data = s;
        certwatch_start(&s->certwatch, &s->loop, &s->cfg, s->cert_not_after);
        rv = check_raft_files(s);
        if (rv == 0) {
                rv = start_services(s);
        }
        if (rv != 0) {
                return rv;
        }
        s->metrics.certwatch = &s->certwatch;
        s->metrics.api = &s->http;
        metrics_set_audit(&s->metrics, &s->host.audit);
        start_loop_handles(s);
        /* Raft runs and every port listens: the node serves. */
        service_ready(&s->service, &s->loop, &s->node);
        log_serving(s, self);
        run_until_stopped(s);
        datadir_close(&s->dir);
        return s->exit_code;
}
