/* HTTP/1.1 requests read from a byte stream, bounded, with http_parser. */
#include "httpreq.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const header_names[HTTPREQ_N_HEADERS] = {
    [HTTPREQ_SESSION] = "baton-session",
    [HTTPREQ_SECRET] = "baton-secret",
    [HTTPREQ_IDEMPOTENCY] = "idempotency-key",
    [HTTPREQ_LAST_EVENT] = "last-event-id",
    [HTTPREQ_CONTENT_TYPE] = "content-type",
    [HTTPREQ_EXPECT] = "expect",
};

static struct httpreq *req_of(http_parser *p)
{
        return p->data;
}

/* Refuse the request: the callback's non-zero return stops the parser. */
static int refuse(struct httpreq *r, int status, const char *reason)
{
        if (r->status == 0) {
                r->status = status;
                r->reason = reason;
        }
        return -1;
}

/* Count `n` bytes of request line or headers against the limit. */
static int count(struct httpreq *r, size_t n)
{
        r->header_bytes += n;
        if (r->header_bytes > r->limits.max_header) {
                return refuse(r, 431,
                              "request line and headers too large "
                              "(http-max-header-bytes)");
        }
        return 0;
}

static int on_begin(http_parser *p)
{
        req_of(p)->started = true;
        return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
        struct httpreq *r = req_of(p);
        char *t;

        if (count(r, n) != 0) {
                return -1;
        }
        if (memchr(at, '\0', n) != NULL) {
                return refuse(r, 400, "NUL byte in the request target");
        }
        /* Bounded by the header limit, checked above. */
        t = realloc(r->target, r->target_len + n + 1);
        if (t == NULL) {
                return refuse(r, 503, "out of memory");
        }
        memcpy(t + r->target_len, at, n);
        r->target = t;
        r->target_len += n;
        t[r->target_len] = '\0';
        return 0;
}

static int on_field(http_parser *p, const char *at, size_t n)
{
        struct httpreq *r = req_of(p);
        size_t i;

        if (count(r, n) != 0) {
                return -1;
        }
        if (r->in_value) { /* a new header begins */
                r->in_value = false;
                r->field_len = 0;
        }
        for (i = 0; i < n && r->field_len < sizeof r->field - 1; i++) {
                r->field[r->field_len++] = (char)tolower((unsigned char)at[i]);
        }
        r->field[r->field_len] = '\0';
        return 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
        struct httpreq *r = req_of(p);
        size_t have;
        int h;

        if (count(r, n) != 0) {
                return -1;
        }
        if (!r->in_value) { /* the name is whole: is it kept? */
                r->in_value = true;
                r->current = -1;
                for (h = 0; h < HTTPREQ_N_HEADERS; h++) {
                        if (strcmp(r->field, header_names[h]) == 0) {
                                r->current = h;
                        }
                }
                if (r->current >= 0 && r->has[r->current]) {
                        return refuse(r, 400, "a header given twice");
                }
                if (r->current >= 0) {
                        r->has[r->current] = true;
                        r->values[r->current][0] = '\0';
                }
        }
        if (r->current < 0) {
                return 0;
        }
        have = strlen(r->values[r->current]);
        if (have + n > HTTPREQ_VALUE_MAX || memchr(at, '\0', n) != NULL) {
                return refuse(r, 400,
                              "a Baton header's value is too long "
                              "or has a NUL byte");
        }
        memcpy(r->values[r->current] + have, at, n);
        r->values[r->current][have + n] = '\0';
        return 0;
}

