/* A replica of the server's state machine for unit tests (see replica.h). */
#include "replica.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

static void on_event(void *data, const struct lockfsm_event *e)
{
        struct replica *r = data;
        struct replica_event *s;

        assert_true(r->n_ev < REPLICA_MAX_EVENTS);
        s = &r->ev[r->n_ev++];
        s->type = e->type;
        s->index = e->index;
        s->session = e->session;
        s->seq = e->seq;
        s->token = e->token;
        s->status = e->result != NULL ? e->result->status : e->status;
}

static void on_failed(void *data, const char *why)
{
        struct replica *r = data;

        r->n_failed++;
        snprintf(r->why, sizeof r->why, "%s", why);
}

struct replica *replica_new(enum raftfsm_restore_mode mode)
{
        struct replica *r = calloc(1, sizeof *r);

        assert_non_null(r);
        assert_int_equal(raftfsm_init(&r->rf, NULL), 0);
        raftfsm_attach(&r->rf, &r->raft);
        raftfsm_set_snapshots(&r->rf, SNAPIMAGE_INLINE, 0, NULL);
        raftfsm_set_restore(&r->rf, mode, on_failed, r);
        r->raft.state = RAFT_FOLLOWER;
        return r;
}

void replica_record_events(struct replica *r)
{
        r->ev = calloc(REPLICA_MAX_EVENTS, sizeof *r->ev);
        assert_non_null(r->ev);
        raftfsm_set_event_cb(&r->rf, on_event, r);
}

void replica_free(struct replica *r)
{
        raftfsm_close(&r->rf);
        free(r->ev);
        free(r);
}

int replica_apply_bytes(struct replica *r, const void *bytes, size_t len,
                        void **result)
{
        struct raft_buffer buf = {(void *)bytes, len};
        void *res = NULL;
        int rv = r->rf.fsm.apply(&r->rf.fsm, &buf, &res);

        if (rv == 0) {
                r->raft.last_applied++;
        }
        if (result != NULL) {
                *result = res;
        }
        return rv;
}
