/*
 * baton-bench: the lock-service load driver of the shared peer benchmark
 * (the harness that runs etcd, ZooKeeper and Redis locks with the same
 * workloads; docs/performance.md), for Baton through libbaton alone
 * (include/baton.h). Its flags, workloads and one-line JSON result are the
 * harness's driver contract, documented in baton-bench(1).
 *
 * Each client is a thread with its own baton_client handle (its own
 * session). An op is baton_acquire() followed by baton_release() of the
 * same lock, both acknowledged by the cluster. Clients run ops back to back
 * for warmup + duration seconds; only ops whose release acknowledgement
 * falls inside the measured window count. Prints one JSON line on stdout;
 * diagnostics go to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/baton.h"
#include "args.h"
#include "conns.h"
#include "label.h"
#include "fill.h"
#include "hsession.h"
#include "stats.h"
#include "storm.h"
#include "watchers.h"

#define DRIVER            "baton-c-libbaton"
#define DRIVER_HTTP       "baton-c-http"       /* --http: the HTTP API */
#define MAX_SAMPLES       (4u * 1000u * 1000u) /* per client */
#define MAX_ERRORS_LOGGED 20

struct client {
        int idx;
        const struct config *cfg;
        double t_measure, t_end;
        uint32_t *lat;  /* op latency or acquire wait, µs */
        uint32_t *done; /* completion time, µs after t_measure */
        uint32_t n, cap;
        uint64_t ops, errors;
        double max_gap; /* s */
        pthread_t thread;
        struct httpc_cluster *http; /* --http: the API's endpoints */
};

/* One client's way to the cluster: a libbaton handle, or a session of the
 * HTTP API on a keep-alive connection of its own (--http). */
struct way {
        baton_client *h;
        struct hsession s;
        struct httpc_conn conn;
        bool open;
        double keepalive_at; /* s: the session's next keepalive is due */
};

static int errors_logged;

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
        struct timespec ts;

        if (us <= 0) {
                return;
        }
        ts.tv_sec = us / 1000000;
        ts.tv_nsec = (us % 1000000) * 1000;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
}

static uint32_t to_u32(double us)
{
        if (us < 0) {
                us = 0;
        }
        if (us > 4e9) {
                us = 4e9;
        }
        return (uint32_t)(us + 0.5);
}

static void record(struct client *c, double lat_us, double done_us)
{
        if (c->n == c->cap) {
                uint32_t cap = c->cap != 0 ? c->cap * 2 : 4096;
                uint32_t *p;

                if (c->cap >= MAX_SAMPLES) {
                        return;
                }
                p = realloc(c->lat, (size_t)cap * sizeof *p);
                if (p == NULL) {
                        return;
                }
                c->lat = p;
                p = realloc(c->done, (size_t)cap * sizeof *p);
                if (p == NULL) {
                        return;
                }
                c->done = p;
                c->cap = cap;
        }
        c->lat[c->n] = to_u32(lat_us);
        c->done[c->n++] = to_u32(done_us);
}

/* A failed open, acquire or release: counted if it ends inside the window,
 * logged (the first few of the run), then the error backoff. */
static void failed(struct client *c, const char *what, int rc)
{
        double t = now_s();

        if (t >= c->t_measure && t <= c->t_end) {
                c->errors++;
        }
        if (__atomic_fetch_add(&errors_logged, 1, __ATOMIC_RELAXED) <
            MAX_ERRORS_LOGGED) {
                fprintf(stderr,
                        "baton-bench: t=%.3fs client %d: %s failed: %s\n",
                        t - c->t_measure, c->idx, what, baton_strerror(rc));
        }
        sleep_us(c->cfg->error_backoff_ms * 1000);
}

static baton_client *open_client(const struct config *cfg, int idx, int *rc)
{
        struct baton_options o;
        baton_client *h = NULL;
        char name[64];

        baton_options_init(&o);
        o.ttl_ms = (uint32_t)cfg->ttl_ms;
        o.request_timeout_ms = (uint32_t)cfg->op_timeout_ms;
        snprintf(name, sizeof name, "baton-bench-c%d", idx);
        o.client_name = name;
        *rc = baton_client_create(&h, cfg->endpoints, &o);
        return *rc == 0 ? h : NULL;
}

