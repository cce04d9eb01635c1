/* A watcher whose connection does not read is cut off (gateway.h: the
 * host's backlog()): once more output waits on its connection than
 * output-limit, its watch ends with a RESULT of BATON_ESLOW and gets no
 * more events, while another watcher of the same name gets every one, in
 * frames shared by all of a connection's watches (id 0) that may wait
 * watch-batch-ms for company (commit later). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"
#include "corefix.h"

/* The next frame on `conn` is a WATCH_EVENT of "a" at entry `index`, sent
 * for all of the connection's watches (id 0). */
static void expect_event(struct corefix_conn *conn, uint64_t index)
{
        struct proto_watch_event e;
        struct proto_header h;
        const uint8_t *body;

        assert_true(corefix_next_on(conn, &h, &body));
        assert_int_equal(h.type, PROTO_WATCH_EVENT);
        assert_int_equal(h.id, 0);
        assert_int_equal(proto_read_watch_event(body, h.length, &e), 0);
        assert_int_equal(e.index, index);
        assert_int_equal(e.name.len, 1);
        assert_memory_equal(e.name.p, "a", 1);
}

/* Entry `index` acquires "a" for `session` as its request `seq`; the
 * token. */
static uint64_t acquire(struct corefix *x, uint64_t index, uint64_t session,
                        uint64_t seq)
{
        struct command c = {.type = COMMAND_ACQUIRE, .session = session};
        struct lockfsm_result r;

        c.seq = seq;
        c.name = "a";
        c.name_len = 1;
        r = corefix_apply(x, index, &c);
        assert_int_equal(r.status, 0);
        return r.token;
}

static void release(struct corefix *x, uint64_t index, uint64_t session,
                    uint64_t seq, uint64_t token)
{
        struct command c = {.type = COMMAND_RELEASE, .session = session};

        c.seq = seq;
        c.token = token;
        c.name = "a";
        c.name_len = 1;
        assert_int_equal(corefix_apply(x, index, &c).status, 0);
}

static void slow_watcher_cut_off(void **state)
{
        struct corefix *x = *state;
        struct command open = {.type = COMMAND_OPEN, .ttl_ms = 10000};
        uint64_t slow, fast, session, token, index = 41;
        struct proto_header h;
        const uint8_t *body;
        size_t len;

        slow = corefix_send_watch_on(x, &x->c);
        fast = corefix_send_watch_on(x, &x->other);
        corefix_expect_status_on(&x->c, slow, 0); /* WATCHING */
        corefix_expect_status_on(&x->other, fast, 0);
        session = corefix_apply(x, index++, &open).session;
        assert_true(session != 0);

        /* Both keep up: each gets the grant. */
        token = acquire(x, index, session, 1);
        expect_event(&x->c, index);
        expect_event(&x->other, index);
        assert_true(x->other.commits_later > 0);
        index++;

        /* The slow one's client stops reading past output-limit: at the
         * release its watch ends BATON_ESLOW, the other gets the event. */
        x->c.unread = x->cfg.output_limit + 1;
        release(x, index, session, 2, token);
        corefix_expect_status_on(&x->c, slow, BATON_ESLOW);
        expect_event(&x->other, index);
        assert_int_equal(x->g.watches.stats.cut_off, 1);
        assert_int_equal(x->c.gw.n_watches, 0);
        index++;

        /* Even once it reads again it gets nothing more of "a". */
        x->c.unread = 0;
        len = x->c.len;
        token = acquire(x, index, session, 3);
        expect_event(&x->other, index);
        assert_int_equal(x->c.len, len);
        assert_false(corefix_next_on(&x->c, &h, &body));
        (void)token;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(slow_watcher_cut_off, corefix_setup,
                                            corefix_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
