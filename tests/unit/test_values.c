/* Values on every grant in the lock state machine (docs/fsm.md,
 * "Values"): set by an ACQUIRE of any kind, kept by a waiter until it is
 * granted, changed by SET_VALUE with the grant's token (a stale token is
 * refused), ended with the grant, and kept by a snapshot. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/fsmtest.h"

#define FOREVER COMMAND_WAIT_FOREVER

/* An ACQUIRE of `name` in `mode` (a semaphore of 3 permits, one taken)
 * with `value`. */
static struct lockfsm_result take(struct fsmtest *t, uint64_t s, uint64_t seq,
                                  const char *name, uint8_t mode,
                                  const char *value, uint32_t wait_ms)
{
        struct command c = fsmtest_acquire_cmd(s, seq, 1, name, wait_ms);

        c.mode = mode;
        if (mode == COMMAND_MODE_SEMAPHORE) {
                c.permits = 1;
                c.limit = 3;
        }
        c.value = value;
        c.value_len = (uint8_t)strlen(value);
        return fsmtest_apply(t, &c);
}

static struct lockfsm_result set_value(struct fsmtest *t, uint64_t s,
                                       uint64_t seq, const char *name,
                                       uint64_t token, const char *value)
{
        struct command c = fsmtest_release_cmd(s, seq, 1, name, token);

        c.type = COMMAND_SET_VALUE;
        c.value = value;
        c.value_len = (uint8_t)strlen(value);
        return fsmtest_apply(t, &c);
}

/* The values of the grants of `name`, oldest first, joined by '|'. */
struct values {
        char text[4 * (COMMAND_VALUE_MAX + 1)];
        unsigned n;
};

static bool on_holder(void *data, const struct lockfsm_holder *h)
{
        struct values *v = data;
        size_t at = strlen(v->text);

        if (v->n++ > 0) {
                v->text[at++] = '|';
        }
        memcpy(v->text + at, h->value, h->value_len);
        v->text[at + h->value_len] = '\0';
        return true;
}

static const char *values_of(struct fsmtest *t, const char *name,
                             struct values *v)
{
        memset(v, 0, sizeof *v);
        lockfsm_foreach_holder(t->f, name, strlen(name), on_holder, v);
        return v->text;
}

/* A lock's writer: the value set at acquire, changed with the token, a
 * stale token and a non-holder refused, nothing changed by them; a
 * reentrant ACQUIRE keeps the value; PROCLAIM stays an election's. */
static void test_lock_value_round_trip(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result g, r;
        struct values v;

        g = take(t, a, 1, "job", COMMAND_MODE_EXCLUSIVE, "10.0.0.7:8080",
                 FOREVER);
        assert_int_equal(g.kind, PROTO_KIND_GRANTED);
        assert_string_equal(values_of(t, "job", &v), "10.0.0.7:8080");
        r = set_value(t, a, 2, "job", g.token, "10.0.0.7:9090");
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        assert_int_equal(r.token, g.token);
        assert_int_equal(r.count, 1);
        assert_string_equal(values_of(t, "job", &v), "10.0.0.7:9090");
        /* Fenced: another token, another session. */
        r = set_value(t, a, 3, "job", g.token - 1, "stale");
        assert_int_equal(r.status, BATON_ESTALE);
        r = set_value(t, b, 1, "job", g.token, "thief");
        assert_int_equal(r.status, BATON_ENOTHOLDER);
        r = set_value(t, b, 2, "nothing", 1, "x");
        assert_int_equal(r.status, BATON_ENOTHOLDER);
        assert_string_equal(values_of(t, "job", &v), "10.0.0.7:9090");
        /* Reentry keeps the grant's value. */
        r = take(t, a, 4, "job", COMMAND_MODE_EXCLUSIVE, "ignored", FOREVER);
        assert_int_equal(r.kind, PROTO_KIND_REENTERED);
        assert_string_equal(values_of(t, "job", &v), "10.0.0.7:9090");
        /* Cleared: an empty value. */
        r = set_value(t, a, 5, "job", g.token, "");
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        assert_string_equal(values_of(t, "job", &v), "");
        /* PROCLAIM is an election's alone. */
        r = set_value(t, a, 6, "job", g.token, "x");
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        {
                struct command c = fsmtest_release_cmd(a, 7, 1, "job", g.token);

                c.type = COMMAND_PROCLAIM;
                c.value = "y";
                c.value_len = 1;
                assert_int_equal(fsmtest_apply(t, &c).status, BATON_EKIND);
        }
        assert_string_equal(values_of(t, "job", &v), "x");
}

/* A waiter keeps its value until granted; the value ends with the grant
 * (a later grant without one has none). */
