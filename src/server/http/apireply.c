/* The HTTP API's answers: frames to HTTP statuses and JSON. */
#include "apireply.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../proto/command.h"
#include "../../proto/keepalive.h"
#include "../../proto/list.h"
#include "../../proto/reply.h"
#include "../../proto/sesslist.h"
#include "../../proto/status.h"

int apireply_http_status(int code)
{
        switch (code) {
        case 0:
                return 200;
        case BATON_EBUSY:
        case BATON_ETIMEDOUT:
        case BATON_ECANCELLED:
        case BATON_ENOTHOLDER:
        case BATON_ESTALE:
        case BATON_EWAITING:
        case BATON_ENOTWAITING:
        case BATON_EUPGRADE:
        case BATON_EKIND:
        case BATON_EPERMITS:
        case BATON_EHELD:
        case BATON_EOVERFLOW:
                return 409;
        case BATON_ENOSESSION:
        case BATON_ENOTFOUND:
                return 404;
        case BATON_EEXPIRED:
        case BATON_ECLOSED:
        case BATON_ECOMPACTED:
        case BATON_ESEQ:
                return 410;
        case BATON_EPERM:
                return 403;
        case BATON_ENOTLEADER:
        case BATON_EUNAVAILABLE:
        case BATON_EUNKNOWN:
        case BATON_ESHUTDOWN:
        case BATON_ENOTREADY:
        case BATON_ENOMEM:
                return 503;
        case BATON_ETOOMANYSESSIONS:
        case BATON_ETOOMANYLOCKS:
        case BATON_ETOOMANYWAITERS:
        case BATON_EINFLIGHT:
        case BATON_ETOOMANYCONNS:
        case BATON_ETOOMANYWATCHES:
        case BATON_ETOOMANYHOLDERS:
        case BATON_ETOOMANYPERMITS:
        case BATON_ESLOW:
        case BATON_EQUOTA:
                return 429;
        case BATON_ETOOBIG:
                return 413;
        case BATON_ENOSPC:
                return 507;
        case BATON_EIO:
                return 500;
        default:
                return 400;
        }
}

json_t *apireply_error(int code, const char *message)
{
        const char *name = baton_errname(code);
        char ascii[256];
        json_t *body;
        size_t i;

        body = json_pack("{s:s, s:i, s:s}", "error",
                         name != NULL ? name : "BATON_E?", "code", code,
                         "message", message);
        if (body != NULL) {
                return body;
        }
        /* A message that quotes the request (a path, a parameter's name,
         * a field cut at 64 bytes) need not be UTF-8, which jansson
         * refuses: the error would go out without its body. Quote it as
         * ASCII instead, each byte above 0x7f a '?'. */
        for (i = 0; message[i] != '\0' && i < sizeof ascii - 1; i++) {
                ascii[i] = (unsigned char)message[i] < 0x80 ? message[i] : '?';
        }
        ascii[i] = '\0';
        return json_pack("{s:s, s:i, s:s}", "error",
                         name != NULL ? name : "BATON_E?", "code", code,
                         "message", ascii);
}

static json_t *str(const struct proto_string *s)
{
        return json_stringn(s->p != NULL ? s->p : "", s->len);
}

static const char *mode_name(uint8_t mode)
{
        static const char *const names[] = {
            [COMMAND_MODE_EXCLUSIVE] = "exclusive",
            [COMMAND_MODE_SHARED] = "shared",
            [COMMAND_MODE_SEMAPHORE] = "semaphore",
            [COMMAND_MODE_ELECTION] = "election",
        };

        return mode < sizeof names / sizeof names[0] ? names[mode] : "?";
}

/* A RESULT: the error, or what the call's success says. */
static int result(const struct api_call *call, const uint8_t *body, size_t len,
                  struct api_answer *a)
{
        struct proto_result r;

