/* A small blocking client of Baton's wire protocol for the integration
 * tests: poll() with deadlines, no threads, one session per client. */
#ifndef TESTS_LIB_TCLIENT_H
#define TESTS_LIB_TCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/proto.h"
#include "../../src/tls/tls.h"

#define TCLIENT_MAX_ENDPOINTS 16
#define TCLIENT_ADDR_MAX      (PROTO_ADDRESS_MAX + 1) /* with the NUL */
#define TCLIENT_MAX_OPEN      64   /* seqs without a final answer, tracked */
#define TCLIENT_ANSWER_MAX    4096 /* any answer, STATUS_REPLY included */
#define TCLIENT_FRAME_MAX     (PROTO_HEADER_SIZE + COMMAND_MAX_SIZE + 16)

/*
 * What every call returns: 0 or a negative BATON_E* code. Codes that come
 * from the server's RESULT (BATON_EBUSY, BATON_ESTALE, ...) are returned as
 * they are, with the rest of the RESULT in `struct tclient_result`;
 * BATON_ENOANSWER means no final answer arrived before the call's deadline;
 * an ERROR frame's status is returned after the connection is dropped.
 */
struct tclient_result {
        int status;
        uint8_t kind; /* enum proto_kind */
        uint64_t index;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
};

/* A node's STATUS_REPLY is a struct baton_status (include/baton.h), filled
 * by proto_status_export(). */

/* One entry of a LIST answer. */
struct tclient_lock {
        char name[COMMAND_NAME_MAX + 1];
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint32_t waiters;
};

/* One request on the wire, kept so that it can be sent again unchanged
 * (a command keeps its session and seq across every retry). */
struct tclient_req {
        bool slow;        /* a blocking ACQUIRE: no per-try answer timeout */
        uint64_t acts_in; /* KEEPALIVE and commands: their session */
        size_t len;
        uint8_t frame[TCLIENT_FRAME_MAX]; /* the id is patched per send */
        unsigned sends;
        uint64_t id;  /* frame id of the last send */
        uint64_t gen; /* connection it was sent on; 0: not sent */
        int64_t sent_ms;
        bool answered;
        struct proto_header ah; /* the answer, once `answered` */
        uint8_t answer[TCLIENT_ANSWER_MAX];
};

struct tclient {
        char endpoints[TCLIENT_MAX_ENDPOINTS][TCLIENT_ADDR_MAX];
        unsigned n_endpoints;
        unsigned next;               /* endpoint to try when no hint */
        char hint[TCLIENT_ADDR_MAX]; /* leader address from NOT_LEADER */
        char peer[TCLIENT_ADDR_MAX]; /* where fd is connected */
        int fd;                      /* -1: not connected */
        /* TLS, when the environment gives BATON_CACERT, BATON_CERT and
         * BATON_KEY (as libbaton's): every frame, raw ones included, then
         * travels in TLS records. */
        struct tls_ctx *tls;
        struct tls_conn *tc;
        char expect[TLS_IDENTITY_MAX]; /* the node's identity; "": any */
        uint8_t *cout;                 /* ciphertext not yet sent */
        size_t cout_len;
        size_t cout_cap;
        uint64_t gen;     /* bumped on every new connection */
        uint64_t next_id; /* frame ids */
        struct proto_reader reader;
        uint8_t in[8192];
        size_t in_off;
        size_t in_len;
        /* Settings, changeable after init. */
        int try_ms;     /* no answer on one connection within this: try
                           another endpoint (default 1000; 0 = never) */
        int backoff_ms; /* pause when no leader is known (default 50) */
        bool follow;    /* follow NOT_LEADER (default true) */
        int rcvbuf;     /* SO_RCVBUF / SO_SNDBUF of new connections, in */
        int sndbuf;     /* bytes (default 0: the system's) */
        /* The session. */
        uint64_t session; /* 0: none */
        /* The session this client proves it owns (its own, or one given
         * to tclient_own()): an ATTACH goes ahead of its requests on
         * every new connection, unless `attach` is false. */
        uint64_t owned;
        uint8_t secret[ATTACH_SECRET_SIZE];
        uint64_t attached_gen; /* connection attached to `owned` */
        bool attach;           /* default true */
        uint64_t nonce;
        uint32_t ttl_ms;
        uint64_t next_seq;
        uint64_t open_seqs[TCLIENT_MAX_OPEN]; /* no final answer yet */
        unsigned n_open;
        /* One command may be in flight between tclient_start() and a final
         * tclient_finish(); other calls may run meanwhile. */
        bool inflight;
        uint64_t inflight_seq;
        struct tclient_req cmd;
        /* Counters, for the tests' diagnostics. */
        unsigned long redirects;
        unsigned long reconnects;
        unsigned long unknowns;
        unsigned long resends;
        unsigned long attaches; /* ATTACH frames sent ahead of requests */
        char errmsg[256];
};

/* Current CLOCK_MONOTONIC time in milliseconds / nanoseconds. */
int64_t tclient_now_ms(void);
int64_t tclient_now_ns(void);

