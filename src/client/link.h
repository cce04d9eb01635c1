/* The transport of a handle: one connection to the cluster at a time, which
 * finds the leader (following NOT_LEADER redirects), reconnects with
 * jittered exponential backoff, writes frames and reads them, records what
 * each endpoint answered, and reports what happens to its owner through
 * callbacks. */
#ifndef CLIENT_LINK_H
#define CLIENT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netdb.h>

#include "../proto/proto.h"
#include "../tls/tls.h"
#include "coreenv.h"
#include "reach.h"

#define LINK_ADDR_MAX REACH_ADDR_MAX /* an address, with the NUL */

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
        /* The connection of generation `gen` closed; whatever was written
         * on it is lost. */
        void (*closed)(void *data, uint64_t gen);
        /* A pass over the endpoints failed: none of them can be reached
         * (l->reach says why). May be NULL. */
        void (*unreachable)(void *data);
};

/*
 * Choosing a node: the leader named by the last NOT_LEADER, else the
 * endpoints in turn (each resolved when it is tried, its addresses then
 * tried in getaddrinfo's order until one connects), skipping a node that went
 * silent for SUSPECT_MS. A pass tries every endpoint once, one after the
 * other without a pause (reach.h); passes that end without a leader in a row
 * back off exponentially. While live nodes know no leader (an election runs),
 * the link asks again every 20-60 ms for up to 3 s before backing off.
 *
 * A connection is up once the node has answered its first frame, a PING
 * the link sends as soon as TCP (and TLS) is through: only then do
 * requests go out on it. A peer that is not a Baton client port (a raft
 * port, something else), or a node that refuses the connection (TLS
 * required, a client certificate refused after TLS 1.3's handshake), thus
 * never sees a request, and the link knows that what it holds back was
 * never sent.
 *
 * Threading: every field is guarded by the handle's mutex. Any thread
 * holding it may put frames and write them (link_up(), link_put(),
 * link_write()); connecting, reading, flushing what the socket did not
 * take and closing belong to the background thread.
 */
struct link {
        int fd;                     /* -1: not connected */
        bool connecting;            /* connect() in progress on fd */
        bool handshaking;           /* TLS handshake in progress on fd */
        struct tls_ctx *tls;        /* borrowed; NULL: plain connections */
        const struct core_env *env; /* borrowed: the jitter of retries */
        struct tls_conn *tc;        /* the connection's TLS state */
        uint8_t *cout;              /* ciphertext not yet written */
        size_t cout_len;
        size_t cout_cap;
        bool greeting;            /* the first PING is out, not yet answered */
        bool heard;               /* some bytes came on this connection */
        uint64_t hello;           /* frame id of the first PING */
        int connect_err;          /* errno of the peer's last failed connect */
        int peer_index;           /* of `peer` among the endpoints; -1: none */
        struct reach reach;       /* what each endpoint answered */
        int wake;                 /* eventfd: other threads wake the loop */
        uint64_t gen;             /* bumped by each new connection */
        uint64_t next_id;         /* frame ids */
        char peer[LINK_ADDR_MAX]; /* where fd goes */
        struct addrinfo *addrs;   /* peer resolved, while connecting */
        struct addrinfo *next_addr;  /* of addrs, the next one to try */
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
        int64_t deadline;         /* of the connect, handshake or PING */
        int64_t last_rx;          /* last frame received */
        struct link_cb cb;
        struct proto_reader reader;
        uint8_t *out; /* frames not yet written */
        size_t out_len;
        size_t out_cap;
        /* Counters, for tests and curiosity. */
        unsigned long connects;
        unsigned long redirects;
};

/* `endpoints` (1..n "host:port" or "[ipv6]:port"), `tls` (NULL: plain
 * connections) and `env` are borrowed for the link's life. With `tls`, a
 * connection needs a TLS handshake that has verified the node's
 * certificate against the endpoint's host. 0 or BATON_ENOMEM / BATON_EIO
 * (no eventfd). */
int link_init(struct link *l, const char (*endpoints)[LINK_ADDR_MAX],
              unsigned n_endpoints, struct tls_ctx *tls,
              const struct core_env *env);
void link_close(struct link *l);

/* Register the owner's callbacks (copied). */
void link_listen(struct link *l, const struct link_cb *cb);

/* Wake the background thread out of its poll() (any thread, the mutex held
 * or not). */
void link_wake(struct link *l);

/* Whether a connection is established and its node has answered (not
 * merely being attempted). */
bool link_up(const struct link *l);

/* Whether frames wait in the link for the socket to take them. */
bool link_busy(const struct link *l);

/*
 * Queue `frame` (`len` bytes, borrowed for the call) on the connection,
 * first writing the next frame id of the link into its header. The id, or
 * 0 when out of memory (nothing is queued; try again later).
 */
uint64_t link_put(struct link *l, uint8_t *frame, size_t len);

/* Write what the socket takes without blocking, from any thread. True when
 * nothing is left; errors are left for link_ready() to find. */
bool link_write(struct link *l);

/* --- The background thread ----------------------------------------------- */

/*
 * Connect when `needed` and the backoff allows, and give up a connect that
 * takes too long. True when the connection is up afterwards.
 */
bool link_step(struct link *l, int64_t now, bool needed);

/* Write what is queued; a failed write or a peer that reads nothing drops
 * the connection. */
void link_flush(struct link *l, int64_t now);

/* When link_step() next has something to do (CLOCK_NEVER: nothing). */
int64_t link_next_event(const struct link *l, bool needed);

/* The events poll() should watch for on the socket; 0 when there is none. */
short link_events(const struct link *l);

/* Act on what poll() reported on the socket: finish the connect, read and
 * hand over frames, write. */
void link_ready(struct link *l, short revents, int64_t now);

/*
 * The owner's verdicts on the connection: it failed (a protocol error, a
 * refusal; `silent`: the node stopped answering and is avoided for a
 * while), its node knows no leader, or the leader answered (ending a
 * streak of failures). Each is recorded as the endpoint's outcome.
 */
void link_fail(struct link *l, int64_t now, bool silent);
void link_no_leader(struct link *l, int64_t now);
void link_leader_answered(struct link *l);

/* Close the connection without a verdict (the handle is stopping). */
void link_disconnect(struct link *l);

#endif /* CLIENT_LINK_H */
