/* The request core's leadership as its host reports it (gateway.h): it
 * serves from gateway_on_ready() to gateway_on_lost() and at no other
 * time, sends clients to the leader its host names, holds requests while
 * the host names this node, and asks its host, not the raft node, what
 * the node knows. The core runs with no raft node at all (NULL), so a
 * query that still went to the node would crash here; its frames go
 * through the fake host's connections (corefix.h), whose output is read
 * back. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../lib/forkrun.h"
#include "corefix.h"

/* Before ready, leader-only requests go to the leader the host names,
 * and a flush proposes nothing and asks nothing. */
static void not_serving_sends_clients_on(void **state)
{
        struct corefix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        uint64_t id;
        uint8_t ping[PROTO_HEADER_SIZE];

        id = corefix_send_query(x);
        corefix_expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        id = corefix_send_acl_list(x);
        corefix_expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        id = corefix_send_member_remove(x, 9);
        corefix_expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        assert_int_equal(x->fake.member_calls, 0);
        assert_int_equal(x->g.stats.redirects, 3);
        /* Any node answers a PING. */
        id = x->next_id++;
        corefix_send_frame(
            x, ping, proto_write_empty(ping, sizeof ping, id, PROTO_PING));
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_PONG);
        assert_int_equal(h.id, id);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 0);
        assert_int_equal(x->fake.fsm_calls, 0);
        corefix_expect_nothing(x);
}

/* From ready the core answers leader-only requests itself; at lost it
 * answers what it holds NOT_LEADER, and sends clients on again. */
static void ready_serves_until_lost(void **state)
{
        struct corefix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        struct proto_result r;
        struct proto_acl_reply acl;
        uint64_t id, query;

        gateway_on_ready(&x->g, &x->now, 7);
        assert_int_equal(x->g.term, 7); /* what its batches are stamped */
        assert_int_equal(x->g.stats.elections_won, 1);
        assert_true(x->fake.fsm_calls > 0); /* the leader's clocks */
        id = corefix_send_acl_list(x);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_ACL_REPLY);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_acl_reply(body, h.length, &acl), 0);
        assert_int_equal(acl.seeded, 0);
        id = corefix_send_member_remove(x, 9);
        assert_int_equal(x->fake.member_calls, 1);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, BATON_ENOMEMBER);
        /* A read waits for the next flush's barrier. */
        query = corefix_send_query(x);
        corefix_expect_nothing(x);
        x->fake.leader = 3;
        x->fake.leader_address = "127.0.0.1:7003";
        gateway_on_lost(&x->g, &x->now);
        corefix_expect_not_leader(x, query, 3, "127.0.0.1:7003");
        id = corefix_send_acl_list(x);
        corefix_expect_not_leader(x, id, 3, "127.0.0.1:7003");
        corefix_expect_nothing(x);
}

/* While the host names this node leader but it does not serve yet, the
 * core holds requests rather than send clients to itself; ready queues
 * them, and lost answers them NOT_LEADER with no leader named. */
static void held_from_leading_to_ready(void **state)
{
        struct corefix *x = *state;
        uint64_t query, id;

        x->fake.leader = SELF;
        x->fake.leader_address = "127.0.0.1:7001";
        query = corefix_send_query(x);
        corefix_expect_nothing(x);
        /* What is not held is not sent to this node either. */
        id = corefix_send_acl_list(x);
        corefix_expect_not_leader(x, id, 0, "");
        gateway_on_ready(&x->g, &x->now, 8);
        corefix_expect_nothing(x); /* queued for the barrier */
        gateway_on_lost(&x->g, &x->now);
        corefix_expect_not_leader(x, query, 0, "");
        corefix_expect_nothing(x);
}

/* A flush asks for the digest to propose only while serving. */
static void flush_only_while_serving(void **state)
{
        struct corefix *x = *state;

        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 0);
        gateway_on_ready(&x->g, &x->now, 9);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 1);
        gateway_on_lost(&x->g, &x->now);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 1);
        corefix_expect_nothing(x);
}

/* STATUS, on any node, is the host's status and lock counts, with the
 * versions only when asked. */
static void status_from_the_host(void **state)
{
        struct corefix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        struct proto_status st;
        struct proto_versions v;
        uint64_t id;

        id = corefix_send_status(x, PROTO_FLAG_VERSIONS);
        assert_int_equal(x->fake.status_calls, 1);
        assert_int_equal(x->fake.versions_calls, 1);
        assert_int_equal(x->fake.nowait_calls, 1);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_STATUS_REPLY);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_status(body, h.length, h.flags, &st, &v),
                         0);
        assert_int_equal(st.id, SELF);
        assert_int_equal(st.term, 7);
        assert_int_equal(v.release.len, 5);
        assert_memory_equal(v.release.p, "9.8.7", 5);
        assert_int_equal(v.command, 11);
        assert_int_equal(v.snapshot, 12);
        assert_int_equal(v.container, 13);
        id = corefix_send_status(x, 0);
        assert_int_equal(x->fake.status_calls, 2);
        assert_int_equal(x->fake.versions_calls, 1);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_STATUS_REPLY);
        assert_int_equal(h.flags, 0);
        assert_int_equal(x->fake.leader_calls, 0);
}

