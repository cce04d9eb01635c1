/*
 * Refusals that say what they are, against a live 3-node cluster
 * (tests/integration/harness): batonctl ($BATONCTL, or ./batonctl in the
 * build dir) is run and its exit status and exact one-line messages are
 * checked, and libbaton's baton_errmsg() is called directly:
 *
 * - membership and transfer refusals, each named: an unknown member, the
 *   leader itself, an id in use, an address in use, a malformed address
 *   (a usage error), a node that does not answer, a spare;
 * - `lock M1 M1` names the duplicate;
 * - the lines that say what a change did (member added, removed, session
 *   closed, where leadership went);
 * - a `member add` that got no answer in time, retried with the same
 *   addresses (it carries on and succeeds) and undone (member remove);
 * - a session TTL out of range states the range the cluster accepts;
 * - snapshot save and inspect name the file and the system's reason.
 *
 * With BATON_TEST_TLS=off (tests/cli/test_refusals_plain.sh) the nodes run
 * without TLS: a paused node then still completes a TCP connection, so a
 * `member add` of it gets as far as leaving a spare; with TLS its
 * handshake never finishes and the add is refused before anything
 * changes. Both paths are checked, each in its mode. Prints TAP; every
 * wait is bounded; the harness kills every node by PID on any exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 240
#define HEALTHY_MS 20000
#define RUN_MS     30000 /* a batonctl run that should end on its own */

static struct harness cluster;
static const char *batonctl; /* $BATONCTL, or ./batonctl */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
static char tmpdir[256];

/* --- Running batonctl ----------------------------------------------------- */

/* batonctl --endpoints E args... (or with `bare`, args... alone: no
 * cluster named), to its end. */
static void vctl(struct proc *r, bool bare, va_list ap)
{
        const char *const head[] = {"--endpoints", cluster.endpoints, NULL};

        proc_vrun(r, batonctl, 0, RUN_MS, bare ? NULL : head, ap);
}

/* batonctl --endpoints E args... */
static void ctl(struct proc *r, ...)
{
        va_list ap;

        va_start(ap, r);
        vctl(r, false, ap);
        va_end(ap);
}

/* batonctl args... (no cluster named) */
static void ctl_bare(struct proc *r, ...)
{
        va_list ap;

        va_start(ap, r);
        vctl(r, true, ap);
        va_end(ap);
}

/* The run exited `status` with exactly `out` on stdout and `err` on
 * stderr (NULL: not checked). */
static bool expect(const struct proc *r, int status, const char *out,
                   const char *err, const char *what)
{
        bool good = r->status == status &&
                    (out == NULL || strcmp(r->out, out) == 0) &&
                    (err == NULL || strcmp(r->err, err) == 0);

        if (!ok(good, "%s: exit %d, %s", what, status,
                err != NULL && err[0] != '\0' ? err
                : out != NULL                 ? out
                                              : "")) {
                proc_show(r);
        }
        return good;
}

/* --- The cluster ---------------------------------------------------------- */

static unsigned leader_now(void)
{
        unsigned leader = 0;

        if (harness_wait_healthy(&cluster, HEALTHY_MS, &leader) != 0) {
                tap_diag("%s", cluster.errmsg);
        }
        return leader;
}

static unsigned a_follower(unsigned leader)
{
        return leader == 1 ? 2 : 1;
}

/* The role `member list` shows for `id` ("voter", "spare"...), "" when it
 * does not list it; "?" when it cannot be asked. */
static const char *role_of(unsigned id, char *buf, size_t cap)
{
        struct proc r;
        char want[16];
        const char *line;

        ctl(&r, "member", "list", NULL);
        if (r.status != 0) {
                return "?";
        }
        snprintf(want, sizeof want, "%u ", id);
        buf[0] = '\0';
        for (line = r.out; line != NULL && *line != '\0';) {
                if (strncmp(line, want, strlen(want)) == 0) {
                        sscanf(line + strlen(want), "%15s", buf);
                        (void)cap;
                        return buf;
                }
                line = strchr(line, '\n');
                line = line != NULL ? line + 1 : NULL;
        }
        return buf;
}