/* Sleep `ms` (nothing when <= 0), the whole of it even when a signal
 * comes: the pause between two polls of a test. */
void tclient_sleep_ms(int64_t ms);

/* A random number other than 0 (a nonce, a secret's bytes, a jitter). */
uint64_t tclient_random(void);

/*
 * Set up a client for a comma-separated list of "a.b.c.d:port" client
 * endpoints (copied). Connects lazily, over TLS when BATON_CACERT,
 * BATON_CERT and BATON_KEY are set (read at the first connection, which
 * fails BATON_ETLS, errmsg saying why, when they do not load). 0 or
 * BATON_EINVAL (bad list).
 */
int tclient_init(struct tclient *c, const char *endpoints);

/* Drop the connection and free the reader; the session is left to expire.
 * Accepts a client whose init failed. */
void tclient_close(struct tclient *c);

/* Prove ownership of `session` with `secret` (ATTACH_SECRET_SIZE bytes,
 * copied) on every connection from now on, before its requests. */
void tclient_own(struct tclient *c, uint64_t session, const uint8_t *secret);

/* Send ATTACH for `session` with `secret` and wait for its RESULT (no
 * retry elsewhere): 0, the status, or BATON_ENOANSWER. */
int tclient_attach(struct tclient *c, uint64_t session, const uint8_t *secret,
                   int timeout_ms, struct tclient_result *res);

/* Drop the connection (the next call reconnects). */
void tclient_disconnect(struct tclient *c);

/*
 * Open a session with a fresh random nonce; retried with the same nonce
 * until it is answered or `timeout_ms` passes. On success c->session is
 * set and the seq counter restarts at 1. `client_name` may be NULL.
 */
int tclient_session_open(struct tclient *c, uint32_t ttl_ms,
                         const char *client_name, int timeout_ms,
                         struct tclient_result *res);

/* CLOSE the session (same retry rules as every command). */
int tclient_session_close(struct tclient *c, int timeout_ms,
                          struct tclient_result *res);

/* The next unused seq of the session (it is then marked in use). */
uint64_t tclient_take_seq(struct tclient *c);

/* Forget that `seq` still lacks a final answer, so `ack` may pass it. */
void tclient_forget_seq(struct tclient *c, uint64_t seq);

/* The ack the next command carries: the lowest seq without a final
 * answer, or the next seq when every answer is in. */
uint64_t tclient_ack(const struct tclient *c);

/*
 * Put a command in flight and try to send it once. `cmd` is copied; its
 * session and ack are filled in, and seq too when it is 0 (a new seq);
 * a non-zero seq is sent as given, which is how a test retries a request.
 * Returns 0 (even when the first send failed: tclient_finish() retries) or
 * BATON_EINVAL (another command in flight, or cmd does not encode) or
 * BATON_ENAME. `*seq` (may be NULL) gets the seq used.
 */
int tclient_start(struct tclient *c, const struct command *cmd, uint64_t *seq);

/*
 * Wait up to `timeout_ms` for the final answer of the command in flight,
 * sending it again (same seq) after a lost connection, NOT_LEADER or
 * BATON_EUNKNOWN. On a final answer the command leaves flight and the
 * RESULT's status is returned (res filled). On BATON_ENOANSWER it stays in
 * flight: call again, or tclient_abandon().
 */
int tclient_finish(struct tclient *c, int timeout_ms,
                   struct tclient_result *res);

/* Take the command out of flight without an answer (its seq stays open). */
void tclient_abandon(struct tclient *c);

/* tclient_start() + tclient_finish(); abandons the command on timeout. */
int tclient_command(struct tclient *c, const struct command *cmd,
                    int timeout_ms, struct tclient_result *res);

/* ACQUIRE with wait_ms (COMMAND_WAIT_TRY: try-lock; COMMAND_WAIT_FOREVER).
 * Names over 255 bytes are BATON_ENAME without sending anything. */
int tclient_acquire(struct tclient *c, const char *name, uint64_t owner,
                    uint32_t wait_ms, int timeout_ms,
                    struct tclient_result *res);
int tclient_try(struct tclient *c, const char *name, uint64_t owner,
                int timeout_ms, struct tclient_result *res);
int tclient_release(struct tclient *c, const char *name, uint64_t owner,
                    uint64_t token, int timeout_ms, struct tclient_result *res);
/* CANCEL the waiting ACQUIRE of seq `target` on `name`. */
int tclient_cancel(struct tclient *c, const char *name, uint64_t target,
                   int timeout_ms, struct tclient_result *res);

/* KEEPALIVE the session through the leader; `*ttl_ms` (may be NULL) gets
 * the TTL the leader granted. A dead session's RESULT status is returned. */
int tclient_keepalive(struct tclient *c, int timeout_ms, uint32_t *ttl_ms);

/* Linearizable QUERY / CHECK through the leader. */
int tclient_query(struct tclient *c, const char *name, int timeout_ms,
                  struct tclient_result *res);
