/* Unit tests for the leader's deadlines (src/server/gateway/deadlines.h),
 * which read no clock: the time is what each call is given, so every case
 * runs at chosen times. They check the one timer the owner is asked for
 * (always the earliest deadline, DEADLINES_NEVER when none is left), and
 * what deadlines_run() fires at a given time: what is due, earliest
 * first, each moved retry_ms on, and no more leases than it is given
 * room for. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../src/server/gateway/deadlines.h"

#define RETRY_MS  1000
#define MAX_FIRED 16

/* The owner: what it was asked to arm, and what fired, in order. */
struct owner {
        struct deadlines d;
        uint64_t armed; /* the last time asked for */
        unsigned arms;  /* how many times it was asked */
        struct {
                uint64_t session;
                uint64_t seq;
                char name[16];
        } fired[MAX_FIRED];
        unsigned n_fired;
        bool drop_on_fire; /* as a GRANT or END would, before it re-fires */
};

static void on_fire(void *data, const struct deadline *x)
{
        struct owner *o = data;

        assert_true(o->n_fired < MAX_FIRED);
        o->fired[o->n_fired].session = x->session;
        o->fired[o->n_fired].seq = x->seq;
        memcpy(o->fired[o->n_fired].name, x->name, x->name_len);
        o->fired[o->n_fired].name[x->name_len] = '\0';
        o->n_fired++;
        if (o->drop_on_fire) {
                deadlines_drop(&o->d, x->session, x->seq);
        }
}

static void on_arm(void *data, uint64_t at)
{
        struct owner *o = data;

        o->armed = at;
        o->arms++;
}

static void setup(struct owner *o)
{
        memset(o, 0, sizeof *o);
        deadlines_init(&o->d, RETRY_MS, on_fire, on_arm, o);
}

static void lease(struct owner *o, uint64_t session, uint64_t at)
{
        assert_int_equal(deadlines_set(&o->d, session, 0, NULL, 0, at), 0);
}

static void wait_for(struct owner *o, uint64_t session, uint64_t seq,
                     const char *name, uint64_t at)
{
        assert_int_equal(
            deadlines_set(&o->d, session, seq, name, strlen(name), at), 0);
}

static void assert_fired(const struct owner *o, unsigned i, uint64_t session,
                         uint64_t seq, const char *name)
{
        assert_true(i < o->n_fired);
        assert_int_equal(o->fired[i].session, session);
        assert_int_equal(o->fired[i].seq, seq);
        assert_string_equal(o->fired[i].name, name);
}

/* Every change asks for the earliest deadline, whether a lease (packed
 * apart) or a waiter's; nothing left asks for none. */
static void arms_for_the_earliest(void **state)
{
        struct owner o;

        (void)state;
        setup(&o);
        assert_int_equal(o.arms, 0); /* init arms nothing */
        assert_int_equal(deadlines_next(&o.d), DEADLINES_NEVER);
        wait_for(&o, 2, 5, "a", 500);
        assert_int_equal(o.armed, 500);
        lease(&o, 1, 300);
        assert_int_equal(o.armed, 300);
        wait_for(&o, 3, 7, "b", 100);
        assert_int_equal(o.armed, 100);
        assert_int_equal(deadlines_next(&o.d), 100);
        /* Moved later: the lease is the earliest now. */
        wait_for(&o, 3, 7, "b", 900);
        assert_int_equal(o.armed, 300);
        deadlines_drop(&o.d, 1, 0);
        assert_int_equal(o.armed, 500);
        deadlines_drop(&o.d, 2, 5);
        assert_int_equal(o.armed, 900);
        deadlines_drop(&o.d, 3, 7);
        assert_int_equal(o.armed, DEADLINES_NEVER);
        deadlines_close(&o.d);
}

/* Leadership lost: everything goes, and no timer is wanted. */
static void clear_arms_never(void **state)
{
        struct owner o;

        (void)state;
        setup(&o);
        lease(&o, 1, 300);
        wait_for(&o, 2, 5, "a", 200);
        deadlines_clear(&o.d);
        assert_int_equal(o.armed, DEADLINES_NEVER);
        assert_int_equal(deadlines_next(&o.d), DEADLINES_NEVER);
        deadlines_run(&o.d, 10000, UINT32_MAX);
        assert_int_equal(o.n_fired, 0);
        deadlines_close(&o.d);
}

/* At a chosen time, what is due fires, earliest first, and nothing else;
 * each moves retry_ms after that time, in case its proposal is lost, and
 * the timer is asked for what is left. */
