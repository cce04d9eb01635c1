/* The HTTP API's calls, read and checked from a whole request. */
#include "apicall.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../../include/baton/errors.h"
#include "../../proto/list.h"
#include "../../proto/sesslist.h"

/* What an endpoint reads: its body's fields and query parameters (NULL-
 * terminated lists), and whether it acts in a session. */
struct route {
        int method;
        const char *path;
        enum api_op op;
        const char *name;
        bool session;
        const char *fields[10];
        const char *params[5];
};

/* GET /v1/sessions/{id}: the one path with a part that varies. */
#define SESSION_PATH "/v1/sessions/"

/* clang-format off */
static const struct route routes[] = {
    {HTTP_POST, "/v1/session",           API_SESSION_OPEN,      "session.open",      false, {"ttl_ms", "lock_delay_ms", "client_name"}, {NULL}},
    {HTTP_POST, "/v1/session/keepalive", API_SESSION_KEEPALIVE, "session.keepalive", true,  {NULL}, {NULL}},
    {HTTP_POST, "/v1/session/close",     API_SESSION_CLOSE,     "session.close",     true,  {NULL}, {NULL}},
    {HTTP_POST, "/v1/session/revoke",    API_SESSION_REVOKE,    "session.revoke",    false, {"session"}, {NULL}},
    {HTTP_POST, "/v1/lock/acquire",      API_LOCK_ACQUIRE,      "lock.acquire",      true,  {"name", "mode", "permits", "limit", "wait_ms", "owner", "value", "hold_ms", "locks"}, {NULL}},
    {HTTP_POST, "/v1/lock/release",      API_LOCK_RELEASE,      "lock.release",      true,  {"name", "token", "owner"}, {NULL}},
    {HTTP_POST, "/v1/lock/value",        API_LOCK_VALUE,        "lock.value",        true,  {"name", "token", "value", "owner"}, {NULL}},
    {HTTP_POST, "/v1/lock/extend",       API_LOCK_EXTEND,       "lock.extend",       true,  {"name", "token", "hold_ms", "owner"}, {NULL}},
    {HTTP_POST, "/v1/lock/revoke",       API_LOCK_REVOKE,       "lock.revoke",       false, {"name", "session", "token"}, {NULL}},
    {HTTP_GET,  "/v1/lock/holders",      API_LOCK_HOLDERS,      "lock.holders",      false, {NULL}, {"name"}},
    {HTTP_GET,  "/v1/lock/check",        API_LOCK_CHECK,        "lock.check",        false, {NULL}, {"name", "token"}},
    {HTTP_GET,  "/v1/locks",             API_LOCK_LIST,         "lock.list",         false, {NULL}, {"prefix", "limit"}},
    {HTTP_POST, "/v1/election/campaign", API_ELECTION_CAMPAIGN, "election.campaign", true,  {"name", "value", "wait_ms", "owner"}, {NULL}},
    {HTTP_POST, "/v1/election/proclaim", API_ELECTION_PROCLAIM, "election.proclaim", true,  {"name", "token", "value", "owner"}, {NULL}},
    {HTTP_POST, "/v1/election/resign",   API_ELECTION_RESIGN,   "election.resign",   true,  {"name", "token", "owner"}, {NULL}},
    {HTTP_GET,  "/v1/election/leader",   API_ELECTION_LEADER,   "election.leader",   false, {NULL}, {"name"}},
    {HTTP_GET,  "/v1/watch",             API_WATCH,             "watch",             false, {NULL}, {"name", "prefix", "from"}},
    {HTTP_GET,  "/v1/status",            API_STATUS,            "status",            false, {NULL}, {NULL}},
    {HTTP_GET,  "/v1/sessions",          API_SESSION_LIST,      "session.list",      false, {NULL}, {"after", "limit"}},
    {HTTP_GET,  SESSION_PATH "{id}",     API_SESSION_INFO,      "session.info",      false, {NULL}, {NULL}},
};
/* clang-format on */

#define N_ROUTES (sizeof routes / sizeof routes[0])

static int refuse(struct api_refusal *why, int http, int code, const char *fmt,
                  ...)
{
        va_list ap;

        why->http = http;
        why->code = code;
        va_start(ap, fmt);
        vsnprintf(why->message, sizeof why->message, fmt, ap);
        va_end(ap);
        return -1;
}

const char *apicall_name(enum api_op op)
{
        size_t i;

        for (i = 0; i < N_ROUTES; i++) {
                if (routes[i].op == op) {
                        return routes[i].name;
                }
        }
        return "?";
}

