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
#include "../../src/fsm/entry.h"
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
        bool done; /* completed (corefix_complete()) */
};

/* The fake host's ops, as its effect list names them. */
enum corefix_op {
        COREFIX_RESERVE,
        COREFIX_COMMIT,
        COREFIX_FAIL,
        COREFIX_BACKLOG,
        COREFIX_LOCKFSM,
        COREFIX_LOCKFSM_NOWAIT,
        COREFIX_LEADER,
        COREFIX_LAST_APPLIED,
        COREFIX_LAST_INDEX,
        COREFIX_STATUS,
        COREFIX_RESTORES,
        COREFIX_ACL,
        COREFIX_ACL_EPOCH,
        COREFIX_DIRECTORY,
        COREFIX_HAS_MEMBER,
        COREFIX_DIGEST,
        COREFIX_LOG,
        COREFIX_TIMER,
        COREFIX_ENTRY_ALLOC,
        COREFIX_ENTRY_FREE,
        COREFIX_PROPOSE,
        COREFIX_BARRIER,
        COREFIX_CHANGE,
        COREFIX_PROBE,
        COREFIX_TRANSFER,
        COREFIX_AUDIT,
        COREFIX_N_OPS,
};

/*
 * One op the core called on the fake host, in the order it called them:
 * the core's effects, and the questions it asked on the way. `arg` is what
 * the op was given that a test asserts on: a commit's frame type, a fail's
 * request id, the timer's at_ms, a change's, probe's or transfer's member,
 * an audit line's result (0 or the BATON_E* code, negated).
 * A commit also has its frame's request id in `id`; a proposal has the
 * entry as raft got it (a batch's commands' types, in order; one
 * command's type, with `batch` false); a raft request its index in
 * corefix_fake.sent.
 */
struct corefix_effect {
        enum corefix_op op;
        struct corefix_conn *conn; /* a connection op's */
        uint64_t arg;
        uint64_t id;
        unsigned sent;
        bool batch;
        uint64_t term; /* a batch's */
        uint32_t n;    /* commands in the entry */
        uint8_t types[ENTRY_MAX_COMMANDS];
        /* An audit line: "ACTION TARGET RESULT by IDENTITY at ADDRESS:
         * DETAIL", the result "ok" or a BATON_E* name (base/audit.h). */
        char audit[256];
};

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
        bool has_member;  /* what has_member() says */
        bool voter;       /* status() has member OTHER, a voter */
        uint64_t applied; /* what last_applied() says: 40 at first */
        /* What last_index() says: 41 at first; each proposal and
         * barrier appends an entry to raft's log, as raft does. */
        uint64_t last_index;
        /* What digest_to_propose() says: true once, when set. */
        bool digest;
        uint64_t restores;         /* what restores() says were started: 0 */
        struct corefix_sent *sent; /* as many as the core sends */
        unsigned n_sent, cap_sent;
        /* Every op call, in order (the effect list). */
        struct corefix_effect *effects;
        size_t n_effects, cap_effects;
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
 * corefix_fake_close() it when done. */
void corefix_fake_init(struct corefix_fake *f);

/* Free what corefix_fake_init() made: its state machine, its effect
 * list. */
void corefix_fake_close(struct corefix_fake *f);

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
/* A QUERY of "a" on `conn` (c for corefix_send_query()); its id. */
uint64_t corefix_send_query_on(struct corefix *x, struct corefix_conn *conn);
/* An exact WATCH of "a" on `conn`, from what the node applied; its id. */
uint64_t corefix_send_watch_on(struct corefix *x, struct corefix_conn *conn);
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

/* The same for a batch of `n` commands, whose entry is stamped 0. */
void corefix_apply_batch(struct corefix *x, uint64_t index,
                         const struct command *cmds, unsigned n);

/* The host completes request `i` of those it was handed. */
void corefix_complete(struct corefix *x, unsigned i, int status);

/* --- The effect list ---------------------------------------------------- */

/* Where the effect list ends now: the effects of what the test does next
 * are those from here on. */
size_t corefix_mark(const struct corefix *x);
/* How many of the effects from `from` on are calls of `op`. */
unsigned corefix_count(const struct corefix *x, size_t from,
                       enum corefix_op op);
/* The `nth` (from 0) call of `op` from `from` on; NULL when there are
 * fewer. */
const struct corefix_effect *corefix_nth(const struct corefix *x, size_t from,
                                         enum corefix_op op, unsigned nth);
/* Exactly `n` calls of `op` from `from` on; when not, the effect list from
 * `from` on goes to stderr before the test fails, so a red run shows what
 * the core did instead. */
void corefix_expect_count(const struct corefix *x, size_t from,
                          enum corefix_op op, unsigned n);
/* The effect list from `from` on, one line each, to stderr. */
void corefix_print(const struct corefix *x, size_t from);

#endif /* TESTS_UNIT_COREFIX_H */
