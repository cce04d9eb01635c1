/* A data directory belongs to one process of one node of one cluster, and a
 * busy port is found before it is touched: real batond processes on
 * 127.0.0.1 with TLS (BATON_TEST_TLS=off: without), printing TAP. Each
 * scenario has a 3-node cluster of its own and starts more batond
 * processes beside it (oneoff.h): a second one on a node's directory, a
 * node on a copy of another's, on another cluster's, on a wiped one, on
 * busy ports, and --recover / --restore on a held directory.
 * docs/operations.md ("The data directory") describes what each refusal
 * means. Environment as test_integration (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "harness.h"
#include "oneoff.h"
#include "scenario.h"

#define WATCHDOG_S 240
#define REFUSED_MS 1000  /* a second process on a held directory gives up */
#define PEERS_MS   10000 /* a node the peers refuse exits */
#define LIST_MAX   4096

/* Start `o`, wait up to `ms` for its exit; false (it is stopped, and the
 * scenario failed, saying `what`) when it still runs. */
static bool exits(struct ctx *x, struct oneoff *o, int ms, const char *what,
                  int line)
{
        char last[1024];

        if (oneoff_start(o) != 0) {
                fail_at(x, line, "%s: cannot start: %s", what, strerror(errno));
                return false;
        }
        if (oneoff_wait(o, ms)) {
                return true;
        }
        oneoff_stop(o);
        oneoff_log_line(o,
                        oneoff_log_has(o, "serving as leader")
                            ? "serving as leader"
                            : "node ",
                        last, sizeof last);
        fail_at(x, line, "%s: still running after %d ms; its log: %s", what, ms,
                last);
        return false;
}

#define EXITS(x, o, ms, what)                                                  \
        do {                                                                   \
                if (!exits(x, o, ms, what, __LINE__)) {                        \
                        return;                                                \
                }                                                              \
        } while (0)

/* `o` exited 1, its log has `a` and `b` (NULL: not asked); its line is
 * printed. */
static bool refused(struct ctx *x, const struct oneoff *o, const char *a,
                    const char *b, int line)
{
        char said[2048];

        oneoff_log_line(o, oneoff_log_has(o, " error ") ? " error " : a, said,
                        sizeof said);
        printf("# exit %d after %" PRId64 " ms: %s\n", o->status,
               o->ended_ms - o->started_ms, said);
        if (o->status != 1 || !oneoff_log_has(o, a) ||
            (b != NULL && !oneoff_log_has(o, b))) {
                fail_at(x, line,
                        "exit %d (1 expected), '%s'%s%s expected in: %s",
                        o->status, a, b != NULL ? " and " : "",
                        b != NULL ? b : "", said);
                return false;
        }
        return true;
}

#define REFUSED(x, o, a, b)                                                    \
        do {                                                                   \
                if (!refused(x, o, a, b, __LINE__)) {                          \
                        return;                                                \
                }                                                              \
        } while (0)

/* The cluster still serves: a grant and a release, and all healthy. */
static bool serves(struct ctx *x, int line)
{
        struct tclient c;
        char name[64];
        uint64_t t;

        lock_name(x, name, sizeof name, "serves");
        if (!client_open(x, &c, TTL_MS, line)) {
                return false;
        }
        t = granted(x, &c, name, 1000, line);
        if (t == 0 || !released(x, &c, name, t, line)) {
                tclient_close(&c);
                return false;
        }
        tclient_close(&c);
        if (harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                fail_at(x, line, "%s", x->h.errmsg);
                return false;
        }
        return true;
}

#define SERVES(x)                                                              \
        do {                                                                   \
                if (!serves(x, __LINE__)) {                                    \
                        return;                                                \
                }                                                              \
        } while (0)

static void path_in(struct ctx *x, char *buf, size_t cap, const char *name)
{
        snprintf(buf, cap, "%s/%s", x->h.dir, name);
}

/* Stop node `id` and wait for its exit. */
static bool stopped(struct ctx *x, unsigned id, int line)
{
        if (harness_term(&x->h, id, NULL) != 0 ||
            harness_wait_exit(&x->h, id, HEALTHY_MS, NULL) != 0) {
                fail_at(x, line, "stopping node %u: %s", id, x->h.errmsg);
                return false;
        }
        return true;
}

