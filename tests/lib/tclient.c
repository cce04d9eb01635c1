/* A small blocking client of Baton's wire protocol for the integration
 * tests: poll() with deadlines, no threads, one session per client. */
#include "tclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/lib/address.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/list.h"
#include "../../src/proto/sesslist.h"
#include "tclientconn.h"
#include "tclientreq.h"

int64_t tclient_now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tclient_now_ms(void)
{
        return tclient_now_ns() / 1000000;
}

void tclient_sleep_ms(int64_t ms)
{
        struct timespec ts;

        if (ms <= 0) {
                return;
        }
        ts.tv_sec = (time_t)(ms / 1000);
        ts.tv_nsec = (long)(ms % 1000) * 1000000;
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
}

uint64_t tclient_random(void)
{
        uint64_t v = 0;

        while (v == 0) {
                if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
                        v = (uint64_t)tclient_now_ns() ^
                            ((uint64_t)getpid() << 32);
                }
        }
        return v;
}

/* A fresh secret, and its SHA-256 (what OPEN carries). */
static void new_secret(uint8_t *secret, uint8_t *hash)
{
        for (size_t i = 0; i < ATTACH_SECRET_SIZE; i += 8) {
                uint64_t v = tclient_random();
                memcpy(secret + i, &v, 8);
        }
        attach_hash(secret, hash);
}

void tclient_disconnect(struct tclient *c)
{
        tclientconn_drop(c);
}

void tclient_own(struct tclient *c, uint64_t session, const uint8_t *secret)
{
        c->owned = session;
        memcpy(c->secret, secret, ATTACH_SECRET_SIZE);
        c->attached_gen = 0;
}

static int64_t deadline_of(int timeout_ms)
{
        return tclient_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
}

/* --- Lifecycle ---------------------------------------------------------------
 */

int tclient_init(struct tclient *c, const char *endpoints)
{
        const char *p = endpoints;

        memset(c, 0, sizeof *c);
        c->fd = -1;
        c->try_ms = 1000;
        c->backoff_ms = 50;
        c->follow = true;
        c->attach = true;
        c->next_seq = 1;
        proto_reader_init(&c->reader, PROTO_MAX_BODY, &mem_libc);
        while (p != NULL && *p != '\0') {
                const char *comma = strchr(p, ',');
                size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
                struct address a;
                if (len == 0 || len >= TCLIENT_ADDR_MAX ||
                    c->n_endpoints == TCLIENT_MAX_ENDPOINTS) {
                        return BATON_EINVAL;
                }
                memcpy(c->endpoints[c->n_endpoints], p, len);
                c->endpoints[c->n_endpoints][len] = '\0';
                if (address_parse(c->endpoints[c->n_endpoints], &a) != 0) {
                        snprintf(c->errmsg, sizeof c->errmsg, "bad endpoint %s",
                                 c->endpoints[c->n_endpoints]);
                        return BATON_EINVAL;
                }
                c->n_endpoints++;
                p = comma != NULL ? comma + 1 : NULL;
        }
        return c->n_endpoints > 0 ? 0 : BATON_EINVAL;
}

void tclient_close(struct tclient *c)
{
        if (c == NULL) {
                return;
        }
        tclient_disconnect(c);
        proto_reader_close(&c->reader);
        tls_ctx_destroy(c->tls);
        c->tls = NULL;
        free(c->cout);
        c->cout = NULL;
}

/* --- Sessions and commands -------------------------------------------------
 */

uint64_t tclient_ack(const struct tclient *c)
{
        uint64_t ack = c->next_seq;
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] < ack) {
                        ack = c->open_seqs[i];
                }
        }
        return ack;
}

static void open_seq(struct tclient *c, uint64_t seq)
{
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] == seq) {
                        return;
                }
        }
        if (c->n_open == TCLIENT_MAX_OPEN) {
                /* Give up on the oldest: its outcome may be forgotten. */
                memmove(c->open_seqs, c->open_seqs + 1,
                        (TCLIENT_MAX_OPEN - 1) * sizeof c->open_seqs[0]);
                c->n_open--;
        }
        c->open_seqs[c->n_open++] = seq;
}

