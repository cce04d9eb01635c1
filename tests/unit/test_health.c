/* Unit tests for GET /health and GET /ready's verdicts and bodies
 * (health.c), and for the shim that reads the leader's commit index off
 * raft's receive path (heard.c), with a stand-in raft_io. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/health.h"
#include "../../src/server/heard.h"

/* A follower of node 2 in term 7 that is caught up. */
static struct health_facts follower(void)
{
        struct health_facts f;

        memset(&f, 0, sizeof f);
        f.node = 1;
        f.role = BATON_ROLE_FOLLOWER;
        f.term = 7;
        f.leader = 2;
        f.commit_index = 100;
        f.applied_index = 100;
        f.leader_commit = 100;
        f.max_lag = 10;
        return f;
}

static void render(const struct health_facts *f, bool ready, char *buf,
                   size_t cap, int *status)
{
        size_t need = health_render(f, ready, NULL, 0, status);
        size_t n = health_render(f, ready, buf, cap, status);

        assert_int_equal(n, need);
        assert_true(n < cap);
        assert_int_equal(buf[n - 1], '\n');
}

static void health_ok_and_raft_not_running(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        render(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 200);
        assert_string_equal(body, "{\"status\":\"ok\",\"reason\":\"ok\","
                                  "\"message\":\"ok\",\"node\":1,"
                                  "\"role\":\"follower\",\"term\":7}\n");
        /* Without a leader a node is still healthy, not ready. */
        f.leader = 0;
        f.role = BATON_ROLE_CANDIDATE;
        render(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 200);
        f.role = BATON_ROLE_UNAVAILABLE;
        render(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"status\":\"unavailable\","
                                     "\"reason\":\"raft-not-running\""));
        assert_non_null(strstr(body, "\"role\":\"unavailable\""));
}

static void ready_when_caught_up(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 200);
        assert_string_equal(
            body, "{\"status\":\"ready\",\"reason\":\"ok\",\"message\":\"ok\","
                  "\"node\":1,\"role\":\"follower\",\"term\":7,\"leader\":2,"
                  "\"commit_index\":100,\"applied_index\":100,"
                  "\"leader_commit_index\":100,\"lag\":0,\"max_lag\":10}\n");
        /* Exactly at the bound is ready; one more is not. */
        f.leader_commit = 110;
        assert_int_equal(ready_check(&f), HEALTH_OK);
        f.leader_commit = 111;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"status\":\"not-ready\","
                                     "\"reason\":\"lagging\""));
        assert_non_null(strstr(body, "applied index 100 is 11 entries "
                                     "behind the leader's commit index, "
                                     "more than ready-max-lag (10)"));
        assert_non_null(strstr(body, "\"lag\":11,\"max_lag\":10}"));
}

/* The node's own commit index counts when nothing was heard (a leader). */
static void lag_from_own_commit(void **state)
{
        struct health_facts f = follower();

        (void)state;
        f.leader_commit = 0;
        f.commit_index = 150;
        assert_int_equal(health_lag(&f), 50);
        assert_int_equal(ready_check(&f), HEALTH_LAGGING);
        f.applied_index = 160; /* never negative */
        assert_int_equal(health_lag(&f), 0);
        assert_int_equal(ready_check(&f), HEALTH_OK);
}

static void not_ready_without_leader(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        f.leader = 0;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"reason\":\"no-leader\","
                                     "\"message\":\"this node knows no "
                                     "leader in term 7\""));
        f.role = BATON_ROLE_UNAVAILABLE;
        assert_int_equal(ready_check(&f), HEALTH_RAFT_NOT_RUNNING);
}

/* A leader is ready once it serves (a barrier of its term applied). */
static void leader_ready_once_serving(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        f.role = BATON_ROLE_LEADER;
        f.leader = 1;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"reason\":\"leader-not-serving\""));
        f.serving = true;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 200);
        assert_non_null(strstr(body, "\"role\":\"leader\""));
}

static void reason_names(void **state)
{
        (void)state;
        assert_string_equal(health_reason_name(HEALTH_OK), "ok");
        assert_string_equal(health_reason_name(HEALTH_RAFT_NOT_RUNNING),
                            "raft-not-running");
        assert_string_equal(health_reason_name(HEALTH_NO_LEADER), "no-leader");
        assert_string_equal(health_reason_name(HEALTH_NOT_SERVING),
                            "leader-not-serving");
        assert_string_equal(health_reason_name(HEALTH_LAGGING), "lagging");
}

/* --- heard.c with a stand-in raft_io -------------------------------------- */

struct stand_in {
        raft_io_recv_cb recv; /* what heard passed to the real start() */
        unsigned started;
        unsigned delivered; /* messages raft's own callback got */
};

static struct stand_in io_state;

static int fake_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                      raft_io_recv_cb recv)
{
        (void)io;
        (void)msecs;
        (void)tick;
        io_state.recv = recv;
        io_state.started++;
        return 0;
}

