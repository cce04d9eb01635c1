/* batond's request core on a fake host, for the unit tests that drive it
 * by its inputs alone: no raft node, no socket, no clock. The host's
 * queries answer what the test sets, its raft requests are recorded for
 * the test to complete, and its client connections are buffers the test
 * reads the core's frames back from. */
#ifndef TESTS_UNIT_COREFIX_H
#define TESTS_UNIT_COREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/fsm/acl.h"
#include "../../src/fsm/directory.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/server/config/config.h"
#include "../../src/server/gateway/core.h"
#include "../../src/server/gateway/gateway.h"

#define SELF  1
#define OTHER 2

/* A raft request the core handed to the fake host: which op ('p'ropose,
 * 'b'arrier, 'c'hange, p'r'obe, 't'ransfer), with what. */
struct corefix_sent {
        struct gateway_req *req;
        char op;
        int change;
        uint64_t id;
        void *buf; /* a proposal's entry, the host's until completed */
};

#define COREFIX_MAX_SENT 16

/* The fake host: what its queries answer, and how often each was asked;
 * the requests it was handed, which a test completes when it likes. */
struct corefix_fake {
        struct gateway_host host;
        struct lockfsm *fsm;
        struct acl acl;
        struct directory dir;
        uint64_t leader; /* what leader() says */
        const char *leader_address;
        unsigned leader_calls, fsm_calls, nowait_calls, status_calls,
            versions_calls, digest_calls, member_calls;
        bool has_member;   /* what has_member() says */
        bool voter;        /* status() has member OTHER, a voter */
        uint64_t applied;  /* what last_applied() says: 40 at first */
        uint64_t restores; /* what restores() says were started: 0 */
        struct corefix_sent sent[COREFIX_MAX_SENT];
        unsigned n_sent;
};

/*
 * A client connection of the fake host: the core's record of it, and its
 * output, which the test reads from `read` on. Once the test reported it
 * gone (gateway_conn_gone()), any connection op the core calls on it is
 * counted in `after_gone` (gateway.h: the core calls none).
 */
struct corefix_conn {
        struct gateway_conn gw;
        uint8_t *out;
        size_t len, cap, read;
        bool closing;        /* failed: reserve() gives NULL */
        bool gone;           /* reported gone */
        unsigned after_gone; /* connection ops on it after it was reported */
        unsigned commits_later;
        /* Added to what backlog() says: output the client has not read,
         * beyond what is in `out` past `read`. */
        size_t unread;
};

/* A core on no raft node (plain: every client administers), two client
 * connections, c (id 5) and other (id 6), and the time of its inputs. */
struct corefix {
        struct config cfg;
        struct corefix_fake fake;
        struct gateway g;
        struct corefix_conn c, other;
        struct gateway_now now;
        uint64_t next_id;
        bool closed; /* the test closed the core itself */
};

/* A fake host whose state machine is new and empty, whose leader is
 * OTHER (127.0.0.1:7002), and whose connection ops are corefix_conn's;
 * lockfsm_destroy() its `fsm` when done. */
void corefix_fake_init(struct corefix_fake *f);

/* cmocka's setup and teardown: a struct corefix in *state; teardown
 * reports the connections not yet gone and closes the core, unless the
 * test did. */
int corefix_setup(void **state);
int corefix_teardown(void **state);

/* Report `conn` gone to the core, as a host does between inputs. */
void corefix_gone(struct corefix *x, struct corefix_conn *conn);

/* Hand the core one whole frame from `conn` (c for corefix_send_frame());
 * its id. */
uint64_t corefix_send_on(struct corefix *x, struct corefix_conn *conn,
                         const uint8_t *frame, size_t len);
uint64_t corefix_send_frame(struct corefix *x, const uint8_t *frame,
                            size_t len);
/* A request of each kind on c; its id. */
uint64_t corefix_send_query(struct corefix *x);
uint64_t corefix_send_acl_list(struct corefix *x);
uint64_t corefix_send_member_remove(struct corefix *x, uint64_t member);
uint64_t corefix_send_status(struct corefix *x, uint16_t flags);
uint64_t corefix_send_transfer(struct corefix *x, uint64_t to);
/* An ACL SET, proposed only with TLS on (the config is read at the
 * frame). */
uint64_t corefix_send_acl_set(struct corefix *x);
/* An OPEN of a session on `conn`, proposed at the next flush. */
uint64_t corefix_send_open_on(struct corefix *x, struct corefix_conn *conn);
uint64_t corefix_send_open(struct corefix *x);

/* The next frame the core wrote to `conn` (c for corefix_next_reply()),
 * if any. */
bool corefix_next_on(struct corefix_conn *conn, struct proto_header *h,
                     const uint8_t **body);
bool corefix_next_reply(struct corefix *x, struct proto_header *h,
                        const uint8_t **body);
/* The next reply on c is NOT_LEADER to request `id`, naming `leader` at
 * `address`. */
void corefix_expect_not_leader(struct corefix *x, uint64_t id, uint64_t leader,
                               const char *address);
/* The next reply on `conn` (c) is a RESULT to request `id` with
 * `status`. */
void corefix_expect_status_on(struct corefix_conn *conn, uint64_t id,
                              int status);
void corefix_expect_status(struct corefix *x, uint64_t id, int status);
/* Nothing more was written to c. */
void corefix_expect_nothing(struct corefix *x);

/* Apply `cmd` to the fake host's state machine as entry `index`, whose
 * events go into the core (gateway_on_event(), term 0) as the node's do;
 * the state machine's outcome. */
struct lockfsm_result corefix_apply(struct corefix *x, uint64_t index,
                                    const struct command *cmd);

/* The host completes request `i` of those it was handed. */
void corefix_complete(struct corefix *x, unsigned i, int status);

#endif /* TESTS_UNIT_COREFIX_H */
