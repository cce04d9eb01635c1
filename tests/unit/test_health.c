/* Unit tests for GET /health and GET /ready's verdicts and bodies
 * (health.c), and for the shim that reads the leader's commit index off
 * raft's receive path (heard.c), with a stand-in raft_io. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/server/ops/health.h"
#include "../../src/server/raft/heard.h"

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

/* A replica whose state digest differed from the leader's is not ready,
 * before every other reason but raft not running, and says which digests;
 * it is alive (GET /health). */
static void diverged_not_ready(void **state)
{
        struct health_facts f = follower();
        char body[1024];
        int status;

        (void)state;
        f.diverged = true;
        f.diverged_index = 4096;
        f.diverged_own = 0x1111222233334444ULL;
        f.diverged_leader = 0xaaaabbbbccccddddULL;
        f.disk_errno = ENOSPC;
        assert_int_equal(ready_check(&f), HEALTH_DIVERGED);
        assert_int_equal(health_check(&f), HEALTH_OK);
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"reason\":\"diverged\""));
        assert_non_null(strstr(body, "digest at index 4096 is "
                                     "1111222233334444, the leader's "
                                     "aaaabbbbccccdddd"));
        assert_string_equal(health_reason_name(HEALTH_DIVERGED), "diverged");
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
        assert_string_equal(health_reason_name(HEALTH_DISK_FULL), "disk-full");
        assert_string_equal(health_reason_name(HEALTH_DISK_ERROR),
                            "disk-error");
        assert_string_equal(health_reason_name(HEALTH_CANNOT_COMMIT),
                            "cannot-commit");
}

/* A node whose raft cannot write its data directory: not ready, whatever
 * else holds (its own fault before the cluster's), and still healthy:
 * it is alive, and a restart would free no space. */
static void not_ready_while_disk_full(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        f.disk_errno = ENOSPC;
        f.disk_failing_ms = 12345;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "{\"status\":\"not-ready\","
                                     "\"reason\":\"disk-full\","
                                     "\"message\":\"raft cannot write to "
                                     "this node's data directory (No space "
                                     "left on device) and has not for 12.3 "
                                     "s\","));
        f.leader = 0; /* no leader either: the disk is said first */
        f.applied_index = 0;
        assert_int_equal(ready_check(&f), HEALTH_DISK_FULL);
        assert_int_equal(health_check(&f), HEALTH_OK);
        render(&f, false, body, sizeof body, &status);
        assert_int_equal(status, 200);
        f.disk_errno = EROFS;
        assert_int_equal(ready_check(&f), HEALTH_DISK_ERROR);
        f.disk_errno = EIO;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"reason\":\"disk-error\""));
        assert_non_null(strstr(body, "(Input/output error)"));
        f.role = BATON_ROLE_UNAVAILABLE;
        assert_int_equal(ready_check(&f), HEALTH_RAFT_NOT_RUNNING);
        f = follower();
        f.disk_errno = 0;
        assert_int_equal(ready_check(&f), HEALTH_OK);
}

/* A leader whose oldest uncommitted entry has waited longer than an
 * election timeout cannot commit: not ready, still healthy. Exactly the
 * bound is not yet more; a follower never says it. */
static void leader_that_cannot_commit(void **state)
{
        struct health_facts f = follower();
        char body[512];
        int status = 0;

        (void)state;
        f.role = BATON_ROLE_LEADER;
        f.leader = 1;
        f.serving = true;
        f.commit_bound_ms = 300;
        f.uncommitted_ms = 300;
        assert_int_equal(ready_check(&f), HEALTH_OK);
        f.uncommitted_ms = 2500;
        render(&f, true, body, sizeof body, &status);
        assert_int_equal(status, 503);
        assert_non_null(strstr(body, "\"reason\":\"cannot-commit\","
                                     "\"message\":\"this node leads term 7 "
                                     "and has not committed for 2.5 s, more "
                                     "than an election timeout (300 ms): a "
                                     "majority of voters does not store its "
                                     "entries\""));
        assert_int_equal(health_check(&f), HEALTH_OK);
        /* A new leader whose barrier cannot commit says why, too. */
        f.serving = false;
        assert_int_equal(ready_check(&f), HEALTH_CANNOT_COMMIT);
        /* Its own full disk comes first. */
        f.disk_errno = ENOSPC;
        assert_int_equal(ready_check(&f), HEALTH_DISK_FULL);
        /* A follower's facts never make it. */
        f = follower();
        f.commit_bound_ms = 300;
        f.uncommitted_ms = 5000;
        assert_int_equal(ready_check(&f), HEALTH_OK);
}

