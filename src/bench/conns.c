/*
 * The connections workload (conns.h). One thread drives every connection
 * through poll(); each connection is a small state machine:
 *
 *   HELLO (TLS handshake) -> OPEN -> ACQUIRE -> HELD
 *   HELD -> RELEASE -> RELEASED -> CLOSE -> DONE      (any step -> FAILED)
 *
 * and, reconnecting (conns.h), a connection lost while HELD:
 *
 *   REDIAL (until retry_at) -> REHELLO -> REATTACH -> REKEEP -> HELD
 *
 * where a refusal, a loss or a NOT_LEADER in any of the three goes back to
 * REDIAL.
 *
 * At most `window` connections are between their dial and HELD at once, so
 * that the leader's accept queue is not flooded; the round starts only when
 * no connection is left before HELD.
 */
#include "conns.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../proto/command.h"
#include "wire.h"
#include "../proto/reply.h"
#include "../proto/keepalive.h"

#define SILENCE_MS        30000 /* no progress for this long: the run is broken */
#define RECONNECT_LIMIT_S 60    /* every lost connection served again within */

enum step {
        NEW,
        HELLO,
        OPEN,
        ACQUIRE,
        HELD,
        RELEASE,
        RELEASED,
        CLOSE,
        DONE,
        FAILED,
        REDIAL,
        REHELLO,
        REATTACH,
        REKEEP
};

#define NO_LEADER_MS   40 /* libbaton asks again this often meanwhile */
#define BACKOFF_MS     10 /* the first pause after refusals in a row */
#define BACKOFF_MAX_MS 1000

struct conns;

struct peer {
        struct wire w;
        struct conns *run;
        uint32_t index;
        uint8_t step;
        uint64_t session, token;
        double sent_at; /* of the request the step waits for */
        /* reconnecting: */
        uint8_t ep;       /* the endpoint dialled, by index */
        uint8_t failures; /* refusals in a row */
        double retry_at;  /* REDIAL: when to dial */
        double lost_at;   /* when it was lost; 0 while served */
};

#define ENDPOINTS_MAX 16

struct conns {
        const struct conns_config *cfg;
        struct conns_result *res;
        struct tls_ctx *tls;
        const char *endpoint;        /* the leader's */
        char eps[ENDPOINTS_MAX][64]; /* every endpoint, for reconnecting */
        uint8_t n_eps;
        struct peer *peers;
        struct pollfd *pfds;
        uint32_t *busy; /* peers polled this turn, by pollfd */
        uint32_t *lat;  /* the round's latencies, µs */
        uint32_t n_lat;
        uint32_t *gaps; /* each reconnect's loss to served again, ms */
        uint32_t n_gaps;
        double first_loss;
        uint32_t served_at; /* endpoints that served one again, by bit */
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        double progress; /* when a step was last taken */
};

static int stop(struct conns *r, const char *what, const char *detail)
{
        r->res->broken = true;
        snprintf(r->res->why, sizeof r->res->why, "%s%s%s", what,
                 detail[0] != '\0' ? ": " : "", detail);
        return -1;
}

/* Connection `p` takes no further part: `status` is the BATON_E* answer,
 * 0 when the connection itself broke (its wire says why). */
static void fail(struct peer *p, int status, const char *why)
{
        struct conns_result *res = p->run->res;

        p->step = FAILED;
        res->errors++;
        if (res->errors == 1) {
                res->first_error = status;
                snprintf(res->why, sizeof res->why, "connection %u: %.200s",
                         p->index, why);
        }
}

/* Holding its lock: connected, or dialling again with a reconnect. */
static bool holding(const struct peer *p)
{
        return p->step == HELD || p->step == REHELLO || p->step == REATTACH ||
               p->step == REKEEP;
}

/* Whether `p` holds its lock through a connection it dials again when
 * that connection is lost. */
static bool reconnecting(const struct peer *p)
{
        return p->run->cfg->reconnect && holding(p);
}

/* A pause of about `ms` (between half and one and a half of it), as
 * libbaton's are, so that clients lost together do not dial together. */
static double jitter_s(long ms)
{
        return ms <= 0 ? 0 : (double)(ms / 2 + rand() % ms) / 1e3;
}

/* `p` is to dial endpoint `ep` again after `pause` seconds; flush()
 * closes its wire. */
static void lose(struct peer *p, uint8_t ep, double pause)
{
        struct conns *r = p->run;
        double now = wire_now();

        if (p->lost_at == 0) {
                p->lost_at = now;
                r->res->lost++;
                if (r->first_loss == 0) {
                        r->first_loss = now;
                }
        }
        p->ep = ep;
        p->step = REDIAL;
        p->retry_at = now + pause;
}