/* A decimal u64 in `s`, all of it: 0 or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
        char *end;

        if (s[0] < '0' || s[0] > '9') {
                return -1;
        }
        errno = 0;
        *out = strtoull(s, &end, 10);
        return errno != 0 || *end != '\0' ? -1 : 0;
}

/* An unsigned field of the body (a JSON integer, or a decimal string, for
 * languages whose numbers stop at 2^53): 0 (absent: `*out` unchanged), or
 * -1 with `why` filled. */
static int field_u64(json_t *body, const char *key, uint64_t min, uint64_t max,
                     uint64_t *out, struct api_refusal *why)
{
        json_t *v = body != NULL ? json_object_get(body, key) : NULL;
        uint64_t x;

        if (v == NULL) {
                return 0;
        }
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
                x = (uint64_t)json_integer_value(v);
        } else if (!json_is_string(v) || parse_u64(json_string_value(v), &x)) {
                return refuse(why, 400, BATON_EINVAL,
                              "field %s: expected a non-negative integer", key);
        }
        if (x < min || x > max) {
                return refuse(why, 400, BATON_EINVAL,
                              "field %s: %" PRIu64 " is outside %" PRIu64
                              "..%" PRIu64,
                              key, x, min, max);
        }
        *out = x;
        return 0;
}

static int field_u32(json_t *body, const char *key, uint32_t max, uint32_t *out,
                     struct api_refusal *why)
{
        uint64_t x = *out;

        if (field_u64(body, key, 0, max, &x, why) != 0) {
                return -1;
        }
        *out = (uint32_t)x;
        return 0;
}

/* A string field into `out` (NUL-terminated; `*len` its length), at most
 * `max` (<= 255) bytes with no NUL; `name` when it is a lock name (1..255
 * bytes, BATON_ENAME otherwise). 0 (absent: unchanged), or -1. */
static int field_str(json_t *body, const char *key, size_t max, bool name,
                     char *out, uint8_t *len, struct api_refusal *why)
{
        json_t *v = body != NULL ? json_object_get(body, key) : NULL;
        size_t n;

        if (v == NULL) {
                return 0;
        }
        if (!json_is_string(v)) {
                return refuse(why, 400, BATON_EINVAL,
                              "field %s: expected a string", key);
        }
        n = json_string_length(v);
        if (n > max || memchr(json_string_value(v), '\0', n) != NULL ||
            (name && n == 0)) {
                return refuse(why, 400, name ? BATON_ENAME : BATON_EINVAL,
                              "field %s: %s", key,
                              name ? "a lock name is 1..255 bytes without NUL"
                                   : "too long, or has a NUL byte");
        }
        memcpy(out, json_string_value(v), n);
        out[n] = '\0';
        *len = (uint8_t)n;
        return 0;
}

static int need(json_t *body, const char *key, struct api_refusal *why)
{
        if (body == NULL || json_object_get(body, key) == NULL) {
                return refuse(why, 400, BATON_EINVAL, "field %s is required",
                              key);
        }
        return 0;
}

/* The body, a JSON object of the route's fields only (an empty body reads
 * as {}): 0 with `*out` (NULL: no body), or -1. */
static int read_body(const struct httpreq *r, const struct route *rt,
                     json_t **out, struct api_refusal *why)
{
        json_error_t err;
        const char *key;
        json_t *v, *body;
        size_t i;
        bool known;

        *out = NULL;
        if (r->body_len == 0) {
                return 0;
        }
        if (rt->fields[0] == NULL) {
                return refuse(why, 400, BATON_EINVAL,
                              "%s takes no request body", rt->path);
        }
        body = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &err);
        if (body == NULL) {
                return refuse(why, 400, BATON_EINVAL,
                              "body is not JSON: %s (at byte %d)", err.text,
                              err.position);
        }
        if (!json_is_object(body)) {
                json_decref(body);
                return refuse(why, 400, BATON_EINVAL,
                              "body must be a JSON object");
        }
        json_object_foreach(body, key, v)
        {
                known = false;
                for (i = 0; rt->fields[i] != NULL; i++) {
                        known = known || strcmp(key, rt->fields[i]) == 0;
                }
                if (!known) {
                        refuse(why, 400, BATON_EINVAL,
                               "unknown field %.64s for %s", key, rt->path);
                        json_decref(body);
                        return -1;
                }
        }
        *out = body;
        return 0;
}

