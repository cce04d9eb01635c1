/* The record of what each endpoint answered (src/client/reach.c): when a
 * pass over the endpoints fails, with which code and which words, and what
 * a waiting call answers, sent or not, before and at its deadline. */
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
            reach_note(r, 0, REACH_REFUSED, false, "connection refused", 0),
            REACH_GOING);
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "name does not resolve", 0),
            REACH_GOING);
        assert_false(reach_failed_since(r, 1));
        assert_int_equal(
            reach_note(r, 1, REACH_REFUSED, false, "connection refused", 0),
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

        reach_note(r, 0, REACH_REFUSED, false, "connection refused", 0);
        reach_note(r, 1, REACH_REFUSED, true, "TLS: unknown CA", 0);
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused", 0),
            REACH_FAILED);
        assert_int_equal(r->failed_code, BATON_ETLS);
}

/* A node that answered (even "no leader"), or one lost after answering,
 * keeps the pass from failing. */
static void answers_keep_it_alive(void **state)
{
        struct reach *r = *state;

        reach_note(r, 0, REACH_REFUSED, false, "connection refused", 0);
        reach_note(r, 1, REACH_NO_LEADER, false, "no leader", 0);
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused", 0),
            REACH_OVER);
        reach_note(r, 0, REACH_LOST, false, "stopped answering", 0);
        reach_note(r, 1, REACH_REFUSED, false, "connection refused", 0);
        assert_int_equal(
            reach_note(r, 2, REACH_REFUSED, false, "connection refused", 0),
            REACH_OVER);
        assert_int_equal(r->failed_pass, 0);
        assert_int_equal(r->pass, 3);
}

/* A skipped endpoint counts with its last outcome; one never tried does
 * not count. An address that is not an endpoint is not recorded. */
static void skips_and_strangers(void **state)
{
        struct reach *r = *state;

        assert_int_equal(reach_skip(r, 0, 0), REACH_GOING);
        assert_int_equal(r->ends[0].pass, 0);
        assert_int_equal(reach_index(r, "d:4"), -1);
        assert_int_equal(reach_index(r, "b:2"), 1);
        assert_int_equal(reach_note(r, -1, REACH_REFUSED, false, "x", 0),
                         REACH_GOING);
        reach_note(r, 0, REACH_REFUSED, false, "connection refused", 0);
        reach_note(r, 1, REACH_REFUSED, false, "connection refused", 0);
        assert_int_equal(reach_note(r, 2, REACH_LOST, false, "lost", 0),
                         REACH_OVER);
        assert_int_equal(reach_skip(r, 0, 0), REACH_GOING);
        reach_note(r, 2, REACH_REFUSED, false, "connection refused", 0);
        assert_int_equal(reach_skip(r, 1, 0), REACH_FAILED);
}

/* The connection refused everywhere (nothing listens yet, as while the
 * nodes start): such passes go on for REACH_MEND_MS before one fails;
 * another refusal among them does not shorten it; an answer ends it. */
