/* Client connections: accept, TLS, read frames, batch replies,
 * backpressure, and the limits on who may hold a connection (per-address
 * cap, handshake and idle timeouts). */
#ifndef SERVER_CONN_H
#define SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <netinet/in.h>
#include <uv.h>

#include "../../lib/queue.h"
#include "../../proto/proto.h"
#include "../../tls/tls.h"
#include "../base/audit.h"
#include "../config/roles.h"
#include "../gateway/gwconn.h"
#include "addrcount.h"
#include "pacer.h"

struct conn;
struct conn_set;

/* A whole frame arrived; `body` is valid only during the call. */
typedef void (*conn_frame_cb)(void *data, struct conn *c,
                              const struct proto_header *h,
                              const uint8_t *body);
/* A connection is going away: drop every reference to it. */
typedef void (*conn_gone_cb)(void *data, struct conn *c);

/*
 * A protocol other than Baton's frames on a set's connections (the HTTP
 * API, src/server/http/): the TLS, limits and timeouts stay the set's,
 * and the bytes and the refusals are the protocol's. Each op gets the
 * set's `data`. A set without one reads frames.
 */
struct conn_app {
        /* Plaintext from the client, in order; `p` is borrowed. */
        void (*bytes)(void *data, struct conn *c, const uint8_t *p, size_t n);
        /* Refuse the connection with BATON_E* `status` (too many, plain
         * text on the TLS port, ...): write what the protocol says for it
         * with conn_reserve() and conn_commit(), then close it as
         * conn_fail() would (conn_close_after()). */
        void (*fail)(void *data, struct conn *c, int status,
                     const char *message);
        /* `c`'s deadline (conn_set_deadline()) passed: answer, and close. */
        void (*expired)(void *data, struct conn *c);
        /* `c` is being freed: free what c->app holds. */
        void (*free)(void *data, struct conn *c);
        /* The request core's answers to `c` (its connection ops, through
         * coreconn.c): room for one frame of `n` bytes (NULL: none, as
         * conn_reserve()), and that frame whole (`later`: a watch event,
         * which may wait for company), for the protocol to translate. */
        uint8_t *(*reserve)(void *data, struct conn *c, size_t n);
        void (*commit)(void *data, struct conn *c, size_t n, bool later);
};

struct conn {
        uv_tcp_t tcp;
        struct conn_set *set;
        struct proto_reader reader;
        struct queue link;       /* set->all */
        struct queue dirty_link; /* set->dirty while replies wait */
        struct queue later_link; /* set->later while only events wait */
        struct queue pace_link;  /* set->handshakes while its handshake
                                    waits for a turn with room */
        uint8_t *out;            /* replies gathered this loop iteration */
        size_t out_len;
        size_t out_cap;
        uint8_t *wbuf; /* replies being written (one write at a time) */
        size_t wlen;
        size_t wcap;
        uv_write_t wreq;
        bool writing;
        bool paused;  /* reading stopped: too much output queued */
        bool closing; /* close once the queued output is written */
        bool closed;
        bool authenticated; /* TLS handshake done; always, without TLS */
        bool heard;         /* some bytes arrived */
        bool rested;        /* buffers given back; cleared when bytes arrive */
        int refusal; /* BATON_E* to answer once authenticated, then close */
        uint64_t id;
        uint64_t started;             /* uv_now() at accept */
        uint64_t last_rx;             /* uv_now() of the last bytes read */
        struct tls_conn *tls;         /* NULL: plain (tls = off) */
        struct addrcount_entry *from; /* the source address's count */
        char peer[INET6_ADDRSTRLEN];  /* the source address, for logs */
        /* The source address and port, for the audit trail. */
        char endpoint[ADDRCOUNT_ENDPOINT_MAX];
        /* The client's certificate identity; "" without TLS. */
        char identity[TLS_IDENTITY_MAX];
        /* What the request core keeps of this connection (its answers
         * waiting, the client's role, sessions and watches), set up at
         * accept; net writes only gw.role, at the TLS handshake, for its
         * own log line. */
        struct gateway_conn gw;
        /* The set's protocol's record of it (struct conn_app), if any. */
        void *app;
        /* uv_now() after which the sweep ends the connection (the app's
         * expired(); 0: none), and whether it is `busy`: serving a
         * request or a stream, so that no idle timeout applies. */
        uint64_t deadline;
        bool busy;
};