#define STOP(x, id)                                                            \
        do {                                                                   \
                if (!stopped(x, id, __LINE__)) {                               \
                        return;                                                \
                }                                                              \
        } while (0)

/* --- The scenarios -------------------------------------------------------- */

/* Two batond on one data directory both served, and granted one lock
 * twice: the second is refused at once, naming the first's pid. */
static void sc_second_process(struct ctx *x)
{
        const struct harness_node *nd = &x->h.nodes[0];
        char before[LIST_MAX], after[LIST_MAX], member[96], log[PATH_MAX];
        char pid[32];
        struct oneoff o;

        oneoff_listing(nd->data_dir, before, sizeof before);
        /* Ports of its own, as in the report: only the directory is
         * shared. */
        snprintf(member, sizeof member, "1 127.0.0.1:%d 127.0.0.1:%d",
                 oneoff_free_port(), oneoff_free_port());
        path_in(x, log, sizeof log, "second.log");
        oneoff_init(&o, x->h.batond, log);
        oneoff_args(&o, "--id", "1", "--tls", "off", "--data-dir", nd->data_dir,
                    "--member", member, NULL);
        EXITS(x, &o, PEERS_MS, "a second batond on node 1's data directory");
        snprintf(pid, sizeof pid, "pid %d", (int)nd->pid);
        REFUSED(x, &o, nd->data_dir, pid);
        EXPECT(x, o.ended_ms - o.started_ms <= REFUSED_MS,
               "refused after %" PRId64 " ms, more than %d",
               o.ended_ms - o.started_ms, REFUSED_MS);
        oneoff_listing(nd->data_dir, after, sizeof after);
        EXPECT(x, strcmp(before, after) == 0,
               "node 1's data directory changed:\n# before: %s\n# after:  %s",
               before, after);
        EXPECT(x, harness_running(&x->h, 1), "node 1 no longer runs");
        SERVES(x);
}

/* Node 3 on a copy of node 2's data directory ran without a word. */
static void sc_copy(struct ctx *x)
{
        char copy[PATH_MAX], cmd[2 * PATH_MAX + 32], log[PATH_MAX];
        struct oneoff o;

        STOP(x, 3);
        path_in(x, copy, sizeof copy, "n2-copy");
        snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", x->h.nodes[1].data_dir,
                 copy);
        EXPECT(x, system(cmd) == 0, "%s failed", cmd);
        path_in(x, log, sizeof log, "copy.log");
        oneoff_init(&o, x->h.batond, log);
        oneoff_node_args(&o, &x->h, 3, copy);
        EXITS(x, &o, PEERS_MS, "node 3 on a copy of node 2's directory");
        REFUSED(x, &o, copy, "belongs to node 2");
        EXPECT(x, harness_restart(&x->h, 3) == 0, "%s", x->h.errmsg);
        SERVES(x);
}

/* Restart node `id` on `dir` with one more member line (NULL: on its own
 * directory, as configured). */
static bool restart_on(struct ctx *x, unsigned id, const char *dir,
                       const char *member, int line)
{
        const char *flags[] = {"--data-dir", dir, "--member", member};

        return scenario_restart(x, id, flags, dir != NULL ? 4 : 0, false, line);
}

#define RESTART_ON(x, id, dir, member)                                         \
        do {                                                                   \
                if (!restart_on(x, id, dir, member, __LINE__)) {               \
                        return;                                                \
                }                                                              \
        } while (0)

/* The term and leader node `id` reports. */
static bool status_of(struct ctx *x, unsigned id, struct baton_status *st,
                      int line)
{
        int rv =
            tclient_status_of(harness_client_address(&x->h, id), OP_MS, st);

        if (rv != 0) {
                fail_at(x, line, "STATUS of node %u: %d", id, rv);
                return false;
        }
        return true;
}

/*
 * Node 3 on the directory of another cluster that ran on the same
 * addresses (its member lines name a fourth node too, which never ran):
 * its raft knows every peer, campaigns with its own log, and must reach
 * none of them.
 */
