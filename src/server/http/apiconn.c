/* One HTTP API connection: requests in, frames to the core, HTTP out. */
#include "apiconn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/rand.h>

#include "../../../include/baton/errors.h"
#include "../../proto/reply.h"
#include "../base/log.h"
#include "../raft/node.h"
#include "apiframe.h"
#include "apireply.h"
#include "httpapi.h"

struct apiconn *apiconn_create(struct httpapi *api, struct conn *c)
{
        struct apiconn *a = calloc(1, sizeof *a);

        if (a == NULL) {
                return NULL;
        }
        a->api = api;
        a->c = c;
        httpreq_init(&a->req, &api->req_limits);
        queue_init(&a->run_link);
        return a;
}

void apiconn_destroy(struct apiconn *a)
{
        if (a == NULL) {
                return;
        }
        httpreq_close(&a->req);
        free(a->pend);
        free(a->ans);
        free(a);
}

static void run_later(struct apiconn *a)
{
        if (queue_empty(&a->run_link) && !a->gone) {
                queue_push_tail(&a->api->runnable, &a->run_link);
        }
}

/* Queue `n` bytes of `p` on the connection. */
static void put(struct apiconn *a, const char *p, size_t n, bool later)
{
        uint8_t *out = conn_reserve(a->c, n);

        if (out == NULL) {
                return;
        }
        memcpy(out, p, n);
        if (later) {
                conn_commit_later(a->c, n);
        } else {
                conn_commit(a->c, n);
        }
}

/* The answer to the request under way: `status` with the JSON `body`
 * (taken) and `extra` header lines (each ending in CRLF, or ""); the
 * connection closes after it unless the client keeps it and `keep`. */
static void respond(struct apiconn *a, int status, json_t *body,
                    const char *extra, bool keep)
{
        char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
        size_t len = text != NULL ? strlen(text) + 1 : 0;
        char head[1024];
        int n;

        keep = keep && a->req.keep_alive;
        if (a->seq_held) { /* the write's seq is no longer out */
                a->seq_held = false;
                apiseqs_put(&a->api->seqs, a->call.session);
        }
        n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n%s%s\r\n",
                     status, httpreq_reason(status), len, extra,
                     keep ? "" : "Connection: close\r\n");
        put(a, head, (size_t)n < sizeof head ? (size_t)n : sizeof head - 1,
            false);
        if (text != NULL) {
                text[len - 1] = '\n'; /* one line, for curl and the shell */
                put(a, text, len, false);
        }
        free(text);
        json_decref(body);
        a->api->served++;
        if (status >= 400 && a->state == APICONN_READING) {
                a->api->refused++;
        }
        a->state = APICONN_ANSWERED;
        if (!keep) {
                conn_close_after(a->c);
        }
        run_later(a);
}

static void respond_error(struct apiconn *a, int status, int code,
                          const char *message, bool keep)
{
        respond(a, status, apireply_error(code, message), "", keep);
}

void apiconn_refuse(struct apiconn *a, int status, const char *message)
{
        respond_error(a, apireply_http_status(status), status, message, false);
}

void apiconn_expired(struct apiconn *a)
{
        log_debug("http connection %llu from %s: request not whole within "
                  "%u ms; closed",
                  (unsigned long long)a->c->id, a->c->peer,
                  (unsigned)a->api->request_timeout_ms);
        respond_error(a, 408, BATON_EINVAL,
                      "the request did not arrive whole in time "
                      "(http-request-timeout-ms)",
                      false);
}

/* Hand one frame (the call's, or its ATTACH) to the request core. */
static void send_frame(struct apiconn *a, uint8_t *frame, size_t n)
{
        struct proto_header h;

        if (n == 0 || proto_header_decode(&h, frame, PROTO_MAX_BODY) != 0) {
                respond_error(a, 400, BATON_EINVAL,
                              "the request does not encode", true);
                return;
        }
        a->frame_id = h.id;
        a->api->fed = true;
        corehost_on_frame(a->api->host, a->c, &h, frame + PROTO_HEADER_SIZE);
}

