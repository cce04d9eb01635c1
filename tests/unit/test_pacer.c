/* The pacer (src/server/net/pacer.h) on a real libuv loop: work past a
 * turn's budget waits for later turns, oldest first, a turn resumes only
 * as much as its budget has room for, and while work waits the loop does
 * not block. The work's cost is told to the pacer (pacer_spend), never
 * measured, so no case depends on the machine's speed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include <uv.h>

#include "../../src/server/net/pacer.h"

#define N 4

struct fix {
        uv_loop_t loop;
        uv_timer_t far; /* an hour away: keeps the loop alive, as batond's
                           handles do (the pacer's own do not) */
        struct pacer p;
        struct queue items[N];
        int order[N * 2]; /* which item each resume did */
        int n_done;
        uint64_t cost; /* what each resume spends */
        int again;     /* item to defer again once when resumed (-1) */
};

static void on_timer(uv_timer_t *t)
{
        (void)t;
}

static void resume(void *data, struct queue *item)
{
        struct fix *f = data;
        int i = (int)(item - f->items);

        f->order[f->n_done++] = i;
        pacer_spend(&f->p, f->cost);
        if (i == f->again) {
                f->again = -1;
                pacer_defer(&f->p, item);
        }
}

static int setup(void **state)
{
        struct fix *f = calloc(1, sizeof *f);

        assert_non_null(f);
        assert_int_equal(uv_loop_init(&f->loop), 0);
        assert_int_equal(pacer_init(&f->p, &f->loop, 100, resume, f), 0);
        uv_timer_init(&f->loop, &f->far);
        uv_timer_start(&f->far, on_timer, 3600 * 1000, 0);
        for (int i = 0; i < N; i++) {
                queue_init(&f->items[i]);
        }
        f->cost = 60;
        f->again = -1;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fix *f = *state;

        pacer_close(&f->p);
        uv_close((uv_handle_t *)&f->far, NULL);
        assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
        assert_int_equal(uv_loop_close(&f->loop), 0);
        free(f);
        return 0;
}

/* The budget: room until what was spent reaches it. */
static void room_until_budget_spent(void **state)
{
        struct fix *f = *state;

        assert_true(pacer_room(&f->p));
        pacer_spend(&f->p, 99);
        assert_true(pacer_room(&f->p));
        pacer_spend(&f->p, 1);
        assert_false(pacer_room(&f->p));
}

/* Four pieces deferred; each turn resumes them oldest first until the
 * budget (100) is spent: 60 + 60 crosses it, so two a turn. */
static void deferred_resume_oldest_first_two_a_turn(void **state)
{
        struct fix *f = *state;

        for (int i = 0; i < N; i++) {
                pacer_defer(&f->p, &f->items[i]);
        }
        assert_int_equal(f->p.deferred, N);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 2);
        assert_int_equal(f->order[0], 0);
        assert_int_equal(f->order[1], 1);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 4);
        assert_int_equal(f->order[2], 2);
        assert_int_equal(f->order[3], 3);
        assert_true(queue_empty(&f->p.waiting));
}

/* One piece that spends more than the budget ends the turn: the next
 * waits for the next turn, which starts with a full budget. */
static void one_piece_over_budget_ends_the_turn(void **state)
{
        struct fix *f = *state;

        f->cost = 200;
        pacer_defer(&f->p, &f->items[0]);
        pacer_defer(&f->p, &f->items[1]);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 1);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 2);
        assert_int_equal(f->order[1], 1);
}

/* Deferring what waits already keeps its place; a cancelled piece is not
 * resumed; one resumed may defer itself again, to the back. */
static void defer_twice_cancel_and_again(void **state)
{
        struct fix *f = *state;

        f->cost = 10;
        pacer_defer(&f->p, &f->items[0]);
        pacer_defer(&f->p, &f->items[1]);
        pacer_defer(&f->p, &f->items[2]);
        pacer_defer(&f->p, &f->items[0]); /* waits already: stays first */
        assert_int_equal(f->p.deferred, 3);
        pacer_cancel(&f->items[1]);
        f->again = 0;
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 3);
        assert_int_equal(f->order[0], 0);
        assert_int_equal(f->order[1], 2);
        assert_int_equal(f->order[2], 0); /* deferred again, resumed last */
}

/* While work waits the loop does not block in poll, though the timer an
 * hour away would let it; once none waits it would block again. */
static void waiting_work_keeps_poll_from_blocking(void **state)
{
        struct fix *f = *state;

        uv_run(&f->loop, UV_RUN_NOWAIT); /* a fresh loop says 0 */
        assert_true(uv_backend_timeout(&f->loop) > 1000);
        f->cost = 200;
        pacer_defer(&f->p, &f->items[0]);
        pacer_defer(&f->p, &f->items[1]);
        assert_int_equal(uv_backend_timeout(&f->loop), 0);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(uv_backend_timeout(&f->loop), 0);
        uv_run(&f->loop, UV_RUN_NOWAIT);
        assert_int_equal(f->n_done, 2);
        assert_true(uv_backend_timeout(&f->loop) > 1000);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(room_until_budget_spent, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                deferred_resume_oldest_first_two_a_turn, setup, teardown),
            cmocka_unit_test_setup_teardown(one_piece_over_budget_ends_the_turn,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(defer_twice_cancel_and_again, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                waiting_work_keeps_poll_from_blocking, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
