/* Client connections: accept, read frames, batch replies, backpressure. */
#ifndef SERVER_CONN_H
#define SERVER_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "../lib/queue.h"
#include "../proto/proto.h"

struct conn;
struct conn_set;

/* A whole frame arrived; `body` is valid only during the call. */
typedef void (*conn_frame_cb)(void *data, struct conn *c,
                              const struct proto_header *h,
                              const uint8_t *body);
/* A connection is going away: drop every reference to it. */
typedef void (*conn_gone_cb)(void *data, struct conn *c);

struct conn {
        uv_tcp_t tcp;
        struct conn_set *set;
        struct proto_reader reader;
        struct queue link;       /* set->all */
        struct queue dirty_link; /* set->dirty while replies wait */
        struct queue pendings;   /* the gateway's requests from this conn */
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
        uint64_t id;
};

struct conn_set {
        uv_loop_t *loop;
        uv_tcp_t listener;
        struct queue all;
        struct queue dirty;
        uint32_t n;
        uint32_t max_conns;
        uint32_t max_frame;
        uint32_t output_limit;
        uint64_t next_id;
        uint64_t accepted;
        uint64_t refused;
        conn_frame_cb on_frame;
        conn_gone_cb on_gone;
        void *data;
        char rbuf[65536];
};

/* Listen on "host:port" or "[ipv6]:port" (see listen.h). 0 or a BATON_E*
 * code. */
int conn_listen(struct conn_set *s, uv_loop_t *loop, const char *address,
                uint32_t max_conns, uint32_t max_frame, uint32_t output_limit,
                conn_frame_cb on_frame, conn_gone_cb on_gone, void *data);
/* Stop listening and close every connection. */
void conn_close_all(struct conn_set *s);

/* Room for `n` bytes of reply at the end of c's output; NULL when out of
 * memory or the connection is closing. Follow with conn_commit(). */
uint8_t *conn_reserve(struct conn *c, size_t n);
void conn_commit(struct conn *c, size_t n);

/* Send an ERROR frame, then close once it is written (protocol errors). */
void conn_fail(struct conn *c, uint64_t id, int status, const char *message);

/* Start writing what every connection gathered in this loop iteration:
 * one write per connection, however many replies. */
void conn_flush_all(struct conn_set *s);

#endif /* SERVER_CONN_H */