static void send_attach(struct apiconn *a)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];

        a->state = APICONN_ATTACHING;
        send_frame(a, frame,
                   attach_write(frame, sizeof frame, ++a->next_id,
                                a->call.session, a->call.secret));
}

/* Whether the call is a write in its session, which carries a seq. */
static bool numbered(const struct api_call *call)
{
        switch (call->op) {
        case API_SESSION_CLOSE:
        case API_LOCK_ACQUIRE:
        case API_LOCK_RELEASE:
        case API_LOCK_VALUE:
        case API_LOCK_EXTEND:
        case API_ELECTION_CAMPAIGN:
        case API_ELECTION_PROCLAIM:
        case API_ELECTION_RESIGN:
                return true;
        default:
                return false;
        }
}

static void send_call(struct apiconn *a)
{
        uint8_t frame[APIFRAME_MAX];
        uint8_t hash[ATTACH_HASH_SIZE];
        const struct lockfsm *f;

        a->state = APICONN_CALLING;
        if (a->call.op == API_SESSION_OPEN &&
            (RAND_bytes(a->secret, sizeof a->secret) != 1 ||
             RAND_bytes((unsigned char *)&a->nonce, sizeof a->nonce) != 1 ||
             attach_hash(a->secret, hash) != 0)) {
                respond_error(a, 503, BATON_ENOMEM,
                              "no random bytes for the session's secret", true);
                return;
        }
        a->seq = 0;
        if (numbered(&a->call)) {
                f = node_lockfsm_nowait(a->api->host->node);
                a->seq = apiseqs_take(&a->api->seqs, f, a->call.session,
                                      a->call.seq);
                if (a->seq == 0) {
                        respond_error(a, 503, BATON_ENOMEM,
                                      baton_strerror(BATON_ENOMEM), true);
                        return;
                }
                a->seq_held = true;
        }
        send_frame(a, frame,
                   apiframe_write(&a->call, ++a->next_id, a->seq, a->nonce,
                                  hash, frame, sizeof frame));
}

/* A request refused before it reached the core, for want of its
 * session's credentials (BATON_EPERM): its audit line. The core records
 * the refusals it makes itself (a role, a wrong secret). */
static void audit_refusal(struct apiconn *a, const struct api_refusal *why)
{
        struct audit_event e = {.identity = a->c->identity,
                                .address = a->c->endpoint,
                                .action = apicall_name(a->call.op),
                                .result = why->code,
                                .detail = why->message};

        audit_write(&a->api->host->audit, &e);
}

/* A whole request: check it, then send its first frame. */
static void start(struct apiconn *a)
{
        struct api_refusal why;

        if (apicall_read(&a->req, a->api->max_wait_ms, &a->call, &why) != 0) {
                if (why.code == BATON_EPERM) {
                        audit_refusal(a, &why);
                }
                respond_error(a, why.http, why.code, why.message, true);
                return;
        }
        a->c->busy = true;
        if (a->call.needs_session &&
            (a->att_session != a->call.session ||
             memcmp(a->att_secret, a->call.secret, sizeof a->att_secret))) {
                send_attach(a);
        } else {
                send_call(a);
        }
}

/* Read what is pending while no request is under way. */
static void pump(struct apiconn *a)
{
        struct httpreq *r = &a->req;
        long used;

        while (a->state == APICONN_READING && !a->c->closing) {
                used = httpreq_feed(r, (const char *)a->pend, a->pend_len);
                if (used < 0) {
                        respond_error(a, r->status, BATON_EMALFORMED, r->reason,
                                      false);
                        return;
                }
                memmove(a->pend, a->pend + used, a->pend_len - (size_t)used);
                a->pend_len -= (size_t)used;
                if (r->complete) {
                        a->c->deadline = 0;
                        start(a);
                        continue;
                }
                if (r->started && a->c->deadline == 0) {
                        a->c->deadline = uv_now(a->c->set->loop) +
                                         a->api->request_timeout_ms;
                }
                /* A client that asked waits for this before its body
                 * (or for a second, as curl does). */
                if (!a->continued && httpreq_wants_continue(r)) {
                        a->continued = true;
                        put(a, "HTTP/1.1 100 Continue\r\n\r\n", 25, false);
                }
                return;
        }
}