void tclient_forget_seq(struct tclient *c, uint64_t seq)
{
        unsigned i;

        for (i = 0; i < c->n_open; i++) {
                if (c->open_seqs[i] == seq) {
                        c->open_seqs[i] = c->open_seqs[--c->n_open];
                        return;
                }
        }
}

uint64_t tclient_take_seq(struct tclient *c)
{
        uint64_t seq = c->next_seq++;

        open_seq(c, seq);
        return seq;
}

static int name_len_ok(const char *name, size_t *len)
{
        *len = name != NULL ? strlen(name) : 0;
        return *len >= 1 && *len <= COMMAND_NAME_MAX ? 0 : BATON_ENAME;
}

int tclient_start(struct tclient *c, const struct command *cmd, uint64_t *seq)
{
        struct command k = *cmd;
        uint8_t body[COMMAND_MAX_SIZE];
        size_t n;

        if (c->inflight) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "a command is already in flight");
                return BATON_EINVAL;
        }
        if (k.type != COMMAND_OPEN) {
                if (k.session == 0) {
                        k.session = c->session;
                }
                if (k.seq == 0) {
                        k.seq = tclient_take_seq(c);
                } else {
                        open_seq(c, k.seq);
                }
                k.ack = tclient_ack(c);
        }
        n = command_encode(&k, body, sizeof body);
        if (n == 0) {
                if (k.type != COMMAND_OPEN && k.type != COMMAND_CLOSE) {
                        tclient_forget_seq(c, k.seq);
                }
                return command_validate(&k) == BATON_ENAME ? BATON_ENAME
                                                           : BATON_EINVAL;
        }
        tclientreq_init(&c->cmd);
        c->cmd.len =
            proto_write_command(c->cmd.frame, sizeof c->cmd.frame, 0, body, n);
        c->cmd.acts_in = k.type != COMMAND_OPEN ? k.session : 0;
        c->cmd.slow = k.type == COMMAND_ACQUIRE && k.wait_ms != 0;
        c->inflight = true;
        c->inflight_seq = k.type == COMMAND_OPEN ? 0 : k.seq;
        if (seq != NULL) {
                *seq = c->inflight_seq;
        }
        /* One attempt now, so the request is on its way when this returns;
         * tclient_finish() does every retry. */
        if (tclientconn_ensure(c, tclient_now_ms() +
                                      TCLIENTCONN_CONNECT_MS_MAX) == 0 &&
            tclientreq_attach_first(
                c, &c->cmd, tclient_now_ms() + TCLIENTCONN_CONNECT_MS_MAX) ==
                0) {
                c->cmd.id = ++c->next_id;
                tclientreq_patch_id(c->cmd.frame, c->cmd.id);
                if (tclientconn_send_all(c, c->cmd.frame, c->cmd.len,
                                         tclient_now_ms() +
                                             TCLIENTCONN_CONNECT_MS_MAX) == 0) {
                        c->cmd.gen = c->gen;
                        c->cmd.sent_ms = tclient_now_ms();
                        c->cmd.sends = 1;
                }
        }
        return 0;
}

static void fill_result(struct tclient_result *out,
                        const struct proto_result *r)
{
        out->status = r->status;
        out->kind = r->kind;
        out->index = r->index;
        out->session = r->session;
        out->owner = r->owner;
        out->token = r->token;
        out->count = r->count;
        out->waiters = r->waiters;
}

/* A req's answer as a RESULT: its status, with `res` filled. */
static int take_result(struct tclient *c, const struct tclient_req *r,
                       struct tclient_result *res)
{
        struct proto_result pr;

        if (r->ah.type != PROTO_RESULT ||
            proto_read_result(r->answer, r->ah.length, 0, &pr) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "expected RESULT, got %s (%u bytes)",
                         proto_type_name(r->ah.type), r->ah.length);
                res->status = BATON_EMALFORMED;
                return BATON_EMALFORMED;
        }
        fill_result(res, &pr);
        if (pr.status != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "%s",
                         baton_strerror(pr.status));
        }
        return pr.status;
}

