/* Who gets what on the metrics port: whether a connection speaks TLS or
 * plain HTTP (its first byte), and, from that, the path and the scraper's
 * role, whether a request gets its full answer, liveness only, or a 403
 * saying what it lacks. Decides, does no I/O (docs/operations.md, "Health
 * and readiness"). */
#ifndef SERVER_SCRAPEGATE_H
#define SERVER_SCRAPEGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the first bytes of a metrics connection speak. */
enum scrapegate_wire {
        SCRAPEGATE_MORE = 0, /* nothing arrived yet */
        SCRAPEGATE_TLS,      /* a TLS handshake record (0x16) */
        SCRAPEGATE_HTTP,     /* an HTTP method: an upper-case letter */
        SCRAPEGATE_OTHER,    /* neither: closed at once */
};

/* The wire of a connection whose first `n` bytes are `p`. */
enum scrapegate_wire scrapegate_sniff(const uint8_t *p, size_t n);

/* What a request asks for. */
enum scrapegate_path {
        SCRAPEGATE_HEALTH,  /* GET /health */
        SCRAPEGATE_READY,   /* GET /ready */
        SCRAPEGATE_METRICS, /* any other path, as it always was */
};

/* The path of a request line's target (cut at '?'). */
enum scrapegate_path scrapegate_path(const char *path);

/* How the port is configured. */
struct scrapegate_port {
        bool tls;      /* metrics-tls: TLS accepted beside plain HTTP */
        bool loopback; /* metrics-address reachable from this host only */
};

/* The answer a request gets. */
enum scrapegate_answer {
        SCRAPEGATE_FULL = 0,   /* the body of today: every field, metrics */
        SCRAPEGATE_LIVENESS,   /* status code, status, reason, node only */
        SCRAPEGATE_NEEDS_TLS,  /* 403: metrics over plain HTTP */
        SCRAPEGATE_NEEDS_ROLE, /* 403: a certificate of role none or lock */
};

/*
 * The answer to a request for `path` over TLS (`over_tls`: then `role`,
 * an enum roles_role, is the client certificate's) or plain HTTP (`role`
 * unused). Plain HTTP gets liveness from /health and /ready and a 403 for
 * metrics, unless the port has no TLS and is loopback (the node's own
 * tools: everything, as before TLS existed there). TLS gets everything;
 * metrics only for the read or admin role: lock is what every
 * application's certificate gets by default, and the metrics name no
 * secret but tell anyone the cluster's load and state.
 */
enum scrapegate_answer scrapegate_decide(const struct scrapegate_port *port,
                                         bool over_tls,
                                         enum scrapegate_path path, int role);

/* Whether a role (enum roles_role) may read metrics over TLS. */
bool scrapegate_role_reads(int role);

/*
 * The body of a 403 (`a` is SCRAPEGATE_NEEDS_TLS or SCRAPEGATE_NEEDS_ROLE)
 * into `buf` (NUL-terminated, one line of text ending with a newline):
 * what metrics need and what this request lacks. `identity` and `role`
 * (borrowed; NEEDS_ROLE only, else NULL) are the client certificate's
 * identity and its role's name. Returns its length, or the length it
 * would need when `cap` is too small.
 */
size_t scrapegate_refusal(enum scrapegate_answer a,
                          const struct scrapegate_port *port,
                          const char *identity, const char *role, char *buf,
                          size_t cap);

#endif /* SERVER_SCRAPEGATE_H */