void apiconn_bytes(struct apiconn *a, const uint8_t *p, size_t n)
{
        size_t cap =
            a->api->req_limits.max_header + a->api->req_limits.max_body;
        uint8_t *b;

        if (a->pend_len + n > a->pend_cap) {
                b = realloc(a->pend, a->pend_len + n);
                if (b == NULL) {
                        apiconn_refuse(a, BATON_ENOMEM,
                                       baton_strerror(BATON_ENOMEM));
                        return;
                }
                a->pend = b;
                a->pend_cap = a->pend_len + n;
        }
        memcpy(a->pend + a->pend_len, p, n);
        a->pend_len += n;
        /* A client that pipelines more than one request's worth waits
         * until the one under way is answered. */
        if (a->pend_len > cap) {
                conn_hold_reads(a->c, true);
        }
        pump(a);
}

void apiconn_step(struct apiconn *a)
{
        if (a->state == APICONN_CALL_NEXT) {
                send_call(a);
        } else if (a->state == APICONN_ANSWERED && !a->c->closing) {
                httpreq_next(&a->req);
                a->continued = false;
                a->state = APICONN_READING;
                a->c->busy = false;
                conn_hold_reads(a->c, false);
                pump(a);
        }
}

/* The leader's HTTP address from the member lines, or NULL. */
static const char *leader_http(const struct apiconn *a, uint64_t id)
{
        const struct config *cfg = a->api->cfg;
        unsigned i;

        for (i = 0; i < cfg->n_members; i++) {
                if (cfg->members[i].id == id &&
                    cfg->members[i].http_address[0] != '\0') {
                        return cfg->members[i].http_address;
                }
        }
        return NULL;
}

/* The call's final answer. */
static void finish(struct apiconn *a, struct api_answer *ans)
{
        char extra[512] = "";
        const char *to;
        char hex[2 * ATTACH_SECRET_SIZE + 1];
        unsigned i;

        if (a->state == APICONN_ATTACHING && ans->http == 403) {
                json_object_set_new(ans->body, "message",
                                    json_string("Baton-Secret is not the "
                                                "secret of this session"));
        }
        if (a->seq != 0) {
                json_object_set_new(ans->body, "seq",
                                    json_integer((json_int_t)a->seq));
        }
        if (ans->not_leader && (to = leader_http(a, ans->leader_id)) != NULL) {
                /* A redirect, not a forward: the client then talks to the
                 * leader with its own certificate, and no node acts for
                 * another's client (docs/http.md). */
                ans->http = 307;
                snprintf(extra, sizeof extra, "Location: %s://%s%s\r\n",
                         a->api->tls ? "https" : "http", to, a->req.target);
        }
        if (a->call.op == API_SESSION_OPEN && ans->http == 201) {
                for (i = 0; i < ATTACH_SECRET_SIZE; i++) {
                        snprintf(hex + 2 * i, 3, "%02x", a->secret[i]);
                }
                json_object_set_new(ans->body, "secret", json_string(hex));
                /* Its own OPEN attached the connection (gwconn.h). */
                a->att_session = (uint64_t)json_integer_value(
                    json_object_get(ans->body, "session"));
                memcpy(a->att_secret, a->secret, sizeof a->att_secret);
        }
        respond(a, ans->http, ans->body, extra, !ans->close);
}

/* The first bytes of a watch's stream: the HTTP head, then where the
 * watch starts, as an event of its own. */