int tclient_finish(struct tclient *c, int timeout_ms,
                   struct tclient_result *res)
{
        struct tclient_result scratch;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        memset(res, 0, sizeof *res);
        if (!c->inflight) {
                res->status = BATON_EINVAL;
                return BATON_EINVAL;
        }
        rv = tclientreq_exchange(c, &c->cmd, deadline_of(timeout_ms));
        if (rv == BATON_ENOANSWER) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "no final answer within %d ms", timeout_ms);
                res->status = rv;
                return rv;
        }
        c->inflight = false;
        if (c->inflight_seq != 0) {
                tclient_forget_seq(c, c->inflight_seq);
        }
        if (rv != 0) {
                res->status = rv;
                return rv;
        }
        return take_result(c, &c->cmd, res);
}

void tclient_abandon(struct tclient *c)
{
        c->inflight = false;
}

int tclient_command(struct tclient *c, const struct command *cmd,
                    int timeout_ms, struct tclient_result *res)
{
        int rv = tclient_start(c, cmd, NULL);

        if (rv != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = rv;
                }
                return rv;
        }
        rv = tclient_finish(c, timeout_ms, res);
        if (rv == BATON_ENOANSWER) {
                tclient_abandon(c);
        }
        return rv;
}

int tclient_session_open(struct tclient *c, uint32_t ttl_ms,
                         const char *client_name, int timeout_ms,
                         struct tclient_result *res)
{
        struct tclient_result scratch;
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint8_t hash[ATTACH_HASH_SIZE];
        struct command k;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        new_secret(secret, hash);
        memset(&k, 0, sizeof k);
        k.type = COMMAND_OPEN;
        k.nonce = tclient_random();
        k.ttl_ms = ttl_ms;
        k.hash = hash;
        if (client_name != NULL) {
                k.name = client_name;
                k.name_len = (uint8_t)strlen(client_name);
        }
        rv = tclient_command(c, &k, timeout_ms, res);
        if (rv == 0 && res->kind == PROTO_KIND_OPENED) {
                tclient_own(c, res->session, secret);
                c->session = res->session;
                c->nonce = k.nonce;
                c->ttl_ms = ttl_ms;
                c->next_seq = 1;
                c->n_open = 0;
        }
        return rv;
}

int tclient_session_close(struct tclient *c, int timeout_ms,
                          struct tclient_result *res)
{
        struct command k;