static void sc_other_cluster(struct ctx *x)
{
        char b[4][PATH_MAX], log[PATH_MAX], member4[96];
        struct baton_status st1, st2;
        struct oneoff o;
        unsigned i, leader;

        snprintf(member4, sizeof member4, "4 127.0.0.1:%d 127.0.0.1:%d",
                 oneoff_free_port(), oneoff_free_port());
        for (i = 1; i <= 3; i++) {
                snprintf(b[i], sizeof b[i], "%s/other%u", x->h.dir, i);
                STOP(x, i);
        }
        for (i = 1; i <= 3; i++) {
                RESTART_ON(x, i, b[i], member4);
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0,
               "the other cluster: %s", x->h.errmsg);
        /* Its log ahead of ours: a node of it would win our elections. */
        SERVES(x);
        SERVES(x);
        for (i = 1; i <= 3; i++) {
                STOP(x, i);
        }
        RESTART_ON(x, 1, NULL, NULL);
        RESTART_ON(x, 2, NULL, NULL);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        if (!status_of(x, leader, &st1, __LINE__)) {
                return;
        }
        path_in(x, log, sizeof log, "other.log");
        oneoff_init(&o, x->h.batond, log);
        oneoff_node_args(&o, &x->h, 3, b[3]);
        EXITS(x, &o, PEERS_MS, "node 3 on the other cluster's directory");
        REFUSED(x, &o, b[3], "another cluster");
        EXPECT(x,
               log_has(x, 1, "its data directory was made for cluster") &&
                   log_has(x, 2, "its data directory was made for cluster"),
               "nodes 1 and 2 did not both say why they refused node 3");
        if (!status_of(x, leader, &st2, __LINE__)) {
                return;
        }
        /* No vote of node 3's reached raft: no election since. */
        EXPECT(x,
               st2.term == st1.term && st2.leader_id == st1.leader_id &&
                   st2.leader_id == leader,
               "term %" PRIu64 " leader %" PRIu64 " before node 3, term "
               "%" PRIu64 " leader %" PRIu64 " after",
               st1.term, st1.leader_id, st2.term, st2.leader_id);
        RESTART_ON(x, 3, NULL, NULL);
        SERVES(x);
}

/* Whether some running node's log has `needle`. */
static bool some_log_has(struct ctx *x, const char *needle)
{
        unsigned i;

        for (i = 1; i <= x->h.n; i++) {
                if (log_has(x, i, needle)) {
                        return true;
                }
        }
        return false;
}

/* Node `id` taken out and added back with an empty directory and join =
 * true (docs/operations.md, "The data directory"). */
static bool replaced(struct ctx *x, unsigned id, int line)
{
        const struct harness_node *nd = &x->h.nodes[id - 1];
        const char *join[] = {"--join", "true"};
        char cmd[PATH_MAX + 16];
        struct tclient adm;
        int rv;

        if (tclient_init(&adm, x->h.endpoints) != 0) {
                fail_at(x, line, "tclient_init");
                return false;
        }
        rv = tclient_member_remove(&adm, id, HEALTHY_MS);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", nd->data_dir);
        if (rv != 0 || system(cmd) != 0 ||
            harness_set_flags(&x->h, id, join, 2) != 0 ||
            harness_restart(&x->h, id) != 0) {
                fail_at(x, line, "member remove %u: %d (%s); %s", id, rv,
                        adm.errmsg, x->h.errmsg);
                tclient_close(&adm);
                return false;
        }
        rv = tclient_member_add(&adm, id, nd->raft_address, nd->client_address,
                                HEALTHY_MS);
        tclient_close(&adm);
        if (rv != 0) {
                fail_at(x, line, "member add %u: %d (%s)", id, rv, adm.errmsg);
                return false;
        }
        return true;
}

/*
 * A follower's directory wiped and the node started again as it was: it
 * would vote and acknowledge as if it had never voted or stored anything.
 * The peers that knew its directory refuse it, and it exits saying how
 * to bring it back; done so, it serves again.
 */
