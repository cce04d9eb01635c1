/*
 * The audit trail (docs/security.md, "Audit trail") of a live 3-node TLS
 * cluster (tests/integration/harness: every node has an audit-log),
 * driven through batonctl ($BATONCTL, or ./batonctl in the build dir) at
 * the leader alone, so that it is the node that serves every request:
 *
 * - an administrator lists the access list (until the first leader has
 *   seeded it), revokes a lock, closes a session and changes the list; a client
 * of role lock tries to change the list and is refused; a client without TLS is
 * refused at the TLS port;
 * - the leader's audit log has one line for each, every line one JSON
 *   object with every field (time in RFC 3339 UTC with ms, the node's id,
 *   identity, address, action, target, result, detail) and the values
 *   each request gave; the followers, which served none of them, have
 *   none of these lines;
 * - renamed away and SIGHUP sent, the log starts again at its path: the
 *   next line (an ACL remove) is in the new file, not the renamed one;
 * - a leadership transfer, the last request, is a line of the node that
 *   led, saying where leadership went.
 *
 * Prints TAP; every wait is bounded; the harness kills every node by PID
 * on any exit.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"
#include "jsoncheck.h"

#define WATCHDOG_S 180
#define RUN_MS     30000 /* a batonctl run that should end on its own */
#define LOG_MS     10000 /* a node logs what a signal made it do */

static struct harness cluster;
static const char *batonctl;
static struct tap tap;
static unsigned leader;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* batonctl at the leader alone, as `who` (a file name of the tests' CA;
 * NULL: the admin the environment names), to its end. */
static void ctl_as(struct proc *r, const char *who, ...)
{
        char cert[300], key[300];
        const char *head[7] = {"--endpoints",
                               harness_client_address(&cluster, leader), NULL};
        va_list ap;

        if (who != NULL) {
                snprintf(cert, sizeof cert, "%s.crt", who);
                snprintf(cert, sizeof cert, "%s", tlsfiles_path(cert));
                snprintf(key, sizeof key, "%s.key", who);
                snprintf(key, sizeof key, "%s", tlsfiles_path(key));
                head[2] = "--cert";
                head[3] = cert;
                head[4] = "--key";
                head[5] = key;
        }
        va_start(ap, who);
        proc_vrun(r, batonctl, 0, RUN_MS, head, ap);
        va_end(ap);
}

static bool expect(const struct proc *r, int status, const char *what)
{
        if (!ok(r->status == status, "%s: exit %d", what, status)) {
                proc_show(r);
                return false;
        }
        return true;
}

/* alice takes `name` as a lease that outlives batonctl: its session. */
static uint64_t detached(const char *name)
{
        unsigned long long session = 0, token = 0;
        char got[64], secret[64];
        struct proc r;

        ctl_as(&r, "alice", "acquire", name, "--detach", NULL);
        if (!expect(&r, 0, "alice acquires a lease") ||
            sscanf(r.out, "%63s %llu %llu %63s", got, &token, &session,
                   secret) != 4) {
                proc_show(&r);
                return 0;
        }
        return session;
}

/* The line of `text` (an audit log) that holds `needle`, into `line`;
 * false when there is none. */
static bool line_with(const char *text, const char *needle, char *line,
                      size_t cap)
{
        const char *p = text != NULL ? strstr(text, needle) : NULL;
        const char *start, *end;

        if (p == NULL) {
                return false;
        }
        for (start = p; start > text && start[-1] != '\n'; start--) {
        }
        end = strchr(p, '\n');
        if (end == NULL || (size_t)(end - start) >= cap) {
                return false;
        }
        memcpy(line, start, (size_t)(end - start));
        line[end - start] = '\0';
        return true;
}

/* Whether `line` has each of the NULL-terminated strings that follow. */
static bool has_all(const char *line, ...)
{
        const char *want;
        bool good = true;
        va_list ap;

        va_start(ap, line);
        while ((want = va_arg(ap, const char *)) != NULL) {
                if (strstr(line, want) == NULL) {
                        tap_diag("lacks %s: %s", want, line);
                        good = false;
                }
        }
        va_end(ap);
        return good;
}

/* "time":"2024-05-01T12:00:00.123Z": RFC 3339, UTC, milliseconds. */
static bool good_time(const char *line)
{
        static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
        const char *t = strstr(line, "{\"time\":\"");
        size_t i;

        if (t != line) {
                return false;
        }
        t += 9;
        for (i = 0; i < sizeof shape - 1; i++) {
                if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9')
                                    : t[i] != shape[i]) {
                        return false;
                }
        }
        return t[i] == '"';
}

