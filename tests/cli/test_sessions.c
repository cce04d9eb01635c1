/*
 * batonctl session list and session info against a live 3-node cluster
 * (tests/integration/harness), through batonctl ($BATONCTL, or ./batonctl
 * in the build dir): three detached sessions of different TTLs and
 * lock-delays, two of them holding a lock; `session list` in text and
 * JSON, paged with --limit and --after; `session info` of one with its
 * lock and token, in text and JSON; a session that is not there, and an
 * ID that is not a number, each named; `holder` with each holder's time
 * left; and with TLS, the read role may
 * list while an identity of role none may not. Prints TAP; every wait is
 * bounded.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"
#include "jsoncheck.h"

#define WATCHDOG_S 180
#define RUN_MS     30000
#define N          3

static struct harness cluster;
static const char *batonctl;
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)
#define ctl(p, ...)                                                            \
        ctlcluster_ctl(p, batonctl, &cluster, RUN_MS, __VA_ARGS__, NULL)

/* The detached sessions: their ids and their locks' tokens. */
static uint64_t ids[N], tokens[N];
static const char *const ttls[N] = {"20000", "25000", "30000"};
static const char *const delays[N] = {"0", "700", "1500"};

/* Detach a grant of lock sessions-I in a session of its own. */
static bool detach(unsigned i)
{
        char name[32];
        struct proc r;

        snprintf(name, sizeof name, "sessions-%u", i);
        ctl(&r, "try", name, "--detach", "--ttl", ttls[i], "--lock-delay",
            delays[i]);
        if (r.status != 0 || sscanf(r.out, "%*s %" SCNu64 " %" SCNu64,
                                    &tokens[i], &ids[i]) != 2) {
                proc_show(&r);
                return false;
        }
        return true;
}

static void list_text(void)
{
        char want[128];
        struct proc r;
        unsigned i;

        ctl(&r, "session", "list");
        ok(r.status == 0 && ctlcluster_count(r.out, "\n") >= N,
           "session list: a line a session");
        for (i = 0; i < N; i++) {
                snprintf(want, sizeof want, "%" PRIu64 " ttl %sms left ",
                         ids[i], ttls[i]);
                if (!ok(strstr(r.out, want) != NULL &&
                            strstr(strstr(r.out, want), " locks 1 waits 0") !=
                                NULL,
                        "session list names session %u: \"%s...\"", i, want)) {
                        proc_show(&r);
                }
        }
        ctl(&r, "session", "list", "--limit", "1");
        snprintf(want, sizeof want,
                 "batonctl: session list: more sessions follow: --after "
                 "%" PRIu64 "\n",
                 ids[0]);
        if (!ok(r.status == 0 && ctlcluster_count(r.out, "\n") == 1 &&
                    strcmp(r.err, want) == 0,
                "session list --limit 1: one line, and where to go on")) {
                proc_show(&r);
        }
        snprintf(want, sizeof want, "%" PRIu64, ids[N - 2]);
        ctl(&r, "session", "list", "--after", want);
        snprintf(want, sizeof want, "%" PRIu64 " ttl", ids[N - 1]);
        ok(r.status == 0 && strncmp(r.out, want, strlen(want)) == 0 &&
               ctlcluster_count(r.out, "\n") == 1,
           "session list --after the second: the third alone");
}

static void list_json(void)
{
        static const char *const fields[] = {
            "sessions", "next",      "session", "client_name",
            "identity", "address",   "ttl_ms",  "lock_delay_ms",
            "left_ms",  "idle_ms",   "revoked", "grants",
            "waits",    "truncated", "locks",   "waiting",
            "token",    NULL};
        char want[160];
        struct proc r;

        ctl(&r, "session", "list", "--json");
        ok(r.status == 0 && jsoncheck_valid(r.out) &&
               jsoncheck_has_fields(r.out, fields) &&
               strstr(r.out, "],\"next\":0}\n") != NULL,
           "session list --json: one document, every field, next 0");
        snprintf(want, sizeof want,
                 "{\"session\":%" PRIu64 ",\"client_name\":", ids[1]);
        ok(strstr(r.out, want) != NULL &&
               strstr(r.out, "\"ttl_ms\":25000,\"lock_delay_ms\":700,") != NULL,
           "session list --json: the second session, its TTL and "
           "lock-delay");
        snprintf(want, sizeof want,
                 "\"locks\":[{\"lock\":\"sessions-1\",\"owner\":");
        ok(strstr(r.out, want) != NULL, "its lock, by name");
        ctl(&r, "session", "list", "--json", "--limit", "2");
        snprintf(want, sizeof want, "],\"next\":%" PRIu64 "}\n", ids[1]);
        if (!ok(r.status == 0 && jsoncheck_valid(r.out) &&
                    strstr(r.out, want) != NULL,
                "session list --json --limit 2: next is the second's id")) {
                proc_show(&r);
        }
}

