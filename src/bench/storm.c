/*
 * Session storms (storm.h). Like the fill, this speaks the wire protocol
 * itself on one connection (libbaton holds one session per handle): every
 * OPEN pipelined, then KEEPALIVEs, then, for the keepalive load, CLOSEs.
 * OPEN attaches its session to the connection, so the KEEPALIVEs and
 * CLOSEs that follow on it are the session's own.
 */
#include "storm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../proto/attach.h"
#include "../proto/command.h"
#include "../proto/keepalive.h"
#include "../proto/proto.h"
#include "../proto/reply.h"
#include "pipe.h"
#include "stats.h"
#include "wire.h"

#define POLL_S  0.020 /* the expiry storm's status questions */
#define AFTER_S 30.0  /* how long past the last lease they are asked */

enum storm_phase { OPENING, KEEPING, CLOSING };

struct storm {
        struct storm_config cfg;
        struct storm_result res;
        struct tls_ctx *tls;
        struct wire w;
        baton_client *status; /* asks the leader for its session count */
        uint64_t *ids;        /* the session each OPEN made, by OPEN number */
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        enum storm_phase phase;
        double at;   /* the burst's time */
        double rate; /* the keepalive load's keepalives a second */
        int stop;    /* storm_finish(): the keepalive load ends */
        pthread_t thread;
        bool started;
};

static int broken(struct storm *s, const char *what, const char *detail)
{
        s->res.broken = true;
        snprintf(s->res.why, sizeof s->res.why, "%s%s%s", what,
                 detail[0] != '\0' ? ": " : "", detail);
        return -1;
}

static void count_error(struct storm *s, int status)
{
        s->res.errors++;
        if (s->res.first_error == 0) {
                s->res.first_error = status;
        }
}

static void sleep_until(double t)
{
        double left = t - wire_now();
        struct timespec ts;

        if (left <= 0) {
                return;
        }
        ts.tv_sec = (time_t)left;
        ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
}

/* --- Frames and answers ----------------------------------------------- */

/* Frame `i` of the current phase; its id is i + 1. OPENs number the
 * sessions. After them, requests go in pairs, an ATTACH and then the
 * session's KEEPALIVE or CLOSE: a connection acts in at most 8 sessions
 * at once (GATEWAY_MAX_ATTACHED), so one that holds thousands proves it
 * owns each again before it speaks for it. Pair k is session k's CLOSE, or
 * the keepalive load's k-th KEEPALIVE, of session k mod S. */
static size_t frame(void *data, uint64_t i, uint8_t *out, size_t cap)
{
        struct storm *s = data;
        uint8_t body[COMMAND_MAX_SIZE];
        uint64_t session = s->ids[(i / 2) % (uint64_t)s->cfg.sessions];
        struct command k;
        size_t len;

        if (s->phase != OPENING && i % 2 == 0) {
                return attach_write(out, cap, i + 1, session, s->secret);
        }
        if (s->phase == KEEPING) {
                return proto_write_keepalive(out, cap, i + 1, 0, session);
        }
        memset(&k, 0, sizeof k);
        if (s->phase == OPENING) {
                k.type = COMMAND_OPEN;
                k.ttl_ms = (uint32_t)s->cfg.ttl_ms;
                k.nonce = ((uint64_t)rand() << 32) ^ (uint64_t)rand() ^ (i + 1);
                k.hash = s->hash;
        } else {
                /* The session's first request: seq 1. */
                k.type = COMMAND_CLOSE;
                k.session = session;
                k.seq = 1;
                k.ack = 1;
        }
        len = command_encode(&k, body, sizeof body);
        return len == 0 ? 0 : proto_write_command(out, cap, i + 1, body, len);
}

static void answer(void *data, const struct proto_header *h,
                   const uint8_t *body)
{
        struct storm *s = data;
        struct proto_result r;

        if (h->type == PROTO_KEEPALIVE_OK && s->phase == KEEPING) {
                s->res.keepalives++;
                return;
        }
        if (h->type == PROTO_NOT_LEADER) {
                count_error(s, BATON_ENOTLEADER);
                return;
        }
        if (h->type != PROTO_RESULT ||
            proto_read_result(body, h->length, 0, &r) != 0) {
                count_error(s, BATON_EMALFORMED);
                return;
        }
        if (r.status != 0) {
                count_error(s, r.status);
        } else if (s->phase == OPENING && r.kind == PROTO_KIND_OPENED &&
                   h->id >= 1 && h->id <= (uint64_t)s->cfg.sessions) {
                s->ids[h->id - 1] = r.session;
                s->res.opened++;
        } else if (s->phase != OPENING && h->id % 2 == 1 &&
                   r.kind == PROTO_KIND_OPENED) {
                s->res.attached++;
        } else if (s->phase == CLOSING && r.kind == PROTO_KIND_CLOSED) {
                s->res.closed++;
        } else {
                count_error(s, BATON_EMALFORMED);
        }
}