/* The connection was refused or dropped: the next endpoint, at once the
 * first time, then after pauses doubling from BACKOFF_MS. */
static void dropped(struct peer *p)
{
        long ms = p->failures == 0 ? 0 : BACKOFF_MS;

        for (unsigned i = 1; i < p->failures && ms < BACKOFF_MAX_MS; i++) {
                ms *= 2;
        }
        if (p->failures < UINT8_MAX) {
                p->failures++;
        }
        lose(p, (uint8_t)((p->ep + 1) % p->run->n_eps),
             jitter_s(ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS));
}

/* A NOT_LEADER: to the leader it names, at once, or when it knows none
 * (an election runs), to the next node in about NO_LEADER_MS. */
static void redirected(struct peer *p, const struct proto_header *h,
                       const uint8_t *body)
{
        struct conns *r = p->run;
        struct proto_string a = {NULL, 0};
        uint64_t leader = 0;

        r->res->redirects++;
        if (proto_read_not_leader(body, h->length, &leader, &a) == 0 &&
            leader != 0) {
                for (uint8_t i = 0; i < r->n_eps; i++) {
                        if (strlen(r->eps[i]) == a.len &&
                            memcmp(r->eps[i], a.p, a.len) == 0) {
                                lose(p, i, 0);
                                return;
                        }
                }
        }
        lose(p, (uint8_t)((p->ep + 1) % r->n_eps), jitter_s(NO_LEADER_MS));
}

/* Seal and send what `p` built; a finished, failed or lost connection
 * closes. */
static void flush(struct peer *p)
{
        if (p->step != FAILED && p->step != DONE && p->step != REDIAL &&
            (wire_seal(&p->w) != 0 || wire_send(&p->w) != 0)) {
                if (reconnecting(p)) {
                        dropped(p);
                } else {
                        fail(p, 0, p->w.why);
                }
        }
        if ((p->step == FAILED || p->step == DONE || p->step == REDIAL) &&
            p->w.fd >= 0) {
                wire_close(&p->w);
        }
}

/* Build the request of step `next` (OPEN, ACQUIRE, RELEASE or CLOSE); the
 * caller flushes it (not done here: this runs inside wire_receive()). */
static void request(struct peer *p, uint8_t next)
{
        const struct conns_config *cfg = p->run->cfg;
        char name[COMMAND_NAME_MAX + 1];
        uint8_t body[COMMAND_MAX_SIZE];
        size_t room = PROTO_HEADER_SIZE + COMMAND_MAX_SIZE, n;
        struct command k;
        uint8_t *out;

        memset(&k, 0, sizeof k);
        snprintf(name, sizeof name, "%s/conn/%u", cfg->prefix, p->index);
        k.session = p->session;
        k.owner = 1;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        switch (next) {
        case OPEN:
                k.type = COMMAND_OPEN;
                k.ttl_ms = (uint32_t)cfg->ttl_ms;
                k.nonce = ((uint64_t)rand() << 32) ^ (uint64_t)rand();
                k.hash = p->run->hash;
                break;
        case ACQUIRE:
                k.type = COMMAND_ACQUIRE;
                k.seq = k.ack = 1;
                break;
        case RELEASE:
                k.type = COMMAND_RELEASE;
                k.seq = k.ack = 2;
                k.token = p->token;
                break;
        default:
                k.type = COMMAND_CLOSE;
                k.seq = k.ack = 3;
                break;
        }
        n = command_encode(&k, body, sizeof body);
        out = wire_room(&p->w, room);
        n = n != 0 && out != NULL
                ? proto_write_command(out, room, next, body, n)
                : 0;
        if (n == 0) {
                fail(p, BATON_ENOMEM, "cannot encode a request");
                return;
        }
        wire_commit(&p->w, n);
        p->step = next;
        p->sent_at = wire_now();
}

/* The answer the step waits for, or the kind it must carry. */
static uint8_t expected(uint8_t step)
{
        switch (step) {
        case OPEN:
        case REATTACH:
                return PROTO_KIND_OPENED;
        case ACQUIRE:
                return PROTO_KIND_GRANTED;
        case RELEASE:
                return PROTO_KIND_RELEASED;
        default:
                return PROTO_KIND_CLOSED;
        }
}

