/* A watch's queue of events (src/client/watchq.c): one copy of a frame's
 * event however many watches it goes to, events in the order they came,
 * and a bound past which the watch is cut off instead of losing one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/client/watchq.h"

/* An event of `index` on the lock "L". */
static struct proto_watch_event event(uint64_t index)
{
        struct proto_watch_event e;

        memset(&e, 0, sizeof e);
        e.index = index;
        e.ord = 1;
        e.kind = PROTO_EVENT_GRANTED;
        e.token = index;
        e.name = (struct proto_string){"L", 1};
        e.value = (struct proto_string){"v", 1};
        return e;
}

/* A frame's event pushed to two watches is one copy, held twice; each
 * watch reads it, and the second read lets go of it. */
static void one_copy_per_frame(void **state)
{
        struct watchq a = {0}, b = {0};
        struct proto_watch_event e = event(7);
        struct baton_event ev;
        void *shared = NULL;
        struct watchq_item *it;

        (void)state;
        assert_true(watchq_push(&a, &e, &shared));
        assert_non_null(shared);
        it = shared;
        assert_true(watchq_push(&b, &e, &shared));
        assert_ptr_equal(shared, it);
        assert_int_equal(it->refs, 2);
        assert_true(watchq_take(&a, &ev));
        assert_int_equal(ev.index, 7);
        assert_int_equal(ev.token, 7);
        assert_string_equal(ev.name, "L");
        assert_string_equal(ev.value, "v");
        assert_int_equal(it->refs, 1);
        assert_false(watchq_take(&a, &ev));
        watchq_close(&a);
        watchq_close(&b);
}

/* Events come out in the order they went in, across the ring's growth. */
static void in_order(void **state)
{
        struct watchq q = {0};
        struct baton_event ev;

        (void)state;
        for (uint64_t i = 1; i <= 100; i++) {
                struct proto_watch_event e = event(i);
                void *shared = NULL;
                assert_true(watchq_push(&q, &e, &shared));
                if (i % 3 == 0) {
                        assert_true(watchq_take(&q, &ev));
                        assert_int_equal(ev.index, i / 3);
                }
        }
        for (uint64_t i = 34; i <= 100; i++) {
                assert_true(watchq_take(&q, &ev));
                assert_int_equal(ev.index, i);
        }
        assert_false(watchq_take(&q, &ev));
        watchq_close(&q);
}

/* WATCHQ_MAX events unread fill the queue: the next is refused (the watch
 * ends with BATON_ESLOW rather than skip it), and an emptied large ring
 * is given back. */
static void bounded(void **state)
{
        struct watchq q = {0};
        struct proto_watch_event e = event(1);
        void *shared = NULL;
        struct watchq_item *it;

        (void)state;
        for (unsigned i = 0; i < WATCHQ_MAX; i++) {
                assert_true(watchq_push(&q, &e, &shared));
        }
        assert_int_equal(q.n, WATCHQ_MAX);
        assert_false(watchq_push(&q, &e, &shared));
        assert_int_equal(q.n, WATCHQ_MAX);
        while ((it = watchq_pop(&q)) != NULL) {
                watchq_unref(it);
        }
        assert_int_equal(q.n, 0);
        assert_null(q.ring);
        assert_int_equal(q.cap, 0);
        watchq_close(&q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(one_copy_per_frame),
            cmocka_unit_test(in_order),
            cmocka_unit_test(bounded),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
