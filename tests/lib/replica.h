/* A replica of the server's state machine for unit tests: a raftfsm with a
 * struct raft of its own standing in for libraft. fsm->apply reads only
 * that struct's last_applied and state, which replica_apply() advances as
 * libraft does. Used by the tests of restores on a worker thread and of
 * data from a newer release. Failures are cmocka assertions. */
#ifndef TESTS_REPLICA_H
#define TESTS_REPLICA_H

#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "../../src/server/raft/raftfsm.h"

/* One lock state machine event, as far as these tests compare them. */
struct replica_event {
        uint8_t type;
        uint64_t index, session, seq, token;
        int status;
};

#define REPLICA_MAX_EVENTS 8192

struct replica {
        struct raftfsm rf;
        struct raft raft;  /* only last_applied and state are used */
        unsigned n_failed; /* restore failures reported */
        char why[512];     /* the last one's message */
        /* The events, once replica_record_events() was called. */
        struct replica_event *ev;
        unsigned n_ev;
};

/* A follower whose restores run as `mode` says, inline images, no
 * snapshot taken on its own. */
struct replica *replica_new(enum raftfsm_restore_mode mode);

/* Record every event the state machine reports in r->ev (at most
 * REPLICA_MAX_EVENTS). */
void replica_record_events(struct replica *r);

void replica_free(struct replica *r);

/* Hand `len` bytes to fsm->apply as libraft does: when it answers 0,
 * last_applied moves on. *result (may be NULL) gets apply's result. */
int replica_apply_bytes(struct replica *r, const void *bytes, size_t len,
                        void **result);

#endif /* TESTS_REPLICA_H */