/* The keepalive load's pace: each session every ttl / 3, evenly spread
 * (two frames a keepalive). */
static uint64_t due(void *data, double now)
{
        struct storm *s = data;
        double n = (now - s->res.ka_start) * s->rate;

        return n <= 0 ? 0 : 2 * ((uint64_t)n + 1);
}

/* Run one phase: `total` frames, or until s->stop when `paced`. */
static int run_phase(struct storm *s, enum storm_phase phase, uint64_t total,
                     bool paced)
{
        char why[sizeof s->res.why];
        struct pipe_job job = {
            .total = total,
            .window = s->cfg.window,
            .frame = frame,
            .answer = answer,
            .due = paced ? due : NULL,
            .stop = paced ? &s->stop : NULL,
            .data = s,
        };

        s->phase = phase;
        if (pipe_run(&s->w, &job, why, sizeof why) != 0) {
                return broken(s, why, "");
        }
        return 0;
}

/* --- The leader's count ---------------------------------------------- */

/* The leader's session count and term into *st. 0, or -1 (counted). */
static int ask(struct storm *s, struct baton_status *st)
{
        if (baton_status(s->status, NULL, st) != 0) {
                s->res.polls_failed++;
                return -1;
        }
        return 0;
}

/* After the burst: when the count first falls, and when every storm
 * session is gone (or AFTER_S past the last lease). */
static void watch_expiries(struct storm *s)
{
        struct storm_result *r = &s->res;
        uint64_t floor = r->sessions_before >= r->opened
                             ? r->sessions_before - r->opened
                             : 0;
        double last = r->burst_end + (double)s->cfg.ttl_ms / 1e3 + AFTER_S;
        struct baton_status st;

        while (wire_now() < last) {
                double t = wire_now();
                if (ask(s, &st) == 0) {
                        if (r->first_gone == 0 &&
                            st.sessions < r->sessions_before) {
                                r->first_gone = t;
                        }
                        if (st.sessions <= floor) {
                                r->all_gone = t;
                                return;
                        }
                }
                sleep_until(t + POLL_S);
        }
}

static void *storm_main(void *arg)
{
        struct storm *s = arg;
        struct storm_result *r = &s->res;
        struct baton_status st;

        if (s->cfg.keepalive) {
                r->ka_start = wire_now();
                if (run_phase(s, KEEPING, UINT64_MAX, true) == 0) {
                        r->ka_end = wire_now();
                        run_phase(s, CLOSING, 2 * r->opened, false);
                }
                return NULL;
        }
        sleep_until(s->at);
        if (ask(s, &st) == 0) {
                r->sessions_before = st.sessions;
        }
        r->burst_at = wire_now();
        if (run_phase(s, KEEPING, 2 * r->opened, false) != 0) {
                return NULL;
        }
        r->burst_end = wire_now();
        /* The sessions are left alone from here on; they expire. */
        wire_close(&s->w);
        if (r->sessions_before > 0) {
                watch_expiries(s);
        }
        return NULL;
}

/* --- The storm's life --------------------------------------------------- */

static void storm_free(struct storm *s)
{
        wire_close(&s->w);
        tls_ctx_destroy(s->tls);
        baton_client_destroy(s->status);
        free(s->ids);
        free(s);
}

int storm_open(struct storm **out, const struct storm_config *cfg,
               struct storm_result *res)
{
        struct storm *s = calloc(1, sizeof *s);
        struct baton_status st;
        double t0;
        int rv;

        memset(res, 0, sizeof *res);
        *out = NULL;
        if (s == NULL) {
                snprintf(res->why, sizeof res->why, "out of memory");
                res->broken = true;
                return -1;
        }
        s->cfg = *cfg;
        s->rate = 3.0 * (double)cfg->sessions * 1e3 / (double)cfg->ttl_ms;
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        wire_secret(s->secret, s->hash);
        wire_init(&s->w);
        s->ids = calloc((size_t)cfg->sessions, sizeof *s->ids);
        rv = s->ids == NULL ? broken(s, "out of memory", "") : 0;
        if (rv == 0 &&
            wire_tls_load(&s->tls, s->res.why, sizeof s->res.why) != 0) {
                s->res.broken = true; /* `why` says */
                rv = -1;
        }
        if (rv == 0 && (rv = wire_leader(cfg->endpoints, &st)) != 0) {
                rv = broken(s, "no leader", baton_strerror(rv));
        }
        if (rv == 0 &&
            baton_client_create(&s->status, cfg->endpoints, NULL) != 0) {
                rv = broken(s, "no status connection", "");
        }
        if (rv == 0 && wire_dial(&s->w, s->tls, st.endpoint) != 0) {
                rv = broken(s, s->w.why, "");
        }
        if (rv == 0) {
                s->res.lead.term_before = st.term;
                s->res.lead.leader_before = st.id;
                t0 = wire_now();
                rv = run_phase(s, OPENING, (uint64_t)cfg->sessions, false);
                s->res.open_s = wire_now() - t0;
        }
        if (rv == 0 && s->res.opened != (uint64_t)cfg->sessions) {
                rv = broken(s, "not every session opened",
                            baton_errname(s->res.first_error));
        }
        *res = s->res;
        if (rv != 0) {
                storm_free(s);
                return -1;
        }
        *out = s;
        return 0;
}

