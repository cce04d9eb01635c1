/* Test harness for the lock state machine: builds, applies, records events. */
#ifndef TESTS_FSMTEST_H
#define TESTS_FSMTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/fsm/lockfsm.h"

#define FSMTEST_MAX_EVENTS 4096

struct fsmtest_event {
        uint8_t type;
        uint8_t cause;
        uint64_t index;
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        int status;
        uint32_t wait_ms;             /* QUEUE; BLOCK: the delay */
        uint32_t granted_s;           /* GRANT, RELEASE */
        uint64_t clock_ms;            /* the state's clock then */
        struct lockfsm_result result; /* RESULT events */
        char name[COMMAND_NAME_MAX + 1];
        char by[COMMAND_CLIENT_NAME_MAX + 1]; /* END of a REVOKE */
};

struct fsmtest {
        struct lockfsm *f;
        uint64_t index; /* the last index applied */
        int last_rv;    /* lockfsm_apply's return of the last apply */
        unsigned n_events;
        struct fsmtest_event events[FSMTEST_MAX_EVENTS];
};

/* Aborts the test (assert) if the machine cannot be created. */
void fsmtest_init(struct fsmtest *t, const struct lockfsm_limits *limits,
                  const struct mem *mem);
void fsmtest_close(struct fsmtest *t);

/* cmocka fixtures for the tests of one machine. fsmtest_new() allocates
 * and initialises a harness of `limits` (NULL: the defaults);
 * fsmtest_setup() puts one of default limits in *state. fsmtest_teardown()
 * asserts that the test left a machine that keeps every invariant and that
 * a snapshot restores byte for byte (fsmtest_round_trips()), then frees
 * it. */
struct fsmtest *fsmtest_new(const struct lockfsm_limits *limits);
int fsmtest_setup(void **state);
int fsmtest_teardown(void **state);

/* Encode `c` and apply it at the next index. */
struct lockfsm_result fsmtest_apply(struct fsmtest *t, const struct command *c);
/* Apply raw bytes at the next index. */
struct lockfsm_result fsmtest_apply_raw(struct fsmtest *t, const void *buf,
                                        size_t len);

/* Encode `n` commands as one batch entry (entry.h) and apply it at the
 * next index; each command's outcome is in its RESULT event. */
struct lockfsm_result fsmtest_apply_batch(struct fsmtest *t,
                                          const struct command *c, unsigned n);
/* The outcome of the command `seq` of `session` (0, nonce for an OPEN) in
 * its latest RESULT event; asserts there is one. */
struct lockfsm_result fsmtest_result_of(const struct fsmtest *t,
                                        uint64_t session, uint64_t seq);

/* Commands for batches; client commands use ack = seq. */
struct command fsmtest_acquire_cmd(uint64_t session, uint64_t seq,
                                   uint64_t owner, const char *name,
                                   uint32_t wait_ms);
struct command fsmtest_release_cmd(uint64_t session, uint64_t seq,
                                   uint64_t owner, const char *name,
                                   uint64_t token);

/* Shorthands; client commands use ack = seq (every earlier seq answered). */
uint64_t fsmtest_open(struct fsmtest *t, uint64_t nonce); /* asserts OPENED */
struct lockfsm_result fsmtest_acquire(struct fsmtest *t, uint64_t session,
                                      uint64_t seq, uint64_t owner,
                                      const char *name, uint32_t wait_ms);
/* A MULTI of the names in `spec`, separated by spaces, each taken
 * exclusive, or shared when it ends in "/r" ("a b/r c"). */
struct lockfsm_result fsmtest_multi(struct fsmtest *t, uint64_t session,
                                    uint64_t seq, uint64_t owner,
                                    const char *spec, uint32_t wait_ms);
struct lockfsm_result fsmtest_release(struct fsmtest *t, uint64_t session,
                                      uint64_t seq, uint64_t owner,
                                      const char *name, uint64_t token);
struct lockfsm_result fsmtest_close_session(struct fsmtest *t, uint64_t session,
                                            uint64_t seq);
struct lockfsm_result fsmtest_expire(struct fsmtest *t, uint64_t session);
struct lockfsm_result fsmtest_cancel(struct fsmtest *t, uint64_t session,
                                     uint64_t seq, const char *name,
                                     uint64_t target);
struct lockfsm_result fsmtest_timeout(struct fsmtest *t, uint64_t session,
                                      const char *name, uint64_t target);
struct lockfsm_result fsmtest_query(struct fsmtest *t, const char *name);
struct lockfsm_result fsmtest_check(struct fsmtest *t, const char *name,
                                    uint64_t token);

/* The i-th recorded event of a type (from 0), or NULL. */
const struct fsmtest_event *fsmtest_find(const struct fsmtest *t, uint8_t type,
                                         unsigned nth);
unsigned fsmtest_count(const struct fsmtest *t, uint8_t type);

/* Snapshot bytes (malloc'd) of a machine; asserts success. */
void *fsmtest_snapshot(const struct lockfsm *f, size_t *len);
/* True when two machines' snapshots are byte-identical. */
bool fsmtest_same_state(const struct lockfsm *a, const struct lockfsm *b);

/* The token of the GRANT event for session `s`'s ACQUIRE `seq` (0: no
 * such grant among the recorded events). */
uint64_t fsmtest_granted(const struct fsmtest *t, uint64_t s, uint64_t seq);

/* Whether `f` keeps every invariant, and a snapshot of it restores (into
 * a machine of default limits) to the same state, which keeps them too. */
bool fsmtest_round_trips(const struct lockfsm *f);

#endif /* TESTS_FSMTEST_H */