/* Linearizable LIST of the held locks starting with `prefix` (NULL: all),
 * at most `limit` (1..PROTO_LIST_MAX) and at most `cap` entries into `out`.
 * 0, a RESULT's error status, BATON_EMALFORMED (a bad reply, or one over
 * TCLIENT_ANSWER_MAX bytes), BATON_ENOTLEADER or BATON_ENOANSWER. */
int tclient_list(struct tclient *c, const char *prefix, uint32_t limit,
                 int timeout_ms, struct tclient_lock *out, size_t cap,
                 size_t *n, bool *more);
/* One session of a SESSIONS answer, copied (at most 8 holds). */
struct tclient_session {
        uint64_t id;
        char client_name[65];
        char identity[256];
        char address[65];
        uint32_t ttl_ms, lock_delay_ms, left_ms, idle_ms, revoked;
        uint32_t n_grants, n_waits, n_holds;
        struct {
                char name[256];
                bool waiting;
                uint64_t owner, token;
                uint32_t count, wait_ms;
        } holds[8];
};
/* Linearizable SESSIONS through the leader: the live sessions after
 * `after` (`mode` PROTO_SESSIONS_AFTER, at most `limit`), or the session
 * `after` alone (PROTO_SESSIONS_ONE, limit 1), at most `cap` into `out`.
 * 0, a RESULT's error status, BATON_EMALFORMED, BATON_ENOTLEADER or
 * BATON_ENOANSWER. */
int tclient_sessions(struct tclient *c, uint64_t after, uint8_t mode,
                     uint32_t limit, int timeout_ms,
                     struct tclient_session *out, size_t cap, size_t *n,
                     bool *more);
int tclient_check(struct tclient *c, const char *name, uint64_t token,
                  int timeout_ms, struct tclient_result *res);

/* STATUS / PING of the node the client is connected to (connecting to the
 * next endpoint first when it is not); never redirected. */
int tclient_status(struct tclient *c, int timeout_ms, struct baton_status *st);
int tclient_ping(struct tclient *c, int timeout_ms, int64_t *rtt_us);

/* STATUS of one endpoint through a connection of its own. */
int tclient_status_of(const char *endpoint, int timeout_ms,
                      struct baton_status *st);

/* --- Membership ---------------------------------------------------------- */

/*
 * MEMBER_ADD (id, raft and client address, copied) or MEMBER_REMOVE of
 * `id`, through the leader (NOT_LEADER is followed unless c->follow is
 * false: then BATON_ENOTLEADER). A change lasts as long as the new node
 * takes to catch up, so there is no per-try timeout; the request is sent
 * again only after a lost connection or BATON_EUNKNOWN, and a change that
 * did happen may then be refused. Returns the RESULT's status, an ERROR
 * frame's status, or BATON_ENOANSWER.
 */
int tclient_member_add(struct tclient *c, uint64_t id, const char *raft_address,
                       const char *client_address, int timeout_ms);
/* TRANSFER leadership to `id` (0: any). */
int tclient_transfer(struct tclient *c, uint64_t id, int timeout_ms);
int tclient_member_remove(struct tclient *c, uint64_t id, int timeout_ms);

/* --- Raw frames, for malformed-input tests ------------------------------- */

/* Connect to `endpoint` (which need not be in the list), dropping any
 * current connection. 0, BATON_EIO or BATON_ENOANSWER. */
int tclient_connect(struct tclient *c, const char *endpoint, int timeout_ms);

/* Send bytes as they are on the current connection. */
int tclient_raw_send(struct tclient *c, const void *bytes, size_t len,
                     int timeout_ms);

/*
 * Send as much of `bytes` as the connection takes within `timeout_ms`
 * (0: what it takes without waiting), for a test of a peer that stops
 * reading. `*sent` gets the bytes sent. 0 when all of them went,
 * BATON_ENOANSWER when the socket stayed full, BATON_EIO (dropped).
 */
int tclient_raw_send_some(struct tclient *c, const void *bytes, size_t len,
                          int timeout_ms, size_t *sent);

/*
 * Receive the next frame on the current connection: 0 with `*h` and
 * `*body` (valid until the next call on `c`), BATON_ENOANSWER, or BATON_EIO
 * when the server closed the connection (which is then dropped).
 */
int tclient_raw_recv(struct tclient *c, int timeout_ms, struct proto_header *h,
                     const uint8_t **body);

/* Wait until the server closes the connection, discarding frames. True
 * if it did within `timeout_ms`. */
/* Read exactly `len` bytes of the connection (decrypted, with TLS) as they
 * come, frames or not, within timeout_ms: false if they did not all come
 * (the connection closed, or the time ran out). */
bool tclient_raw_read(struct tclient *c, uint8_t *p, size_t len,
                      int timeout_ms);

bool tclient_wait_closed(struct tclient *c, int timeout_ms);

/* "RESULT status=-9 kind=0 token=12 ..." for messages. */
const char *tclient_result_str(const struct tclient_result *r, char *buf,
                               size_t cap);

#endif /* TESTS_LIB_TCLIENT_H */