/* The workload's locks of client `idx`: one (a name of its own, or the
 * contended workloads' one name), or for the multi workload --names
 * consecutive names of a ring of one per client, so that each name is
 * wanted by --names clients (the dining philosophers, with two). */
struct names {
        char name[BATON_MULTI_MAX][300];
        struct baton_lock_name list[BATON_MULTI_MAX];
        size_t n;
};

static void names_of(const struct config *cfg, int idx, struct names *w)
{
        w->n = cfg->names > 0 ? (size_t)cfg->names : 1;
        for (size_t j = 0; j < w->n; j++) {
                if (cfg->names > 0) {
                        snprintf(w->name[j], sizeof w->name[j], "%s-ring%ld",
                                 cfg->prefix,
                                 ((long)idx + (long)j) % cfg->clients);
                } else if (cfg->contended) {
                        snprintf(w->name[j], sizeof w->name[j], "%s-shared",
                                 cfg->prefix);
                } else {
                        snprintf(w->name[j], sizeof w->name[j], "%s-c%d",
                                 cfg->prefix, idx);
                }
                w->list[j].name = w->name[j];
                w->list[j].mode = BATON_MODE_EXCLUSIVE;
        }
}

/* One acquire of the workload's lock: a permit of the semaphore, the
 * read lock (the shared workload's clients but the first), all the
 * names of a multi-lock, else the lock. */
static int take(const struct config *cfg, const struct client *c,
                baton_client *h, const struct names *w, uint64_t *token)
{
        const char *name = w->name[0];

        if (cfg->names > 0) {
                return baton_multi_acquire(h, w->list, w->n, BATON_OWNER_THREAD,
                                           cfg->op_timeout_ms, token);
        }
        if (cfg->election) {
                return baton_campaign(h, name, "bench", BATON_OWNER_THREAD,
                                      cfg->op_timeout_ms, token);
        }
        if (cfg->permits > 0) {
                return baton_sem_acquire(h, name, (uint32_t)cfg->permits, 1,
                                         BATON_OWNER_THREAD, cfg->op_timeout_ms,
                                         token);
        }
        if (cfg->shared && c->idx != 0) {
                return baton_acquire_shared(h, name, BATON_OWNER_THREAD,
                                            cfg->op_timeout_ms, token);
        }
        return baton_acquire(h, name, BATON_OWNER_THREAD, cfg->op_timeout_ms,
                             token);
}

/* Open the client's way: 0 or a BATON_E* code. */
static int way_open(struct client *c, struct way *w)
{
        const struct config *cfg = c->cfg;
        char name[64];
        int rc;

        if (c->http == NULL) {
                w->h = open_client(cfg, c->idx, &rc);
                w->open = w->h != NULL;
                return rc;
        }
        snprintf(name, sizeof name, "baton-bench-c%d", c->idx);
        rc = hsession_open(&w->s, c->http, &w->conn, (uint32_t)cfg->ttl_ms,
                           (uint32_t)cfg->op_timeout_ms, name);
        w->open = rc == 0;
        w->keepalive_at = now_s() + cfg->ttl_ms / 3000.0;
        return rc;
}

/* Over HTTP the client keeps its session alive itself, every TTL/3, as
 * libbaton's thread does for a handle: between operations. */
static int way_tick(struct client *c, struct way *w)
{
        int rc = 0;

        if (c->http != NULL && now_s() >= w->keepalive_at) {
                rc = hsession_keepalive(&w->s, &w->conn);
                w->keepalive_at = now_s() + c->cfg->ttl_ms / 3000.0;
        }
        return rc;
}

static int way_take(struct client *c, struct way *w, const struct names *n,
                    uint64_t *token)
{
        if (c->http != NULL) {
                return hsession_acquire(&w->s, &w->conn, n->name[0],
                                        (uint64_t)c->idx + 1,
                                        c->cfg->op_timeout_ms, token);
        }
        return take(c->cfg, c, w->h, n, token);
}

