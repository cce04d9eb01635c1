/* The request core's audit lines (gwaudit.h), on the fake host that
 * records each (corefix.h): an administrator's request gets one line when
 * it is answered, with who asked even once the client has gone, and a
 * request refused for its role or for a session it is not attached to gets
 * one when it is refused; nothing else does. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/aclwire.h"
#include "corefix.h"

#define TERM 7
#define WALL 1700000000000ULL

/* The `nth` audit line from `m` on is `want`. */
static void expect_line(const struct corefix *x, size_t m, unsigned nth,
                        const char *want)
{
        const struct corefix_effect *e = corefix_nth(x, m, COREFIX_AUDIT, nth);

        if (e == NULL) {
                corefix_print(x, m);
                fail_msg("no audit line %u; wanted %s", nth, want);
        }
        assert_string_equal(e->audit, want);
}

/* c is "alice" from 10.0.0.7:5000, with tls on: role lock (the default
 * role); other is "admin", plain, from 10.0.0.8:6000. */
static void clients(struct corefix *x)
{
        gateway_conn_init(&x->c.gw, 5, "alice", false);
        x->c.gw.endpoint = "10.0.0.7:5000";
        gateway_conn_init(&x->other.gw, 6, "admin", true);
        x->other.gw.endpoint = "10.0.0.8:6000";
}

/* A command frame of `cmd` from `conn`; its id. */
static uint64_t send_command(struct corefix *x, struct corefix_conn *conn,
                             const struct command *cmd)
{
        uint8_t body[COMMAND_MAX_SIZE], buf[COMMAND_MAX_SIZE + 64];
        size_t len = command_encode(cmd, body, sizeof body);
        size_t n;

        assert_true(len > 0);
        n = proto_write_command(buf, sizeof buf, x->next_id++, body, len);
        assert_true(n > 0);
        return corefix_send_on(x, conn, buf, n);
}

static uint64_t send_id(struct corefix *x, struct corefix_conn *conn,
                        uint8_t type, uint64_t member)
{
        uint8_t buf[64];
        size_t n = proto_write_id(buf, sizeof buf, x->next_id++, type, member);

        assert_true(n > 0);
        return corefix_send_on(x, conn, buf, n);
}

/* A client of role lock is refused each admin request, and each refusal
 * is one line naming who, from where, what and why; the refused request
 * changes nothing. */
static void role_refusals(void **state)
{
        struct command revoke = {.type = COMMAND_REVOKE, .session = 41};
        struct proto_acl_request list = {.op = PROTO_ACL_LIST};
        struct corefix *x = *state;
        uint8_t buf[64];
        size_t m, n;
        uint64_t id;

        clients(x);
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        id = send_id(x, &x->c, PROTO_TRANSFER, OTHER);
        corefix_expect_status(x, id, BATON_EPERM);
        n = proto_write_acl(buf, sizeof buf, x->next_id++, &list);
        id = corefix_send_on(x, &x->c, buf, n);
        corefix_expect_status(x, id, BATON_EPERM);
        id = send_command(x, &x->c, &revoke);
        corefix_expect_status(x, id, BATON_EPERM);
        corefix_expect_count(x, m, COREFIX_AUDIT, 3);
        expect_line(x, m, 0,
                    "TRANSFER 2 BATON_EPERM by alice at 10.0.0.7:5000: role "
                    "lock");
        expect_line(x, m, 1,
                    "ACL_LIST  BATON_EPERM by alice at 10.0.0.7:5000: role "
                    "lock");
        expect_line(x, m, 2,
                    "REVOKE 41 BATON_EPERM by alice at 10.0.0.7:5000: role "
                    "lock");
        corefix_expect_count(x, m, COREFIX_TRANSFER, 0);
        gateway_flush(&x->g, &x->now, WALL);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
}

/* A command in a session the connection is not attached to is refused,
 * and says so in its line, with the lock it named. */
static void not_attached(void **state)
{
        static const uint8_t hash[COMMAND_HASH_SIZE] = {1};
        struct command open = {.type = COMMAND_OPEN, .nonce = 9, .hash = hash};
        struct command acq = {.type = COMMAND_ACQUIRE,
                              .seq = 1,
                              .owner = 1,
                              .name = "jobs/nightly",
                              .name_len = 12};
        struct corefix *x = *state;
        size_t m;
        uint64_t id;

        clients(x);
        open.ttl_ms = x->cfg.max_ttl_ms;
        acq.session = corefix_apply(x, 41, &open).session;
        assert_int_equal(acq.session, 41);
        x->fake.applied = 41;
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        id = send_command(x, &x->c, &acq);
        corefix_expect_status(x, id, BATON_EPERM);
        corefix_expect_count(x, m, COREFIX_AUDIT, 1);
        expect_line(x, m, 0,
                    "ACQUIRE jobs/nightly BATON_EPERM by alice at "
                    "10.0.0.7:5000: not attached to the session");
}