static void run_fires_what_is_due(void **state)
{
        struct owner o;

        (void)state;
        setup(&o);
        lease(&o, 1, 100);
        wait_for(&o, 2, 5, "a", 150);
        wait_for(&o, UINT64_MAX, 9, "held", 200); /* a lock-delay */
        lease(&o, 3, 400);

        /* Early (a timer that fired before its time): nothing is due. */
        deadlines_run(&o.d, 99, UINT32_MAX);
        assert_int_equal(o.n_fired, 0);
        assert_int_equal(o.armed, 100);

        deadlines_run(&o.d, 160, UINT32_MAX);
        assert_int_equal(o.n_fired, 2);
        assert_fired(&o, 0, 1, 0, "");
        assert_fired(&o, 1, 2, 5, "a");
        assert_int_equal(o.armed, 200);

        /* The rest come due, then the first two again, retry_ms after
         * they fired. */
        o.n_fired = 0;
        deadlines_run(&o.d, 160 + RETRY_MS, UINT32_MAX);
        assert_int_equal(o.n_fired, 4);
        assert_fired(&o, 0, UINT64_MAX, 9, "held");
        assert_fired(&o, 1, 3, 0, "");
        assert_true((o.fired[2].session == 1 && o.fired[3].session == 2) ||
                    (o.fired[2].session == 2 && o.fired[3].session == 1));
        assert_int_equal(o.armed, 160 + 2 * RETRY_MS);
        deadlines_close(&o.d);
}

/* A deadline its own proposal settles at once (the owner drops it inside
 * the callback) fires once and is not asked for again. */
static void dropped_in_fire_is_gone(void **state)
{
        struct owner o;

        (void)state;
        setup(&o);
        o.drop_on_fire = true;
        lease(&o, 1, 100);
        wait_for(&o, 2, 5, "a", 120);
        lease(&o, 3, 5000);
        deadlines_run(&o.d, 130, UINT32_MAX);
        assert_int_equal(o.n_fired, 2);
        assert_fired(&o, 0, 1, 0, "");
        assert_fired(&o, 1, 2, 5, "a");
        assert_int_equal(o.armed, 5000);
        assert_int_equal(deadlines_next(&o.d), 5000);
        deadlines_close(&o.d);
        assert_int_equal(o.armed, DEADLINES_NEVER);
}

/* At most max_leases leases fire in a run; the rest stay due where they
 * are, held: they arm only a run retry_ms later (the waits behind them
 * still fire, and still arm) until deadlines_kick(), which asks for a
 * call at once, and the next run fires them, earliest first, not moved by
 * the wait. */
static void leases_beyond_the_room_are_held(void **state)
{
        struct owner o;

        (void)state;
        setup(&o);
        lease(&o, 1, 100);
        lease(&o, 2, 110);
        lease(&o, 3, 120);
        wait_for(&o, 4, 7, "w", 115);
        wait_for(&o, 5, 8, "x", 900);
        deadlines_run(&o.d, 200, 1);
        assert_int_equal(o.n_fired, 2);
        assert_fired(&o, 0, 1, 0, "");
        assert_fired(&o, 1, 4, 7, "w");
        assert_true(o.d.held);
        assert_int_equal(o.armed, 900); /* not the due leases 2 and 3 */
        assert_int_equal(deadlines_next(&o.d), 900);

        /* A lease moved meanwhile (a keepalive) still arms nothing. */
        lease(&o, 3, 130);
        assert_int_equal(o.armed, 900);

        deadlines_kick(&o.d);
        assert_false(o.d.held);
        assert_int_equal(o.armed, 110);
        deadlines_run(&o.d, 300, 8);
        assert_int_equal(o.n_fired, 4);
        assert_fired(&o, 2, 2, 0, "");
        assert_fired(&o, 3, 3, 0, "");
        assert_false(o.d.held);
        assert_int_equal(o.armed, 900);

        /* Kicked with nothing held: no new call asked for. */
        o.arms = 0;
        deadlines_kick(&o.d);
        assert_int_equal(o.arms, 0);

        /* No room at all: every lease is held, none fires, and the next
         * call is asked for retry_ms on, before the wait still to come;
         * that run fires what it has room for, earliest first (lease 1
         * again, since nothing dropped it). */
        deadlines_drop(&o.d, 4, 7);
        deadlines_drop(&o.d, 5, 8);
        wait_for(&o, 8, 9, "y", 3000);
        lease(&o, 6, 950);
        deadlines_run(&o.d, 1000, 0);
        assert_int_equal(o.n_fired, 4);
        assert_true(o.d.held);
        assert_int_equal(o.armed, 1000 + RETRY_MS);
        deadlines_run(&o.d, 1000 + RETRY_MS, 2);
        assert_int_equal(o.n_fired, 6);
        assert_fired(&o, 4, 6, 0, "");
        assert_fired(&o, 5, 1, 0, "");
        assert_true(o.d.held); /* leases 2 and 3 */
        deadlines_close(&o.d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(arms_for_the_earliest),
            cmocka_unit_test(clear_arms_never),
            cmocka_unit_test(run_fires_what_is_due),
            cmocka_unit_test(dropped_in_fire_is_gone),
            cmocka_unit_test(leases_beyond_the_room_are_held),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