static int way_release(struct client *c, struct way *w, const struct names *n,
                       uint64_t token)
{
        if (c->http != NULL) {
                return hsession_release(&w->s, &w->conn, n->name[0],
                                        (uint64_t)c->idx + 1, token);
        }
        return c->cfg->names > 0
                   ? baton_multi_release(w->h, n->list, n->n,
                                         BATON_OWNER_THREAD, token)
                   : baton_release(w->h, n->name[0], BATON_OWNER_THREAD, token);
}

static void way_close(struct client *c, struct way *w)
{
        if (c->http != NULL) {
                if (w->open) {
                        hsession_close(&w->s, &w->conn);
                }
                httpc_conn_close(&w->conn);
        } else {
                baton_client_destroy(w->h);
        }
        w->open = false;
}

static void *client_main(void *arg)
{
        struct client *c = arg;
        const struct config *cfg = c->cfg;
        double last_ok = c->t_measure; /* the window start is a boundary */
        struct way way = {0};
        struct names w;
        double every = cfg->rate > 0 ? cfg->clients / cfg->rate : 0;
        double next = now_s() + every * c->idx / cfg->clients;
        int rc;

        names_of(cfg, c->idx, &w);
        httpc_conn_init(&way.conn);
        for (;;) {
                uint64_t token = 0;
                double t0, t1, t2;

                if (every > 0) {
                        /* --rate: each client its share, on a schedule
                         * that does not make up for time lost by more
                         * than one turn. */
                        t0 = now_s();
                        if (next > t0) {
                                sleep_us((long)((next - t0) * 1e6));
                        }
                        next = (next < t0 - every ? t0 : next) + every;
                }
                if (now_s() >= c->t_end) {
                        break;
                }
                if (!way.open && (rc = way_open(c, &way)) != 0) {
                        failed(c, "open", rc);
                        continue;
                }
                if ((rc = way_tick(c, &way)) != 0) {
                        failed(c, "keepalive", rc);
                        way_close(c, &way);
                        continue;
                }
                t0 = now_s();
                rc = way_take(c, &way, &w, &token);
                if (rc != 0) {
                        failed(c, "acquire", rc);
                        continue;
                }
                t1 = now_s();
                sleep_us(cfg->hold_us);
                rc = way_release(c, &way, &w, token);
                if (rc != 0) {
                        failed(c, "release", rc);
                        continue;
                }
                t2 = now_s();
                if (t2 >= c->t_measure && t2 <= c->t_end) {
                        c->ops++;
                        record(c, (cfg->contended ? t1 - t0 : t2 - t0) * 1e6,
                               (t2 - c->t_measure) * 1e6);
                        if (t2 - last_ok > c->max_gap) {
                                c->max_gap = t2 - last_ok;
                        }
                        last_ok = t2;
                }
        }
        /* the window end is a boundary too */
        if (c->t_end - last_ok > c->max_gap) {
                c->max_gap = c->t_end - last_ok;
        }
        way_close(c, &way);
        return NULL;
}

/* What the clients measured, merged: the one JSON line's numbers. */
struct summary {
        uint64_t ops, errors;
        uint64_t writes; /* shared: the writer's (client 0's) ops */
        size_t total;    /* samples */
        uint32_t *lat;   /* every client's samples, sorted */
        double max_gap;  /* s: the longest any client went without an op */
        double gap_p50;  /* s: the median of the clients' longest gaps */
        double sys_gap, sys_gap_at; /* s: the longest no one completed */
        double cpu_s; /* this process's user and system CPU in the window */
        struct watchers_result watched;
        char *extra; /* a workload's own fields (",\"k\":v..."), or NULL */
};

/* Start every client's thread; the window opens after the warmup. */
static void start_clients(const struct config *cfg, struct client *cs)
{
        double t_measure = now_s() + cfg->warmup_s;
        double t_end = t_measure + cfg->duration_s;
        int i;

        for (i = 0; i < cfg->clients; i++) {
                cs[i].idx = i;
                cs[i].cfg = cfg;
                cs[i].t_measure = t_measure;
                cs[i].t_end = t_end;
                if (pthread_create(&cs[i].thread, NULL, client_main, &cs[i]) !=
                    0) {
                        fprintf(stderr, "baton-bench: pthread_create failed\n");
                        exit(1);
                }
        }
}