static void test_waiter_value_and_release(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ga, gb, r;
        struct values v;

        ga = take(t, a, 1, "job", COMMAND_MODE_EXCLUSIVE, "a-data", FOREVER);
        r = take(t, b, 1, "job", COMMAND_MODE_EXCLUSIVE, "b-data", FOREVER);
        assert_int_equal(r.kind, PROTO_KIND_QUEUED);
        /* A waiter holds no grant to change. */
        assert_int_equal(set_value(t, b, 2, "job", 0, "x").status,
                         BATON_ENOTHOLDER);
        assert_int_equal(fsmtest_release(t, a, 2, 1, "job", ga.token).kind,
                         PROTO_KIND_RELEASED);
        assert_string_equal(values_of(t, "job", &v), "b-data");
        gb = fsmtest_query(t, "job");
        assert_int_equal(gb.session, b);
        assert_int_equal(fsmtest_release(t, b, 3, 1, "job", gb.token).kind,
                         PROTO_KIND_RELEASED);
        r = fsmtest_acquire(t, a, 3, 1, "job", FOREVER);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_string_equal(values_of(t, "job", &v), "");
        /* Expiry ends it too. */
        assert_int_equal(set_value(t, a, 4, "job", r.token, "a2").kind,
                         PROTO_KIND_PROCLAIMED);
        fsmtest_expire(t, a);
        assert_int_equal(values_of(t, "job", &v)[0], '\0');
        assert_int_equal(v.n, 0);
}

/* Readers each have their own value; so have a semaphore's holders. */
static void test_shared_and_semaphore_values(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra, rb, sa;
        struct values v;

        ra = take(t, a, 1, "cfg", COMMAND_MODE_SHARED, "reader-a", FOREVER);
        rb = take(t, b, 1, "cfg", COMMAND_MODE_SHARED, "reader-b", FOREVER);
        assert_int_equal(ra.kind, PROTO_KIND_GRANTED);
        assert_int_equal(rb.kind, PROTO_KIND_GRANTED);
        assert_string_equal(values_of(t, "cfg", &v), "reader-a|reader-b");
        assert_int_equal(set_value(t, b, 2, "cfg", rb.token, "b2").kind,
                         PROTO_KIND_PROCLAIMED);
        assert_string_equal(values_of(t, "cfg", &v), "reader-a|b2");
        sa = take(t, a, 2, "pool", COMMAND_MODE_SEMAPHORE, "slot-a", FOREVER);
        assert_int_equal(sa.kind, PROTO_KIND_GRANTED);
        assert_int_equal(
            take(t, b, 3, "pool", COMMAND_MODE_SEMAPHORE, "", FOREVER).kind,
            PROTO_KIND_GRANTED);
        assert_string_equal(values_of(t, "pool", &v), "slot-a|");
        assert_int_equal(set_value(t, a, 3, "pool", sa.token, "slot-a2").kind,
                         PROTO_KIND_PROCLAIMED);
        assert_string_equal(values_of(t, "pool", &v), "slot-a2|");
}

/* An owner that upgraded holds a read and a write grant of one lock: a
 * SET_VALUE names either by its token, as a RELEASE does. */
static void test_upgraded_owner_names_either(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1);
        struct lockfsm_result rd, wr;
        struct values v;

        rd = take(t, a, 1, "cfg", COMMAND_MODE_SHARED, "read", FOREVER);
        wr = take(t, a, 2, "cfg", COMMAND_MODE_EXCLUSIVE, "write", FOREVER);
        assert_int_equal(rd.kind, PROTO_KIND_GRANTED);
        assert_int_equal(wr.kind, PROTO_KIND_GRANTED);
        assert_true(wr.token > rd.token);
        assert_int_equal(set_value(t, a, 3, "cfg", rd.token, "r2").kind,
                         PROTO_KIND_PROCLAIMED);
        assert_int_equal(set_value(t, a, 4, "cfg", wr.token, "w2").kind,
                         PROTO_KIND_PROCLAIMED);
        values_of(t, "cfg", &v);
        assert_int_equal(v.n, 2);
        assert_non_null(strstr(v.text, "r2"));
        assert_non_null(strstr(v.text, "w2"));
        assert_int_equal(set_value(t, a, 5, "cfg", wr.token + 1, "x").status,
                         BATON_ESTALE);
}

/* A snapshot keeps every grant's value and every waiter's, and the
 * restored machine goes on as the original. */
static void test_snapshot_keeps_values(void **state)
{
        struct fsmtest *t = *state;
        struct fsmtest *u = malloc(sizeof *u);
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result g;
        struct values v;
        size_t len;
        void *buf;

        g = take(t, a, 1, "job", COMMAND_MODE_EXCLUSIVE, "holder", FOREVER);
        take(t, b, 1, "job", COMMAND_MODE_EXCLUSIVE, "waiter", FOREVER);
        take(t, b, 2, "cfg", COMMAND_MODE_SHARED, "reader", FOREVER);
        fsmtest_init(u, NULL, NULL);
        buf = fsmtest_snapshot(t->f, &len);
        assert_int_equal(lockfsm_restore(u->f, buf, len), 0);
        assert_null(lockfsm_check(u->f));
        u->index = t->index;
        assert_true(fsmtest_same_state(t->f, u->f));
        assert_string_equal(values_of(u, "job", &v), "holder");
        assert_string_equal(values_of(u, "cfg", &v), "reader");
        assert_int_equal(fsmtest_release(u, a, 2, 1, "job", g.token).kind,
                         PROTO_KIND_RELEASED);
        assert_string_equal(values_of(u, "job", &v), "waiter");
        free(buf);
        fsmtest_close(u);
        free(u);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_lock_value_round_trip,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_waiter_value_and_release,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_shared_and_semaphore_values,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_upgraded_owner_names_either,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_snapshot_keeps_values,
                                            fsmtest_setup, fsmtest_teardown),
        };
        return cmocka_run_group_tests_name("values", tests, NULL, NULL);
}