/* Poll `member list` until `id` has `role` ("" : is not listed). */
static bool await_role(unsigned id, const char *role, int timeout_ms)
{
        int64_t end = tclient_now_ms() + timeout_ms;
        char buf[32];

        do {
                if (strcmp(role_of(id, buf, sizeof buf), role) == 0) {
                        return true;
                }
                tclient_sleep_ms(100);
        } while (tclient_now_ms() < end);
        tap_diag("member %u is \"%s\", not \"%s\"", id, buf, role);
        return false;
}

/* --- Scenarios ------------------------------------------------------------ */

/* Refused by batonctl and libbaton before anything is sent. */
static void usage_refusals(void)
{
        struct proc r;

        ctl_bare(&r, "lock", "M1", "M1", "--", "true", NULL);
        expect(&r, 125, "",
               "batonctl: lock: \"M1\" named twice: a multi-lock takes each "
               "name once\nRun 'batonctl lock --help' for usage.\n",
               "lock M1 M1 is a usage error naming the duplicate");
        ctl_bare(&r, "lock", "A", "B", "A", "--", "true", NULL);
        expect(&r, 125, "",
               "batonctl: lock: \"A\" named twice: a multi-lock takes each "
               "name once\nRun 'batonctl lock --help' for usage.\n",
               "lock A B A: the same");
        ctl(&r, "member", "add", "4", "127.0.0.1:1", "nothostport", NULL);
        expect(&r, 2, "",
               "batonctl: member add: client address \"nothostport\": no "
               "':port' (expected host:port, [ipv6]:port)\n",
               "member add with a malformed client address is a usage "
               "error");
        ctl(&r, "member", "add", "4", "[::1]:7001", "127.0.0.1:2", NULL);
        expect(&r, 2, "",
               "batonctl: member add: raft address \"[::1]:7001\": libraft "
               "0.22.1 cannot use an IPv6 raft address (expected "
               "a.b.c.d:port or host:port)\n",
               "member add with an IPv6 raft address is a usage error");
        ctl(&r, "acquire", "x", "--ttl", "0", NULL);
        expect(&r, 2, "",
               "batonctl: --ttl: 0 is out of range (1 to 4294967295 ms)\n"
               "Run 'batonctl acquire --help' for usage.\n",
               "batonctl's own range check of --ttl states the range");
}

/* The leader refuses, by name, what its configuration says cannot be. */
static void named_refusals(void)
{
        const struct harness_node *n1 = &cluster.nodes[0];
        const struct harness_node *n2 = &cluster.nodes[1];
        unsigned leader = leader_now();
        char id[16], want[512], raft[40], client[40], buf[32];
        struct proc r;

        ctl(&r, "transfer", "9", NULL);
        expect(&r, 3, "",
               "batonctl: transfer: no member 9 (the members are 1, 2, 3)\n",
               "transfer 9 names the unknown member and lists the members");
        snprintf(id, sizeof id, "%u", leader);
        snprintf(want, sizeof want,
                 "batonctl: transfer: member %u leads already\n", leader);
        ctl(&r, "transfer", id, NULL);
        expect(&r, 3, "", want, "transfer to the leader says it leads");
        ctl(&r, "member", "remove", "9", NULL);
        expect(&r, 3, "",
               "batonctl: member remove: no member 9 (the members are 1, 2, "
               "3)\n",
               "member remove 9 names the unknown member");
        ctl(&r, "member", "add", "2", "127.0.0.1:1", "127.0.0.1:2", NULL);
        snprintf(want, sizeof want,
                 "batonctl: member add: member 2 exists already, as a voter "
                 "at %s (clients %s): remove it first, or add the new node "
                 "under another id\n",
                 n2->raft_address, n2->client_address);
        expect(&r, 3, "", want, "member add of an id in use names the member");
        snprintf(client, sizeof client, "127.0.0.1:%d", cluster.base_port + 19);
        ctl(&r, "member", "add", "7", n1->raft_address, client, NULL);
        snprintf(want, sizeof want,
                 "batonctl: member add: address %s is member 1's already\n",
                 n1->raft_address);
        expect(&r, 3, "", want,
               "member add of another member's raft address names it");
        /* Ports of the harness's block that no node uses: nothing
         * listens there. */
        snprintf(raft, sizeof raft, "127.0.0.1:%d", cluster.base_port + 18);
        ctl(&r, "member", "add", "4", raft, client, NULL);
        snprintf(want, sizeof want,
                 "batonctl: member add: no node answers as member 4 at %s (is "
                 "batond running there, with join = true and this cluster's "
                 "CA?); nothing was changed\n",
                 raft);
        expect(&r, 3, "", want,
               "member add of a node that does not run: refused as "
               "unreachable");
        ok(r.elapsed_ms < 4000,
           "... within 4 s, not after the client's timeout (%" PRId64 " ms)",
           r.elapsed_ms);
        ok(strcmp(role_of(4, buf, sizeof buf), "") == 0,
           "... and member 4 is not in the member list (\"%s\")", buf);
        ctl(&r, "member", "add", "4", raft, client, NULL);
        expect(&r, 3, "", want,
               "the same again: unreachable again, never \"invalid "
               "argument\"");
}