        memset(&k, 0, sizeof k);
        k.type = COMMAND_CLOSE;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_acquire(struct tclient *c, const char *name, uint64_t owner,
                    uint32_t wait_ms, int timeout_ms,
                    struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.owner = owner;
        k.wait_ms = wait_ms;
        k.mode = COMMAND_MODE_EXCLUSIVE;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_try(struct tclient *c, const char *name, uint64_t owner,
                int timeout_ms, struct tclient_result *res)
{
        return tclient_acquire(c, name, owner, COMMAND_WAIT_TRY, timeout_ms,
                               res);
}

int tclient_release(struct tclient *c, const char *name, uint64_t owner,
                    uint64_t token, int timeout_ms, struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.owner = owner;
        k.token = token;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

int tclient_cancel(struct tclient *c, const char *name, uint64_t target,
                   int timeout_ms, struct tclient_result *res)
{
        struct command k;
        size_t len;

        if (name_len_ok(name, &len) != 0) {
                if (res != NULL) {
                        memset(res, 0, sizeof *res);
                        res->status = BATON_ENAME;
                }
                return BATON_ENAME;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_CANCEL;
        k.target = target;
        k.name = name;
        k.name_len = (uint8_t)len;
        return tclient_command(c, &k, timeout_ms, res);
}

/* --- Reads -------------------------------------------------------------------
 */

int tclient_attach(struct tclient *c, uint64_t session, const uint8_t *secret,
                   int timeout_ms, struct tclient_result *res)
{
        struct tclient_req r;
        struct tclient_result scratch;
        int rv;

        tclientreq_init(&r);
        r.len = attach_write(r.frame, sizeof r.frame, 0, session, secret);
        rv = tclientreq_exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        return take_result(c, &r, res != NULL ? res : &scratch);
}

int tclient_keepalive(struct tclient *c, int timeout_ms, uint32_t *ttl_ms)
{
        struct tclient_req r;
        struct tclient_result res;
        uint32_t ttl = 0, revoked;
        int rv;

        tclientreq_init(&r);
        r.len =
            proto_write_keepalive(r.frame, sizeof r.frame, 0, 0, c->session);
        r.acts_in = c->session;
        rv = tclientreq_exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type == PROTO_KEEPALIVE_OK) {
                if (proto_read_keepalive_ok(r.answer, r.ah.length, 0, &ttl,
                                            &revoked) != 0) {
                        return BATON_EMALFORMED;
                }
                if (ttl_ms != NULL) {
                        *ttl_ms = ttl;
                }
                return 0;
        }
        return take_result(c, &r, &res);
}

static int read_request(struct tclient *c, uint8_t type, const char *name,
                        uint64_t token, int timeout_ms,
                        struct tclient_result *res)
{
        struct tclient_result scratch;
        struct tclient_req r;
        size_t len;
        int rv;

        if (res == NULL) {
                res = &scratch;
        }
        memset(res, 0, sizeof *res);
        if (name_len_ok(name, &len) != 0) {
                res->status = BATON_ENAME;
                return BATON_ENAME;
        }
        tclientreq_init(&r);
        r.len = type == PROTO_QUERY ? proto_write_query(r.frame, sizeof r.frame,
                                                        0, 0, name, len)
                                    : proto_write_check(r.frame, sizeof r.frame,
                                                        0, name, len, token);
        if (r.len == 0) {
                res->status = BATON_ENAME;
                return BATON_ENAME;
        }
        rv = tclientreq_exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                res->status = rv;
                return rv;
        }
        return take_result(c, &r, res);
}

int tclient_query(struct tclient *c, const char *name, int timeout_ms,
                  struct tclient_result *res)
{
        return read_request(c, PROTO_QUERY, name, 0, timeout_ms, res);
}

/* Send the read `r` (written: r->len 0 when its writer refused) and take
 * its answer: true with `*rv` when that is the call's result (the
 * exchange failed, or the answer is a RESULT: its status); false when an
 * answer of the read's own type is in `r` for the caller to read. */
static bool exchange_read(struct tclient *c, struct tclient_req *r,
                          int timeout_ms, int *rv)
{
        struct tclient_result res;

        if (r->len == 0) {
                *rv = BATON_EINVAL;
                return true;
        }
        *rv = tclientreq_exchange(c, r, deadline_of(timeout_ms));
        if (*rv != 0) {
                return true;
        }
        if (r->ah.type == PROTO_RESULT) {
                *rv = take_result(c, r, &res);
                return true;
        }
        return false;
}

static void copy_text(char *dst, const struct proto_string *s)
{
        memcpy(dst, s->p, s->len);
        dst[s->len] = '\0';
}

static void copy_session(struct tclient_session *o,
                         const struct proto_session *s)
{
        uint16_t k;

        memset(o, 0, sizeof *o);
        o->id = s->id;
        copy_text(o->client_name, &s->client_name);
        copy_text(o->identity, &s->identity);
        copy_text(o->address, &s->address);
        o->ttl_ms = s->ttl_ms;
        o->lock_delay_ms = s->lock_delay_ms;
        o->left_ms = s->left_ms;
        o->idle_ms = s->idle_ms;
        o->revoked = s->revoked;
        o->n_grants = s->n_grants;
        o->n_waits = s->n_waits;
        o->n_holds = s->n_holds;
        for (k = 0; k < s->n_holds && k < 8; k++) {
                copy_text(o->holds[k].name, &s->holds[k].name);
                o->holds[k].waiting = s->holds[k].waiting != 0;
                o->holds[k].owner = s->holds[k].owner;
                o->holds[k].token = s->holds[k].token;
                o->holds[k].count = s->holds[k].count;
                o->holds[k].wait_ms = s->holds[k].wait_ms;
        }
}

int tclient_sessions(struct tclient *c, uint64_t after, uint8_t mode,
                     uint32_t limit, int timeout_ms,
                     struct tclient_session *out, size_t cap, size_t *n,
                     bool *more)
{
        struct proto_session s[PROTO_SESSIONS_MAX];
        struct proto_session_hold
            h[TCLIENT_ANSWER_MAX / PROTO_SESSION_HOLD_MIN];
        struct tclient_req r;
        uint32_t got, i;
        int rv;

        *n = 0;
        *more = false;
        tclientreq_init(&r);
        r.len = proto_write_sessions(r.frame, sizeof r.frame, 0, after, mode,
                                     limit);
        if (exchange_read(c, &r, timeout_ms, &rv)) {
                return rv;
        }
        if (r.ah.type != PROTO_SESSIONS_REPLY ||
            proto_read_sessions_reply(r.answer, r.ah.length, s, limit, h,
                                      sizeof h / sizeof h[0], &got,
                                      more) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "bad SESSIONS reply (%s, %u bytes)",
                         proto_type_name(r.ah.type), r.ah.length);
                return BATON_EMALFORMED;
        }
        for (i = 0; i < got && i < cap; i++) {
                copy_session(&out[i], &s[i]);
        }
        *n = i;
        return 0;
}

int tclient_check(struct tclient *c, const char *name, uint64_t token,
                  int timeout_ms, struct tclient_result *res)
{
        return read_request(c, PROTO_CHECK, name, token, timeout_ms, res);
}

int tclient_list(struct tclient *c, const char *prefix, uint32_t limit,
                 int timeout_ms, struct tclient_lock *out, size_t cap,
                 size_t *n, bool *more)
{
        struct proto_lock_entry *e;
        struct tclient_req r;
        size_t len = prefix != NULL ? strlen(prefix) : 0;
        uint32_t got, i;
        int rv;

        *n = 0;
        *more = false;
        tclientreq_init(&r);
        r.len =
            proto_write_list(r.frame, sizeof r.frame, 0, 0, prefix, len, limit);
        if (exchange_read(c, &r, timeout_ms, &rv)) {
                return rv;
        }
        e = calloc(limit, sizeof *e);
        if (e == NULL) {
                return BATON_ENOMEM;
        }
        if (r.ah.type != PROTO_LIST_REPLY ||
            proto_read_list_reply(r.answer, r.ah.length, 0, e, limit, &got,
                                  more) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "bad LIST reply (%s, %u bytes)",
                         proto_type_name(r.ah.type), r.ah.length);
                free(e);
                return BATON_EMALFORMED;
        }
        for (i = 0; i < got && i < cap; i++) {
                memcpy(out[i].name, e[i].name.p, e[i].name.len);
                out[i].name[e[i].name.len] = '\0';
                out[i].session = e[i].session;
                out[i].owner = e[i].owner;
                out[i].token = e[i].token;
                out[i].count = e[i].count;
                out[i].waiters = e[i].waiters;
        }
        *n = i;
        free(e);
        return 0;
}