/* Every line of node `id`'s audit log: one JSON object with every field,
 * in order, dated, from this node. How many lines; -1 when one is not. */
static int check_lines(unsigned id, const char *text)
{
        static const char *const fields[] = {"time",    "node",   "identity",
                                             "address", "action", "target",
                                             "result",  "detail", NULL};
        char node[32], line[8192];
        const char *p = text, *nl;
        int n = 0;

        snprintf(node, sizeof node, "\",\"node\":%u,\"identity\":", id);
        for (; p != NULL && *p != '\0'; p = nl + 1, n++) {
                nl = strchr(p, '\n');
                if (nl == NULL || (size_t)(nl - p) >= sizeof line) {
                        tap_diag("a line that does not end: %.200s", p);
                        return -1;
                }
                memcpy(line, p, (size_t)(nl - p));
                line[nl - p] = '\0';
                if (!jsoncheck_valid(line) ||
                    !jsoncheck_has_fields(line, fields) || !good_time(line) ||
                    strstr(line, node) == NULL ||
                    strstr(line, "\",\"address\":\"") == NULL ||
                    strstr(line, "\",\"action\":\"") == NULL) {
                        tap_diag("not an audit line of node %u: %s", id, line);
                        return -1;
                }
        }
        return n;
}

/* The first leader seeds the access list from its config a moment after
 * it starts serving; until then ACL changes are answered BATON_EBUSY. */
static bool seeded(void)
{
        int64_t end = tclient_now_ms() + LOG_MS;
        struct proc r;

        do {
                ctl_as(&r, NULL, "acl", "list", "--json", NULL);
        } while (strstr(r.out, "\"seeded\":true") == NULL &&
                 tclient_now_ms() < end && (tclient_sleep_ms(100), true));
        if (!ok(r.status == 0 && strstr(r.out, "\"seeded\":true") != NULL,
                "the access list is seeded")) {
                proc_show(&r);
                return false;
        }
        return true;
}

/* The requests, each at the leader, then its log's lines for them. */
static void served_and_refused(void)
{
        char want[128], line[8192], sid[24];
        uint64_t s1, s2;
        unsigned id;
        struct proc r;
        char *text;
        int n;

        if (!seeded()) {
                return;
        }
        s1 = detached("audit-a");
        s2 = detached("audit-b");
        ctl_as(&r, NULL, "revoke", "audit-a", NULL);
        expect(&r, 0, "the admin revokes audit-a");
        snprintf(sid, sizeof sid, "%llu", (unsigned long long)s2);
        ctl_as(&r, NULL, "session", "close", sid, NULL);
        expect(&r, 0, "the admin closes alice's second session");
        ctl_as(&r, NULL, "acl", "add", "bob", "read", NULL);
        expect(&r, 0, "the admin adds bob as read");
        ctl_as(&r, "alice", "acl", "add", "mallory", "admin", NULL);
        if (!ok(r.status == 3 && strstr(r.err, "permission denied") != NULL,
                "alice (role lock) may not change the list")) {
                proc_show(&r);
        }
        const char *plain[] = {
            "--endpoints", harness_client_address(&cluster, leader),
            "--timeout",   "1500",
            "status",      NULL};
        proc_run(&r, batonctl, PROC_NO_TLS_ENV, RUN_MS, NULL, plain);
        ok(r.status == 3, "a client without TLS is refused");

        text = harness_read_file(cluster.nodes[leader - 1].audit_log, NULL);
        n = check_lines(leader, text);
        ok(n >= 5,
           "the leader's audit log: %d lines, each one JSON object "
           "with every field, dated, from node %u",
           n, leader);
        snprintf(want, sizeof want, "session %llu token ",
                 (unsigned long long)s1);
        ok(line_with(text, "\"action\":\"REVOKE_LOCK\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"admin\"",
                       "\"address\":\"127.0.0.1:", "\"target\":\"audit-a\"",
                       "\"result\":\"ok\"", want, NULL),
           "revoke: the admin, its address, the lock, ok, whose grant");
        snprintf(want, sizeof want, "\"target\":\"%s\"", sid);
        ok(line_with(text, "\"action\":\"REVOKE\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"admin\"", want,
                       "\"result\":\"ok\"", NULL),
           "session close: a REVOKE of the session, by the admin, ok");
        ok(line_with(text, "\"target\":\"bob\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"admin\"", "\"action\":\"ACL_SET\"",
                       "\"result\":\"ok\"", "\"detail\":\"role read\"", NULL),
           "acl add: ACL_SET of bob, role read, ok");
        ok(line_with(text, "\"target\":\"mallory\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"alice\"", "\"action\":\"ACL_SET\"",
                       "\"result\":\"BATON_EPERM\"", "\"detail\":\"role lock\"",
                       NULL),
           "the refusal: alice, ACL_SET of mallory, BATON_EPERM, role lock");
        ok(line_with(text, "\"action\":\"CONNECT\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"\"", "\"result\":\"BATON_ETLS\"",
                       "\"detail\":\"plain text on the TLS port\"", NULL),
           "the plain client: CONNECT refused BATON_ETLS");
        ok(!line_with(text, "\"action\":\"ACQUIRE\"", line, sizeof line) &&
               !line_with(text, "\"action\":\"OPEN\"", line, sizeof line),
           "alice's own acquires, allowed, are no lines");
        free(text);
        for (id = 1; id <= cluster.n; id++) {
                if (id == leader) {
                        continue;
                }
                text = harness_read_file(cluster.nodes[id - 1].audit_log, NULL);
                ok(text != NULL && check_lines(id, text) >= 0 &&
                       strstr(text, "\"target\":\"bob\"") == NULL &&
                       strstr(text, "\"target\":\"mallory\"") == NULL,
                   "follower %u's audit log has none of the leader's lines",
                   id);
                free(text);
        }
}