static void sc_wiped(struct ctx *x)
{
        char cmd[PATH_MAX + 16], name[64], log[PATH_MAX];
        const struct harness_node *nd;
        struct baton_status st;
        struct tclient c;
        struct oneoff o;
        unsigned leader, f;
        uint64_t t;

        lock_name(x, name, sizeof name, "wiped");
        OPEN(x, &c, TTL_MS);
        GRANT(x, t, &c, name);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        f = a_follower(x, leader);
        nd = &x->h.nodes[f - 1];
        STOP(x, f);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", nd->data_dir);
        EXPECT(x, system(cmd) == 0, "%s failed", cmd);
        path_in(x, log, sizeof log, "wiped.log");
        oneoff_init(&o, x->h.batond, log);
        oneoff_node_args(&o, &x->h, f, nd->data_dir);
        EXITS(x, &o, PEERS_MS, "a follower started on its wiped directory");
        REFUSED(x, &o, "wiped or replaced", "member remove");
        EXPECT(x, some_log_has(x, "presents a data directory with incarnation"),
               "no peer said why it refused node %u", f);
        if (!replaced(x, f, __LINE__)) {
                return;
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "node %u added back: %s", f, x->h.errmsg);
        if (!status_of(x, leader, &st, __LINE__)) {
                return;
        }
        EXPECT(x, st.n_members == 3, "%u members after node %u came back",
               st.n_members, f);
        HOLDS(x, &c, name, c.session, t, 0);
        RELEASE(x, &c, name, t);
        tclient_close(&c);
}

/* A node of its own (tls off) on `dir` with raft, client and metrics
 * ports `ports` (metrics 0: none), until it exits; its log is NAME.log. */
static void single(struct ctx *x, struct oneoff *o, const char *name,
                   const char *dir, const int *ports)
{
        char log[PATH_MAX], member[96], metrics[32];

        snprintf(log, sizeof log, "%s/%s.log", x->h.dir, name);
        snprintf(member, sizeof member, "1 127.0.0.1:%d 127.0.0.1:%d", ports[0],
                 ports[1]);
        snprintf(metrics, sizeof metrics, "127.0.0.1:%d", ports[2]);
        oneoff_init(o, x->h.batond, log);
        oneoff_args(o, "--id", "1", "--tls", "off", "--data-dir", dir,
                    "--member", member, NULL);
        if (ports[2] != 0) {
                oneoff_args(o, "--metrics-address", metrics, NULL);
        }
}

/* Until `o`'s log says `text`, for up to `ms`. */
static bool log_says(const struct oneoff *o, const char *text, int ms)
{
        int64_t end = tclient_now_ms() + ms;

        while (!oneoff_log_has(o, text)) {
                if (tclient_now_ms() > end) {
                        return false;
                }
                poll_pause();
        }
        return true;
}

/* A CA file that does not exist: named with the system's reason (not
 * OpenSSL's "system lib"), before the data directory is made. */
static void tls_file_unreadable(struct ctx *x, const int *ports)
{
        char fresh[PATH_MAX], after[LIST_MAX];
        struct oneoff o;

        path_in(x, fresh, sizeof fresh, "tls-files");
        single(x, &o, "tls-files", fresh, ports);
        oneoff_args(&o, "--tls", "on", "--tls-ca", "/nonexistent/ca.crt",
                    "--tls-cert", "/nonexistent/node1.crt", "--tls-key",
                    "/nonexistent/node1.key", NULL);
        EXITS(x, &o, PEERS_MS, "a missing CA file");
        REFUSED(x, &o, "/nonexistent/ca.crt", strerror(ENOENT));
        oneoff_listing(fresh, after, sizeof after);
        EXPECT(x, strcmp(after, "(missing)") == 0,
               "a missing CA file: the data directory was made: %s", after);
}

/*
 * A busy raft port failed with "raft start: I/O error ()" once the data
 * directory was written; each busy port is now named before the
 * directory is made or changed.
 */