/* A session's TTL out of the cluster's range: the range, from the node. */
static void ttl_range(void)
{
        struct baton_options o;
        baton_client *c = NULL;
        uint64_t token = 0;
        struct proc r;
        int rv;

        ctl(&r, "acquire", "ttl-lock", "--ttl", "599", "--detach", NULL);
        expect(&r, 3, "",
               "batonctl: acquire: session TTL 599 ms out of range: the "
               "cluster accepts 600..3600000 ms\n",
               "acquire --ttl 599 states the range the cluster accepts");
        ctl(&r, "lock", "ttl-lock", "--ttl", "3600001", "--", "true", NULL);
        expect(&r, 125, "",
               "batonctl: acquire: session TTL 3600001 ms out of range: the "
               "cluster accepts 600..3600000 ms\n",
               "lock --ttl 3600001: the same above the range");

        baton_options_init(&o);
        o.ttl_ms = 599;
        if (!ok(baton_client_create(&c, cluster.endpoints, &o) == 0,
                "libbaton: a handle with a TTL of 599 ms")) {
                return;
        }
        rv = baton_acquire(c, "ttl-lock", BATON_OWNER_THREAD, BATON_WAIT_TRY,
                           &token);
        ok(rv == BATON_ETTL &&
               strcmp(baton_errmsg(rv),
                      "session TTL 599 ms out of range: the cluster accepts "
                      "600..3600000 ms") == 0,
           "libbaton: baton_acquire() fails with BATON_ETTL and "
           "baton_errmsg() says the range (%d: %s)",
           rv, baton_errmsg(rv));
        baton_client_destroy(c);
}

/* Files name the path and the system's reason. A path under a regular
 * file fails for root too, as a read-only directory would not. */
static void file_errors(void)
{
        char file[300], path[400], want[900];
        struct proc r;
        int fd;

        snprintf(file, sizeof file, "%s/a-file", tmpdir);
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
                close(fd);
        }
        snprintf(path, sizeof path, "%s/x.snap", file);
        ctl(&r, "snapshot", "save", path, NULL);
        snprintf(want, sizeof want,
                 "batonctl: snapshot save: cannot create %s.part: Not a "
                 "directory\n",
                 path);
        expect(&r, 3, "", want,
               "snapshot save into a path that cannot be made names it and "
               "the reason");
        snprintf(path, sizeof path, "%s/missing.snap", tmpdir);
        ctl_bare(&r, "snapshot", "inspect", path, NULL);
        snprintf(want, sizeof want,
                 "batonctl: snapshot inspect: cannot read %s: No such file or "
                 "directory\n",
                 path);
        expect(&r, 3, "", want, "snapshot inspect of a missing file");
        ctl_bare(&r, "snapshot", "inspect", file, NULL);
        snprintf(want, sizeof want,
                 "batonctl: snapshot inspect: %s: not a whole backup "
                 "(truncated, or changed since it was written: its digest "
                 "does not match)\n",
                 file);
        expect(&r, 3, "", want, "snapshot inspect of an empty file");
        unlink(file);
}