/* logrotate's way: rename the log, SIGHUP; the next line goes to a new
 * file at the path. */
static void rotation(void)
{
        const struct harness_node *nd = &cluster.nodes[leader - 1];
        char rotated[PATH_MAX + 8], line[8192];
        unsigned before =
            harness_log_count(&cluster, leader, "SIGHUP: audit log");
        int64_t end = tclient_now_ms() + LOG_MS;
        char *old, *now;
        struct proc r;

        snprintf(rotated, sizeof rotated, "%s.1", nd->audit_log);
        if (!ok(rename(nd->audit_log, rotated) == 0 &&
                    kill(nd->pid, SIGHUP) == 0,
                "renamed the leader's audit log and sent SIGHUP")) {
                return;
        }
        while (harness_log_count(&cluster, leader, "SIGHUP: audit log") <=
                   before &&
               tclient_now_ms() < end) {
                tclient_sleep_ms(50);
        }
        ok(harness_log_count(&cluster, leader, "SIGHUP: audit log") > before,
           "the leader says it reopened its audit log");
        ctl_as(&r, NULL, "acl", "remove", "bob", NULL);
        expect(&r, 0, "the admin removes bob");
        old = harness_read_file(rotated, NULL);
        now = harness_read_file(nd->audit_log, NULL);
        ok(old != NULL && strstr(old, "\"target\":\"bob\"") != NULL &&
               strstr(old, "ACL_REMOVE") == NULL,
           "the renamed file has the lines before the signal, and only "
           "those");
        ok(now != NULL && check_lines(leader, now) == 1 &&
               line_with(now, "\"action\":\"ACL_REMOVE\"", line, sizeof line) &&
               has_all(line, "\"target\":\"bob\"", "\"result\":\"ok\"", NULL),
           "a new file at the path has the line after it");
        free(old);
        free(now);
}

/* The last request: leadership goes to another node; the line is the old
 * leader's, with where it went. */
static void transfer(void)
{
        char line[8192], want[32];
        unsigned to = 0;
        struct proc r;
        char *text;

        ctl_as(&r, NULL, "transfer", "0", NULL);
        if (!expect(&r, 0, "the admin transfers the leadership") ||
            sscanf(r.out, "leadership transferred from %*u to %u", &to) != 1) {
                proc_show(&r);
                return;
        }
        snprintf(want, sizeof want, "\"detail\":\"leader %u\"", to);
        text = harness_read_file(cluster.nodes[leader - 1].audit_log, NULL);
        ok(line_with(text, "\"action\":\"TRANSFER\"", line, sizeof line) &&
               has_all(line, "\"identity\":\"admin\"", "\"target\":\"0\"",
                       "\"result\":\"ok\"", want, NULL),
           "transfer: a line of node %u, leadership now on %u", leader, to);
        free(text);
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        int status;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        if (!ctlcluster_open_tls(&cluster, &tap, argv[0], WATCHDOG_S, "alice",
                                 batonctl, &leader, t0, &status)) {
                return status;
        }
        served_and_refused();
        rotation();
        transfer();
        return ctlcluster_close(&cluster, &tap, true, t0);
}