static int hex(char c)
{
        if (c >= '0' && c <= '9') {
                return c - '0';
        }
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Baton-Session and Baton-Secret, which every session's request needs. */
static int read_session(const struct httpreq *r, struct api_call *call,
                        struct api_refusal *why)
{
        const char *s = httpreq_header(r, HTTPREQ_SESSION);
        const char *k = httpreq_header(r, HTTPREQ_SECRET);
        size_t i;
        int hi, lo;

        if (s == NULL || k == NULL) {
                return refuse(why, 401, BATON_EPERM,
                              "this call acts in a session: send its id and "
                              "secret as Baton-Session and Baton-Secret");
        }
        if (parse_u64(s, &call->session) != 0 || call->session == 0) {
                return refuse(why, 400, BATON_EINVAL,
                              "Baton-Session: expected a session id");
        }
        if (strlen(k) != 2 * ATTACH_SECRET_SIZE) {
                return refuse(why, 400, BATON_EINVAL,
                              "Baton-Secret: expected 32 hex digits");
        }
        for (i = 0; i < ATTACH_SECRET_SIZE; i++) {
                hi = hex(k[2 * i]);
                lo = hex(k[2 * i + 1]);
                if (hi < 0 || lo < 0) {
                        return refuse(why, 400, BATON_EINVAL,
                                      "Baton-Secret: expected 32 lowercase "
                                      "hex digits");
                }
                call->secret[i] = (uint8_t)(hi * 16 + lo);
        }
        s = httpreq_header(r, HTTPREQ_IDEMPOTENCY);
        if (s != NULL && (parse_u64(s, &call->seq) != 0 || call->seq == 0)) {
                return refuse(why, 400, BATON_EINVAL,
                              "Idempotency-Key: expected the request's "
                              "sequence number in its session, from 1");
        }
        call->needs_session = true;
        return 0;
}

static int read_mode(json_t *body, struct api_call *call,
                     struct api_refusal *why)
{
        json_t *v = json_object_get(body, "mode");
        const char *m;

        call->mode = COMMAND_MODE_EXCLUSIVE;
        if (v == NULL) {
                return 0;
        }
        m = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(m, "exclusive") == 0) {
                call->mode = COMMAND_MODE_EXCLUSIVE;
        } else if (strcmp(m, "shared") == 0) {
                call->mode = COMMAND_MODE_SHARED;
        } else if (strcmp(m, "semaphore") == 0) {
                call->mode = COMMAND_MODE_SEMAPHORE;
        } else {
                return refuse(why, 400, BATON_EINVAL,
                              "field mode: exclusive, shared or semaphore");
        }
        return 0;
}

/* A multi-lock's "locks": [{"name": ..., "mode": ...}, ...]. */
static int read_locks(json_t *locks, struct api_call *call,
                      struct api_refusal *why)
{
        struct api_call one;
        size_t i, used = 0;
        json_t *e;

        if (!json_is_array(locks) || json_array_size(locks) == 0 ||
            json_array_size(locks) > COMMAND_MULTI_MAX) {
                return refuse(why, 400, BATON_ETOOMANYNAMES,
                              "field locks: 1..%d objects of name and mode",
                              COMMAND_MULTI_MAX);
        }
        json_array_foreach(locks, i, e)
        {
                memset(&one, 0, sizeof one);
                if (!json_is_object(e) || need(e, "name", why) != 0 ||
                    field_str(e, "name", COMMAND_NAME_MAX, true, one.name,
                              &one.name_len, why) != 0 ||
                    read_mode(e, &one, why) != 0) {
                        return -1;
                }
                if (json_object_size(e) !=
                        (json_object_get(e, "mode") ? 2 : 1) ||
                    one.mode == COMMAND_MODE_SEMAPHORE) {
                        return refuse(why, 400, BATON_EINVAL,
                                      "field locks: each is {name, mode} "
                                      "with mode exclusive or shared");
                }
                if (command_list_add(call->list, sizeof call->list, &used,
                                     one.mode, one.name, one.name_len) != 0) {
                        return refuse(why, 400, BATON_ENAME,
                                      "field locks: a bad name");
                }
                call->list_len = (uint16_t)used;
                call->n_names++;
        }
        return 0;
}

static int read_name(json_t *body, struct api_call *call,
                     struct api_refusal *why)
{
        return need(body, "name", why) != 0 ||
                       field_str(body, "name", COMMAND_NAME_MAX, true,
                                 call->name, &call->name_len, why) != 0
                   ? -1
                   : 0;
}