int storm_start(struct storm *s, double at)
{
        s->at = at;
        if (pthread_create(&s->thread, NULL, storm_main, s) != 0) {
                return -1;
        }
        s->started = true;
        return 0;
}

void storm_finish(struct storm *s, struct storm_result *out)
{
        struct baton_status st;

        __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
        if (s->started) {
                pthread_join(s->thread, NULL);
        }
        /* Who leads now; not knowing is no reason to call the run broken. */
        if (baton_status(s->status, NULL, &st) == 0) {
                s->res.lead.term_after = st.term;
                s->res.lead.leader_after = st.leader_id;
        }
        *out = s->res;
        storm_free(s);
}

/* --- The JSON fields ------------------------------------------------- */

/* `t` (wire_now()'s) as seconds of the window; -1 for a time not seen. */
static double rel(double t, double t_measure)
{
        return t > 0 ? t - t_measure : -1;
}

/* The p99 of the clients' ops completed in [from, to) (window seconds),
 * as "NAME_p99_us" and "NAME_ops". */
static void print_phase(FILE *f, const char *name, const uint32_t *lat,
                        const uint32_t *done, size_t n, double from, double to)
{
        size_t count;
        uint32_t p99 = window_percentile(lat, done, n, from, to, 0.99, &count);

        fprintf(f, ",\"%s_p99_us\":%u,\"%s_ops\":%zu", name, p99, name, count);
}

void storm_print(FILE *f, const struct storm_config *cfg,
                 const struct storm_result *r, const uint32_t *lat,
                 const uint32_t *done, size_t n, double t_measure)
{
        double ttl = (double)cfg->ttl_ms / 1e3;

        fprintf(f,
                ",\"sessions\":%ld,\"storm_ttl_ms\":%ld,\"opened\":%llu,"
                "\"open_s\":%.3f,\"keepalives\":%llu,\"attached\":%llu,"
                "\"storm_errors\":%llu,"
                "\"storm_first_error\":\"%s\",\"status_polls_failed\":%llu,"
                "\"storm_broken\":%s",
                cfg->sessions, cfg->ttl_ms, (unsigned long long)r->opened,
                r->open_s, (unsigned long long)r->keepalives,
                (unsigned long long)r->attached, (unsigned long long)r->errors,
                r->first_error != 0 ? baton_errname(r->first_error) : "",
                (unsigned long long)r->polls_failed,
                r->broken ? "true" : "false");
        bench_print_leadership(f, &r->lead);
        if (cfg->keepalive) {
                double span = r->ka_end - r->ka_start;
                fprintf(f,
                        ",\"keepalive_s\":%.3f,\"keepalives_per_s\":%.0f,"
                        "\"closed\":%llu",
                        span, span > 0 ? (double)r->keepalives / span : 0,
                        (unsigned long long)r->closed);
                return;
        }
        /* The first lease runs out at burst_at + ttl at the earliest; the
         * last at burst_end + ttl at the latest. The lag is counted from
         * the first, so it bounds every session's from above. */
        fprintf(f,
                ",\"burst_at_s\":%.3f,\"burst_s\":%.3f,"
                "\"sessions_before\":%llu,\"first_gone_s\":%.3f,"
                "\"all_gone_s\":%.3f,\"expiry_lag_max_s\":%.3f",
                rel(r->burst_at, t_measure), r->burst_end - r->burst_at,
                (unsigned long long)r->sessions_before,
                rel(r->first_gone, t_measure), rel(r->all_gone, t_measure),
                r->all_gone > 0 ? r->all_gone - (r->burst_at + ttl) : -1);
        print_phase(f, "quiet", lat, done, n, 0, r->burst_at - t_measure);
        print_phase(f, "burst", lat, done, n, r->burst_at - t_measure,
                    r->burst_end - t_measure);
        print_phase(f, "storm", lat, done, n, r->burst_at + ttl - t_measure,
                    r->all_gone > 0 ? r->all_gone - t_measure : 1e9);
}