static void sc_busy_ports(struct ctx *x)
{
        int busy = 0, fd = oneoff_listen(&busy);
        int ports[3] = {oneoff_free_port(), oneoff_free_port(), 0};
        char dir[PATH_MAX], before[LIST_MAX], after[LIST_MAX], addr[32];
        static const char *const what[] = {"raft", "client", "metrics"};
        struct oneoff o;
        int i;

        EXPECT(x, fd >= 0 && ports[0] != 0 && ports[1] != 0, "no free ports");
        snprintf(addr, sizeof addr, "127.0.0.1:%d", busy);
        /* A directory with a node's data in it, for the client and metrics
         * ports; none at all for the raft port. */
        path_in(x, dir, sizeof dir, "ports");
        single(x, &o, "ports-make", dir, ports);
        EXPECT(x, oneoff_start(&o) == 0, "start: %s", strerror(errno));
        EXPECT(x, log_says(&o, "serving as leader", HEALTHY_MS),
               "a node of its own did not serve");
        oneoff_stop(&o);
        oneoff_listing(dir, before, sizeof before);
        for (i = 0; i < 3; i++) {
                char name[32], fresh[PATH_MAX];
                int p[3] = {ports[0], ports[1], 0};
                p[i] = busy;
                snprintf(name, sizeof name, "ports-%s", what[i]);
                path_in(x, fresh, sizeof fresh, name);
                single(x, &o, name, i == 0 ? fresh : dir, p);
                EXITS(x, &o, PEERS_MS, what[i]);
                REFUSED(x, &o, addr, what[i]);
                oneoff_listing(i == 0 ? fresh : dir, after, sizeof after);
                EXPECT(x, strcmp(i == 0 ? "(missing)" : before, after) == 0,
                       "busy %s port: the data directory changed:\n# "
                       "before: %s\n# after:  %s",
                       what[i], i == 0 ? "(missing)" : before, after);
        }
        close(fd);
        tls_file_unreadable(x, ports);
}

/* --recover and --restore on the directory of a running node: refused,
 * naming its pid, the directory as it was, the node serving. */
static void sc_offline_on_held(struct ctx *x)
{
        static const char *const modes[] = {"--recover", "--restore"};
        const struct harness_node *nd = &x->h.nodes[0];
        char before[LIST_MAX], after[LIST_MAX], log[PATH_MAX], pid[32];
        char moved[PATH_MAX + 32];
        struct oneoff o;
        unsigned i;

        snprintf(pid, sizeof pid, "pid %d", (int)nd->pid);
        snprintf(moved, sizeof moved, "%s.before-recover", nd->data_dir);
        for (i = 0; i < 2; i++) {
                oneoff_listing(nd->data_dir, before, sizeof before);
                snprintf(log, sizeof log, "%s/offline%u.log", x->h.dir, i);
                oneoff_init(&o, x->h.batond, log);
                oneoff_node_args(&o, &x->h, 1, nd->data_dir);
                oneoff_args(&o, modes[i], NULL);
                if (i == 1) {
                        oneoff_args(&o, "/nonexistent/backup.bak", NULL);
                }
                EXITS(x, &o, PEERS_MS, modes[i]);
                REFUSED(x, &o, nd->data_dir, pid);
                oneoff_listing(nd->data_dir, after, sizeof after);
                EXPECT(x,
                       strcmp(before, after) == 0 && access(moved, F_OK) != 0,
                       "%s changed node 1's directory:\n# before: %s\n# "
                       "after:  %s",
                       modes[i], before, after);
        }
        EXPECT(x, harness_running(&x->h, 1), "node 1 no longer runs");
        SERVES(x);
}

/* The newest snapshot data file (not its .meta) in `dir`, into `out`. */
static bool newest_snapshot(const char *dir, char *out, size_t cap)
{
        char cmd[PATH_MAX + 96];
        FILE *p;
        bool ok;

        snprintf(cmd, sizeof cmd,
                 "ls -t '%s'/snapshot-* 2>/dev/null | grep -v '\\.meta$' | "
                 "head -n 1",
                 dir);
        p = popen(cmd, "r");
        if (p == NULL) {
                return false;
        }
        ok = fgets(out, (int)cap, p) != NULL;
        pclose(p);
        if (ok) {
                out[strcspn(out, "\n")] = '\0';
        }
        return ok && out[0] != '\0';
}

/* Write the little-endian `v` at byte `at` of the file at `path`. */
static bool put_u32_at(const char *path, long at, uint32_t v)
{
        uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                        (uint8_t)(v >> 24)};
        FILE *f = fopen(path, "r+b");
        bool ok = f != NULL && fseek(f, at, SEEK_SET) == 0 &&
                  fwrite(b, 1, sizeof b, f) == sizeof b;

        return f != NULL && fclose(f) == 0 && ok;
}