/* The CPU the clients use within the measured window, read by the main
 * thread at the window's start and end (so that connecting and the
 * warmup's handshakes are not counted; what the servers use in the same
 * window, scripts/bench reads from /proc). */
static double window_cpu_s(const struct client *c)
{
        double start;

        sleep_us((long)((c->t_measure - now_s()) * 1e6));
        start = process_cpu_s();
        sleep_us((long)((c->t_end - now_s()) * 1e6));
        return process_cpu_s() - start;
}

/* Wait for every client and add up its counts; `gaps` gets each one's
 * longest gap. */
static void join_clients(const struct config *cfg, struct client *cs,
                         double *gaps, struct summary *sum)
{
        int i;

        for (i = 0; i < cfg->clients; i++) {
                pthread_join(cs[i].thread, NULL);
                sum->total += cs[i].n;
                sum->ops += cs[i].ops;
                sum->writes += i == 0 && cfg->shared ? cs[i].ops : 0;
                sum->errors += cs[i].errors;
                if (cs[i].max_gap > sum->max_gap) {
                        sum->max_gap = cs[i].max_gap;
                }
                gaps[i] = cs[i].max_gap;
        }
}

/* Gather the clients' samples into `*lat` and `*done` (freeing theirs).
 * 0, or -1 when out of memory. */
static int merge_samples(struct client *cs, int n, size_t total, uint32_t **lat,
                         uint32_t **done)
{
        size_t k = 0;
        int i;

        *lat = malloc((total != 0 ? total : 1) * sizeof **lat);
        *done = malloc((total != 0 ? total : 1) * sizeof **done);
        if (*lat == NULL || *done == NULL) {
                return -1;
        }
        for (i = 0; i < n; i++) {
                if (cs[i].n != 0) {
                        memcpy(*lat + k, cs[i].lat, cs[i].n * sizeof **lat);
                        memcpy(*done + k, cs[i].done, cs[i].n * sizeof **done);
                }
                k += cs[i].n;
                free(cs[i].lat);
                free(cs[i].done);
        }
        return 0;
}

static void print_summary(const struct config *cfg, const struct summary *sum)
{
        const uint32_t *lat = sum->lat;
        size_t total = sum->total;

        printf("{\"system\":\"%s\",\"nodes\":%d,\"workload\":\"%s\","
               "\"clients\":%d,\"ops\":%llu,\"seconds\":%.3f,"
               "\"ops_per_s\":%.1f,\"p50_us\":%u,\"p99_us\":%u,\"errors\":%llu,"
               "\"max_us\":%u,\"max_gap_ms\":%.1f,\"client_gap_p50_ms\":%.1f,"
               "\"sys_gap_ms\":%.1f,\"sys_gap_at_s\":%.3f,",
               cfg->system, cfg->nodes, cfg->workload, cfg->clients,
               (unsigned long long)sum->ops, cfg->duration_s,
               (double)sum->ops / cfg->duration_s, percentile(lat, total, 0.50),
               percentile(lat, total, 0.99), (unsigned long long)sum->errors,
               total != 0 ? lat[total - 1] : 0, sum->max_gap * 1e3,
               sum->gap_p50 * 1e3, sum->sys_gap * 1e3, sum->sys_gap_at);
        printf("\"client_cpu_s\":%.3f,\"variant\":\"%s\",\"driver\":\"%s\"",
               sum->cpu_s, cfg->variant,
               cfg->http != NULL ? DRIVER_HTTP : DRIVER);
        if (cfg->shared) {
                /* Of the ops, the writer's; the rest are the readers'. */
                printf(",\"writes\":%llu", (unsigned long long)sum->writes);
        }
        if (cfg->permits > 0) {
                printf(",\"permits\":%ld", cfg->permits);
        }
        if (cfg->watchers > 0) {
                printf(",\"watchers\":%ld,\"watch_conns\":%ld,"
                       "\"watch_form\":\"%s\",\"watch_events\":%llu,"
                       "\"watches_ended\":%llu,\"watches_failed\":%llu",
                       cfg->watchers, cfg->watch_conns,
                       cfg->watch_callbacks ? "callback" : "next",
                       (unsigned long long)sum->watched.events,
                       (unsigned long long)sum->watched.ended,
                       (unsigned long long)sum->watched.failed);
        }
        if (cfg->names > 0) {
                printf(",\"names\":%ld", cfg->names);
        }
        if (cfg->rate > 0) {
                printf(",\"rate\":%.0f", cfg->rate);
        }
        printf("%s}\n", sum->extra != NULL ? sum->extra : "");
        fflush(stdout);
}

