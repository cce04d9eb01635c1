/* One HTTP API connection: its requests read one at a time, each served
 * as a frame or two of the binary protocol, and its answers written as
 * HTTP (httpapi.h says how the pieces fit). */
#ifndef SERVER_APICONN_H
#define SERVER_APICONN_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/queue.h"
#include "../../proto/attach.h"
#include "../../proto/proto.h"
#include "../net/conn.h"
#include "../net/httpreq.h"
#include "apicall.h"

struct httpapi;

/* Where a connection's current request is. */
enum apiconn_state {
        APICONN_READING,   /* no request under way: reading the next */
        APICONN_ATTACHING, /* its ATTACH is out */
        APICONN_CALL_NEXT, /* the ATTACH succeeded: the call goes next */
        APICONN_CALLING,   /* its call is out */
        APICONN_STREAMING, /* a watch's events are going out */
        APICONN_ANSWERED,  /* answered: the next request may be read */
};

/* c->app of an HTTP API connection. */
struct apiconn {
        struct httpapi *api;
        struct conn *c;
        struct httpreq req;
        /* Bytes read after the request under way (pipelined), kept until
         * it is answered. */
        uint8_t *pend;
        size_t pend_len;
        size_t pend_cap;
        struct queue run_link; /* api->runnable while queued */
        enum apiconn_state state;
        struct api_call call;
        bool continued;    /* "100 Continue" went out for this request */
        uint64_t next_id;  /* the ids of the frames it sends */
        uint64_t frame_id; /* the frame whose answer it waits for */
        uint64_t seq;      /* the call's seq in its session (0: none) */
        bool seq_held;     /* the seq is counted out (httpapi's seqs) */
        uint64_t nonce;    /* an open's */
        uint8_t secret[ATTACH_SECRET_SIZE]; /* an open's new secret */
        /* The session this connection proved it owns with this secret
         * (an ATTACH that succeeded, or its own OPEN): its next request
         * with the same pair needs no ATTACH. */
        uint64_t att_session;
        uint8_t att_secret[ATTACH_SECRET_SIZE];
        /* The core's answer frame being written (reserve, then commit). */
        uint8_t *ans;
        size_t ans_cap;
        bool gone;
};

/* A new connection's record, or NULL when out of memory. */
struct apiconn *apiconn_create(struct httpapi *api, struct conn *c);
/* Accepts NULL. */
void apiconn_destroy(struct apiconn *a);

/* Bytes from the client (borrowed): read and start what they complete. */
void apiconn_bytes(struct apiconn *a, const uint8_t *p, size_t n);

/* A queued step (httpapi_drive()): send the call after its ATTACH, or
 * read the next request once one was answered. */
void apiconn_step(struct apiconn *a);

/* The core's answer frame, `n` bytes at a->ans: turned into HTTP. */
void apiconn_answer(struct apiconn *a, size_t n);

/* A comment line on a watch's event stream, when it is one: a quiet
 * stream then still carries bytes, which keeps proxies from closing it
 * and shows a client that went away by a failed write. */
void apiconn_heartbeat(struct apiconn *a);

/* The connection is refused with BATON_E* `status`, or its request did
 * not arrive in time (`expired`): say so, then close. */
void apiconn_refuse(struct apiconn *a, int status, const char *message);
void apiconn_expired(struct apiconn *a);

#endif /* SERVER_APICONN_H */