static void stream_start(struct apiconn *a, struct api_answer *ans)
{
        static const char head[] = "HTTP/1.1 200 OK\r\n"
                                   "Content-Type: text/event-stream\r\n"
                                   "Cache-Control: no-cache\r\n"
                                   "Connection: close\r\n\r\n";
        char *text = json_dumps(ans->body, JSON_COMPACT);
        char line[256];
        int n;

        put(a, head, sizeof head - 1, false);
        n = snprintf(line, sizeof line, "event: watching\ndata: %s\n\n",
                     text != NULL ? text : "{}");
        put(a, line, (size_t)n < sizeof line ? (size_t)n : 0, false);
        free(text);
        json_decref(ans->body);
        a->state = APICONN_STREAMING;
        a->api->served++;
}

static void stream_event(struct apiconn *a, const struct proto_header *h)
{
        struct proto_watch_event e;
        const char *kind;
        json_t *o;
        char *text;
        char line[128];
        int n;

        if (proto_read_watch_event(a->ans + PROTO_HEADER_SIZE, h->length, &e) !=
            0) {
                return;
        }
        o = apireply_event(&e, &kind);
        text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (text == NULL) {
                return;
        }
        n = snprintf(line, sizeof line, "id: %llu.%u\nevent: %s\ndata: ",
                     (unsigned long long)e.index, (unsigned)e.ord, kind);
        put(a, line, (size_t)n, true);
        put(a, text, strlen(text), true);
        put(a, "\n\n", 2, true);
        free(text);
}

/* The watch ended (a RESULT after WATCHING): its last event says why. */
static void stream_end(struct apiconn *a, struct api_answer *ans)
{
        char *text = json_dumps(ans->body, JSON_COMPACT);

        put(a, "event: error\ndata: ", 19, false);
        if (text != NULL) {
                put(a, text, strlen(text), false);
        }
        put(a, "\n\n", 2, false);
        free(text);
        json_decref(ans->body);
        conn_close_after(a->c);
}

void apiconn_heartbeat(struct apiconn *a)
{
        if (a->state == APICONN_STREAMING && !a->c->closing) {
                put(a, ": heartbeat\n\n", 13, false);
        }
}

void apiconn_answer(struct apiconn *a, size_t n)
{
        struct proto_header h;
        struct api_answer ans;
        int rv;

        if (n < PROTO_HEADER_SIZE ||
            proto_header_decode(&h, a->ans, PROTO_MAX_BODY) != 0) {
                return;
        }
        if (h.type == PROTO_WATCH_EVENT) {
                if (a->state == APICONN_STREAMING) {
                        stream_event(a, &h);
                }
                return;
        }
        if (h.id != a->frame_id) {
                return;
        }
        rv = apireply_read(&a->call, &h, a->ans + PROTO_HEADER_SIZE, &ans);
        if (rv != 0) {
                /* Out of memory, or an answer of a shape the call does
                 * not take: say so rather than leave the request open. */
                if (a->state == APICONN_STREAMING) {
                        conn_close_after(a->c);
                } else if (a->state == APICONN_ATTACHING ||
                           a->state == APICONN_CALLING) {
                        respond_error(a, 500, rv,
                                      "the node's answer could not be "
                                      "written as JSON",
                                      false);
                }
                return;
        }
        if (a->state == APICONN_ATTACHING && ans.http == 200 &&
            !ans.not_leader) {
                json_decref(ans.body);
                a->att_session = a->call.session;
                memcpy(a->att_secret, a->call.secret, sizeof a->att_secret);
                a->state = APICONN_CALL_NEXT;
                run_later(a);
        } else if (a->state == APICONN_STREAMING) {
                stream_end(a, &ans);
        } else if (a->state == APICONN_CALLING && ans.watching) {
                stream_start(a, &ans);
        } else if (a->state == APICONN_ATTACHING ||
                   a->state == APICONN_CALLING) {
                finish(a, &ans);
        } else {
                json_decref(ans.body);
        }
}