/* The next step after a good answer, and its bookkeeping. */
static void advance(struct peer *p, const struct proto_result *res)
{
        struct conns *r = p->run;
        double us = (wire_now() - p->sent_at) * 1e6;

        switch (p->step) {
        case OPEN:
                p->session = res->session;
                request(p, ACQUIRE);
                return;
        case ACQUIRE:
                p->token = res->token;
                p->step = HELD;
                r->res->held++;
                return;
        case REATTACH:
                p->step = REKEEP; /* its KEEPALIVE follows */
                return;
        case RELEASE:
                r->lat[r->n_lat++] =
                    us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
                p->step = RELEASED;
                r->res->released++;
                return;
        default:
                p->step = DONE;
                r->res->closed++;
                return;
        }
}

/* Who leads once lost connections are served again: the leader after
 * the first change, which the run's end compares with. Asked as the
 * first is served, and again every 256 until a node answers as leader
 * (in the storm's thick a STATUS may find none). */
static void note_leader(struct conns *r)
{
        struct baton_status st;

        if (r->res->term_first == 0 &&
            (r->res->served_again == 1 || r->res->served_again % 256 == 0) &&
            wire_leader(r->cfg->endpoints, &st) == 0) {
                r->res->leader_first = st.id;
                r->res->term_first = st.term;
        }
}

/* A lost connection's KEEPALIVE was answered: its client is served
 * again. */
static void served(struct peer *p)
{
        struct conns *r = p->run;
        double now = wire_now(), ms = (now - p->lost_at) * 1e3;

        if (r->n_gaps < (uint32_t)r->cfg->connections) {
                r->gaps[r->n_gaps++] =
                    ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
        }
        r->res->served_again++;
        r->res->reconnect_s = now - r->first_loss;
        p->lost_at = 0;
        p->failures = 0;
        p->step = HELD;
        r->served_at |= 1u << p->ep;
        note_leader(r);
}

/* A dialled-again connection's first words: an ATTACH of its session and
 * a KEEPALIVE, together. */
static void reattach(struct peer *p)
{
        size_t room = 2 * PROTO_HEADER_SIZE + ATTACH_BODY_SIZE + 8, n;
        uint8_t *out = wire_room(&p->w, room);

        if (out == NULL) {
                fail(p, BATON_ENOMEM, p->w.why);
                return;
        }
        n = attach_write(out, room, 10, p->session, p->run->secret);
        n += proto_write_keepalive(out + n, room - n, 11, 0, p->session);
        wire_commit(&p->w, n);
        p->step = REATTACH;
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body)
{
        struct peer *p = data;
        struct proto_result res = {0};
        struct proto_string message;
        int status = BATON_EMALFORMED;

        if (p->step == FAILED || p->step == DONE || p->step == REDIAL) {
                return;
        }
        p->run->progress = wire_now();
        if (p->step == HELD && h->type == PROTO_KEEPALIVE_OK) {
                p->run->res->keepalives++;
                return;
        }
        if (p->step == REKEEP && h->type == PROTO_KEEPALIVE_OK) {
                served(p);
                return;
        }
        if (h->type == PROTO_NOT_LEADER && reconnecting(p)) {
                redirected(p, h, body);
                return;
        }
        if (h->type == PROTO_NOT_LEADER) {
                fail(p, BATON_ENOTLEADER, baton_strerror(BATON_ENOTLEADER));
                return;
        }
        if (h->type == PROTO_ERROR) {
                proto_read_error(body, h->length, &status, &message);
                fail(p, status, baton_strerror(status));
                return;
        }
        if (h->type != PROTO_RESULT ||
            proto_read_result(body, h->length, 0, &res) != 0 ||
            res.kind != expected(p->step) || res.status != 0) {
                status = h->type == PROTO_RESULT && res.status != 0
                             ? res.status
                             : BATON_EMALFORMED;
                fail(p, status, baton_strerror(status));
                return;
        }
        advance(p, &res);
}

static bool waiting(const struct peer *p)
{
        return p->step == HELLO || p->step == OPEN || p->step == ACQUIRE ||
               p->step == RELEASE || p->step == CLOSE || p->step == REHELLO ||
               p->step == REATTACH || p->step == REKEEP;
}

/* Dial connection `p`: a TLS one says hello first, a plain one OPENs. */
static void dial(struct conns *r, struct peer *p)
{
        r->progress = wire_now();
        p->step = HELLO;
        if (wire_dial(&p->w, r->tls, r->endpoint) != 0) {
                fail(p, 0, p->w.why);
        } else if (wire_ready(&p->w)) {
                r->res->connected++;
                request(p, OPEN);
        }
        flush(p);
}