static int read_value(json_t *body, struct api_call *call,
                      struct api_refusal *why)
{
        return field_str(body, "value", COMMAND_VALUE_MAX, false, call->value,
                         &call->value_len, why);
}

/* hold_ms, `min`..2^32-1 ms: the cluster holds it to its max-hold-ms
 * (BATON_EINVAL above), which this node's API does not second-guess. */
static int read_hold(json_t *body, uint64_t min, struct api_call *call,
                     struct api_refusal *why)
{
        uint64_t ms = 0;

        if (field_u64(body, "hold_ms", min, UINT32_MAX, &ms, why) != 0) {
                return -1;
        }
        call->hold_ms = (uint32_t)ms;
        return 0;
}

/* The held grant a call names: its lock, its token (required) and the
 * owner tag it was acquired with (release, resign, value, extend). */
static int read_grant(json_t *body, struct api_call *call,
                      struct api_refusal *why)
{
        return read_name(body, call, why) || need(body, "token", why) ||
                       field_u64(body, "token", 1, UINT64_MAX, &call->token,
                                 why) ||
                       field_u64(body, "owner", 0, UINT64_MAX, &call->owner,
                                 why)
                   ? -1
                   : 0;
}

static int read_open(json_t *body, struct api_call *call,
                     struct api_refusal *why)
{
        uint8_t len = 0;

        call->ttl_ms = 10000;
        return field_u32(body, "ttl_ms", UINT32_MAX, &call->ttl_ms, why) ||
                       field_u32(body, "lock_delay_ms", UINT32_MAX,
                                 &call->lock_delay_ms, why) ||
                       field_str(body, "client_name", COMMAND_CLIENT_NAME_MAX,
                                 false, call->client_name, &len, why)
                   ? -1
                   : 0;
}

static int read_acquire(json_t *body, uint32_t max_wait, struct api_call *call,
                        struct api_refusal *why)
{
        json_t *locks = body != NULL ? json_object_get(body, "locks") : NULL;

        if (locks != NULL) {
                /* A MULTI carries no value and no hold time
                 * (docs/protocol.md). */
                if (json_object_get(body, "name") != NULL ||
                    json_object_get(body, "mode") != NULL ||
                    json_object_get(body, "permits") != NULL ||
                    json_object_get(body, "limit") != NULL ||
                    json_object_get(body, "value") != NULL ||
                    json_object_get(body, "hold_ms") != NULL) {
                        return refuse(why, 400, BATON_EINVAL,
                                      "a multi-lock gives locks, not name, "
                                      "mode, permits, limit, value or "
                                      "hold_ms");
                }
                if (read_locks(locks, call, why) != 0) {
                        return -1;
                }
        } else if (read_name(body, call, why) != 0 ||
                   read_mode(body, call, why) != 0) {
                return -1;
        }
        if (call->mode == COMMAND_MODE_SEMAPHORE) {
                call->permits = 1;
                if (need(body, "limit", why) != 0 ||
                    field_u32(body, "permits", UINT32_MAX, &call->permits,
                              why) != 0 ||
                    field_u32(body, "limit", UINT32_MAX, &call->limit, why)) {
                        return -1;
                }
        } else if (json_object_get(body, "permits") != NULL ||
                   json_object_get(body, "limit") != NULL) {
                return refuse(why, 400, BATON_EINVAL,
                              "permits and limit are a semaphore's: give "
                              "mode semaphore");
        }
        return field_u32(body, "wait_ms", max_wait, &call->wait_ms, why) ||
                       field_u64(body, "owner", 0, UINT64_MAX, &call->owner,
                                 why) ||
                       read_value(body, call, why) ||
                       read_hold(body, 0, call, why)
                   ? -1
                   : 0;
}