        if (proto_read_result(body, len, 0, &r) != 0) {
                return BATON_EMALFORMED;
        }
        if (call->op == API_LOCK_CHECK &&
            (r.status == 0 || r.status == BATON_ESTALE)) {
                a->body = json_pack("{s:b, s:I, s:I}", "current", r.status == 0,
                                    "token", (json_int_t)call->token,
                                    "holder_token", (json_int_t)r.token);
                return 0;
        }
        if (r.status < 0) {
                a->http = apireply_http_status(r.status);
                a->body = apireply_error(r.status, baton_strerror(r.status));
                if (r.status == BATON_EBUSY) {
                        json_object_set_new(a->body, "holder_token",
                                            json_integer((json_int_t)r.token));
                }
                return 0;
        }
        if (call->op == API_WATCH && r.kind == PROTO_KIND_WATCHING) {
                a->watching = true;
                a->body = json_pack("{s:I, s:I}", "index", (json_int_t)r.index,
                                    "ord", (json_int_t)r.count);
                return 0;
        }
        if (call->op == API_SESSION_OPEN) {
                a->http = 201;
                a->body =
                    json_pack("{s:I, s:i}", "session", (json_int_t)r.session,
                              "ttl_ms", (int)call->ttl_ms);
                return 0;
        }
        a->body = json_pack("{s:I}", "index", (json_int_t)r.index);
        if (r.kind == PROTO_KIND_GRANTED || r.kind == PROTO_KIND_REENTERED ||
            r.kind == PROTO_KIND_PROCLAIMED || r.kind == PROTO_KIND_RELEASED ||
            r.kind == PROTO_KIND_UPDATED) {
                /* Exactly once: a repeat's token is the original grant's,
                 * and its index the repeat's entry (docs/protocol.md).
                 * UPDATED: an EXTEND's, the grant it restarted. */
                json_object_set_new(a->body, "token",
                                    json_integer((json_int_t)r.token));
                json_object_set_new(a->body, "count",
                                    json_integer((json_int_t)r.count));
        }
        return 0;
}

/* A leader's time in ms, or null when it does not know it. */
static json_t *ms_or_null(uint32_t v)
{
        return v == PROTO_SESSION_UNKNOWN ? json_null()
                                          : json_integer((json_int_t)v);
}

/* One grant of a holders reply, asked with values ("" when it has none);
 * `left`: the entries carry time left. */
static json_t *holder(const struct proto_lock_entry *e, bool left)
{
        json_t *o = json_pack(
            "{s:I, s:I, s:I, s:s, s:i, s:o, s:I, s:i, s:o}", "session",
            (json_int_t)e->session, "owner", (json_int_t)e->owner, "token",
            (json_int_t)e->token, "mode", mode_name(e->mode), "count",
            (int)e->count, "client_name", str(&e->client_name), "granted_s",
            (json_int_t)e->granted_s, "waiters", (int)e->waiters, "value",
            str(&e->value));

        if (e->mode == COMMAND_MODE_SEMAPHORE) {
                json_object_set_new(o, "permits", json_integer(e->permits));
                json_object_set_new(o, "limit", json_integer(e->limit));
        }
        if (left) {
                json_object_set_new(o, "left_ms", ms_or_null(e->left_ms));
        }
        return o;
}

/* A LIST_REPLY: the holders of one lock (QUERY) or the locks (LIST), each
 * lock with its first holder's value ("" when none). */
static int list(const struct api_call *call, const struct proto_header *h,
                const uint8_t *body, struct api_answer *a)
{
        /* No more entries than the body could hold. */
        size_t cap = h->length / PROTO_LIST_ENTRY_MIN + 1;
        struct proto_lock_entry *e = calloc(cap, sizeof *e);
        json_t *arr;
        uint32_t n, i;
        bool more;

        if (e == NULL) {
                return BATON_ENOMEM;
        }
        if (proto_read_list_reply(body, h->length, h->flags, e, cap, &n,
                                  &more) != 0) {
                free(e);
                return BATON_EMALFORMED;
        }
        arr = json_array();
        for (i = 0; i < n; i++) {
                if (call->op == API_LOCK_LIST) {
                        json_array_append_new(
                            arr,
                            json_pack("{s:o, s:I, s:I, s:I, s:i, s:i, s:o, "
                                      "s:o}",
                                      "name", str(&e[i].name), "session",
                                      (json_int_t)e[i].session, "owner",
                                      (json_int_t)e[i].owner, "token",
                                      (json_int_t)e[i].token, "count",
                                      (int)e[i].count, "waiters",
                                      (int)e[i].waiters, "client_name",
                                      str(&e[i].client_name), "value",
                                      str(&e[i].value)));
                } else {
                        json_array_append_new(
                            arr, holder(&e[i], h->flags & PROTO_FLAG_LEFT));
                }
        }
        free(e);
        if (call->op == API_LOCK_LIST) {
                a->body = json_pack("{s:o, s:b}", "locks", arr, "more", more);
        } else if (call->op == API_ELECTION_LEADER) {
                a->body =
                    json_pack("{s:s, s:O}", "name", call->name, "leader",
                              n > 0 ? json_array_get(arr, 0) : json_null());
                json_decref(arr);
        } else {
                a->body =
                    json_pack("{s:s, s:o}", "name", call->name, "holders", arr);
        }
        return 0;
}

