/* HTTP/1.1 requests read from a byte stream, with no I/O: the request
 * line, the few headers batond reads and the body, each held to its
 * limit before anything is kept. The parsing is http_parser's (the
 * parser Node.js shipped for a decade, Debian's libhttp-parser); this
 * module only bounds and keeps what it reports. */
#ifndef SERVER_HTTPREQ_H
#define SERVER_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

/* The headers a request's handler may read; every other header is
 * counted against the header limit and dropped. */
enum httpreq_header {
        HTTPREQ_SESSION,      /* Baton-Session */
        HTTPREQ_SECRET,       /* Baton-Secret */
        HTTPREQ_IDEMPOTENCY,  /* Idempotency-Key */
        HTTPREQ_LAST_EVENT,   /* Last-Event-ID */
        HTTPREQ_CONTENT_TYPE, /* Content-Type */
        HTTPREQ_EXPECT,       /* Expect */
        HTTPREQ_N_HEADERS
};

/* The longest value kept of a header above: a longer one is refused
 * (400), for none of them has a legitimate value that long. */
#define HTTPREQ_VALUE_MAX 128

struct httpreq_limits {
        uint32_t max_header; /* request line and headers, bytes (431) */
        uint32_t max_body;   /* body bytes (413) */
};

/*
 * Caller-allocated. Feed it bytes; once a request is whole (`complete`)
 * it takes no more until httpreq_next(), so pipelined requests are read
 * one at a time and the caller keeps the bytes after the first.
 */
struct httpreq {
        http_parser parser;
        struct httpreq_limits limits;
        /* The request read so far. */
        int method;        /* enum http_method */
        char *target;      /* the request target: path, then ?query */
        size_t target_len; /* NUL-terminated at target[target_len] */
        char values[HTTPREQ_N_HEADERS][HTTPREQ_VALUE_MAX + 1];
        bool has[HTTPREQ_N_HEADERS];
        char *body; /* NUL-terminated at body[body_len] */
        size_t body_len;
        size_t body_cap;
        size_t header_bytes; /* counted against limits.max_header */
        bool started;        /* some bytes of this request arrived */
        bool headers_done;   /* its head is whole; the body may follow */
        bool complete;       /* whole: the handler may read it */
        bool keep_alive;     /* the client keeps the connection */
        /* Refused: the HTTP status to answer (400, 405, 413, 431, 505)
         * and why (static text); the connection then closes. */
        int status;
        const char *reason;
        /* Reading a header: its name (lowercase, cut at 31 bytes), which
         * kept header it is (-1: none), and whether its value began. */
        char field[32];
        size_t field_len;
        int current;
        bool in_value;
};

/* Ready to read a first request within `limits` (copied). */
void httpreq_init(struct httpreq *r, const struct httpreq_limits *limits);
void httpreq_close(struct httpreq *r);

/*
 * Read up to `n` bytes of `p` (borrowed for the call): how many were
 * taken, which is fewer than `n` when a request became whole (the rest is
 * the next one's), or -1 when the request is refused (r->status and
 * r->reason say why, and nothing more may be fed). Nothing is taken while
 * a whole request waits for httpreq_next().
 */
long httpreq_feed(struct httpreq *r, const char *p, size_t n);

/* Whether the client waits for "100 Continue" before it sends the body
 * (Expect: 100-continue, which curl sends with a body over 1 KB): true
 * once the head is whole and the body is not. */
bool httpreq_wants_continue(const struct httpreq *r);

/* The request answered: forget it and read the next. */
void httpreq_next(struct httpreq *r);

/* A kept header's value, NULL when the request did not carry it. */
const char *httpreq_header(const struct httpreq *r, enum httpreq_header h);

/* The target's path (up to the '?') into `out` (NUL-terminated; cut at
 * `cap` - 1 bytes): its length. */
size_t httpreq_path(const struct httpreq *r, char *out, size_t cap);

/*
 * The query parameter `key` of the target, percent-decoded into `out`
 * (`cap` bytes, NUL-terminated): its length, or -1 when absent, or -2 when
 * its value is malformed (a bad escape, a NUL) or longer than cap - 1.
 */
long httpreq_query(const struct httpreq *r, const char *key, char *out,
                   size_t cap);

/* Whether the query carries a parameter other than those in `keys`
 * (NULL-terminated): its name into `out` (cut), for a 400 that names it. */
bool httpreq_query_unknown(const struct httpreq *r, const char *const *keys,
                           char *out, size_t cap);

/* The reason phrase of HTTP `status` for a status line (static text):
 * the API's and the metrics port's answers. */
const char *httpreq_reason(int status);

#endif /* SERVER_HTTPREQ_H */