/* --- heard.c with a stand-in raft_io -------------------------------------- */

#define MAX_PARTS 8

/* One AppendEntries as raft got it. */
struct part {
        uint64_t prev_index, prev_term, commit;
        unsigned n;
        char entries[16]; /* each entry's type ('c'ommand, 'C'hange) and */
        char bytes[64];   /* its bytes, in order */
};

struct stand_in {
        raft_io_recv_cb recv; /* what heard passed to the real start() */
        unsigned started;
        unsigned delivered; /* messages raft's own callback got */
        raft_time now;      /* what the stand-in's clock says */
        struct part parts[MAX_PARTS];
};

static struct stand_in io_state;

static raft_time fake_time(struct raft_io *io)
{
        (void)io;
        return io_state.now;
}

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

/* Records what raft would see of an AppendEntries, then frees its
 * entries as raft does: the batch through the first entry, then the
 * array. */
static void raft_recv(struct raft_io *io, struct raft_message *msg)
{
        const struct raft_append_entries *a = &msg->append_entries;
        struct part *p = &io_state.parts[io_state.delivered % MAX_PARTS];
        unsigned i;

        (void)io;
        io_state.delivered++;
        if (msg->type != RAFT_APPEND_ENTRIES || a->n_entries == 0) {
                return;
        }
        memset(p, 0, sizeof *p);
        p->prev_index = a->prev_log_index;
        p->prev_term = a->prev_log_term;
        p->commit = a->leader_commit;
        p->n = a->n_entries;
        for (i = 0; i < a->n_entries; i++) {
                const struct raft_entry *e = &a->entries[i];
                assert_true(e->batch == a->entries[0].batch);
                p->entries[i] = e->type == RAFT_CHANGE ? 'C' : 'c';
                strncat(p->bytes, e->buf.base, e->buf.len);
        }
        raft_free(a->entries[0].batch);
        raft_free(a->entries);
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
        h->io.time = fake_time;
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

/* Each peer's last message is dated, whatever its type, for the voters a
 * leader reaches (baton_raft_voters_reachable). */
static void heard_dates_each_peer(void **state)
{
        struct heard h;
        struct raft_message m;

        (void)state;
        heard_wrapped(&h);
        assert_int_equal(h.io.start(&h.io, 50, NULL, raft_recv), 0);
        assert_false(heard_from_since(&h, 2, 0));
        memset(&m, 0, sizeof m);
        m.type = RAFT_APPEND_ENTRIES_RESULT;
        m.server_id = 2;
        io_state.now = 1000;
        io_state.recv(&h.io, &m);
        m.server_id = 3;
        io_state.now = 1300;
        io_state.recv(&h.io, &m);
        assert_true(heard_from_since(&h, 2, 1000));
        assert_false(heard_from_since(&h, 2, 1001));
        assert_true(heard_from_since(&h, 3, 1200));
        assert_false(heard_from_since(&h, 4, 0));
        m.server_id = 2;
        io_state.now = 1500;
        io_state.recv(&h.io, &m);
        assert_true(heard_from_since(&h, 2, 1400));
        assert_int_equal(h.n_peers, 2);
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

/* An AppendEntries with configuration changes after its first entry
 * reaches raft split before each change, in order, with the same entries,
 * every part's previous index and term those of the entry before it
 * (libraft 0.22.1 would record the change at the wrong index); one with
 * none, or with a change first, goes whole. Under ASan, nothing leaks and
 * nothing is freed twice. */
static void append_entries(struct heard *h, uint64_t prev, const char *types,
                           const char *const bytes[])
{
        struct raft_message m;
        unsigned n = (unsigned)strlen(types), i;
        size_t off = 0;
        uint8_t *batch = raft_malloc(256);

        assert_non_null(batch);
        memset(&m, 0, sizeof m);
        m.type = RAFT_APPEND_ENTRIES;
        m.append_entries.term = 3;
        m.append_entries.prev_log_index = prev;
        m.append_entries.prev_log_term = 2;
        m.append_entries.leader_commit = prev + n;
        m.append_entries.n_entries = n;
        m.append_entries.entries = raft_malloc(n * sizeof(struct raft_entry));
        assert_non_null(m.append_entries.entries);
        for (i = 0; i < n; i++) {
                struct raft_entry *e = &m.append_entries.entries[i];
                size_t len = strlen(bytes[i]);

                e->term = i < 2 ? 2 : 3;
                e->type = types[i] == 'C' ? RAFT_CHANGE : RAFT_COMMAND;
                e->batch = batch;
                e->buf.base = batch + off;
                e->buf.len = len;
                memcpy(batch + off, bytes[i], len);
                off += (len + 7) / 8 * 8;
        }
        io_state.recv(&h->io, &m);
}

static void heard_splits_before_changes(void **state)
{
        static const char *const bytes[] = {"a", "bb", "conf-1", "ccc",
                                            "conf-2"};
        struct heard h;
        const struct part *p = io_state.parts;

        (void)state;
        heard_wrapped(&h);
        assert_int_equal(h.io.start(&h.io, 50, NULL, raft_recv), 0);
        append_entries(&h, 10, "ccCcC", bytes);
        assert_int_equal(io_state.delivered, 3);
        assert_int_equal(h.changes_split, 2);
        assert_int_equal(p[0].prev_index, 10);
        assert_int_equal(p[0].prev_term, 2);
        assert_string_equal(p[0].entries, "cc");
        assert_string_equal(p[0].bytes, "abb");
        assert_int_equal(p[1].prev_index, 12);
        assert_int_equal(p[1].prev_term, 2);
        assert_string_equal(p[1].entries, "Cc");
        assert_string_equal(p[1].bytes, "conf-1ccc");
        assert_int_equal(p[2].prev_index, 14);
        assert_int_equal(p[2].prev_term, 3);
        assert_string_equal(p[2].entries, "C");
        assert_string_equal(p[2].bytes, "conf-2");
        assert_int_equal(p[2].commit, 15);
        /* A change first, and no change at all: whole. */
        append_entries(&h, 20, "Ccc", bytes);
        append_entries(&h, 30, "ccc", bytes);
        assert_int_equal(io_state.delivered, 5);
        assert_int_equal(h.changes_split, 2);
        assert_string_equal(p[3].entries, "Ccc");
        assert_string_equal(p[4].entries, "ccc");
        assert_int_equal(heard_leader_commit(&h, 3), 33);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(health_ok_and_raft_not_running),
            cmocka_unit_test(ready_when_caught_up),
            cmocka_unit_test(lag_from_own_commit),
            cmocka_unit_test(diverged_not_ready),
            cmocka_unit_test(not_ready_without_leader),
            cmocka_unit_test(leader_ready_once_serving),
            cmocka_unit_test(reason_names),
            cmocka_unit_test(not_ready_while_disk_full),
            cmocka_unit_test(leader_that_cannot_commit),
            cmocka_unit_test(heard_tracks_leader_commit),
            cmocka_unit_test(heard_dates_each_peer),
            cmocka_unit_test(heard_drops_installs_while_writing),
            cmocka_unit_test(heard_drops_installs_while_installing),
            cmocka_unit_test(heard_splits_before_changes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