/* Read what arrived for `p`; a finished handshake sends the OPEN. */
static void service(struct conns *r, struct peer *p, short revents)
{
        if ((revents & (POLLIN | POLLHUP | POLLERR)) &&
            wire_receive(&p->w, on_frame, p) != 0 && p->step != FAILED &&
            p->step != REDIAL) {
                if (reconnecting(p)) {
                        dropped(p);
                } else {
                        fail(p, 0, p->w.why);
                }
        }
        if ((p->step == HELLO || p->step == REHELLO) && wire_ready(&p->w)) {
                r->progress = wire_now();
                r->res->connected++;
                if (p->step == HELLO) {
                        request(p, OPEN);
                } else {
                        reattach(p);
                }
        }
        flush(p);
}

/* Poll the connections `pick` selects for up to `ms` and serve what
 * happened to them. How many were polled (0: none, and no wait), or -1
 * when the run stops. */
static long turn(struct conns *r, bool (*pick)(const struct peer *), int ms)
{
        uint32_t k = 0;

        for (uint32_t i = 0; i < (uint32_t)r->cfg->connections; i++) {
                struct peer *p = &r->peers[i];
                if (!pick(p)) {
                        continue;
                }
                r->pfds[k].fd = p->w.fd;
                r->pfds[k].events =
                    POLLIN | (p->w.cipher_len > 0 ? POLLOUT : 0);
                r->pfds[k].revents = 0;
                r->busy[k++] = i;
        }
        if (k > 0 && poll(r->pfds, k, ms) < 0 && errno != EINTR) {
                return stop(r, "poll", strerror(errno));
        }
        for (uint32_t j = 0; j < k; j++) {
                if (r->pfds[j].revents != 0) {
                        service(r, &r->peers[r->busy[j]], r->pfds[j].revents);
                }
        }
        return k;
}

/* Dial every lost connection whose pause is over. How many lost ones are
 * not served again yet. */
static long redial(struct conns *r)
{
        double now = wire_now();
        long lost = 0;

        for (long i = 0; r->cfg->reconnect && i < r->cfg->connections; i++) {
                struct peer *p = &r->peers[i];
                if (p->step == REDIAL && now >= p->retry_at) {
                        r->res->redials++;
                        p->step = REHELLO;
                        if (wire_dial(&p->w, r->tls, r->eps[p->ep]) != 0) {
                                dropped(p);
                        } else if (wire_ready(&p->w)) {
                                r->res->connected++;
                                reattach(p); /* plain: no handshake */
                        }
                        flush(p);
                }
                lost += p->lost_at != 0 && p->step != FAILED;
        }
        return lost;
}

/* Poll until no connection waits for an answer and, with `dialling`,
 * every connection has been dialled (at most `window` waiting at once). */
static int drive(struct conns *r, bool dialling)
{
        uint32_t n = (uint32_t)r->cfg->connections, next = 0;
        long busy = 0, lost;

        r->progress = wire_now();
        for (;;) {
                while (dialling && next < n && busy < r->cfg->window) {
                        dial(r, &r->peers[next++]);
                        busy++;
                }
                lost = redial(r);
                busy = turn(r, waiting, lost > 0 ? 10 : 100);
                if (busy < 0) {
                        return -1;
                }
                if (busy == 0 && lost == 0 && (!dialling || next == n)) {
                        return 0;
                }
                if (busy == 0) {
                        poll(NULL, 0, 5); /* only pauses before redials */
                }
                if (wire_now() - r->progress > SILENCE_MS / 1000.0) {
                        return stop(r, "no progress for 30 s", "");
                }
        }
}

/* A KEEPALIVE on every connection that holds its lock. */
static void keepalive(struct conns *r)
{
        size_t room = PROTO_HEADER_SIZE + 8;

        for (long i = 0; i < r->cfg->connections; i++) {
                struct peer *p = &r->peers[i];
                uint8_t *out;
                if (p->step != HELD) {
                        continue;
                }
                out = wire_room(&p->w, room);
                if (out == NULL) {
                        fail(p, BATON_ENOMEM, p->w.why);
                } else {
                        wire_commit(&p->w, proto_write_keepalive(
                                               out, room, 9, 0, p->session));
                }
                flush(p);
        }
}

/* Stay connected for hold_s, keeping every session alive as a client
 * does (every third of its TTL), and noticing a connection the leader
 * closes; reconnecting, until every lost connection is served again. */