static void info(void)
{
        static const char *const fields[] = {
            "session", "ttl_ms", "left_ms", "locks", "waiting", "token", NULL};
        char id[32], want[128];
        struct proc r;

        snprintf(id, sizeof id, "%" PRIu64, ids[2]);
        ctl(&r, "session", "info", id);
        if (!ok(r.status == 0 && strncmp(r.out, "session ", 8) == 0 &&
                    strstr(r.out, "\nttl 30000ms\nleft ") != NULL &&
                    strstr(r.out, "\nlock-delay 1500ms\n") != NULL &&
                    strstr(r.out, "\nholds sessions-2 owner ") != NULL,
                "session info: its fields, and its lock")) {
                proc_show(&r);
        }
        snprintf(want, sizeof want, " write token %" PRIu64 " count 1\n",
                 tokens[2]);
        ok(strstr(r.out, want) != NULL, "session info: the lock's token");
        ctl(&r, "session", "info", id, "--json");
        snprintf(want, sizeof want,
                 "\"locks\":[{\"lock\":\"sessions-2\",\"owner\":");
        if (!ok(r.status == 0 && jsoncheck_valid(r.out) &&
                    jsoncheck_has_fields(r.out, fields) &&
                    strstr(r.out, want) != NULL,
                "session info --json")) {
                proc_show(&r);
        }
        snprintf(want, sizeof want, "\"token\":%" PRIu64 ",\"count\":1}]",
                 tokens[2]);
        ok(strstr(r.out, want) != NULL, "session info --json: the token");

        ctl(&r, "session", "info", "424242");
        ok(r.status == 1 && strcmp(r.out, "") == 0 &&
               strcmp(r.err, "batonctl: session info: no session 424242\n") ==
                   0,
           "session info of no session: exit 1, named");
        ctl(&r, "session", "info", "424242", "--json");
        ok(r.status == 1 &&
               strstr(r.out, "\"name\":\"BATON_ENOSESSION\"") != NULL,
           "session info --json of no session: the error's name");
        ctl(&r, "session", "info", "x1");
        ok(r.status == 2 && strstr(r.err, "session info: ID: \"x1\" is not a "
                                          "number") != NULL,
           "session info of a bad ID: a usage error");
        ctl(&r, "session", "info", id, "--limit", "3");
        ok(r.status == 2 &&
               strstr(r.err, "--limit is not an option of session info") !=
                   NULL,
           "--limit belongs to session list");
        ctl(&r, "session", "show");
        ok(r.status == 2 && strstr(r.err, "(list, info or close)") != NULL,
           "an unknown subcommand names the three");
}

/* As `who` (one of the tests' certificates). */
static void as(struct proc *r, const char *who)
{
        char cert[64], key[64];
        char *c, *k;

        snprintf(cert, sizeof cert, "%s.crt", who);
        snprintf(key, sizeof key, "%s.key", who);
        c = strdup(tlsfiles_path(cert));
        k = strdup(tlsfiles_path(key));
        ctl(r, "--cert", c, "--key", k, "session", "list");
        free(c);
        free(k);
}

/* holder and holder --all: each holder's time left. */
static void holder_left(void)
{
        char want[96];
        struct proc r;

        ctl(&r, "holder", "sessions-1");
        snprintf(want, sizeof want,
                 "sessions-1 held by session %" PRIu64 " owner ", ids[1]);
        if (!ok(r.status == 0 && strncmp(r.out, want, strlen(want)) == 0 &&
                    strstr(r.out, " waiters 0 left ") != NULL &&
                    strstr(r.out, "ms client ") != NULL,
                "holder: the holder's time left")) {
                proc_show(&r);
        }
        ctl(&r, "holder", "sessions-1", "--json");
        ok(r.status == 0 && jsoncheck_valid(r.out) &&
               strstr(r.out, "\"left_ms\":") != NULL &&
               strstr(r.out, "\"left_ms\":null") == NULL,
           "holder --json: left_ms");
        ctl(&r, "holder", "sessions-1", "--all");
        ok(r.status == 0 && strstr(r.out, " waiters 0 left ") != NULL,
           "holder --all: each grant's time left");
        ctl(&r, "holder", "sessions-free", "--json");
        ok(r.status == 0 && strstr(r.out, "\"left_ms\":null") != NULL,
           "holder --json of a free lock: left_ms null");
}

static void roles(void)
{
        struct proc r;
        int64_t end;

        if (!tlsfiles_on()) {
                tap_diag("roles need TLS: not checked");
                return;
        }
        if (tlsfiles_issue("reader", "reader", -1, 30, 0) != 0 ||
            tlsfiles_issue("nobody", "nobody", -1, 30, 0) != 0) {
                ok(false, "cannot make the certificates");
                return;
        }
        as(&r, "reader");
        ok(r.status == 0 && ctlcluster_count(r.out, "\n") >= N,
           "the read role lists sessions");
        /* Until the first leader has seeded the access list. */
        end = tclient_now_ms() + RUN_MS;
        do {
                ctl(&r, "acl", "add", "nobody", "none");
        } while (r.status != 0 && tclient_now_ms() < end &&
                 (tclient_sleep_ms(100), true));
        if (!ok(r.status == 0, "acl add nobody none")) {
                proc_show(&r);
        }
        as(&r, "nobody");
        if (!ok(r.status == 3 && strstr(r.err, "permission denied") != NULL,
                "role none may not list sessions")) {
                proc_show(&r);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        unsigned leader, i;
        bool ready = true;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        for (i = 0; i < N; i++) {
                ready = ready && detach(i);
        }
        if (ok(ready, "three detached sessions")) {
                list_text();
                list_json();
                info();
                holder_left();
                roles();
        }
        return ctlcluster_close(&cluster, &tap, true, t0);
}