/* What a change did, one line each. */
static void success_lines(void)
{
        unsigned leader = leader_now(), follower = a_follower(leader);
        char name[32], lead[16], fol[16], want[256];
        unsigned long long token = 0, session = 0;
        uint64_t from = 0, to = 0;
        baton_client *c = NULL;
        struct proc r;
        int rv;

        ctl(&r, "acquire", "closing", "--detach", NULL);
        if (!ok(r.status == 0 && sscanf(r.out, "%31s %llu %llu", name, &token,
                                        &session) == 3,
                "acquire --detach for a session to close")) {
                proc_show(&r);
                return;
        }
        snprintf(lead, sizeof lead, "%llu", session);
        snprintf(want, sizeof want, "session %llu closed\n", session);
        ctl(&r, "session", "close", lead, NULL);
        expect(&r, 0, want, "", "session close says it closed the session");

        snprintf(lead, sizeof lead, "%u", leader);
        snprintf(fol, sizeof fol, "%u", follower);
        snprintf(want, sizeof want, "leadership transferred from %u to %u\n",
                 leader, follower);
        ctl(&r, "transfer", fol, NULL);
        expect(&r, 0, want, "", "transfer says where leadership went");
        ok(leader_now() == follower, "... and member %u leads", follower);
        snprintf(want, sizeof want, "{\"asked\":%u,\"from\":%u,\"to\":%u}\n",
                 leader, follower, leader);
        ctl(&r, "--json", "transfer", lead, NULL);
        expect(&r, 0, want, "", "transfer --json, back");
        leader = leader_now();

        if (!ok(baton_client_create(&c, cluster.endpoints, NULL) == 0,
                "libbaton: a handle")) {
                return;
        }
        rv = baton_transfer_to(c, 0, &from, &to);
        ok(rv == 0 && from == leader && to != 0 && to != leader,
           "libbaton: baton_transfer_to(0) says it went from %u to another "
           "(%d: %" PRIu64 " to %" PRIu64 ")",
           leader, rv, from, to);
        baton_client_destroy(c);
}

/* A transfer to a voter that is down: the leader waits for it, then says
 * it did not take over. The paused node is the first endpoint: without
 * TLS it takes the connection (the kernel does) and reads nothing, and
 * batonctl must go on to another node rather than wait for it. */
static void transfer_to_down(void)
{
        unsigned leader = leader_now(), follower = a_follower(leader);
        char fol[16], endpoints[3 * 32];
        struct proc r;

        snprintf(fol, sizeof fol, "%u", follower);
        snprintf(endpoints, sizeof endpoints, "%s,%s",
                 harness_client_address(&cluster, follower),
                 harness_client_address(&cluster, leader));
        if (!ok(harness_pause(&cluster, follower) == 0, "pause follower %u",
                follower)) {
                return;
        }
        ctl_bare(&r, "--endpoints", endpoints, "transfer", fol, NULL);
        harness_resume(&cluster, follower);
        expect(&r, 3, "",
               "batonctl: transfer: the member did not take over in time: "
               "down, or too far behind (the leader kept leading; a node "
               "that was only paused may still take over when it resumes)\n",
               "transfer to a paused voter: refused once the leader waited");
        ok(r.elapsed_ms < 4000,
           "... within the transfer's bound, not the client's timeout (%" PRId64
           " ms)",
           r.elapsed_ms);
        ok(leader_now() != 0, "the cluster has a leader again");
}

/* Start node `id` (the next one: harness_add_node) with join = true and
 * pause it, as a node that stops answering would. */
static bool paused_joiner(unsigned *id)
{
        if (!ok(harness_add_node(&cluster, id) == 0, "start a node to add")) {
                tap_diag("%s", cluster.errmsg);
                return false;
        }
        tclient_sleep_ms(
            300); /* listening (a paused node is still listening) */
        return ok(harness_pause(&cluster, *id) == 0, "pause node %u", *id);
}