static int hold(struct conns *r)
{
        double now = wire_now(), end = now + r->cfg->hold_s;
        double every = (double)r->cfg->ttl_ms / 3000.0, next = now;
        long polled, lost = 0;
        int cap;

        while ((now = wire_now()) < end || lost > 0) {
                int ms = now < end ? (int)((end - now) * 1000) + 1 : 10;
                if (now >= next) {
                        keepalive(r);
                        next = now + every;
                }
                lost = redial(r);
                if (lost > 0 && now - r->first_loss > RECONNECT_LIMIT_S) {
                        return stop(r,
                                    "lost connections not all served "
                                    "again within 60 s",
                                    "");
                }
                cap = lost > 0 ? 10 : 100; /* redials come due meanwhile */
                ms = ms < cap ? ms : cap;
                polled = turn(r, holding, ms);
                if (polled < 0) {
                        return -1;
                }
                if (polled == 0) {
                        poll(NULL, 0, ms); /* nothing held: just wait */
                }
        }
        return 0;
}

/* Every held lock released at once, then every session closed. */
static int round_trip(struct conns *r, uint8_t from, uint8_t step)
{
        for (long i = 0; i < r->cfg->connections; i++) {
                if (r->peers[i].step == from) {
                        request(&r->peers[i], step);
                        flush(&r->peers[i]);
                }
        }
        return drive(r, false);
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

/* The median, 99th percentile and largest of `n` values, sorted here. */
static void spread(uint32_t *v, uint32_t n, uint32_t *p50, uint32_t *p99,
                   uint32_t *max)
{
        if (n == 0) {
                return;
        }
        qsort(v, n, sizeof *v, cmp_u32);
        *p50 = v[(n - 1) / 2];
        *p99 = v[(uint32_t)((n - 1) * 0.99)];
        *max = v[n - 1];
}

static void summarize(struct conns *r)
{
        struct conns_result *res = r->res;

        spread(r->lat, r->n_lat, &res->round_p50_us, &res->round_p99_us,
               &res->round_max_us);
        spread(r->gaps, r->n_gaps, &res->gap_p50_ms, &res->gap_p99_ms,
               &res->gap_max_ms);
}

/* Room for every connection's descriptor, raising the soft limit to the
 * hard one if need be. */
static int descriptors(struct conns *r)
{
        rlim_t need = (rlim_t)r->cfg->connections + 64;
        struct rlimit rl;
        char detail[128];

        if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
                return stop(r, "getrlimit", strerror(errno));
        }
        if (rl.rlim_cur >= need) {
                return 0;
        }
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
                snprintf(detail, sizeof detail,
                         "%llu connections need %llu descriptors; the hard "
                         "limit is %llu (ulimit -Hn)",
                         (unsigned long long)r->cfg->connections,
                         (unsigned long long)need,
                         (unsigned long long)rl.rlim_max);
                return stop(r, "too few file descriptors", detail);
        }
        rl.rlim_cur = need;
        return setrlimit(RLIMIT_NOFILE, &rl) == 0
                   ? 0
                   : stop(r, "setrlimit", strerror(errno));
}

/* The cluster's endpoints, for dialling again; every connection starts
 * on the leader's. */
static int endpoints(struct conns *r)
{
        const char *p = r->cfg->endpoints;
        uint8_t leader = 0;

        while (*p != '\0' && r->n_eps < ENDPOINTS_MAX) {
                size_t len = strcspn(p, ",");
                if (len > 0 && len < sizeof r->eps[0]) {
                        memcpy(r->eps[r->n_eps], p, len);
                        r->eps[r->n_eps][len] = '\0';
                        if (strcmp(r->eps[r->n_eps], r->endpoint) == 0) {
                                leader = r->n_eps;
                        }
                        r->n_eps++;
                }
                p += len + (p[len] == ',');
        }
        if (r->n_eps == 0) {
                return stop(r, "no endpoints to dial again", "");
        }
        for (long i = 0; i < r->cfg->connections; i++) {
                r->peers[i].ep = leader;
        }
        return 0;
}