/* --- Raft's requests, through the host ------------------------------- */

/* One request of each kind the core makes of raft goes out through the
 * host's ops, not the node (there is none here), and its completion
 * answers its client once. */
static void requests_go_through_the_host(void **state)
{
        struct corefix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        uint64_t query, remove, transfer;

        x->fake.has_member = true;
        x->fake.voter = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = corefix_send_member_remove(x, 9);
        transfer = corefix_send_transfer(x, OTHER);
        query = corefix_send_query(x);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 3);
        assert_int_equal(x->fake.sent[0].op, 'c');
        assert_int_equal(x->fake.sent[0].change, GATEWAY_REMOVE);
        assert_int_equal(x->fake.sent[0].id, 9);
        assert_int_equal(x->fake.sent[1].op, 't');
        assert_int_equal(x->fake.sent[1].id, OTHER);
        assert_int_equal(x->fake.sent[2].op, 'b');
        assert_int_equal(gateway_requests_out(&x->g), 3);
        corefix_expect_nothing(x);
        /* The barrier: the read is answered from the state machine. */
        corefix_complete(x, 2, 0);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.id, query);
        assert_int_not_equal(h.type, PROTO_NOT_LEADER);
        corefix_expect_nothing(x);
        /* The removal: answered, and its directory entry proposed as the
         * leader's own at the next flush. */
        corefix_complete(x, 0, 0);
        corefix_expect_status(x, remove, 0);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 4);
        assert_int_equal(x->fake.sent[3].op, 'p');
        /* The transfer: the host's leader() says where leadership went. */
        corefix_complete(x, 1, 0);
        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, transfer);
        corefix_complete(x, 3, 0);
        assert_int_equal(gateway_requests_out(&x->g), 0);
        corefix_expect_nothing(x);
}

/* gateway_close() answers every client that waits on a request still
 * out (the outcome unknown, or sent on for a read), and the requests'
 * completions after it, which batond's node delivers as it closes, only
 * free their records: no second answer, nothing proposed, nothing asked
 * of the host. */
static void close_answers_and_done_only_frees(void **state)
{
        struct corefix *x = *state;
        uint64_t remove, transfer, acl, open, query;
        unsigned i, sent, calls;

        x->fake.has_member = true;
        x->fake.voter = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = corefix_send_member_remove(x, 9);
        transfer = corefix_send_transfer(x, OTHER);
        acl = corefix_send_acl_set(x);
        open = corefix_send_open(x);
        query = corefix_send_query(x);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 5); /* c, t, p (ACL), p, b */
        assert_int_equal(gateway_requests_out(&x->g), 5);
        corefix_expect_nothing(x);

        gateway_close(&x->g, &x->now);
        x->closed = true;
        corefix_expect_status(x, open, BATON_EUNKNOWN); /* proposed */
        corefix_expect_status(x, remove, BATON_EUNKNOWN);
        corefix_expect_status(x, transfer, BATON_EUNKNOWN);
        corefix_expect_status(x, acl, BATON_EUNKNOWN);
        corefix_expect_not_leader(x, query, OTHER, "127.0.0.1:7002");
        corefix_expect_nothing(x);

        /* As raft closes: success, failure, in any order. */
        sent = x->fake.n_sent;
        calls = x->fake.leader_calls + x->fake.member_calls;
        for (i = 0; i < sent; i++) {
                corefix_complete(x, sent - 1 - i,
                                 i % 2 == 0 ? 0 : BATON_EUNKNOWN);
        }
        assert_int_equal(gateway_requests_out(&x->g), 0);
        assert_int_equal(x->fake.n_sent, sent);
        assert_int_equal(x->fake.leader_calls + x->fake.member_calls, calls);
        corefix_expect_nothing(x);
}

/* The first request the host was handed, completed again. */
static void complete_again(void *arg)
{
        struct corefix *x = arg;

        gateway_on_done(&x->g, &x->now, x->fake.sent[0].req, 0);
}

/* A completion of a request that is not out (here, the same one twice)
 * stops the core at its check, which says so, rather than answer twice
 * or touch a freed record. */
static void second_completion_stops_the_core(void **state)
{
        struct corefix *x = *state;
        char said[1024];
        uint64_t remove;
        int status;

        x->fake.has_member = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = corefix_send_member_remove(x, 9);
        assert_int_equal(x->fake.n_sent, 1);
        corefix_complete(x, 0, BATON_ECANTCHANGE);
        corefix_expect_status(x, remove, BATON_ECANTCHANGE);
        assert_int_equal(gateway_requests_out(&x->g), 0);
        status = forkrun(complete_again, x, said, sizeof said);
        assert_int_not_equal(status, -1);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGABRT);
        assert_non_null(strstr(said, "is_out(g, req)"));
        corefix_expect_nothing(x);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(not_serving_sends_clients_on,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(ready_serves_until_lost,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(held_from_leading_to_ready,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(flush_only_while_serving,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(status_from_the_host, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(requests_go_through_the_host,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(close_answers_and_done_only_frees,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(second_completion_stops_the_core,
                                            corefix_setup, corefix_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
