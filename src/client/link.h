/* The deciding half of a handle's transport: which node to reach and when
 * (following NOT_LEADER redirects, backing off with jitter, polling while an
 * election runs, avoiding a node gone silent), the greeting that brings a
 * connection up, what each endpoint answered, and the outbox of frames for
 * the connection; it reports what happens to its owner through callbacks,
 * and leaves sockets, TLS and the reading of bytes to its host (linkio.h). */
#ifndef CLIENT_LINK_H
#define CLIENT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/proto.h"
#include "coreenv.h"
#include "reach.h"

#define LINK_ADDR_MAX   REACH_ADDR_MAX /* an address, with the NUL */
#define LINK_CONNECT_MS 1000 /* a connect, a TLS handshake, the first PING */

/*
 * What the link tells its owner. Every callback runs on the thread that
 * drove the link into the event (the background thread, in practice), with
 * the handle's mutex held, and may call back into the link.
 */
struct link_cb {
        void *data;
        /* A new connection is up (its generation is l->gen): send on it. */
        void (*connected)(void *data, int64_t now);
        /* One whole frame arrived on the connection. NOT_LEADER frames
         * never come here: the link follows them itself. `body` lives until
         * the callback returns, or until the connection closes, if sooner. */
        void (*frame)(void *data, const struct proto_header *h,
                      const uint8_t *body, int64_t now);
        /* The connection of generation `gen` closed at `now`; whatever was
         * written on it is lost. */
        void (*closed)(void *data, uint64_t gen, int64_t now);
        /* A pass over the endpoints failed: none of them can be reached
         * (l->reach says why). May be NULL. */
        void (*unreachable)(void *data);
};

/*
 * Choosing a node: the leader named by the last NOT_LEADER, else the
 * endpoints in turn (each resolved by the host when it is tried, its
 * addresses then tried in getaddrinfo's order until one connects),
 * skipping a node that went silent for SUSPECT_MS. A pass tries every
 * endpoint once, one after the other without a pause (reach.h); passes
 * that end without a leader in a row back off exponentially. While live
 * nodes know no leader (an election runs), the link asks again every
 * 20-60 ms for up to 3 s before backing off.
 *
 * Connections: each attempt has an id, `conn`. link_dial() says when to
 * start one, and to which endpoint (`peer`); the host connects and reports
 * on the attempt by its id: link_conn_up() once TCP (and TLS) is through,
 * link_conn_frame() for each whole frame, link_conn_failed() when it
 * failed. A report on an attempt the link has given up since is ignored;
 * the host closes what it holds of an attempt once `conn` is no longer
 * that attempt's (0: none), and stops reading it.
 *
 * A connection is up once the node has answered its first frame, a PING
 * the link puts as soon as the host reports it through: only then do
 * requests go out on it. A peer that is not a Baton client port (a raft
 * port, something else), or a node that refuses the connection (TLS
 * required, a client certificate refused after TLS 1.3's handshake), thus
 * never sees a request, and the link knows that what it holds back was
 * never sent.
 *
 * The link does no I/O, reads no clock and takes no lock: the time of
 * each call is `now`, its randomness comes from `env`. Threading: every
 * field is guarded by the handle's mutex; any thread holding it may call
 * any function here.
 */
