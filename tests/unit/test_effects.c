/* What libbaton's registry and session ask of their host: they wake nobody
 * themselves, but flag that a waiting caller should look again (`changed`)
 * or that the background thread has work (`loop_needed`), and the host
 * acts on the flags before it releases the handle's mutex. A flag that is
 * not raised is a caller that sleeps to its deadline, or a request that
 * waits for the loop's next round: each case here raises one. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/effects.h"
#include "../../src/client/linkio.h"
#include "clientfix.h"

#define T0 100000 /* an arbitrary start: nothing reads the clock */

/* One step of a call that wants a session, begun just now. */
static int ensure_step(struct clientfix *f)
{
        uint64_t seen = f->core.session.epoch;
        char why[256];

        return session_ensure_step(&f->core.session, &seen, T0, why,
                                   sizeof why);
}

static void clear(struct clientfix *f)
{
        f->core.registry.changed = false;
        f->core.registry.loop_needed = false;
}

/* `r`, sent at T0, answered by a RESULT of `status` at `now`. */
static void answer(struct clientfix *f, struct request *r, int status,
                   int64_t now)
{
        struct proto_result res = {.status = status};
        uint8_t frame[256];
        struct proto_header h;
        size_t n;

        clientfix_sent(f, r, T0);
        n = proto_write_result(frame, sizeof frame, r->id, 0, &res);
        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        f->core.link.cb.frame(f->core.link.cb.data, &h,
                              frame + PROTO_HEADER_SIZE, now);
}

/* A request made while the connection is down is the background
 * thread's to send: it is asked for, and no caller is woken for it. */
static void submit_needs_the_loop(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *r = request_read(PROTO_QUERY, "L", 1, 0);

        (void)state;
        assert_non_null(r);
        r->kind = REQUEST_CALL;
        registry_submit(&f->core.registry, r, T0);
        assert_true(f->core.registry.loop_needed);
        assert_false(f->core.registry.changed);
        clientfix_free(f);
}

/* The answer a caller waits for makes its request final: the caller is
 * to look again. */
static void answer_changes(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *r = request_read(PROTO_QUERY, "L", 1, 0);

        (void)state;
        assert_non_null(r);
        r->kind = REQUEST_CALL;
        registry_submit(&f->core.registry, r, T0);
        clear(f);
        answer(f, r, 0, T0 + 5);
        assert_int_equal(r->state, REQUEST_DONE);
        assert_true(f->core.registry.changed);
        assert_false(f->core.registry.loop_needed);
        registry_drop(&f->core.registry, r);
        clientfix_free(f);
}

/* The OPEN's answer ends the callers' wait for a session (changed) and
 * queues the LIVE callback, which the background thread runs
 * (loop_needed); so do the lease's later turns, and the expiry fails the
 * session's requests too. */
static void session_turns(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct request *open;

        (void)state;
        /* The call's first step makes the OPEN and leaves it to wait. */
        assert_int_equal(ensure_step(f), 1);
        open = f->core.session.opening;
        assert_non_null(open);
        clear(f);
        /* As the registry hands the answer over (it reads the clock to
         * date it, which a test at chosen times cannot). */
        clientfix_sent(f, open, T0);
        open->status = 0;
        open->res.session = 42;
        open->state = REQUEST_ENDED;
        session_answered(&f->core.session, open, REGISTRY_ANSWERED, T0 + 5);
        registry_drop(&f->core.registry, open);
        assert_int_equal(f->core.session.state, BATON_SESSION_LIVE);
        assert_true(f->core.registry.changed);
        assert_true(f->core.registry.loop_needed);

        /* The keepalive due at TTL/3 goes out and stays unanswered, so
         * that what follows asks for the loop for its callbacks alone. */
        session_tick(&f->core.session, T0 + 4000);
        assert_non_null(f->core.session.keepalive);
        clientfix_sent(f, f->core.session.keepalive, T0 + 4000);
        clear(f);
        session_tick(&f->core.session,
                     T0 + 5000 + 1); /* TTL/2 + 1 after the send */
        assert_int_equal(f->core.session.state, BATON_SESSION_JEOPARDY);
        assert_true(f->core.registry.loop_needed);

        clear(f);
        session_tick(&f->core.session, T0 + 9000); /* TTL less the margin */
        assert_int_equal(f->core.session.state, BATON_SESSION_EXPIRED);
        assert_true(f->core.registry.loop_needed);
        assert_true(f->core.registry.changed);
        clientfix_free(f);
}

/* A command given up after it went out goes on in the background: the
 * loop is asked to look after it. */
static void abandon_needs_the_loop(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        struct command k;
        struct request *r;
        int rv;

        (void)state;
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.name = "L";
        k.name_len = 1;
        k.session = 42;
        k.seq = 1;
        r = request_command(&k, &rv);
        assert_non_null(r);
        r->kind = REQUEST_COMMAND;
        registry_submit(&f->core.registry, r, T0);
        clientfix_sent(f, r, T0);
        clear(f);
        registry_abandon(&f->core.registry, r, T0 + 5);
        assert_int_equal(r->state, REQUEST_BACKGROUND);
        assert_true(f->core.registry.loop_needed);
        clientfix_free(f);
}

/* A pass over the endpoints that failed everywhere lets the callers of
 * requests never sent give up: they are to look again. */
static void unreachable_changes(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);

        (void)state;
        assert_int_not_equal(link_dial(&f->core.link, T0, true), 0);
        clear(f);
        link_fail(&f->core.link, T0, false);
        assert_true(f->core.registry.changed);
        clientfix_free(f);
}

/* The host's part: the flags are acted on once and cleared; the
 * background thread's wake-up is counted once however often it was
 * asked for. */
static void effects_clear_the_flags(void **state)
{
        struct clientfix *f = clientfix_new(10000, 1);
        pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
        struct linkio io; /* never driven: only its wake-up is read */
        uint64_t n = 0;

        (void)state;
        assert_int_equal(linkio_init(&io, &f->core.link, NULL), 0);
        registry_need_loop(&f->core.registry);
        registry_need_loop(&f->core.registry);
        registry_changed(&f->core.registry);
        assert_int_equal(pthread_mutex_lock(&mu), 0);
        effects_apply(&f->core.registry, &io, &cv);
        assert_int_equal(pthread_mutex_unlock(&mu), 0);
        assert_false(f->core.registry.changed);
        assert_false(f->core.registry.loop_needed);
        assert_int_equal(read(io.wake, &n, sizeof n), sizeof n);
        assert_int_equal(n, 1);
        effects_apply(&f->core.registry, &io, &cv);
        assert_true(read(io.wake, &n, sizeof n) < 0); /* nothing more */
        linkio_close(&io);
        clientfix_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(submit_needs_the_loop),
            cmocka_unit_test(answer_changes),
            cmocka_unit_test(session_turns),
            cmocka_unit_test(abandon_needs_the_loop),
            cmocka_unit_test(unreachable_changes),
            cmocka_unit_test(effects_clear_the_flags),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