/* The fill workload's one JSON line (fill.h). 0, or 1 when the run broke
 * or an answer was an error. */
static int run_fill(const struct config *cfg)
{
        struct fill_config fc = {cfg->endpoints, cfg->prefix,
                                 cfg->sessions,  cfg->locks_per_session,
                                 cfg->ttl_ms,    cfg->window};
        struct bench_label l = {cfg->system, cfg->nodes, cfg->variant, DRIVER};
        struct fill_result r;
        int rv = fill_run(&fc, &r);

        if (rv != 0 || r.broken) {
                fprintf(stderr, "baton-bench: fill: %s\n", r.why);
        }
        fill_print(stdout, &l, &fc, &r);
        return rv != 0 || r.broken || r.errors != 0 ? 1 : 0;
}

/* The connections workload's one JSON line (conns.h). 0, or 1 when the run
 * broke or a connection failed. */
static int run_conns(const struct config *cfg)
{
        struct conns_config cc = {
            cfg->endpoints, cfg->prefix, cfg->connections,   cfg->ttl_ms,
            cfg->window,    cfg->hold_s, cfg->reconnect != 0};
        struct bench_label l = {cfg->system, cfg->nodes, cfg->variant, DRIVER};
        struct conns_result r;
        int rv = conns_run(&cc, &r);

        if (rv != 0 || r.broken || r.errors != 0) {
                fprintf(stderr, "baton-bench: %s: %s\n", cfg->workload, r.why);
        }
        conns_print(stdout, &l, &cc, &r);
        return rv != 0 || r.broken || r.errors != 0 ? 1 : 0;
}

/* The storm workloads' storm_config. */
static struct storm_config storm_config_of(const struct config *cfg)
{
        struct storm_config sc = {cfg->endpoints, cfg->sessions, cfg->ttl_ms,
                                  cfg->window, cfg->keepalives != 0};

        return sc;
}

/* The storm workloads' sessions, opened before the clients start. 0, or 1
 * after saying why not. */
static int open_storm(const struct config *cfg, struct storm **storm)
{
        struct storm_config sc = storm_config_of(cfg);
        struct storm_result r;

        if (storm_open(storm, &sc, &r) != 0) {
                fprintf(stderr, "baton-bench: %s: %s\n", cfg->workload, r.why);
                return 1;
        }
        fprintf(stderr, "baton-bench: %llu sessions opened in %.3f s\n",
                (unsigned long long)r.opened, r.open_s);
        return 0;
}

/* The storm's fields into sum->extra, from the clients' samples (still
 * paired with their completion times). 0, or -1 when out of memory. */
static int storm_fields(const struct config *cfg, const struct storm_result *r,
                        struct summary *sum, const uint32_t *done,
                        double t_measure)
{
        struct storm_config sc = storm_config_of(cfg);
        size_t size = 0;
        FILE *f = open_memstream(&sum->extra, &size);

        if (f == NULL) {
                return -1;
        }
        storm_print(f, &sc, r, sum->lat, done, sum->total, t_measure);
        if (r->broken) {
                fprintf(stderr, "baton-bench: %s: %s\n", cfg->workload, r->why);
        }
        return fclose(f) == 0 ? 0 : -1;
}

/* The workloads of clients (every one but fill and connections): their
 * one JSON line. 0, or 1 when it could not run or a storm broke. */
/* --http: the API's endpoints, shared by every client. 0, or 1 after
 * saying why not. */
static int open_http(const struct config *cfg, struct httpc_cluster *http,
                     struct client *cs)
{
        char why[256];
        int i;

