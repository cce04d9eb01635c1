/* A client connection that went gets nothing more from the request core
 * (gateway.h, gateway_conn_gone()): not the answer to a read or a command
 * it sent before, not the NOT_LEADER of what was held for it, not the end
 * of its watches; another client's answers on the same paths still go
 * out. The fake host (corefix.h) counts every connection op the core
 * calls on a connection after it was reported gone, and each case checks
 * that count is 0 for the gone one and that the other was answered. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../include/baton/errors.h"
#include "corefix.h"

/* The next frame on `conn` answers request `id` (any type). */
static void expect_answer_on(struct corefix_conn *conn, uint64_t id)
{
        struct proto_header h;
        const uint8_t *body;

        assert_true(corefix_next_on(conn, &h, &body));
        assert_int_equal(h.id, id);
}

/* `conn` was reported gone: nothing was written to it since, and the core
 * called no op on it. */
static void expect_untouched(struct corefix_conn *conn, size_t len)
{
        assert_int_equal(conn->after_gone, 0);
        assert_int_equal(conn->len, len);
}

/* Two reads wait for the same barrier; one client goes before it
 * applies: only the other is answered. */
static void read_answer_dropped(void **state)
{
        struct corefix *x = *state;
        uint64_t theirs;
        size_t len;

        gateway_on_ready(&x->g, &x->now, 7);
        (void)corefix_send_query_on(x, &x->c);
        theirs = corefix_send_query_on(x, &x->other);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 1);
        assert_int_equal(x->fake.sent[0].op, 'b');
        len = x->c.len;
        corefix_gone(x, &x->c);
        corefix_complete(x, 0, 0);
        expect_answer_on(&x->other, theirs);
        expect_untouched(&x->c, len);
}

/* Two OPENs are proposed; one client goes, then the core closes with the
 * entry still out: the outcome unknown goes to the other alone, and the
 * entry's completion after the close answers no one. */
static void proposed_answer_dropped(void **state)
{
        struct corefix *x = *state;
        uint64_t theirs;
        size_t len;

        gateway_on_ready(&x->g, &x->now, 7);
        (void)corefix_send_open_on(x, &x->c);
        theirs = corefix_send_open_on(x, &x->other);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 1);
        assert_int_equal(x->fake.sent[0].op, 'p');
        len = x->c.len;
        corefix_gone(x, &x->c);
        gateway_close(&x->g, &x->now);
        x->closed = true;
        corefix_expect_status_on(&x->other, theirs, BATON_EUNKNOWN);
        corefix_complete(x, 0, BATON_EUNKNOWN);
        expect_untouched(&x->c, len);
}

/* Held while the host names this node leader but it does not serve yet;
 * one client goes; at lost the other alone is sent on. */
static void held_answer_dropped(void **state)
{
        struct corefix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        uint64_t theirs;
        size_t len;

        x->fake.leader = SELF;
        x->fake.leader_address = "127.0.0.1:7001";
        (void)corefix_send_query_on(x, &x->c);
        theirs = corefix_send_query_on(x, &x->other);
        len = x->c.len;
        assert_int_equal(len, 0); /* held */
        corefix_gone(x, &x->c);
        gateway_on_ready(&x->g, &x->now, 8);
        gateway_on_lost(&x->g, &x->now);
        assert_true(corefix_next_on(&x->other, &h, &body));
        assert_int_equal(h.type, PROTO_NOT_LEADER);
        assert_int_equal(h.id, theirs);
        expect_untouched(&x->c, len);
}

/* Both clients watch "a"; one goes; a leader's snapshot installed past
 * what the watches saw ends them: the other is told (BATON_ECOMPACTED),
 * the gone one's watch went with it, unanswered. */
static void watch_end_dropped(void **state)
{
        struct corefix *x = *state;
        uint64_t theirs;
        size_t len;

        (void)corefix_send_watch_on(x, &x->c);
        theirs = corefix_send_watch_on(x, &x->other);
        expect_answer_on(&x->other, theirs); /* WATCHING */
        assert_int_equal(x->c.gw.n_watches, 1);
        len = x->c.len;
        corefix_gone(x, &x->c);
        x->fake.restores = 1;
        x->fake.applied = 50;
        gateway_on_restored(&x->g);
        corefix_expect_status_on(&x->other, theirs, BATON_ECOMPACTED);
        assert_int_equal(x->g.watches.stats.active, 0);
        expect_untouched(&x->c, len);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(read_answer_dropped, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(proposed_answer_dropped,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(held_answer_dropped, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(watch_end_dropped, corefix_setup,
                                            corefix_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