static void raft_recv(struct raft_io *io, struct raft_message *msg)
{
        (void)io;
        (void)msg;
        io_state.delivered++;
}

static void deliver(struct heard *h, enum raft_message_type type, uint64_t term,
                    uint64_t commit)
{
        struct raft_message m;

        memset(&m, 0, sizeof m);
        m.type = type;
        m.append_entries.term = term;
        m.append_entries.leader_commit = commit;
        io_state.recv(&h->io, &m);
}

static void heard_wrapped(struct heard *h)
{
        memset(h, 0, sizeof *h);
        memset(&io_state, 0, sizeof io_state);
        h->io.start = fake_start;
        heard_wrap(h);
}

static void heard_tracks_leader_commit(void **state)
{
        struct heard h;

        (void)state;
        heard_wrapped(&h);
        assert_int_equal(h.io.start(&h.io, 50, NULL, raft_recv), 0);
        assert_int_equal(io_state.started, 1);
        assert_int_equal(heard_leader_commit(&h, 3), 0);
        deliver(&h, RAFT_APPEND_ENTRIES, 3, 40);
        deliver(&h, RAFT_APPEND_ENTRIES, 3, 42);
        deliver(&h, RAFT_APPEND_ENTRIES, 3, 41); /* reordered: kept 42 */
        assert_int_equal(heard_leader_commit(&h, 3), 42);
        assert_int_equal(heard_leader_commit(&h, 4), 0);
        /* An older term's leader is not believed. */
        deliver(&h, RAFT_APPEND_ENTRIES, 2, 99);
        assert_int_equal(heard_leader_commit(&h, 3), 42);
        /* Other messages say nothing of the commit index. */
        deliver(&h, RAFT_REQUEST_VOTE, 9, 500);
        assert_int_equal(heard_leader_commit(&h, 3), 42);
        /* A new term starts over. */
        deliver(&h, RAFT_APPEND_ENTRIES, 5, 30);
        assert_int_equal(heard_leader_commit(&h, 5), 30);
        assert_int_equal(heard_leader_commit(&h, 3), 0);
        /* Raft got every message. */
        assert_int_equal(io_state.delivered, 6);
}

/* An InstallSnapshot that arrives while one of heard's two flags is set
 * (`installing`: raft's, else the state machine's `writing`) never reaches
 * raft (libraft 0.22.1 would crash on it later, or leak it), and its
 * memory is given back (the sanitizer build would see a leak); any other
 * message, and installs at any other time, go through. */
static void drops_installs_while(bool installing)
{
        struct raft_message m;
        struct heard h;
        bool flags[2] = {false, false};
        bool *busy = &flags[installing ? 1 : 0];

        heard_wrapped(&h);
        h.writing = &flags[0];
        h.installing = &flags[1];
        *busy = true;
        assert_int_equal(h.io.start(&h.io, 50, NULL, raft_recv), 0);
        memset(&m, 0, sizeof m);
        m.type = RAFT_INSTALL_SNAPSHOT;
        raft_configuration_init(&m.install_snapshot.conf);
        assert_int_equal(raft_configuration_add(&m.install_snapshot.conf, 1,
                                                "127.0.0.1:7001", RAFT_VOTER),
                         0);
        m.install_snapshot.data.len = 64;
        m.install_snapshot.data.base = raft_malloc(64);
        assert_non_null(m.install_snapshot.data.base);
        io_state.recv(&h.io, &m);
        assert_int_equal(io_state.delivered, 0);
        assert_int_equal(h.installs_dropped, 1);
        deliver(&h, RAFT_APPEND_ENTRIES, 3, 40);
        assert_int_equal(io_state.delivered, 1);
        *busy = false;
        memset(&m, 0, sizeof m);
        m.type = RAFT_INSTALL_SNAPSHOT;
        io_state.recv(&h.io, &m);
        assert_int_equal(io_state.delivered, 2);
        assert_int_equal(h.installs_dropped, 1);
}

/* While this node writes a snapshot of its own. */
static void heard_drops_installs_while_writing(void **state)
{
        (void)state;
        drops_installs_while(false);
}

/* While raft still installs an earlier snapshot. */
static void heard_drops_installs_while_installing(void **state)
{
        (void)state;
        drops_installs_while(true);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(health_ok_and_raft_not_running),
            cmocka_unit_test(ready_when_caught_up),
            cmocka_unit_test(lag_from_own_commit),
            cmocka_unit_test(not_ready_without_leader),
            cmocka_unit_test(leader_ready_once_serving),
            cmocka_unit_test(reason_names),
            cmocka_unit_test(heard_tracks_leader_commit),
            cmocka_unit_test(heard_drops_installs_while_writing),
            cmocka_unit_test(heard_drops_installs_while_installing),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
