/* A scripted fake Baton server for libbaton's wire tests: FAKE_NODES
 * nodes, each listening on an ephemeral port of 127.0.0.1, served by one
 * thread that logs every frame it receives and answers through the case's
 * hook, or as a healthy leader when there is none. One server per program,
 * started and stopped by the cmocka group's fixtures. */
#ifndef TESTS_CLIENT_FAKE_H
#define TESTS_CLIENT_FAKE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/watch.h"

#define FAKE_NODES     2
#define FAKE_MAX_CONNS 16
#define FAKE_MAX_LOG   512
#define FAKE_WAIT_MS   5000 /* a frame that must come comes within this */

struct fake_frame {
        unsigned node;
        unsigned conn;
        struct proto_header h;
        struct command k; /* COMMAND frames: decoded; name points in body */
        uint8_t body[COMMAND_MAX_SIZE + 64];
};

struct fake;

/* Answer a frame, or not (then the default does). Runs on the server
 * thread with f->mu held. 1: handled. */
typedef int (*fake_hook)(struct fake *f, const struct fake_frame *fr);

struct fake_conn {
        int fd; /* -1: free */
        unsigned node;
        struct proto_reader reader;
};

struct fake {
        int lfd[FAKE_NODES];
        char addr[FAKE_NODES][32];
        char endpoints[FAKE_NODES * 32];
        bool silent[FAKE_NODES]; /* accept, read, never answer */
        struct fake_conn conns[FAKE_MAX_CONNS];
        int stop[2];
        pthread_t thread;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct fake_frame log[FAKE_MAX_LOG];
        unsigned n_log;
        fake_hook hook;
        uint64_t next_session;
        uint64_t next_token;
        uint32_t ttl_ms;
        void *data; /* for the hooks */
};

/* The server the group's fixtures run (its endpoints, addresses, log). */
struct fake *fake_server(void);

/* The monotonic clock, in ms. */
int64_t fake_now_ms(void);

/* Send `n` bytes on connection `conn` (nothing once it is closed). */
void fake_send(struct fake *f, unsigned conn, const uint8_t *p, size_t n);

/* Answer frame `fr` with the RESULT `r`. */
void fake_result(struct fake *f, const struct fake_frame *fr,
                 const struct proto_result *r);

/* Answer frame `fr` with a RESULT of `status` and nothing else. */
void fake_status(struct fake *f, const struct fake_frame *fr, int status);

/* Close connection `conn`, as a node that went away. */
void fake_close_conn(struct fake *f, unsigned conn);

/* Group setup: the nodes listening and the server thread running; -1 when
 * they cannot be. */
int fake_up(void **state);

/* Group teardown: the thread stopped, every socket closed. */
int fake_down(void **state);

/* Case setup: a quiet server, with no hook, no log, every node answering
 * and no connection left from the case before. */
int fake_reset(void **state);

/* Script the server for a case: `hook` answers first, with `data` in
 * f->data (NULL: the healthy leader answers everything). */
void fake_set_hook(fake_hook hook, void *data);

/* Make node `node` accept and read but never answer, or answer again. */
void fake_set_silent(unsigned node, bool silent);

/* Wait FAKE_WAIT_MS at most for the next frame at or after log[*from] of
 * `type` (and command type `cmd` if non-zero): a copy of it, with *from
 * moved past it; the case fails when none comes. */
struct fake_frame fake_wait_frame(unsigned *from, uint8_t type, uint8_t cmd);

/* How many frames of `type` (and command type `cmd` if non-zero) the log
 * holds. */
unsigned fake_count_frames(uint8_t type, uint8_t cmd);

/* A handle on `endpoints` with session TTL `ttl_ms` and request timeout
 * `timeout_ms`, and the options `o` (NULL: the defaults; borrowed for the
 * call, its ttl and timeout overwritten). Fails the case when it cannot
 * be made. */
baton_client *fake_client(const char *endpoints, uint32_t ttl_ms,
                          uint32_t timeout_ms, struct baton_options *o);

#endif /* TESTS_CLIENT_FAKE_H */