struct link {
        const struct core_env *env;  /* borrowed: the jitter of retries */
        uint64_t conn;               /* the attempt in hand; 0: none */
        uint64_t conns;              /* attempts made (the last id given) */
        bool dialing;                /* the host has yet to get it through */
        bool greeting;               /* the first PING is out, not answered */
        uint64_t hello;              /* frame id of the first PING */
        int peer_index;              /* of `peer` among the endpoints; -1 */
        struct reach reach;          /* what each endpoint answered */
        uint64_t gen;                /* bumped by each connection that is up */
        uint64_t next_id;            /* frame ids */
        char peer[LINK_ADDR_MAX];    /* the endpoint of the attempt */
        char hint[LINK_ADDR_MAX];    /* leader from NOT_LEADER; "" none */
        char suspect[LINK_ADDR_MAX]; /* a node that went silent */
        int64_t suspect_until;
        const char (*endpoints)[LINK_ADDR_MAX]; /* borrowed */
        unsigned n_endpoints;
        unsigned next;            /* endpoint to try when there is no hint */
        unsigned failures;        /* passes without a leader, in a row */
        unsigned bounces;         /* NOT_LEADER redirects in a row */
        int64_t leaderless_since; /* first "no leader" answer; 0 none */
        int64_t retry_at;         /* no connection attempt before this */
        int64_t deadline;         /* of the answer to the first PING */
        int64_t last_rx;          /* last frame received */
        struct link_cb cb;
        uint8_t *out; /* the outbox: frames the host has not taken */
        size_t out_len;
        size_t out_cap;
        /* Counters, for tests and curiosity. */
        unsigned long connects;
        unsigned long redirects;
};

/* How the host saw an attempt or a connection fail. */
struct link_failure {
        bool silent; /* the node stopped answering: avoid it for a while */
        /* Before the node's first answer, what the endpoint did and why
         * (`why` copied; a TLS refusal, either side, is `tls`); once it
         * has answered, the connection is simply lost. */
        enum reach_outcome outcome;
        bool tls;
        const char *why;
};

/* `endpoints` (1..n "host:port" or "[ipv6]:port") and `env` are borrowed
 * for the link's life. 0 or BATON_ENOMEM. */
int link_init(struct link *l, const char (*endpoints)[LINK_ADDR_MAX],
              unsigned n_endpoints, const struct core_env *env);
void link_close(struct link *l);

/* Register the owner's callbacks (copied). */
void link_listen(struct link *l, const struct link_cb *cb);

/* Whether a connection is established and its node has answered (not
 * merely being attempted). */
bool link_up(const struct link *l);

/*
 * Queue `frame` (`len` bytes, borrowed for the call) in the outbox, first
 * writing the next frame id of the link into its header. The id, or 0
 * when out of memory (nothing is queued; try again later).
 */
uint64_t link_put(struct link *l, uint8_t *frame, size_t len);

/* The outbox: the bytes put and not yet taken, in order, at `*p` (may be
 * NULL), valid until the next call; and the host took the first `n`. */
size_t link_output(const struct link *l, const uint8_t **p);
void link_output_taken(struct link *l, size_t n);

/* --- Connections: the host's reports -------------------------------------- */

/* When `needed`, no attempt is in hand and the backoff allows: choose the
 * endpoint (l->peer) and return the new attempt's id; else 0. */
uint64_t link_dial(struct link *l, int64_t now, bool needed);

/* TCP (and TLS) is through on `conn`: put the first PING. */
void link_conn_up(struct link *l, uint64_t conn, int64_t now);

/* One whole frame of `conn` (`body` borrowed for the call). */
void link_conn_frame(struct link *l, uint64_t conn,
                     const struct proto_header *h, const uint8_t *body,
                     int64_t now);

/* `conn` failed as `f` says (copied). */
void link_conn_failed(struct link *l, uint64_t conn,
                      const struct link_failure *f, int64_t now);

/* Give up a first PING unanswered for LINK_CONNECT_MS. */
void link_tick(struct link *l, int64_t now);

/* When link_dial() or link_tick() next has something to do (CLOCK_NEVER:
 * nothing); the host's own connect and handshake timers are not in it. */
int64_t link_next_event(const struct link *l, bool needed);

/* --- Verdicts ------------------------------------------------------------- */

/*
 * The owner's verdicts on the connection: it failed (a protocol error, a
 * refusal; `silent`: the node stopped answering and is avoided for a
 * while), its node knows no leader, or the leader answered (ending a
 * streak of failures). Each is recorded as the endpoint's outcome.
 */
void link_fail(struct link *l, int64_t now, bool silent);
void link_no_leader(struct link *l, int64_t now);
void link_leader_answered(struct link *l);

/* Give up the connection without a verdict at `now` (the handle is
 * stopping). */
void link_disconnect(struct link *l, int64_t now);

#endif /* CLIENT_LINK_H */