static void stop_node(unsigned id)
{
        harness_resume(&cluster, id);
        harness_term(&cluster, id, NULL);
        harness_wait_exit(&cluster, id, HEALTHY_MS, NULL);
}

/* An add that got no answer in time, retried with the same addresses:
 * with TLS the paused node never finishes its handshake and the add is
 * refused, nothing changed; without, it is left a spare. Either way the
 * same command once the node runs carries on and succeeds. */
static void add_retried(void)
{
        const struct harness_node *nd;
        char id[16], want[512], buf[32];
        unsigned n, tries;
        struct proc r;

        if (!paused_joiner(&n)) {
                return;
        }
        nd = &cluster.nodes[n - 1];
        snprintf(id, sizeof id, "%u", n);
        if (tlsfiles_on()) {
                ctl(&r, "--timeout", "4000", "member", "add", id,
                    nd->raft_address, nd->client_address, NULL);
                snprintf(want, sizeof want,
                         "batonctl: member add: no node answers as member %u "
                         "at %s (is batond running there, with join = true "
                         "and this cluster's CA?); nothing was changed\n",
                         n, nd->raft_address);
                expect(&r, 3, "", want,
                       "member add of a paused node (TLS): unreachable, "
                       "nothing changed");
                ok(strcmp(role_of(n, buf, sizeof buf), "") == 0,
                   "... member %u is not listed (\"%s\")", n, buf);
        } else {
                ctl(&r, "--timeout", "1500", "member", "add", id,
                    nd->raft_address, nd->client_address, NULL);
                /* A leader change (the transfer before may still finish
                 * when its node resumes) ends an add before it records
                 * the spare: nothing is left, and the same add again is
                 * what an operator does. */
                for (tries = 0;
                     tries < 2 && !await_role(n, "spare", HEALTHY_MS / 4);
                     tries++) {
                        tap_diag("member %u not a spare: adding it again", n);
                        ctl(&r, "--timeout", "1500", "member", "add", id,
                            nd->raft_address, nd->client_address, NULL);
                }
                snprintf(want, sizeof want,
                         "; member %u may still be added: the member list "
                         "shows where it got to; add it again with the same "
                         "addresses to finish, or remove it to undo\n",
                         n);
                if (!ok(r.status == 3 &&
                            strncmp(r.err,
                                    "batonctl: member "
                                    "add: ",
                                    22) == 0 &&
                            strlen(r.err) > strlen(want) &&
                            strcmp(r.err + strlen(r.err) - strlen(want),
                                   want) == 0,
                        "member add of a paused node (no TLS): no answer in "
                        "time, and what to do")) {
                        proc_show(&r);
                } else {
                        tap_diag("%s", r.err);
                }
                ok(await_role(n, "spare", HEALTHY_MS),
                   "... it is left a spare");
                ctl(&r, "transfer", id, NULL);
                snprintf(want, sizeof want,
                         "batonctl: transfer: member %u is a spare, not a "
                         "voter: only a voter can lead\n",
                         n);
                expect(&r, 3, "", want, "transfer to a spare is refused");
        }
        harness_resume(&cluster, n);
        ctl(&r, "--timeout", "20000", "member", "add", id, nd->raft_address,
            nd->client_address, NULL);
        snprintf(want, sizeof want, "member %u added as voter\n", n);
        expect(&r, 0, want, "",
               "the same member add once the node runs: it carries on");
        ok(await_role(n, "voter", HEALTHY_MS), "... member %u is a voter", n);
        ctl(&r, "member", "add", id, nd->raft_address, nd->client_address,
            NULL);
        expect(&r, 0, want, "", "the same member add once more: still 0");
        snprintf(want, sizeof want, "member %u removed\n", n);
        ctl(&r, "member", "remove", id, NULL);
        expect(&r, 0, want, "", "member remove says it removed the member");
        stop_node(n);
        ok(await_role(n, "", HEALTHY_MS), "... member %u is gone", n);
}

/* An add that got no answer, undone: `member remove` of what it left
 * (without TLS: a spare) works once the add has given up, and meanwhile
 * says a change is in progress, never "invalid argument". */