static void not_listening_mends_a_moment(void **state)
{
        struct reach *r = *state;
        unsigned i;

        for (i = 0; i < 3; i++) {
                reach_note(r, 0, REACH_NOT_LISTENING, false,
                           "connection refused", 100);
                reach_note(r, 1, REACH_REFUSED, false, "name does not resolve",
                           100 + 400 * i);
                assert_int_equal(reach_note(r, 2, REACH_NOT_LISTENING, false,
                                            "connection refused",
                                            100 + 500 * i),
                                 i < 2 ? REACH_OVER : REACH_FAILED);
        }
        assert_int_equal(r->failed_code, BATON_ECONNECT);
        /* Once failed, the next refused pass fails at once. */
        reach_note(r, 0, REACH_NOT_LISTENING, false, "connection refused",
                   1200);
        reach_note(r, 1, REACH_REFUSED, false, "name does not resolve", 1200);
        assert_int_equal(reach_note(r, 2, REACH_NOT_LISTENING, false,
                                    "connection refused", 1200),
                         REACH_FAILED);
        /* An answer ends the run: refusals mend for a second again. */
        reach_answered(r, 1);
        reach_note(r, 0, REACH_NOT_LISTENING, false, "connection refused",
                   5000);
        assert_int_equal(reach_note(r, 2, REACH_NOT_LISTENING, false,
                                    "connection refused", 5000),
                         REACH_OVER);
        for (i = 0; i < 2; i++) {
                reach_note(r, 0, REACH_NOT_LISTENING, false,
                           "connection refused", 5100 + 1000 * i);
                reach_note(r, 1, REACH_NOT_LISTENING, false,
                           "connection refused", 5100 + 1000 * i);
                assert_int_equal(reach_note(r, 2, REACH_NOT_LISTENING, false,
                                            "connection refused",
                                            5100 + 1000 * i),
                                 i == 0 ? REACH_OVER : REACH_FAILED);
        }
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
        reach_note(r, 0, REACH_REFUSED, false, "connection refused", 0);
        reach_note(r, 1, REACH_REFUSED, false, "connection refused", 0);
        reach_note(r, 2, REACH_REFUSED, false, "connection refused", 0);
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
        reach_note(r, 1, REACH_NO_LEADER, false, "no leader", 0);
        assert_int_equal(reach_answer(r, r->pass, true, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_string_equal(buf, "timed out waiting for an answer: no leader: "
                                 "a:1: connection refused; b:2: no leader; "
                                 "c:3: connection refused");
        /* Never sent, no node answered (one lost): at the deadline, the
         * connection is the reason. */
        reach_note(r, 1, REACH_LOST, false, "stopped answering", 0);
        assert_int_equal(reach_answer(r, r->pass, false, true, buf, sizeof buf),
                         BATON_ECONNECT);
        assert_non_null(strstr(buf, "b:2: stopped answering"));
}

/* An answer after others is kept once, in its own word; an answer from
 * no endpoint of the list changes nothing. */
static void words(void **state)
{
        struct reach *r = *state;

        reach_answered(r, 1);
        assert_int_equal(r->ends[1].outcome, REACH_ANSWERED);
        assert_string_equal(r->ends[1].why, "answered");
        reach_answered(r, -1);
        assert_int_equal(r->ends[1].outcome, REACH_ANSWERED);
        assert_string_equal(r->ends[1].why, "answered");
}

/* Every endpoint names a leader that is not an endpoint and cannot be
 * reached: the pass does not fail (an election mends that), and a call
 * that gives up says which address failed and why; once it answers, that
 * is forgotten. */
static void named_leader_unreachable(void **state)
{
        struct reach *r = *state;
        char buf[REACH_TEXT_MAX];
        unsigned i;

        for (i = 0; i < 3; i++) {
                assert_int_equal(reach_note(r, (int)i, REACH_REDIRECTED, false,
                                            "not the leader; it names l:9", 0),
                                 i < 2 ? REACH_GOING : REACH_OVER);
                reach_note_named(r, "l:9", REACH_REFUSED, false,
                                 "timed out: no connection within 1000 ms");
        }
        assert_int_equal(reach_answer(r, 1, false, false, buf, sizeof buf), 0);
        assert_int_equal(reach_answer(r, 1, false, true, buf, sizeof buf),
                         BATON_ECONNECT);
        assert_non_null(strstr(buf, "cannot connect to the leader: "));
        assert_non_null(strstr(buf, "the leader they name, l:9: timed out: "
                                    "no connection within 1000 ms"));
        assert_int_equal(reach_answer(r, 1, true, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_non_null(strstr(buf, ": cannot connect to the leader: "));
        reach_note_named(r, "l:9", REACH_ANSWERED, false, "");
        assert_int_equal(reach_answer(r, 1, false, true, buf, sizeof buf),
                         BATON_ENOANSWER);
        assert_null(strstr(buf, "l:9: timed out"));
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
            cmocka_unit_test_setup_teardown(not_listening_mends_a_moment, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(answers_of_a_call, setup, teardown),
            cmocka_unit_test_setup_teardown(words, setup, teardown),
            cmocka_unit_test_setup_teardown(named_leader_unreachable, setup,
                                            teardown),
        };

        return cmocka_run_group_tests_name("reach", tests, NULL, NULL);
}
