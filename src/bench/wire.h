/* One client connection speaking Baton's wire protocol (docs/protocol.md)
 * itself, non-blocking, plain or TLS: for the workloads libbaton's one
 * request per thread cannot drive (fill: thousands of requests in flight on
 * one connection; connections: ten thousand connections at once). */
#ifndef BENCH_WIRE_H
#define BENCH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../proto/attach.h"
#include "../proto/proto.h"
#include "../proto/reader.h"
#include "../tls/tls.h"

#define WIRE_WHY_MAX 256

/* A whole frame from the node; `body` is valid only during the call. */
typedef void (*wire_frame_cb)(void *data, const struct proto_header *h,
                              const uint8_t *body);

struct wire {
        int fd;              /* -1 until dialled */
        struct tls_conn *tc; /* NULL: plain */
        struct proto_reader reader;
        uint8_t *out; /* frames built, not yet sealed */
        size_t out_len, out_cap;
        uint8_t *cipher; /* to send: ciphertext, or plain frames */
        size_t cipher_len, cipher_cap;
        char why[WIRE_WHY_MAX]; /* what broke the connection; "" while not */
};

/*
 * The TLS settings libbaton takes from the environment (BATON_CACERT,
 * BATON_CERT, BATON_KEY): *out is a client context, or NULL when they are
 * not set (plain connections). 0, or -1 with the reason in `why`.
 */
int wire_tls_load(struct tls_ctx **out, char *why, size_t size);

/* The cluster's leader, asked through libbaton: its status into `st`. 0,
 * or a BATON_E* code (BATON_EUNAVAILABLE when the node answering does not
 * lead). */
int wire_leader(const char *endpoints, struct baton_status *st);

/* A random session secret and its hash, for OPEN (src/proto/attach.h). */
void wire_secret(uint8_t secret[ATTACH_SECRET_SIZE],
                 uint8_t hash[ATTACH_HASH_SIZE]);

/* Seconds on the monotonic clock. */
double wire_now(void);

void wire_init(struct wire *w);
/* Close the socket and free everything; the wire may be dialled again. */
void wire_close(struct wire *w);

/* Start connecting to "host:port" (without waiting: poll for POLLOUT or
 * POLLIN; a refused connection shows as an error of the next send or
 * receive), with TLS when `tls` is not NULL (borrowed for the wire's
 * life): the ClientHello is then queued. 0, or -1 with `why` set. */
int wire_dial(struct wire *w, struct tls_ctx *tls, const char *endpoint);

/* Whether frames may be sealed: always without TLS, after the handshake
 * with it. */
bool wire_ready(const struct wire *w);

/* Room for `n` bytes of frames at the end of what is built; NULL when out
 * of memory. Follow with wire_commit(). */
uint8_t *wire_room(struct wire *w, size_t n);
void wire_commit(struct wire *w, size_t n);

/* Move the frames built so far into the bytes to send (encrypted with
 * TLS). 0, or -1 with `why` set. */
int wire_seal(struct wire *w);

/* Send what the socket takes now. 0, or -1 with `why` set. */
int wire_send(struct wire *w);

/* Read what arrived and hand each whole frame to `cb`. 0 (also when
 * nothing arrived), or -1 with `why` set: the node closed the connection,
 * a bad frame, a TLS failure. */
int wire_receive(struct wire *w, wire_frame_cb cb, void *data);

#endif /* BENCH_WIRE_H */