static void add_undone(void)
{
        const struct harness_node *nd;
        char id[16], want[128];
        int64_t end;
        unsigned n, refusals = 0;
        bool removed = false, named = true;
        struct proc r;

        if (!paused_joiner(&n)) {
                return;
        }
        nd = &cluster.nodes[n - 1];
        snprintf(id, sizeof id, "%u", n);
        ctl(&r, "--timeout", "1500", "member", "add", id, nd->raft_address,
            nd->client_address, NULL);
        ok(r.status == 3, "member add of paused node %u fails (exit %d)", n,
           r.status);
        snprintf(want, sizeof want, "member %u removed\n", n);
        end = tclient_now_ms() + HEALTHY_MS;
        while (!removed && tclient_now_ms() < end) {
                ctl(&r, "member", "remove", id, NULL);
                removed = r.status == 0 && strcmp(r.out, want) == 0;
                if (!removed && !tlsfiles_on() &&
                    strcmp(r.err, "batonctl: member remove: a membership "
                                  "change is already in progress: wait "
                                  "until the member list shows it done, then "
                                  "ask again\n") != 0) {
                        named = false;
                        proc_show(&r);
                }
                if (!removed && tlsfiles_on()) {
                        break; /* nothing was left to remove */
                }
                refusals += removed ? 0 : 1;
                tclient_sleep_ms(removed ? 0 : 200);
        }
        if (tlsfiles_on()) {
                snprintf(want, sizeof want,
                         "batonctl: member remove: no member %u (the members "
                         "are 1, 2, 3)\n",
                         n);
                expect(&r, 3, "", want,
                       "(TLS) nothing was left: member remove says no such "
                       "member");
        } else {
                ok(removed && named,
                   "(no TLS) member remove of the spare it left: removed, "
                   "after %u refusals that each said a change runs",
                   refusals);
        }
        stop_node(n);
}

/* The leader stopped while a member add still probes the new member's
 * address (nothing answers there, so it dials again every 100 ms for two
 * seconds): it exits at once and cleanly, and the probe dials no more
 * through a transport that is gone (a sanitizer build saw it use the freed
 * node). Last, as it stops the leader. */
static void stop_while_probing(void)
{
        unsigned leader = leader_now();
        int status = -1;
        int64_t end;
        bool stopped;
        struct proc r;

        if (!ok(leader != 0, "a leader to stop")) {
                return;
        }
        /* Until the add of the test before has given up its own probe. */
        end = tclient_now_ms() + HEALTHY_MS;
        do {
                ctl(&r, "--timeout", "300", "member", "add", "9",
                    "127.0.0.77:1", "127.0.0.77:2", NULL);
        } while (strstr(r.err, "already in progress") != NULL &&
                 tclient_now_ms() < end && (tclient_sleep_ms(100), true));
        ok(r.status != 0,
           "member add of an address nobody answers at is not done (exit "
           "%d, %s)",
           r.status, r.err);
        stopped = harness_term(&cluster, leader, NULL) == 0 &&
                  harness_wait_exit(&cluster, leader, HEALTHY_MS, &status) == 0;
        ok(stopped && status == 0,
           "member %u, stopped while its probe dials again, exits 0 "
           "(status %d)",
           leader, status);
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader;
        int status;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        snprintf(tmpdir, sizeof tmpdir, "/tmp/baton-refusals-XXXXXX");
        if (mkdtemp(tmpdir) == NULL) {
                printf("Bail out! mkdtemp: %s\n", strerror(errno));
                return 1;
        }
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        tap_diag("cluster %s, leader %u, TLS %s, batonctl %s",
                 cluster.endpoints, leader, tlsfiles_on() ? "on" : "off",
                 batonctl);

        usage_refusals();
        named_refusals();
        ttl_range();
        file_errors();
        success_lines();
        transfer_to_down();
        add_retried();
        add_undone();
        stop_while_probing();

        status = ctlcluster_close(&cluster, &tap, true, t0);
        rmdir(tmpdir);
        return status;
}
