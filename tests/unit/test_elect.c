/* Elections in the lock state machine: campaigns, one leader at a time,
 * FIFO succession on resign and expiry, PROCLAIM, and the refusals of
 * docs/fsm.md, "Elections". */
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

static struct command campaign_cmd(uint64_t s, uint64_t seq, const char *name,
                                   const char *value, uint32_t wait_ms)
{
        struct command c = fsmtest_acquire_cmd(s, seq, 1, name, wait_ms);

        c.mode = COMMAND_MODE_ELECTION;
        c.value = value;
        c.value_len = (uint8_t)strlen(value);
        return c;
}

static struct lockfsm_result campaign(struct fsmtest *t, uint64_t s,
                                      uint64_t seq, const char *value,
                                      uint32_t wait_ms)
{
        struct command c = campaign_cmd(s, seq, "db", value, wait_ms);

        return fsmtest_apply(t, &c);
}

static struct lockfsm_result proclaim(struct fsmtest *t, uint64_t s,
                                      uint64_t seq, uint64_t token,
                                      const char *value)
{
        struct command c = fsmtest_release_cmd(s, seq, 1, "db", token);

        c.type = COMMAND_PROCLAIM;
        c.value = value;
        c.value_len = (uint8_t)strlen(value);
        return fsmtest_apply(t, &c);
}

/* The leader of "db" as lockfsm_foreach_holder() reports it. */
struct leader {
        unsigned n;
        struct lockfsm_holder h;
        char value[COMMAND_VALUE_MAX + 1];
};

static bool on_holder(void *data, const struct lockfsm_holder *h)
{
        struct leader *l = data;

        l->n++;
        l->h = *h;
        memcpy(l->value, h->value, h->value_len);
        l->value[h->value_len] = '\0';
        return true;
}

static struct leader leader_of(struct fsmtest *t)
{
        struct leader l;

        memset(&l, 0, sizeof l);
        lockfsm_foreach_holder(t->f, "db", 2, on_holder, &l);
        return l;
}

/* The first to campaign leads at once, with its entry's index as its
 * token; the others queue (a try is busy, naming the leader); the
 * leader's value is the one it campaigned with. */
static void test_first_candidate_leads(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = campaign(t, a, 1, "10.0.0.1:80", FOREVER);
        struct lockfsm_result rb = campaign(t, b, 1, "10.0.0.2:80", 0);
        struct leader l = leader_of(t);

        assert_int_equal(ra.kind, PROTO_KIND_GRANTED);
        assert_int_equal(ra.token, t->index - 1);
        assert_int_equal(rb.status, BATON_EBUSY);
        assert_int_equal(rb.session, a);
        assert_int_equal(rb.token, ra.token);
        assert_int_equal(l.n, 1);
        assert_int_equal(l.h.session, a);
        assert_int_equal(l.h.mode, COMMAND_MODE_ELECTION);
        assert_string_equal(l.value, "10.0.0.1:80");
        rb = campaign(t, b, 2, "10.0.0.2:80", FOREVER);
        assert_int_equal(rb.kind, PROTO_KIND_QUEUED);
        assert_int_equal(fsmtest_query(t, "db").waiters, 1);
}

/* Resigning (a RELEASE of the leadership's token) hands leadership to
 * the oldest candidate in the same entry, with that entry's index as the
 * new token; the GRANT event carries the new leader's value. */