int tclient_status(struct tclient *c, int timeout_ms, struct baton_status *st)
{
        struct tclient_req r;
        struct proto_status ps;
        int rv;

        memset(st, 0, sizeof *st);
        tclientreq_init(&r);
        r.len = proto_write_status_request(r.frame, sizeof r.frame, 0, 0);
        rv = tclientreq_exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type != PROTO_STATUS_REPLY ||
            proto_read_status(r.answer, r.ah.length, 0, &ps, NULL) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "bad STATUS reply (%s)",
                         proto_type_name(r.ah.type));
                return BATON_EMALFORMED;
        }
        proto_status_export(st, NULL, &ps);
        return 0;
}

int tclient_status_of(const char *endpoint, int timeout_ms,
                      struct baton_status *st)
{
        struct tclient c;
        int rv = tclient_init(&c, endpoint);

        if (rv == 0) {
                c.try_ms = 0;
                rv = tclient_status(&c, timeout_ms, st);
        }
        tclient_close(&c);
        return rv;
}

int tclient_ping(struct tclient *c, int timeout_ms, int64_t *rtt_us)
{
        struct tclient_req r;
        int64_t t0;
        int rv;

        tclientreq_init(&r);
        r.len = proto_write_empty(r.frame, sizeof r.frame, 0, PROTO_PING);
        t0 = tclient_now_ns();
        rv = tclientreq_exchange(c, &r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        if (r.ah.type != PROTO_PONG) {
                return BATON_EMALFORMED;
        }
        if (rtt_us != NULL) {
                *rtt_us = (tclient_now_ns() - t0) / 1000;
        }
        return 0;
}

/* --- Membership ------------------------------------------------------------
 */

/* An admin request's RESULT status. */
static int admin(struct tclient *c, struct tclient_req *r, int timeout_ms)
{
        struct tclient_result res;
        int rv;

        if (r->len == 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "bad admin request");
                return BATON_EINVAL;
        }
        r->slow = true;
        rv = tclientreq_exchange(c, r, deadline_of(timeout_ms));
        if (rv != 0) {
                return rv;
        }
        return take_result(c, r, &res);
}