/* One session of a SESSIONS_REPLY, its grants in "locks" and its waits in
 * "waiting". */
static json_t *session(const struct proto_session *s)
{
        json_t *locks = json_array(), *waiting = json_array();
        uint16_t k;

        for (k = 0; k < s->n_holds; k++) {
                const struct proto_session_hold *h = &s->holds[k];
                json_t *o = json_pack("{s:o, s:s, s:I}", "name", str(&h->name),
                                      "mode", mode_name(h->mode), "owner",
                                      (json_int_t)h->owner);

                if (h->mode == COMMAND_MODE_SEMAPHORE) {
                        json_object_set_new(o, "permits",
                                            json_integer(h->permits));
                }
                if (h->waiting) {
                        json_object_set_new(o, "wait_ms",
                                            h->wait_ms == COMMAND_WAIT_FOREVER
                                                ? json_null()
                                                : json_integer(h->wait_ms));
                        json_array_append_new(waiting, o);
                        continue;
                }
                json_object_set_new(o, "token",
                                    json_integer((json_int_t)h->token));
                json_object_set_new(o, "count", json_integer(h->count));
                json_array_append_new(locks, o);
        }
        return json_pack(
            "{s:I, s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:b, "
            "s:o, s:o}",
            "session", (json_int_t)s->id, "client_name", str(&s->client_name),
            "identity", str(&s->identity), "address", str(&s->address),
            "ttl_ms", (json_int_t)s->ttl_ms, "lock_delay_ms",
            (json_int_t)s->lock_delay_ms, "left_ms", ms_or_null(s->left_ms),
            "idle_ms", ms_or_null(s->idle_ms), "revoked",
            (json_int_t)s->revoked, "grants", (json_int_t)s->n_grants, "waits",
            (json_int_t)s->n_waits, "truncated",
            s->n_holds < (size_t)s->n_grants + s->n_waits, "locks", locks,
            "waiting", waiting);
}

/* A SESSIONS_REPLY: {"sessions":[...],"next":ID} (next 0: the last page),
 * or the one session asked for. */
static int sessions(const struct api_call *call, const struct proto_header *h,
                    const uint8_t *body, struct api_answer *a)
{
        size_t cap = PROTO_SESSIONS_MAX;
        size_t holds_cap = h->length / PROTO_SESSION_HOLD_MIN + 1;
        struct proto_session *s = calloc(cap, sizeof *s);
        struct proto_session_hold *hs = calloc(holds_cap, sizeof *hs);
        json_t *arr = json_array();
        uint32_t n = 0, i;
        bool more = false;
        int rv = BATON_ENOMEM;

        if (s != NULL && hs != NULL) {
                rv = proto_read_sessions_reply(body, h->length, s, cap, hs,
                                               holds_cap, &n, &more);
        }
        for (i = 0; rv == 0 && i < n; i++) {
                json_array_append_new(arr, session(&s[i]));
        }
        if (rv == 0 && call->op == API_SESSION_INFO) {
                a->body = n == 1 ? json_incref(json_array_get(arr, 0)) : NULL;
                rv = n == 1 ? 0 : BATON_EMALFORMED;
        } else if (rv == 0) {
                a->body =
                    json_pack("{s:O, s:I}", "sessions", arr, "next",
                              more && n > 0 ? (json_int_t)s[n - 1].id : 0);
        }
        json_decref(arr);
        free(s);
        free(hs);
        return rv;
}

static const char *role_name(uint8_t role)
{
        /* enum baton_node_role (include/baton/cluster.h). */
        static const char *const names[] = {"unavailable", "follower",
                                            "candidate", "leader"};

        return role < 4 ? names[role] : "unknown";
}