/* The body's fields for `op`. */
static int read_fields(json_t *body, uint32_t max_wait, struct api_call *call,
                       struct api_refusal *why)
{
        switch (call->op) {
        case API_SESSION_OPEN:
                return read_open(body, call, why);
        case API_SESSION_REVOKE:
                return need(body, "session", why) ||
                               field_u64(body, "session", 1, UINT64_MAX,
                                         &call->target_session, why)
                           ? -1
                           : 0;
        case API_LOCK_ACQUIRE:
                return read_acquire(body, max_wait, call, why);
        case API_LOCK_REVOKE:
                return read_name(body, call, why) ||
                               need(body, "session", why) ||
                               field_u64(body, "session", 1, UINT64_MAX,
                                         &call->target_session, why) ||
                               need(body, "token", why) ||
                               field_u64(body, "token", 1, UINT64_MAX,
                                         &call->token, why)
                           ? -1
                           : 0;
        case API_ELECTION_CAMPAIGN:
                call->mode = COMMAND_MODE_ELECTION;
                return read_name(body, call, why) ||
                               read_value(body, call, why) ||
                               field_u32(body, "wait_ms", max_wait,
                                         &call->wait_ms, why) ||
                               field_u64(body, "owner", 0, UINT64_MAX,
                                         &call->owner, why)
                           ? -1
                           : 0;
        case API_LOCK_VALUE:
                /* The value is required: an empty one clears the grant's,
                 * which a value left out by mistake must not do. */
                return read_grant(body, call, why) ||
                               need(body, "value", why) ||
                               read_value(body, call, why)
                           ? -1
                           : 0;
        case API_LOCK_EXTEND:
                /* The hold time is required: an extend restarts it, from
                 * 1 ms (0 would be no hold, which an extend cannot
                 * make). */
                return read_grant(body, call, why) ||
                               need(body, "hold_ms", why) ||
                               read_hold(body, 1, call, why)
                           ? -1
                           : 0;
        case API_ELECTION_PROCLAIM:
                if (read_value(body, call, why) != 0) {
                        return -1;
                }
                __attribute__((fallthrough)); /* name, token and owner */
        case API_LOCK_RELEASE:
        case API_ELECTION_RESIGN:
                return read_grant(body, call, why);
        default:
                return 0;
        }
}

/* A query parameter that must be there, into `out`. */
static int param(const struct httpreq *r, const char *key, bool required,
                 char *out, size_t cap, long *len, struct api_refusal *why)
{
        *len = httpreq_query(r, key, out, cap);
        if (*len == -2) {
                return refuse(why, 400, BATON_EINVAL,
                              "parameter %s: malformed or too long", key);
        }
        if (*len == -1 && required) {
                return refuse(why, 400, BATON_EINVAL,
                              "parameter %s is required", key);
        }
        return 0;
}

static int param_name(const struct httpreq *r, const char *key,
                      struct api_call *call, struct api_refusal *why)
{
        long len;

        if (param(r, key, true, call->name, sizeof call->name, &len, why)) {
                return -1;
        }
        if (len == 0) {
                return refuse(why, 400, BATON_ENAME,
                              "parameter %s: a lock name is 1..255 bytes "
                              "without NUL",
                              key);
        }
        call->name_len = (uint8_t)len;
        return 0;
}

static int param_u64(const struct httpreq *r, const char *key, uint64_t *out,
                     struct api_refusal *why)
{
        char v[24];
        long len;

        if (param(r, key, true, v, sizeof v, &len, why) != 0) {
                return -1;
        }
        if (parse_u64(v, out) != 0) {
                return refuse(why, 400, BATON_EINVAL,
                              "parameter %s: expected a non-negative integer",
                              key);
        }
        return 0;
}

/* INDEX.ORD, a watch's position (Last-Event-ID or from=). */
static int position(const char *s, struct api_call *call)
{
        char buf[48];
        char *dot;
        uint64_t ord;

        if (strlen(s) >= sizeof buf) {
                return -1;
        }
        strcpy(buf, s);
        dot = strchr(buf, '.');
        if (dot == NULL) {
                return -1;
        }
        *dot = '\0';
        if (parse_u64(buf, &call->from_index) != 0 ||
            parse_u64(dot + 1, &ord) != 0 || ord > UINT32_MAX) {
                return -1;
        }
        call->from_ord = (uint32_t)ord;
        return 0;
}

static int read_watch(const struct httpreq *r, struct api_call *call,
                      struct api_refusal *why)
{
        const char *last = httpreq_header(r, HTTPREQ_LAST_EVENT);
        char from[48];
        long n, len;