static void test_resign_hands_over_in_order(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        uint64_t c = fsmtest_open(t, 3);
        struct lockfsm_result ra = campaign(t, a, 1, "a", FOREVER);
        struct leader l;
        struct lockfsm_result r;

        assert_int_equal(campaign(t, b, 1, "b", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(campaign(t, c, 1, "c", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        r = fsmtest_release(t, a, 2, 1, "db", ra.token);
        assert_int_equal(r.kind, PROTO_KIND_RELEASED);
        l = leader_of(t);
        assert_int_equal(l.h.session, b);
        assert_int_equal(l.h.token, t->index);
        assert_true(l.h.token > ra.token);
        assert_string_equal(l.value, "b");
        /* b's campaign, retried, learns it leads. */
        r = campaign(t, b, 1, "b", FOREVER);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_GRANTED);
        assert_int_equal(r.token, l.h.token);
        /* The next one in line follows b, not a newcomer. */
        assert_int_equal(fsmtest_expire(t, b).kind, PROTO_KIND_EXPIRED);
        l = leader_of(t);
        assert_int_equal(l.h.session, c);
        assert_string_equal(l.value, "c");
        assert_int_equal(l.h.token, t->index);
}

/* An expired leader is deposed in the entry of its EXPIRE, and no
 * lock-delay holds the next candidate back, even with one in the entry
 * or the session: a deposed leader is fenced by its token. */
static void test_expiry_deposes_without_delay(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = campaign(t, a, 1, "a", FOREVER);
        struct command e = {
            .type = COMMAND_EXPIRE, .session = a, .delay_ms = 5000};

        assert_int_equal(campaign(t, b, 1, "b", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(fsmtest_apply(t, &e).kind, PROTO_KIND_EXPIRED);
        assert_int_equal(leader_of(t).h.session, b);
        assert_true(leader_of(t).h.token > ra.token);
        assert_null(fsmtest_find(t, LOCKFSM_EV_BLOCK, 0));
}

/* PROCLAIM changes the leader's value, keeps its token, and can make the
 * value longer or shorter; a stale token, another owner, a candidate
 * that does not lead, or a lock's name are refused and change nothing. */
static void test_proclaim(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = campaign(t, a, 1, "short", FOREVER);
        char longest[COMMAND_VALUE_MAX + 1];
        struct lockfsm_result r;
        struct command c;

        memset(longest, 'v', COMMAND_VALUE_MAX);
        longest[COMMAND_VALUE_MAX] = '\0';
        assert_int_equal(campaign(t, b, 1, "b", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        r = proclaim(t, a, 2, ra.token, longest);
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        assert_int_equal(r.token, ra.token);
        assert_string_equal(leader_of(t).value, longest);
        assert_int_equal(leader_of(t).h.token, ra.token);
        assert_true(fsmtest_round_trips(t->f));
        r = proclaim(t, a, 3, ra.token, "");
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        assert_string_equal(leader_of(t).value, "");
        /* A retry gets the first answer and changes nothing. */
        r = proclaim(t, a, 3, ra.token, longest);
        assert_true(r.duplicate);
        assert_int_equal(r.kind, PROTO_KIND_PROCLAIMED);
        assert_string_equal(leader_of(t).value, "");
        assert_int_equal(proclaim(t, a, 4, ra.token + 1, "x").status,
                         BATON_ESTALE);
        assert_int_equal(proclaim(t, b, 2, ra.token, "x").status,
                         BATON_ENOTHOLDER);
        assert_string_equal(leader_of(t).value, "");
        c = fsmtest_acquire_cmd(a, 5, 1, "plain", FOREVER);
        assert_int_equal(fsmtest_apply(t, &c).kind, PROTO_KIND_GRANTED);
        c = fsmtest_release_cmd(a, 6, 1, "plain", t->index);
        c.type = COMMAND_PROCLAIM;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EKIND);
        /* The leader, proclaimed twice, is still first in b's way. */
        assert_int_equal(fsmtest_release(t, a, 7, 1, "db", ra.token).kind,
                         PROTO_KIND_RELEASED);
        assert_int_equal(leader_of(t).h.session, b);
}

/* An election is its own kind: a lock's or a semaphore's ACQUIRE of its
 * name, a MULTI naming it, and a campaign on a lock's name are
 * BATON_EKIND; a second campaign of the leader is BATON_EHELD with the
 * leadership's token (how a client that lost the answer learns it), of a
 * waiting candidate BATON_EWAITING. */
static void test_kinds_and_refusals(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct lockfsm_result ra = campaign(t, a, 1, "a", FOREVER);
        struct lockfsm_result r;
        struct command c;

        r = fsmtest_acquire(t, b, 1, 1, "db", 0);
        assert_int_equal(r.status, BATON_EKIND);
        r = fsmtest_multi(t, b, 2, 1, "x db", 0);
        assert_int_equal(r.status, BATON_EKIND);
        c = fsmtest_acquire_cmd(b, 3, 1, "db", 0);
        c.mode = COMMAND_MODE_SEMAPHORE;
        c.permits = 1;
        c.limit = 2;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EKIND);
        assert_int_equal(fsmtest_acquire(t, b, 4, 1, "lock", 0).kind,
                         PROTO_KIND_GRANTED);
        c = campaign_cmd(a, 2, "lock", "v", 0);
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EKIND);
        r = campaign(t, a, 3, "again", FOREVER);
        assert_int_equal(r.status, BATON_EHELD);
        assert_int_equal(r.token, ra.token);
        assert_int_equal(campaign(t, b, 5, "b", FOREVER).kind,
                         PROTO_KIND_QUEUED);
        assert_int_equal(campaign(t, b, 6, "b", FOREVER).status,
                         BATON_EWAITING);
        /* A mode past the election's is still unknown. */
        c = campaign_cmd(b, 7, "db", "", 0);
        c.mode = COMMAND_MODE_ELECTION + 1;
        c.value_len = 0;
        assert_int_equal(fsmtest_apply(t, &c).status, BATON_EUNSUPPORTED);
}

/* A leader that resigns in the entry that made it leader does not hand
 * its token on: the candidate behind it leads from the next entry, with
 * that entry's index, whatever that entry carries. */
static void test_one_leadership_per_entry(void **state)
{
        struct fsmtest *t = *state;
        uint64_t a = fsmtest_open(t, 1), b = fsmtest_open(t, 2);
        struct command batch[3];
        uint64_t first;
        struct leader l;

        batch[0] = campaign_cmd(a, 1, "db", "a", FOREVER);
        batch[1] = campaign_cmd(b, 1, "db", "b", FOREVER);
        batch[2] = fsmtest_release_cmd(a, 2, 1, "db", t->index + 1);
        assert_int_equal(fsmtest_apply_batch(t, batch, 3).kind,
                         PROTO_KIND_APPLIED);
        first = t->index;
        assert_int_equal(fsmtest_result_of(t, a, 1).token, first);
        assert_int_equal(fsmtest_result_of(t, a, 2).kind, PROTO_KIND_RELEASED);
        assert_int_equal(leader_of(t).n, 0);
        assert_int_equal(lockfsm_deferred(t->f), 1);
        (void)fsmtest_query(t, "other");
        l = leader_of(t);
        assert_int_equal(l.h.session, b);
        assert_string_equal(l.value, "b");
        assert_int_equal(l.h.token, first + 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_first_candidate_leads,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_resign_hands_over_in_order,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_expiry_deposes_without_delay,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_proclaim, fsmtest_setup,
                                            fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_kinds_and_refusals,
                                            fsmtest_setup, fsmtest_teardown),
            cmocka_unit_test_setup_teardown(test_one_leadership_per_entry,
                                            fsmtest_setup, fsmtest_teardown),
        };
        return cmocka_run_group_tests_name("elect", tests, NULL, NULL);
}