/* An admin's transfer: no line while raft works on it, one when it is
 * answered, saying where leadership went. */
static void transfer_when_answered(void **state)
{
        struct corefix *x = *state;
        size_t m;

        clients(x);
        x->fake.voter = true;
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        send_id(x, &x->other, PROTO_TRANSFER, OTHER);
        corefix_expect_count(x, m, COREFIX_TRANSFER, 1);
        corefix_expect_count(x, m, COREFIX_AUDIT, 0);
        corefix_complete(x, 0, 0);
        corefix_expect_count(x, m, COREFIX_AUDIT, 1);
        expect_line(x, m, 0,
                    "TRANSFER 2 ok by admin at 10.0.0.8:6000: leader 2");
}

/* A removal refused from raft's configuration is a line too; one whose
 * client left before raft answered still names who asked and from
 * where. */
static void member_remove(void **state)
{
        struct corefix *x = *state;
        size_t m;

        clients(x);
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        x->fake.has_member = false;
        send_id(x, &x->other, PROTO_MEMBER_REMOVE, 9);
        x->fake.has_member = true;
        send_id(x, &x->other, PROTO_MEMBER_REMOVE, OTHER);
        corefix_expect_count(x, m, COREFIX_AUDIT, 1);
        expect_line(x, m, 0,
                    "MEMBER_REMOVE 9 BATON_ENOMEMBER by admin at "
                    "10.0.0.8:6000: ");
        corefix_gone(x, &x->other);
        corefix_complete(x, 0, 0);
        corefix_expect_count(x, m, COREFIX_AUDIT, 2);
        expect_line(x, m, 1, "MEMBER_REMOVE 2 ok by admin at 10.0.0.8:6000: ");
}

/* A revoke is recorded when it is answered: here, leadership was lost
 * with its entry out, so its outcome is unknown, and the line says so. */
static void revoke_answered_unknown(void **state)
{
        struct command revoke = {.type = COMMAND_REVOKE, .session = 41};
        struct corefix *x = *state;
        size_t m;

        clients(x);
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        send_command(x, &x->other, &revoke);
        gateway_flush(&x->g, &x->now, WALL);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        corefix_expect_count(x, m, COREFIX_AUDIT, 0);
        gateway_on_lost(&x->g, &x->now);
        corefix_expect_count(x, m, COREFIX_AUDIT, 1);
        expect_line(x, m, 0,
                    "REVOKE 41 BATON_EUNKNOWN by admin at 10.0.0.8:6000: ");
}

/* ACL requests: a list is a line at once; a change when its entry's
 * outcome is answered, with the role it set. */
static void acl_requests(void **state)
{
        struct command set = {.type = COMMAND_ACL,
                              .mode = COMMAND_ACL_SET,
                              .role = 1,
                              .name = "reader",
                              .name_len = 6};
        struct corefix *x = *state;
        size_t m;

        gateway_conn_init(&x->c.gw, 5, "admin", true);
        x->c.gw.endpoint = "10.0.0.8:6000";
        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        corefix_send_acl_list(x);
        corefix_send_acl_set(x);
        corefix_expect_count(x, m, COREFIX_AUDIT, 1);
        expect_line(x, m, 0, "ACL_LIST  ok by admin at 10.0.0.8:6000: ");
        set.address = "admin";
        set.address_len = 5;
        gateway_on_acl(&x->g, 42, &set, 0);
        corefix_complete(x, 0, 0);
        corefix_expect_count(x, m, COREFIX_AUDIT, 2);
        expect_line(x, m, 1,
                    "ACL_SET reader ok by admin at 10.0.0.8:6000: role read");
}

/* Reads and lock commands of clients allowed them are no lines. */
static void nothing_else(void **state)
{
        struct corefix *x = *state;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        corefix_send_query(x);
        corefix_send_open(x);
        corefix_send_status(x, 0);
        gateway_flush(&x->g, &x->now, WALL);
        corefix_expect_count(x, m, COREFIX_AUDIT, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(role_refusals, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(not_attached, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(transfer_when_answered,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(member_remove, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(revoke_answered_unknown,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(acl_requests, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(nothing_else, corefix_setup,
                                            corefix_teardown),
        };

        return cmocka_run_group_tests_name("gwaudit", tests, NULL, NULL);
}