        n = httpreq_query(r, "prefix", call->name, sizeof call->name);
        if (n >= 0) {
                call->prefix = true;
                call->name_len = (uint8_t)n;
                if (httpreq_query(r, "name", from, sizeof from) != -1) {
                        return refuse(why, 400, BATON_EINVAL,
                                      "give name or prefix, not both");
                }
        } else if (n == -2 || param_name(r, "name", call, why) != 0) {
                return n == -2 ? refuse(why, 400, BATON_ENAME,
                                        "parameter prefix: at most 255 "
                                        "bytes without NUL")
                               : -1;
        }
        if (param(r, "from", false, from, sizeof from, &len, why) != 0) {
                return -1;
        }
        /* Last-Event-ID is what a reconnecting EventSource sends: it wins
         * over the from= of the URL it reconnects to. */
        if ((last != NULL && position(last, call) != 0) ||
            (last == NULL && len >= 0 && position(from, call) != 0)) {
                return refuse(why, 400, BATON_EINVAL,
                              "a watch position is INDEX.ORD, as each "
                              "event's id");
        }
        return 0;
}

/* limit=, 1..max (default: 100, or max if lower). */
static int param_limit(const struct httpreq *r, uint32_t max,
                       struct api_call *call, struct api_refusal *why)
{
        uint64_t limit = max < 100 ? max : 100;
        char v[24];
        long len;

        if (param(r, "limit", false, v, sizeof v, &len, why) != 0) {
                return -1;
        }
        if (len >= 0 &&
            (parse_u64(v, &limit) != 0 || limit < 1 || limit > max)) {
                return refuse(why, 400, BATON_EINVAL, "parameter limit: 1..%u",
                              max);
        }
        call->limit = (uint32_t)limit;
        return 0;
}

/* The query parameters of a GET. */
static int read_params(const struct httpreq *r, struct api_call *call,
                       struct api_refusal *why)
{
        char v[24];
        long len;

        switch (call->op) {
        case API_LOCK_HOLDERS:
        case API_ELECTION_LEADER:
                return param_name(r, "name", call, why);
        case API_LOCK_CHECK:
                return param_name(r, "name", call, why) ||
                               param_u64(r, "token", &call->token, why)
                           ? -1
                           : 0;
        case API_LOCK_LIST:
                if (param(r, "prefix", false, call->name, sizeof call->name,
                          &len, why) != 0) {
                        return -1;
                }
                call->name_len = (uint8_t)strlen(call->name);
                return param_limit(r, PROTO_LIST_MAX, call, why);
        case API_SESSION_LIST:
                if (param(r, "after", false, v, sizeof v, &len, why) != 0) {
                        return -1;
                }
                if (len >= 0 && parse_u64(v, &call->target_session) != 0) {
                        return refuse(why, 400, BATON_EINVAL,
                                      "parameter after: a session id");
                }
                return param_limit(r, PROTO_SESSIONS_MAX, call, why);
        case API_WATCH:
                return read_watch(r, call, why);
        default:
                return 0;
        }
}

int apicall_read(const struct httpreq *r, uint32_t max_wait_ms,
                 struct api_call *call, struct api_refusal *why)
{
        const struct route *rt = NULL;
        char path[64], bad[32];
        json_t *body = NULL;
        bool path_known = false;
        size_t i;
        int rv;

        memset(call, 0, sizeof *call);
        httpreq_path(r, path, sizeof path);
        if (strncmp(path, SESSION_PATH, strlen(SESSION_PATH)) == 0) {
                if (parse_u64(path + strlen(SESSION_PATH),
                              &call->target_session) != 0 ||
                    call->target_session == 0) {
                        return refuse(why, 404, BATON_EINVAL,
                                      "%s: a session id is a positive "
                                      "decimal number",
                                      path);
                }
                snprintf(path, sizeof path, "%s{id}", SESSION_PATH);
        }
        for (i = 0; i < N_ROUTES; i++) {
                if (strcmp(routes[i].path, path) == 0) {
                        path_known = true;
                        if (routes[i].method == r->method) {
                                rt = &routes[i];
                        }
                }
        }
        if (rt == NULL) {
                return path_known
                           ? refuse(why, 405, BATON_EINVAL,
                                    "%s does not take %s", path,
                                    http_method_str(r->method))
                           : refuse(why, 404, BATON_EINVAL,
                                    "no such endpoint: %s (docs/http.md)",
                                    path);
        }
        call->op = rt->op;
        if (httpreq_query_unknown(r, rt->params, bad, sizeof bad)) {
                return refuse(why, 400, BATON_EINVAL,
                              "unknown parameter %s for %s", bad, rt->path);
        }
        if ((rt->session && read_session(r, call, why) != 0) ||
            read_body(r, rt, &body, why) != 0) {
                return -1;
        }
        rv = read_fields(body, max_wait_ms, call, why) != 0 ||
                     read_params(r, call, why) != 0
                 ? -1
                 : 0;
        json_decref(body);
        return rv;
}