static int setup(struct conns *r, struct baton_status *st)
{
        size_t n = (size_t)r->cfg->connections;
        int rv;

        r->peers = calloc(n, sizeof *r->peers);
        r->pfds = calloc(n, sizeof *r->pfds);
        r->busy = calloc(n, sizeof *r->busy);
        r->lat = calloc(n, sizeof *r->lat);
        r->gaps = calloc(n, sizeof *r->gaps);
        if (r->peers == NULL || r->pfds == NULL || r->busy == NULL ||
            r->lat == NULL || r->gaps == NULL) {
                return stop(r, "out of memory", "");
        }
        for (size_t i = 0; i < n; i++) {
                wire_init(&r->peers[i].w);
                r->peers[i].run = r;
                r->peers[i].index = (uint32_t)i;
        }
        if (descriptors(r) != 0) {
                return -1;
        }
        if (wire_tls_load(&r->tls, r->res->why, sizeof r->res->why) != 0) {
                r->res->broken = true;
                return -1;
        }
        rv = wire_leader(r->cfg->endpoints, st);
        if (rv != 0) {
                return stop(r, "no leader", baton_strerror(rv));
        }
        r->endpoint = st->endpoint;
        r->res->lead.term_before = st->term;
        r->res->lead.leader_before = st->id;
        return endpoints(r);
}

int conns_run(const struct conns_config *cfg, struct conns_result *out)
{
        struct conns r = {.cfg = cfg, .res = out};
        struct baton_status st;
        double t0;
        int rv = -1;

        memset(out, 0, sizeof *out);
        srand((unsigned)time(NULL) ^ (unsigned)getpid());
        wire_secret(r.secret, r.hash);
        if (setup(&r, &st) != 0) {
                goto done;
        }
        rv = 0;
        t0 = wire_now();
        if (drive(&r, true) != 0) {
                goto done;
        }
        out->setup_s = wire_now() - t0;
        fprintf(stderr, "baton-bench: %llu connections holding\n",
                (unsigned long long)out->held);
        if (hold(&r) != 0) {
                goto done;
        }
        t0 = wire_now();
        if (round_trip(&r, HELD, RELEASE) != 0) {
                goto done;
        }
        out->round_s = wire_now() - t0;
        summarize(&r);
        out->served_by = (uint32_t)__builtin_popcount(r.served_at);
        if (round_trip(&r, RELEASED, CLOSE) != 0) {
                goto done;
        }
        /* Who leads now; not knowing is no reason to call the run broken. */
        if (wire_leader(cfg->endpoints, &st) == 0) {
                out->lead.term_after = st.term;
                out->lead.leader_after = st.id;
        }
done:
        for (long i = 0; r.peers != NULL && i < cfg->connections; i++) {
                wire_close(&r.peers[i].w);
        }
        tls_ctx_destroy(r.tls);
        free(r.peers);
        free(r.pfds);
        free(r.busy);
        free(r.lat);
        free(r.gaps);
        return rv;
}

void conns_print(FILE *f, const struct bench_label *l,
                 const struct conns_config *cfg, const struct conns_result *r)
{
        fprintf(f,
                "{\"system\":\"%s\",\"nodes\":%d,\"workload\":"
                "\"%s\",\"connections\":%ld,\"connected\":%llu,"
                "\"held\":%llu,\"keepalives\":%llu,\"released\":%llu,"
                "\"closed\":%llu,\"setup_s\":%.3f,\"round_s\":%.3f,"
                "\"round_p50_us\":%u,\"round_p99_us\":%u,"
                "\"round_max_us\":%u,\"errors\":%llu",
                l->system, l->nodes,
                cfg->reconnect ? "reconnects" : "connections", cfg->connections,
                (unsigned long long)r->connected, (unsigned long long)r->held,
                (unsigned long long)r->keepalives,
                (unsigned long long)r->released, (unsigned long long)r->closed,
                r->setup_s, r->round_s, r->round_p50_us, r->round_p99_us,
                r->round_max_us, (unsigned long long)r->errors);
        if (cfg->reconnect) {
                fprintf(f,
                        ",\"lost\":%llu,\"served_again\":%llu,"
                        "\"redials\":%llu,\"redirects\":%llu,"
                        "\"reconnect_s\":%.3f,\"gap_p50_ms\":%u,"
                        "\"gap_p99_ms\":%u,\"gap_max_ms\":%u,"
                        "\"leader_first\":%llu,\"term_first\":%llu,"
                        "\"served_by\":%u",
                        (unsigned long long)r->lost,
                        (unsigned long long)r->served_again,
                        (unsigned long long)r->redials,
                        (unsigned long long)r->redirects, r->reconnect_s,
                        r->gap_p50_ms, r->gap_p99_ms, r->gap_max_ms,
                        (unsigned long long)r->leader_first,
                        (unsigned long long)r->term_first, r->served_by);
        }
        bench_label_end(f, l, r->first_error, &r->lead, r->broken);
}