/* What a client may take of a node, and for how long. */
struct conn_limits {
        uint32_t max_conns;
        uint32_t max_per_address;
        uint32_t max_frame;
        uint32_t output_limit;
        uint32_t handshake_timeout_ms;
        uint32_t idle_timeout_ms;
        uint32_t watch_batch_ms;
};

struct conn_set {
        uv_loop_t *loop;
        uv_tcp_t listener;
        uv_timer_t sweep;       /* handshake and idle timeouts */
        uv_timer_t later_timer; /* sends set->later's output */
        struct queue all;
        struct queue dirty;
        struct queue later;
        struct pacer handshakes; /* TLS handshake work per loop turn */
        struct addrcount by_address;
        struct conn_limits limits;
        struct tls_ctx *tls;      /* new connections' TLS; NULL: plain */
        const struct config *cfg; /* roles of identities (borrowed) */
        /* Where a connection refused for its TLS (a failed handshake,
         * plain text) is recorded (borrowed; NULL: nowhere). */
        struct audit *audit;
        uint32_t n;
        uint64_t next_id;
        uint64_t accepted;
        uint64_t refused;     /* over max-connections or the address cap */
        uint64_t tls_refused; /* handshake failed, or plain text */
        uint64_t timed_out;   /* handshake, idle or request timeout */
        uint32_t let_go;      /* connections closed or rested since a trim */
        conn_frame_cb on_frame;
        conn_gone_cb on_gone;
        const struct conn_app *app; /* NULL: Baton's frames */
        void *data;
        char rbuf[65536];
        uint8_t plain[16384]; /* one TLS record's plaintext at a time */
};

/*
 * Listen on "host:port" or "[ipv6]:port" (see listen.h) with `limits`
 * (copied). With `tls` (ownership transferred on success; NULL for plain
 * connections) every connection must complete a TLS handshake with a client
 * certificate within the handshake timeout before its bytes are read as
 * frames; plain text gets one plain ERROR frame (BATON_ETLS) and the
 * connection closes. 0 or a BATON_E* code.
 */
int conn_listen(struct conn_set *s, uv_loop_t *loop, const char *address,
                const struct conn_limits *limits, struct tls_ctx *tls,
                conn_frame_cb on_frame, conn_gone_cb on_gone, void *data);

/* Read `app`'s protocol (borrowed for the set's life) on the set's
 * connections instead of frames: set right after conn_listen(). */
void conn_set_app(struct conn_set *s, const struct conn_app *app);

/* Close `c` once its queued output is written, reading nothing more. */
void conn_close_after(struct conn *c);

/* Stop, or start again, reading from `c` (a protocol that takes one
 * request at a time and holds the rest back). */
void conn_hold_reads(struct conn *c, bool hold);

/* New connections use `tls` from now on (ownership transferred); existing
 * ones keep theirs. For rotating certificates on SIGHUP. */
void conn_set_tls(struct conn_set *s, struct tls_ctx *tls);
/* Stop listening and close every connection. */
void conn_close_all(struct conn_set *s);

/* Room for `n` bytes of reply at the end of c's output; NULL when out of
 * memory or the connection is closing. Follow with conn_commit(). */
uint8_t *conn_reserve(struct conn *c, size_t n);
void conn_commit(struct conn *c, size_t n);
/* As conn_commit(), for output that may wait up to the limits'
 * watch_batch_ms for more to go with it (watch events): it goes out with
 * the connection's next reply, or when that time is up. */
void conn_commit_later(struct conn *c, size_t n);
/* The bytes of output queued on `c` and not yet written: gathered this
 * loop iteration, and in the write under way. */
size_t conn_backlog(const struct conn *c);

/* The TLS handshake proved that `c`'s client is `identity` (copied): give
 * it the role the config has for it (roles_for()), in c->gw.role. */
void conn_authorize(struct conn *c, const char *identity);

/* Send an ERROR frame, then close once it is written (protocol errors). */
void conn_fail(struct conn *c, uint64_t id, int status, const char *message);

/* Start writing what every connection gathered in this loop iteration:
 * one write per connection, however many replies. */
void conn_flush_all(struct conn_set *s);

#endif /* SERVER_CONN_H */
