/* A session of Baton's HTTP API (docs/http.md) on httpc.h's client: open,
 * keepalive, acquire, release and close, each write numbered with an
 * Idempotency-Key so that it is sent again safely; BATON_E* codes as
 * libbaton gives them. baton-bench's --http workloads and the chaos
 * suite's HTTP worker use it. */
#ifndef BENCH_HSESSION_H
#define BENCH_HSESSION_H

#include <stdint.h>

#include "httpc.h"

struct hsession {
        struct httpc_cluster *cl; /* borrowed */
        uint64_t id;              /* 0: none open */
        char secret[33];
        uint64_t next_seq; /* the next write's Idempotency-Key */
        uint32_t ttl_ms;
        uint32_t timeout_ms; /* a call's deadline, beyond any wait */
};

/* Open a session of `ttl_ms` named `name` through `c`: 0, or a BATON_E*
 * code (the cluster's refusal, BATON_ENOANSWER, BATON_ECONNECT). */
int hsession_open(struct hsession *s, struct httpc_cluster *cl,
                  struct httpc_conn *c, uint32_t ttl_ms, uint32_t timeout_ms,
                  const char *name);

/* Keep it alive through `c` (any thread's connection): 0, or a BATON_E*
 * code (BATON_EEXPIRED once the cluster ended it). */
int hsession_keepalive(struct hsession *s, struct httpc_conn *c);

/* Acquire `name` exclusively as `owner`, waiting up to `wait_ms` (0:
 * try): 0 with the fencing token, or a BATON_E* code. */
int hsession_acquire(struct hsession *s, struct httpc_conn *c, const char *name,
                     uint64_t owner, int64_t wait_ms, uint64_t *token);

/* Release the grant `token` of `name` held as `owner`. */
int hsession_release(struct hsession *s, struct httpc_conn *c, const char *name,
                     uint64_t owner, uint64_t token);

/* Close the session (its locks are released): 0 or a BATON_E* code. */
int hsession_close(struct hsession *s, struct httpc_conn *c);

#endif /* BENCH_HSESSION_H */
