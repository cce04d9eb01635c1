/* TLS 1.3 with mutual authentication over memory: the one TLS state machine
 * of Baton, shared by batond's client port, its raft peer transport and
 * libbaton. It never touches a socket: the owner feeds it the bytes that
 * arrived (ciphertext), reads the plaintext out, writes plaintext in and
 * takes the ciphertext to send, on whatever loop it runs. */
#ifndef TLS_TLS_H
#define TLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_ERRMSG_MAX   512
#define TLS_IDENTITY_MAX 256 /* a certificate identity and its NUL */

/* The largest TLS record (2^14 bytes of plaintext, with TLS 1.3's overhead
 * and the content type): a peer that announces a longer one is refused. */
#define TLS_RECORD_MAX (5 + 16384 + 256)

enum tls_side {
        TLS_SERVER, /* accepts; asks for and requires a client certificate */
        TLS_CLIENT, /* connects; presents its certificate when asked */
};

/* Where the credentials of one side are. Paths; only `crl` may be NULL. */
struct tls_files {
        const char *ca;   /* PEM CA certificate(s) that sign the peers */
        const char *cert; /* PEM certificate (chain) presented to the peer */
        const char *key;  /* PEM private key of `cert` */
        const char *crl;  /* PEM certificate revocation list, or NULL */
};

/*
 * The settings of many connections: credentials loaded once (an OpenSSL
 * SSL_CTX). TLS 1.3 only, no session tickets, no renegotiation (TLS 1.3
 * has none), peer certificates verified against `ca` (and `crl`) with
 * their validity dates.
 *
 * A connection keeps what it needs of its context, so a context may be
 * destroyed while connections made from it live on: rotating credentials
 * is creating a new context for new connections and destroying the old.
 * One context may be used from one thread at a time.
 */
struct tls_ctx;

/* Load the files of `f` (read now, not kept open) for `side`. 0, or
 * BATON_ETLS with the file and the reason in `errmsg` (a missing file, a key
 * that does not match the certificate, ...), or BATON_ENOMEM. */
int tls_ctx_create(struct tls_ctx **out, enum tls_side side,
                   const struct tls_files *f, char *errmsg, size_t size);
/* Accepts NULL. */
void tls_ctx_destroy(struct tls_ctx *x);

/*
 * Make a TLS_SERVER context's client certificate optional: a client that
 * presents none completes the handshake unauthenticated (tls_peer() is
 * ""), one that presents a certificate must still pass every check. For
 * a port that answers some requests to anyone and the rest by identity
 * (batond's metrics port); its connections are made after this call.
 */
void tls_ctx_client_cert_optional(struct tls_ctx *x);

/* One connection's TLS state. */
struct tls_conn;

/*
 * A connection on the side of `x`, whose peer's certificate must carry the
 * identity `expect` (copied; NULL: any identity the CA signed) as its
 * subject's common name or as one of its DNS or URI subject alternative
 * names. On the client side `host` (copied; may be NULL), a host name or IP
 * address, must match the server certificate as in HTTPS (RFC 6125: DNS or
 * IP subject alternative names). 0 or BATON_ENOMEM.
 */
int tls_conn_create(struct tls_conn **out, struct tls_ctx *x,
                    const char *expect, const char *host);
/* Accepts NULL. */
void tls_conn_destroy(struct tls_conn *t);

/* Hand over `n` bytes that arrived from the peer (copied). 0, or
 * BATON_ENOMEM. */
int tls_feed(struct tls_conn *t, const uint8_t *p, size_t n);

/*
 * Advance the connection on what was fed: run the handshake, then decrypt.
 * Returns the number of plaintext bytes put into `out` (at most `cap`), 0
 * when more bytes must arrive first (there may be ciphertext to send: see
 * tls_pending()), TLS_EOF once the peer closed the connection cleanly, or
 * BATON_ETLS when the handshake or a record failed: a bad certificate, an
 * identity other than the expected one, garbage or plain text instead of
 * TLS, an oversized record. Then tls_errmsg() says why, and the connection
 * is done (only the alert in tls_pending() may still be sent).
 */
long tls_read(struct tls_conn *t, uint8_t *out, size_t cap);
#define TLS_EOF (-1000)

/* Whether the handshake is complete (the peer is authenticated, or, on a
 * context of tls_ctx_client_cert_optional(), presented no certificate). */
bool tls_ready(const struct tls_conn *t);

/* Encrypt `n` bytes of plaintext (all of it; call once tls_ready()). 0, or
 * BATON_ETLS / BATON_ENOMEM. */
int tls_write(struct tls_conn *t, const uint8_t *p, size_t n);

/*
 * Give back what a connection at rest need not keep: OpenSSL's record
 * buffers (about 17 KB each way) and what the memory buffers between it
 * and the owner grew to, when nothing waits in them. For an owner holding
 * many quiet connections; the next record allocates them again, so it is
 * not for every record. Does nothing before tls_ready().
 */
void tls_rest(struct tls_conn *t);

/* Bytes of ciphertext waiting to be sent to the peer. */
size_t tls_pending(const struct tls_conn *t);

/* Move up to `cap` bytes of the waiting ciphertext into `out`; returns how
 * many. */
size_t tls_take(struct tls_conn *t, uint8_t *out, size_t cap);

/* The authenticated peer's identity (its certificate's subject common name,
 * else its first DNS or URI subject alternative name); "" before
 * tls_ready(). Lives as long as `t`. */
const char *tls_peer(const struct tls_conn *t);

/* The authenticated peer's groups: the organizational units (OU) of its
 * certificate's subject, each NUL-terminated, one after the other, in
 * `*len` bytes (0: none, or before tls_ready()). Lives as long as `t`. */
const char *tls_peer_groups(const struct tls_conn *t, size_t *len);

/* Whether the authenticated peer's certificate carries `identity` (as its
 * subject's common name or a DNS or URI subject alternative name). False
 * before tls_ready(). */
bool tls_peer_is(const struct tls_conn *t, const char *identity);

/* Why the connection failed, in one line; "" while it has not. */
const char *tls_errmsg(const struct tls_conn *t);

/* Why this side refused the peer's certificate: OpenSSL's verification
 * result ("certificate has expired", "unable to get local issuer
 * certificate", "hostname mismatch") or the identity check's; "" when it
 * did not. */
const char *tls_verify_error(const struct tls_conn *t);

/* The fatal alert the peer sent, as OpenSSL names it ("certificate
 * expired", "unknown CA", "certificate required"), or "" when none came;
 * `*about_cert` (may be NULL) says whether it refuses this side's
 * certificate (or its lack of one). */
const char *tls_peer_alert(const struct tls_conn *t, bool *about_cert);

/* Whether `p` (`n` >= 1 bytes, the first a peer sent) can be the start of
 * a TLS record. False means a peer speaking something else, such as
 * Baton's plain protocol, to a TLS client. */
bool tls_looks_like_record(const uint8_t *p, size_t n);

/* Whether `p` (`n` >= 1 bytes, the first of a connection) can be the
 * start of a TLS handshake record. False means a peer speaking something
 * else, such as Baton's plain protocol, to a TLS port. */
bool tls_looks_like_hello(const uint8_t *p, size_t n);

/* The TLS library in use, e.g. "OpenSSL 3.0.19 27 Jan 2026". */
const char *tls_library_version(void);

#endif /* TLS_TLS_H */