static int status(const struct proto_header *h, const uint8_t *body,
                  struct api_answer *a)
{
        struct proto_status st;
        struct proto_versions v;
        json_t *members;
        unsigned i;

        if (proto_read_status(body, h->length, h->flags, &st, &v) != 0) {
                return BATON_EMALFORMED;
        }
        members = json_array();
        for (i = 0; i < st.n_members; i++) {
                json_array_append_new(
                    members,
                    json_pack(
                        "{s:I, s:o, s:o}", "id", (json_int_t)st.members[i].id,
                        "raft_address", str(&st.members[i].raft_address),
                        "client_address", str(&st.members[i].client_address)));
        }
        a->body = json_pack(
            "{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
            "id", (json_int_t)st.id, "role", role_name(st.role), "term",
            (json_int_t)st.term, "leader_id", (json_int_t)st.leader_id,
            "commit_index", (json_int_t)st.commit_index, "applied_index",
            (json_int_t)st.applied_index, "last_index",
            (json_int_t)st.last_index, "sessions", (json_int_t)st.sessions,
            "locks", (json_int_t)st.locks, "waiters", (json_int_t)st.waiters,
            "members", members, "release", str(&v.release));
        return 0;
}

int apireply_read(const struct api_call *call, const struct proto_header *h,
                  const uint8_t *body, struct api_answer *a)
{
        struct proto_string s;
        uint32_t ttl, revoked;
        int code;

        memset(a, 0, sizeof *a);
        a->http = 200;
        switch (h->type) {
        case PROTO_RESULT:
                return result(call, body, h->length, a);
        case PROTO_NOT_LEADER:
                if (proto_read_not_leader(body, h->length, &a->leader_id, &s) !=
                    0) {
                        return BATON_EMALFORMED;
                }
                a->not_leader = true;
                memcpy(a->leader_address, s.p, s.len);
                a->leader_address[s.len] = '\0';
                a->http = 503;
                a->body = apireply_error(BATON_ENOTLEADER,
                                         baton_strerror(BATON_ENOTLEADER));
                json_object_set_new(a->body, "leader_id",
                                    json_integer((json_int_t)a->leader_id));
                json_object_set_new(a->body, "leader_client_address",
                                    json_string(a->leader_address));
                return 0;
        case PROTO_ERROR:
                if (proto_read_error(body, h->length, &code, &s) != 0) {
                        return BATON_EMALFORMED;
                }
                a->close = true;
                a->http = apireply_http_status(code);
                a->body = apireply_error(code, "");
                json_object_set_new(a->body, "message", str(&s));
                return 0;
        case PROTO_KEEPALIVE_OK:
                if (proto_read_keepalive_ok(body, h->length, h->flags, &ttl,
                                            &revoked) != 0) {
                        return BATON_EMALFORMED;
                }
                a->body = json_pack("{s:i, s:i}", "ttl_ms", (int)ttl, "revoked",
                                    (int)revoked);
                return 0;
        case PROTO_LIST_REPLY:
                return list(call, h, body, a);
        case PROTO_STATUS_REPLY:
                return status(h, body, a);
        case PROTO_SESSIONS_REPLY:
                return sessions(call, h, body, a);
        default:
                return BATON_EMALFORMED;
        }
}

json_t *apireply_event(const struct proto_watch_event *e, const char **kind)
{
        json_t *o;

        *kind = e->kind == PROTO_EVENT_GRANTED    ? "granted"
                : e->kind == PROTO_EVENT_RELEASED ? "released"
                                                  : "proclaimed";
        o = json_pack("{s:o, s:s, s:I, s:I, s:I, s:I, s:i, s:s}", "name",
                      str(&e->name), "mode", mode_name(e->mode), "session",
                      (json_int_t)e->session, "owner", (json_int_t)e->owner,
                      "token", (json_int_t)e->token, "index",
                      (json_int_t)e->index, "ord", (int)e->ord, "cause",
                      command_type_name(e->cause));
        if (e->mode == COMMAND_MODE_SEMAPHORE) {
                json_object_set_new(o, "permits", json_integer(e->permits));
        }
        /* Any grant's value: a granted event's first, a proclaimed one's
         * new one; a released event carries "". */
        json_object_set_new(o, "value", str(&e->value));
        return o;
}
