/* The background thread of a handle and the one connection it owns: leader
 * discovery, reconnection with jittered exponential backoff, (re)sending
 * requests, and a heartbeat that abandons a dead or paused server. */
#ifndef CLIENT_LINK_H
#define CLIENT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/proto.h"

#define LINK_ADDR_MAX (PROTO_ADDRESS_MAX + 1) /* with the NUL */

struct baton_client;
struct request;

/*
 * Requests go out in the order of the handle's list. After a lost
 * connection, a NOT_LEADER answer or BATON_EUNKNOWN, every request without
 * a final answer is sent again, byte for byte, to whichever node the link
 * reaches next; exactly-once in the cluster makes that safe.
 *
 * A server that stops answering (killed, paused with SIGSTOP, which still
 * completes TCP handshakes, or cut off) is noticed by the heartbeat: a
 * PING goes out whenever nothing has arrived for hb_idle_ms, and a
 * connection that then stays silent for hb_timeout_ms is dropped and its
 * node avoided for a few seconds.
 */
struct link {
        int fd;                      /* -1: not connected */
        bool connecting;             /* connect() in progress on fd */
        int wake;                    /* eventfd: other threads wake the loop */
        uint64_t gen;                /* bumped by each new connection */
        uint64_t next_id;            /* frame ids */
        char peer[LINK_ADDR_MAX];    /* where fd goes */
        char hint[LINK_ADDR_MAX];    /* leader from NOT_LEADER; "" none */
        char suspect[LINK_ADDR_MAX]; /* a node that went silent */
        int64_t suspect_until;
        unsigned next;            /* endpoint to try when there is no hint */
        unsigned failures;        /* in a row, for the backoff */
        unsigned bounces;         /* NOT_LEADER redirects in a row */
        int64_t leaderless_since; /* first "no leader" answer; 0 none */
        bool on_loop;             /* the background thread holds the mutex */
        int64_t retry_at;         /* no connection attempt before this */
        int64_t deadline;         /* of the connect in progress */
        int64_t last_rx;          /* last frame received */
        int hb_idle_ms;
        int hb_timeout_ms;
        struct request *ping; /* in flight, internal */
        struct proto_reader reader;
        uint8_t *out; /* frames not yet written */
        size_t out_len;
        size_t out_cap;
        /* Counters, for tests and curiosity. */
        unsigned long connects;
        unsigned long redirects;
        unsigned long resends;
        unsigned long heartbeat_drops;
};

/* 0 or BATON_ENOMEM / BATON_EIO (no eventfd). */
int link_init(struct link *l, uint32_t ttl_ms);
void link_close(struct link *l);

/* The background thread: runs until c->stop. */
void *link_main(void *arg);

/* Wake the background thread (any thread, mutex held or not). */
void link_wake(struct link *l);

/* Put a request on the handle's list and wake the loop to send it. */
void link_submit(struct baton_client *c, struct request *r);

/* Whether `r` is on the wire on the current connection. */
bool link_sent(const struct link *l, const struct request *r);

#endif /* CLIENT_LINK_H */
