/* The fixtures every unit test program of the lock state machine shares. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lockfsmcase.h"

void lockfsmcase_small_limits(struct lockfsm_limits *l)
{
        lockfsm_limits_default(l);
        l->max_sessions = 4;
        l->max_locks_per_session = 3;
        l->max_waiters_per_lock = 2;
        l->max_inflight = 4;
        l->max_tombstones = 3;
        l->min_ttl_ms = 100;
        l->max_ttl_ms = 60000;
}

int lockfsmcase_setup(void **state)
{
        struct lockfsm_limits l;

        lockfsmcase_small_limits(&l);
        *state = fsmtest_new(&l);
        return 0;
}

int lockfsmcase_teardown(void **state)
{
        struct fsmtest *t = *state;

        /* Every test leaves a consistent machine behind. */
        assert_null(lockfsm_check(t->f));
        fsmtest_close(t);
        free(t);
        return 0;
}

void lockfsmcase_result_last(const struct fsmtest *t, int status)
{
        const struct fsmtest_event *e = &t->events[t->n_events - 1];

        assert_int_equal(e->type, LOCKFSM_EV_RESULT);
        assert_int_equal(e->index, t->index);
        assert_int_equal(e->status, status);
}