int tclient_member_add(struct tclient *c, uint64_t id, const char *raft_address,
                       const char *client_address, int timeout_ms)
{
        struct tclient_req r;

        tclientreq_init(&r);
        r.len = proto_write_member_add(r.frame, sizeof r.frame, 0, id,
                                       raft_address, client_address);
        return admin(c, &r, timeout_ms);
}

int tclient_transfer(struct tclient *c, uint64_t id, int timeout_ms)
{
        struct tclient_req r;

        tclientreq_init(&r);
        r.len = proto_write_id(r.frame, sizeof r.frame, 0, PROTO_TRANSFER, id);
        return admin(c, &r, timeout_ms);
}

int tclient_member_remove(struct tclient *c, uint64_t id, int timeout_ms)
{
        struct tclient_req r;

        tclientreq_init(&r);
        r.len =
            proto_write_id(r.frame, sizeof r.frame, 0, PROTO_MEMBER_REMOVE, id);
        return admin(c, &r, timeout_ms);
}

/* --- Raw frames --------------------------------------------------------------
 */

int tclient_connect(struct tclient *c, const char *endpoint, int timeout_ms)
{
        return tclientconn_open(c, endpoint, deadline_of(timeout_ms));
}

int tclient_raw_send(struct tclient *c, const void *bytes, size_t len,
                     int timeout_ms)
{
        if (c->fd < 0) {
                return BATON_EIO;
        }
        return tclientconn_send_all(c, bytes, len, deadline_of(timeout_ms));
}

int tclient_raw_send_some(struct tclient *c, const void *bytes, size_t len,
                          int timeout_ms, size_t *sent)
{
        *sent = 0;
        if (c->fd < 0) {
                return BATON_EIO;
        }
        return tclientconn_send(c, bytes, len, deadline_of(timeout_ms), sent);
}

int tclient_raw_recv(struct tclient *c, int timeout_ms, struct proto_header *h,
                     const uint8_t **body)
{
        return tclientconn_recv(c, deadline_of(timeout_ms), h, body);
}

bool tclient_raw_read(struct tclient *c, uint8_t *p, size_t len, int timeout_ms)
{
        return tclientconn_read(c, p, len, deadline_of(timeout_ms));
}

bool tclient_wait_closed(struct tclient *c, int timeout_ms)
{
        int64_t deadline = deadline_of(timeout_ms);
        struct proto_header h;
        const uint8_t *body;

        for (;;) {
                int rv = tclientconn_recv(c, deadline, &h, &body);
                if (rv == BATON_EIO) {
                        return true;
                }
                if (rv == BATON_ENOANSWER) {
                        return false;
                }
        }
}

const char *tclient_result_str(const struct tclient_result *r, char *buf,
                               size_t cap)
{
        snprintf(buf, cap,
                 "status=%d (%s) kind=%u index=%" PRIu64 " session=%" PRIu64
                 " owner=%" PRIu64 " token=%" PRIu64 " count=%u waiters=%u",
                 r->status, r->status != 0 ? baton_strerror(r->status) : "ok",
                 r->kind, r->index, r->session, r->owner, r->token, r->count,
                 r->waiters);
        return buf;
}