static int on_headers(http_parser *p)
{
        struct httpreq *r = req_of(p);

        if (p->upgrade) {
                return refuse(r, 400, "protocol upgrades are not served");
        }
        if (p->http_major != 1) {
                return refuse(r, 505, "only HTTP/1.x is served");
        }
        if ((p->flags & F_CONTENTLENGTH) &&
            p->content_length > r->limits.max_body) {
                return refuse(r, 413,
                              "request body too large "
                              "(http-max-body-bytes)");
        }
        r->method = (int)p->method;
        r->headers_done = true;
        return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
        struct httpreq *r = req_of(p);
        size_t cap;
        char *b;

        /* A chunked body has no length up front: the limit holds here. */
        if (r->body_len + n > r->limits.max_body) {
                return refuse(r, 413,
                              "request body too large "
                              "(http-max-body-bytes)");
        }
        if (r->body_len + n + 1 > r->body_cap) {
                cap = r->body_len + n + 1;
                b = realloc(r->body, cap);
                if (b == NULL) {
                        return refuse(r, 503, "out of memory");
                }
                r->body = b;
                r->body_cap = cap;
        }
        memcpy(r->body + r->body_len, at, n);
        r->body_len += n;
        r->body[r->body_len] = '\0';
        return 0;
}

static int on_complete(http_parser *p)
{
        struct httpreq *r = req_of(p);

        r->complete = true;
        r->keep_alive = http_should_keep_alive(p) != 0;
        /* Take no byte of the next request until this one is answered. */
        http_parser_pause(p, 1);
        return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

/* Forget the request read, keeping the buffers. */
static void reset(struct httpreq *r)
{
        r->method = 0;
        r->target_len = 0;
        if (r->target != NULL) {
                r->target[0] = '\0';
        }
        memset(r->has, 0, sizeof r->has);
        r->body_len = 0;
        if (r->body != NULL) {
                r->body[0] = '\0';
        }
        r->header_bytes = 0;
        r->started = false;
        r->headers_done = false;
        r->complete = false;
        r->keep_alive = false;
        r->field_len = 0;
        r->field[0] = '\0';
        r->current = -1;
        r->in_value = false;
}

void httpreq_init(struct httpreq *r, const struct httpreq_limits *limits)
{
        memset(r, 0, sizeof *r);
        r->limits = *limits;
        http_parser_init(&r->parser, HTTP_REQUEST);
        r->parser.data = r;
        reset(r);
}

void httpreq_close(struct httpreq *r)
{
        free(r->target);
        free(r->body);
        r->target = r->body = NULL;
}

long httpreq_feed(struct httpreq *r, const char *p, size_t n)
{
        size_t used;
        enum http_errno e;

        if (r->status != 0) {
                return -1;
        }
        if (r->complete || n == 0) {
                return 0;
        }
        used = http_parser_execute(&r->parser, &settings, p, n);
        e = HTTP_PARSER_ERRNO(&r->parser);
        if (e == HPE_OK || (e == HPE_PAUSED && r->complete)) {
                return (long)used;
        }
        if (r->status == 0) {
                r->status = e == HPE_INVALID_METHOD ? 405 : 400;
                r->reason = http_errno_description(e);
        }
        return -1;
}

bool httpreq_wants_continue(const struct httpreq *r)
{
        const char *e = httpreq_header(r, HTTPREQ_EXPECT);

        return r->headers_done && !r->complete && e != NULL &&
               strcasecmp(e, "100-continue") == 0;
}

void httpreq_next(struct httpreq *r)
{
        reset(r);
        http_parser_pause(&r->parser, 0);
}

const char *httpreq_header(const struct httpreq *r, enum httpreq_header h)
{
        return r->has[h] ? r->values[h] : NULL;
}

size_t httpreq_path(const struct httpreq *r, char *out, size_t cap)
{
        const char *t = r->target != NULL ? r->target : "";
        size_t n = strcspn(t, "?#");

        if (n >= cap) {
                n = cap - 1;
        }
        memcpy(out, t, n);
        out[n] = '\0';
        return n;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9') {
                return c - '0';
        }
        c = (char)tolower((unsigned char)c);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decode `n` bytes of `s` into `out`: the length, or -2. */
static long decode(const char *s, size_t n, char *out, size_t cap)
{
        size_t i, o = 0;
        int hi, lo;
        char c;

        for (i = 0; i < n; i++) {
                c = s[i];
                if (c == '+') {
                        c = ' ';
                } else if (c == '%') {
                        if (i + 2 >= n) {
                                return -2;
                        }
                        hi = hexval(s[i + 1]);
                        lo = hexval(s[i + 2]);
                        if (hi < 0 || lo < 0) {
                                return -2;
                        }
                        c = (char)(hi * 16 + lo);
                        i += 2;
                }
                if (c == '\0' || o + 1 >= cap) {
                        return -2;
                }
                out[o++] = c;
        }
        out[o] = '\0';
        return (long)o;
}

/* Walk the query's parameters: each name and value (raw) to `cb`, until
 * it returns true. */
static bool each_param(const struct httpreq *r,
                       bool (*cb)(void *data, const char *k, size_t kn,
                                  const char *v, size_t vn),
                       void *data)
{
        const char *t = r->target != NULL ? r->target : "";
        const char *q = strchr(t, '?');
        const char *end, *eq;

        if (q == NULL) {
                return false;
        }
        q++;
        while (*q != '\0' && *q != '#') {
                end = q + strcspn(q, "&#");
                eq = memchr(q, '=', (size_t)(end - q));
                if (end > q &&
                    cb(data, q, (size_t)((eq != NULL ? eq : end) - q),
                       eq != NULL ? eq + 1 : end,
                       eq != NULL ? (size_t)(end - eq - 1) : 0)) {
                        return true;
                }
                q = *end == '&' ? end + 1 : end;
        }
        return false;
}

struct find {
        const char *key;
        const char *v;
        size_t vn;
        bool found;
};

static bool find_cb(void *data, const char *k, size_t kn, const char *v,
                    size_t vn)
{
        struct find *f = data;

        if (strlen(f->key) == kn && memcmp(f->key, k, kn) == 0) {
                f->v = v;
                f->vn = vn;
                f->found = true;
                return true;
        }
        return false;
}

long httpreq_query(const struct httpreq *r, const char *key, char *out,
                   size_t cap)
{
        struct find f = {.key = key};

        if (!each_param(r, find_cb, &f)) {
                return -1;
        }
        return decode(f.v, f.vn, out, cap);
}

struct unknown {
        const char *const *keys;
        char *out;
        size_t cap;
};

static bool unknown_cb(void *data, const char *k, size_t kn, const char *v,
                       size_t vn)
{
        struct unknown *u = data;
        size_t i, n;

        (void)v;
        (void)vn;
        for (i = 0; u->keys[i] != NULL; i++) {
                if (strlen(u->keys[i]) == kn &&
                    memcmp(u->keys[i], k, kn) == 0) {
                        return false;
                }
        }
        n = kn < u->cap - 1 ? kn : u->cap - 1;
        memcpy(u->out, k, n);
        u->out[n] = '\0';
        return true;
}

bool httpreq_query_unknown(const struct httpreq *r, const char *const *keys,
                           char *out, size_t cap)
{
        struct unknown u = {keys, out, cap};

        return each_param(r, unknown_cb, &u);
}

const char *httpreq_reason(int status)
{
        switch (status) {
        case 200:
                return "OK";
        case 201:
                return "Created";
        case 307:
                return "Temporary Redirect";
        case 400:
                return "Bad Request";
        case 401:
                return "Unauthorized";
        case 403:
                return "Forbidden";
        case 404:
                return "Not Found";
        case 405:
                return "Method Not Allowed";
        case 408:
                return "Request Timeout";
        case 409:
                return "Conflict";
        case 410:
                return "Gone";
        case 413:
                return "Content Too Large";
        case 429:
                return "Too Many Requests";
        case 431:
                return "Request Header Fields Too Large";
        case 503:
                return "Service Unavailable";
        case 505:
                return "HTTP Version Not Supported";
        case 507:
                return "Insufficient Storage";
        default:
                return status < 500 ? "Bad Request" : "Internal Server Error";
        }
}