        if (cfg->http == NULL) {
                return 0;
        }
        if (httpc_cluster_init(http, cfg->http, why, sizeof why) != 0) {
                fprintf(stderr, "baton-bench: --http %s: %s\n", cfg->http, why);
                return 1;
        }
        for (i = 0; i < cfg->clients; i++) {
                cs[i].http = http;
        }
        return 0;
}

static int run_clients(const struct config *cfg)
{
        struct httpc_cluster http;
        struct watchers *watching = NULL;
        struct storm *storm = NULL;
        struct storm_result sr;
        struct summary sum;
        struct client *cs;
        uint32_t *done;
        double *gaps;

        cs = calloc((size_t)cfg->clients, sizeof *cs);
        gaps = calloc((size_t)cfg->clients, sizeof *gaps);
        if (cs == NULL || gaps == NULL) {
                fprintf(stderr, "baton-bench: out of memory\n");
                return 1;
        }
        memset(&sum, 0, sizeof sum);
        if (cfg->watchers > 0) {
                char name[300];
                snprintf(name, sizeof name, "%s-shared", cfg->prefix);
                watching = watchers_start(
                    cfg->watch_endpoints != NULL ? cfg->watch_endpoints
                                                 : cfg->endpoints,
                    name, cfg->watchers, cfg->watch_conns, cfg->ttl_ms,
                    cfg->watch_callbacks != 0);
        }
        if ((cfg->storm && open_storm(cfg, &storm) != 0) ||
            open_http(cfg, &http, cs) != 0) {
                return 1;
        }
        start_clients(cfg, cs);
        if (storm != NULL &&
            storm_start(storm, cs[0].t_measure + cfg->storm_at) != 0) {
                fprintf(stderr, "baton-bench: pthread_create failed\n");
                return 1;
        }
        sum.cpu_s = window_cpu_s(&cs[0]);
        join_clients(cfg, cs, gaps, &sum);
        if (watching != NULL) {
                watchers_stop(watching, &sum.watched);
        }
        if (storm != NULL) {
                storm_finish(storm, &sr);
        }
        if (merge_samples(cs, cfg->clients, sum.total, &sum.lat, &done) != 0 ||
            (storm != NULL &&
             storm_fields(cfg, &sr, &sum, done, cs[0].t_measure) != 0)) {
                fprintf(stderr, "baton-bench: out of memory\n");
                return 1;
        }
        qsort(sum.lat, sum.total, sizeof *sum.lat, cmp_u32);
        qsort(done, sum.total, sizeof *done, cmp_u32);
        sum.sys_gap =
            longest_silence(done, sum.total, cfg->duration_s, &sum.sys_gap_at);
        qsort(gaps, (size_t)cfg->clients, sizeof *gaps, cmp_double);
        sum.gap_p50 = gaps[rank_of((size_t)cfg->clients, 0.5) - 1];
        print_summary(cfg, &sum);
        if (cfg->http != NULL) {
                httpc_cluster_close(&http);
        }
        free(sum.extra);
        free(sum.lat);
        free(done);
        free(gaps);
        free(cs);
        return storm != NULL && (sr.broken || sr.errors != 0) ? 1 : 0;
}

int main(int argc, char **argv)
{
        struct config cfg = {
            .system = "baton",
            .variant = "",
            .nodes = 3,
            .workload = "uncontended",
            .clients = 1,
            .duration_s = 10,
            .warmup_s = 1,
            .endpoints = NULL, /* see parse_args() */
            .prefix = "lockbench",
            .ttl_ms = 10000,
            .op_timeout_ms = 5000,
            .hold_us = 0,
            .retry_us = 1000,
            .error_backoff_ms = 10,
            .sessions = 1000,
            .locks_per_session = 10,
            .window = 1024,
            .connections = 1000,
            .watch_conns = 100,
            .storm_at = 2,
        };

        if (parse_args(argc, argv, &cfg) != 0) {
                usage(stderr);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        if (strcmp(cfg.workload, "fill") == 0) {
                return run_fill(&cfg);
        }
        if (strcmp(cfg.workload, "connections") == 0 || cfg.reconnect) {
                return run_conns(&cfg);
        }
        return run_clients(&cfg);
}
