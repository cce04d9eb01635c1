/* The record of what each endpoint answered (src/client/reach.c): when a
 * pass over the endpoints fails, with which code and which words, and what
 * a waiting call answers, sent or not, before and at its deadline. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/reach.h"

static const char eps[3][REACH_ADDR_MAX] = {"a:1", "b:2", "c:3"};

static int setup(void **state)
{
        static struct reach r;

        assert_int_equal(reach_init(&r, eps, 3), 0);
        *state = &r;
        return 0;
}

static int teardown(void **state)
{
        reach_close(*state);
        return 0;
}

/* Every endpoint refused: the pass fails on the last of them, with
 * BATON_ECONNECT and each endpoint's reason, and the next pass begins. */
static void refused_everywhere(void **state)
{
        struct reach *r = *state;

        assert_int_equal(
            reach_note(r, 0, REACH_REFUSED, false, "connection refused"),
            REACH_GOING);
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "name does not resolve"),
            REACH_GOING);
        assert_false(reach_failed_since(r, 1));
        assert_int_equal(
            reach_note(r, 1, REACH_REFUSED, false, "connection refused"),
            REACH_FAILED);
        assert_true(reach_failed_since(r, 1));
        assert_false(reach_failed_since(r, 2));
        assert_int_equal(r->pass, 2);
        assert_int_equal(r->failed_code, BATON_ECONNECT);
        assert_string_equal(r->failed_why,
                            "cannot connect to any node: a:1: connection "
                            "refused; b:2: connection refused; c:3: name "
                            "does not resolve");
}

/* One endpoint failed in TLS: the pass's code is BATON_ETLS. */
static void tls_anywhere(void **state)
{
        struct reach *r = *state;

        reach_note(r, 0, REACH_REFUSED, false, "connection refused");
        reach_note(r, 1, REACH_REFUSED, true, "TLS: unknown CA");
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused"),
            REACH_FAILED);
        assert_int_equal(r->failed_code, BATON_ETLS);
}

/* A node that answered (even "no leader"), or one lost after answering,
 * keeps the pass from failing. */
static void answers_keep_it_alive(void **state)
{
        struct reach *r = *state;

        reach_note(r, 0, REACH_REFUSED, false, "connection refused");
        reach_note(r, 1, REACH_NO_LEADER, false, "no leader");
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused"),
            REACH_OVER);
        reach_note(r, 0, REACH_LOST, false, "stopped answering");
        reach_note(r, 1, REACH_REFUSED, false, "connection refused");
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused"),
            REACH_OVER);
        assert_int_equal(r->failed_pass, 0);
        assert_int_equal(r->pass, 3);
}

/* A skipped endpoint counts with its last outcome; one never tried does
 * not count. An address that is not an endpoint is not recorded. */
static void skips_and_strangers(void **state)
{
        struct reach *r = *state;

        assert_int_equal(reach_skip(r, 0), REACH_GOING);
        assert_int_equal(r->ends[0].pass, 0);
        assert_int_equal(reach_index(r, "d:4"), -1);
        assert_int_equal(reach_index(r, "b:2"), 1);
        assert_int_equal(reach_note(r, -1, REACH_REFUSED, false, "x"),
                         REACH_GOING);
        reach_note(r, 0, REACH_REFUSED, false, "connection refused");
        reach_note(r, 1, REACH_REFUSED, false, "connection refused");
        assert_int_equal(reach_note(r, 2, REACH_LOST, false, "lost"),
                         REACH_OVER);
        assert_int_equal(reach_skip(r, 0), REACH_GOING);
        reach_note(r, 2, REACH_REFUSED, false, "connection refused");
        assert_int_equal(reach_skip(r, 1), REACH_FAILED);
}

/* What a waiting call answers. */
static void answers_of_a_call(void **state)
{
        struct reach *r = *state;
        char buf[REACH_TEXT_MAX];
        uint64_t mark = r->pass;

        /* Nothing known yet: wait; at the deadline, plain no answer. */
        assert_int_equal(reach_answer(r, mark, false, false, buf, sizeof buf),
                         0);
        assert_int_equal(reach_answer(r, mark, false, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_string_equal(buf, "timed out waiting for an answer");
        reach_note(r, 0, REACH_REFUSED, false, "connection refused");
        reach_note(r, 1, REACH_REFUSED, false, "connection refused");
        reach_note(r, 2, REACH_REFUSED, false, "connection refused");
        /* Never sent: at once. Sent: only at the deadline, unknown. */
        assert_int_equal(reach_answer(r, mark, false, false, buf, sizeof buf),
                         BATON_ECONNECT);
        assert_non_null(strstr(buf, "cannot connect to any node: a:1"));
        assert_int_equal(reach_answer(r, mark, true, false, buf, sizeof buf),
                         0);
        assert_int_equal(reach_answer(r, mark, true, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_string_equal(buf, "timed out waiting for an answer (the request "
                                 "went out: its outcome is unknown): a:1: "
                                 "connection refused; b:2: connection refused; "
                                 "c:3: connection refused");
        /* A call that began after that pass waits for the next. */
        assert_int_equal(
            reach_answer(r, r->pass, false, false, buf, sizeof buf), 0);
        /* Nodes that know no leader: "no leader" at the deadline. */
        reach_note(r, 1, REACH_NO_LEADER, false, "no leader");
        assert_int_equal(reach_answer(r, r->pass, true, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_string_equal(buf, "timed out waiting for an answer: no leader: "
                                 "a:1: connection refused; b:2: no leader; "
                                 "c:3: connection refused");
        /* Never sent, no node answered (one lost): at the deadline, the
         * connection is the reason. */
        reach_note(r, 1, REACH_LOST, false, "stopped answering");
        assert_int_equal(reach_answer(r, r->pass, false, true, buf, sizeof buf),
                         BATON_ECONNECT);
        assert_non_null(strstr(buf, "b:2: stopped answering"));
}

/* An answer after others is kept once; the words of a TLS refusal and of
 * the system's errno. */
static void words(void **state)
{
        struct reach *r = *state;
        char why[REACH_WHY_MAX];

        reach_answered(r, 1);
        assert_int_equal(r->ends[1].outcome, REACH_ANSWERED);
        assert_string_equal(r->ends[1].why, "answered");
        reach_answered(r, -1);
        reach_why_errno(why, sizeof why, ECONNREFUSED, " before answering");
        assert_string_equal(why, "connection refused before answering");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(refused_everywhere, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(tls_anywhere, setup, teardown),
            cmocka_unit_test_setup_teardown(answers_keep_it_alive, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(skips_and_strangers, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(answers_of_a_call, setup, teardown),
            cmocka_unit_test_setup_teardown(words, setup, teardown),
        };

        return cmocka_run_group_tests_name("reach", tests, NULL, NULL);
}
