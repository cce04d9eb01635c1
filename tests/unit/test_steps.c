/* A call's steps in libbaton's session (src/client/session.c) at chosen
 * times, with no thread, clock or connection: making sure of a session
 * opens one OPEN however often it is stepped, and ends with the session or
 * the cluster's refusal in words of its own; a command waits while the
 * window of unacknowledged seqs is full, without using up a seq. The host
 * waits between the steps (src/client/await.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "clientfix.h"

#define T0 100000 /* an arbitrary start: nothing reads the clock */

/* One step of a call that wants a session, `why` its detail. */
static int ensure(struct clientfix *f, uint64_t *seen, int64_t now, char *why,
                  size_t size)
{
        memset(why, 'x', size); /* a step must say, or clear it */
        return session_ensure_step(&f->core.session, seen, now, why, size);
}

/* The OPEN in flight, sent at T0 and answered with `status` at `now`
 * (a refusal of BATON_ETTL says the cluster's range, `min`..`max`). */
static void answer_open(struct clientfix *f, int status, uint32_t min,
                        uint32_t max, int64_t now)
{
        struct request *r = f->core.session.opening;

        assert_non_null(r);
        clientfix_sent(f, r, T0);
        r->status = status;
        r->res.status = status;
        r->res.session = 42;
        r->res.count = min;
        r->res.waiters = max;
        r->state = REQUEST_ENDED;
        session_answered(&f->core.session, r, REGISTRY_ANSWERED, now);
        registry_drop(&f->core.registry, r);
}

/* Stepped again and again, the call makes one OPEN and waits for it; its
 * answer makes the next step find the session live. */
static void ensure_opens_once(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        uint64_t seen = f->core.session.epoch;
        struct request *open;
        char why[256];

        (void)state;
        assert_int_equal(ensure(f, &seen, T0, why, sizeof why), 1);
        assert_string_equal(why, "");
        open = f->core.session.opening;
        assert_non_null(open);
        assert_int_equal(open->kind, REQUEST_OPEN);
        assert_int_equal(ensure(f, &seen, T0 + 10, why, sizeof why), 1);
        assert_ptr_equal(f->core.session.opening, open);
        answer_open(f, 0, 0, 0, T0 + 20);
        assert_int_equal(ensure(f, &seen, T0 + 21, why, sizeof why), 0);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_int_equal(f->core.session.id, 42);
        clientfix_free(f);
}

/* A TTL the cluster refuses is the caller's answer, with the range the
 * cluster accepts in the words of the session's own figures; a cluster
 * that does not say its range is told apart; another refusal comes
 * without detail. */
static void refusal_in_words(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        uint64_t seen = f->core.session.epoch;
        char why[256];

        (void)state;
        assert_int_equal(ensure(f, &seen, T0, why, sizeof why), 1);
        answer_open(f, BATON_ETTL, 500, 5000, T0 + 5);
        assert_int_equal(ensure(f, &seen, T0 + 6, why, sizeof why), BATON_ETTL);
        assert_string_equal(why, "session TTL 10000 ms out of range: the "
                                 "cluster accepts 500..5000 ms");
        assert_null(f->core.session.opening);

        /* A call that begins after that refusal tries again. */
        seen = f->core.session.epoch;
        assert_int_equal(ensure(f, &seen, T0 + 7, why, sizeof why), 1);
        assert_non_null(f->core.session.opening);
        answer_open(f, BATON_ETTL, 0, 0, T0 + 8);
        assert_int_equal(ensure(f, &seen, T0 + 9, why, sizeof why), BATON_ETTL);
        assert_string_equal(why, "session TTL 10000 ms out of range (the "
                                 "cluster does not say its limits: see "
                                 "its min-ttl-ms and max-ttl-ms)");

        seen = f->core.session.epoch;
        assert_int_equal(ensure(f, &seen, T0 + 10, why, sizeof why), 1);
        answer_open(f, BATON_ETOOMANYSESSIONS, 0, 0, T0 + 11);
        assert_int_equal(ensure(f, &seen, T0 + 12, why, sizeof why),
                         BATON_ETOOMANYSESSIONS);
        assert_string_equal(why, "");
        clientfix_free(f);
}

/* A RELEASE of `name` for the submit steps. */
static void release(struct command *k)
{
        memset(k, 0, sizeof *k);
        k->type = COMMAND_RELEASE;
        k->name = "L";
        k->name_len = 1;
}

/* SESSION_WINDOW commands go out unanswered; the next one waits, its seq
 * not taken, until the oldest is answered, and then gets the next seq. */
static void submit_waits_for_the_window(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *r[SESSION_WINDOW + 1] = {NULL};
        struct request *late = NULL;
        uint64_t seen = f->core.session.epoch;
        struct command k;
        char why[256];

        (void)state;
        assert_int_equal(ensure(f, &seen, T0, why, sizeof why), 1);
        answer_open(f, 0, 0, 0, T0 + 5);
        for (int i = 0; i < SESSION_WINDOW; i++) {
                release(&k);
                assert_int_equal(
                    session_submit_step(&f->core.session, &k, T0 + 10, &r[i]),
                    0);
                assert_int_equal(r[i]->seq, (uint64_t)i + 1);
                assert_int_equal(r[i]->state, REQUEST_AWAITED);
        }
        release(&k);
        assert_int_equal(
            session_submit_step(&f->core.session, &k, T0 + 11, &late), 1);
        assert_null(late);
        assert_int_equal(f->core.session.next_seq, SESSION_WINDOW + 1);
        assert_int_equal(
            session_submit_step(&f->core.session, &k, T0 + 12, &late), 1);
        assert_int_equal(f->core.session.next_seq, SESSION_WINDOW + 1);

        registry_drop(&f->core.registry,
                      r[0]); /* its caller collected the answer */
        assert_int_equal(
            session_submit_step(&f->core.session, &k, T0 + 13, &late), 0);
        assert_non_null(late);
        assert_int_equal(late->seq, SESSION_WINDOW + 1);

        /* The lease out, a command has no session to go in. */
        release(&k);
        late = NULL;
        assert_int_equal(
            session_submit_step(&f->core.session, &k, T0 + 9000, &late),
            BATON_EEXPIRED);
        assert_null(late);
        clientfix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(ensure_opens_once),
            cmocka_unit_test(refusal_in_words),
            cmocka_unit_test(submit_waits_for_the_window),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