/*
 * Node 1's newest snapshot as a newer release would write it (its
 * container version one past this build's, at byte 4): refused with exit
 * 1 and the line naming both versions and the release to run, never as a
 * damaged directory (exit 3, "wipe"), which would have the operator
 * throw away a whole directory; nothing in it changed.
 */
static void sc_newer_snapshot(struct ctx *x)
{
        static const char *const small[] = {"--snapshot-threshold", "64",
                                            "--snapshot-trailing", "16"};
        const struct harness_node *nd = &x->h.nodes[0];
        char snap[PATH_MAX], before[LIST_MAX], after[LIST_MAX], log[PATH_MAX];
        char want[64];
        struct tclient c;
        char name[64];
        unsigned i;
        uint64_t t;
        struct oneoff o;

        if (!restart_all(x, small, 4, __LINE__) ||
            !client_open(x, &c, TTL_MS, __LINE__)) {
                return;
        }
        lock_name(x, name, sizeof name, "newer");
        for (i = 0; i < 60 && x->ok; i++) {
                t = granted(x, &c, name, 1000, __LINE__);
                if (t == 0 || !released(x, &c, name, t, __LINE__)) {
                        break;
                }
        }
        tclient_close(&c);
        if (!x->ok) {
                return;
        }
        STOP(x, 1);
        EXPECT(x, newest_snapshot(nd->data_dir, snap, sizeof snap),
               "node 1 took no snapshot in 120 grants and releases");
        if (!x->ok) {
                return;
        }
        EXPECT(x, put_u32_at(snap, 4, 3), "cannot rewrite %s", snap);
        oneoff_listing(nd->data_dir, before, sizeof before);
        path_in(x, log, sizeof log, "newer.log");
        oneoff_init(&o, x->h.batond, log);
        oneoff_node_args(&o, &x->h, 1, nd->data_dir);
        EXITS(x, &o, PEERS_MS, "node 1 on a newer release's snapshot");
        snprintf(want, sizeof want, "its container is version %d", 3);
        REFUSED(x, &o, want, "a newer Baton release wrote it");
        EXPECT(x, !oneoff_log_has(&o, "is damaged"),
               "a newer release's snapshot was called damage");
        oneoff_listing(nd->data_dir, after, sizeof after);
        /* The lock file names the last process that held it. */
        before[strcspn(before, "'")] = after[strcspn(after, "'")] = '\0';
        EXPECT(x, strcmp(before, after) == 0,
               "node 1's data directory changed:\n# before: %s\n# after:  %s",
               before, after);
}

/* --- The run ---------------------------------------------------------------
 */

static const struct scenario_entry scenarios[] = {
    {"a second batond on a running node's data directory: refused within a "
     "second naming it and the first's pid; nothing changed; still serving",
     sc_second_process, false},
    {"node 3 on a copy of node 2's data directory: refused", sc_copy, false},
    {"a node on another cluster's data directory (same addresses): its "
     "peers refuse it, it exits, no election",
     sc_other_cluster, false},
    {"a wiped data directory under an existing id: refused with the remedy; "
     "member remove, empty directory, join = true, member add: serves",
     sc_wiped, false},
    {"a busy raft, client or metrics port, or a TLS file that cannot be "
     "read: refused naming it, before the data directory is made or changed",
     sc_busy_ports, false},
    {"--recover and --restore on a running node's data directory: refused "
     "naming its pid; nothing changed",
     sc_offline_on_held, false},
    {"a snapshot of a newer release: refused with exit 1 naming the "
     "versions, not as damage; nothing changed",
     sc_newer_snapshot, false},
};

#define N_SCENARIOS (sizeof scenarios / sizeof scenarios[0])

static void run_one(struct ctx *x, const struct scenario_entry *s)
{
        int64_t t0 = scenario_begin(x);

        if (harness_start(&x->h, 3, NULL, x->run->argv0, x->run->base_port) !=
                0 ||
            harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                fail_at(x, __LINE__, "a new cluster: %s", x->h.errmsg);
        } else {
                x->h.keep = x->run->keep;
                s->fn(x);
        }
        scenario_close(x, s, t0);
}

int main(int argc, char **argv)
{
        return scenario_main(argc, argv, "test_datadir", WATCHDOG_S, scenarios,
                             N_SCENARIOS, run_one);
}
