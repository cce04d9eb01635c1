/*
 * batonctl's command line against a live 3-node cluster (tests/integration/
 * harness), run as tests/cli/test_batonctl runs it: usage errors (one line
 * saying what is wrong), numbers checked against their ranges, options
 * anywhere on the line, --json of names that are UTF-8 or not, --version of
 * batonctl and batond, BATON_ENDPOINTS for batonctl and baton-bench
 * ($BATON_BENCH or ./baton-bench), the holder's client name, the TLS flags,
 * and an unreachable cluster. Prints TAP.
 *
 * Every wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default
 * 180) bails out of a hung run, and the harness kills every node by PID on
 * any exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"
#include "jsoncheck.h"

#define WATCHDOG_S 180
#define RUN_MS     20000 /* a batonctl run that should end on its own */

static struct harness cluster;
static const char *batonctl;                /* $BATONCTL, or ./batonctl */
static const char *bench = "./baton-bench"; /* $BATON_BENCH */
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* --- Running batonctl ----------------------------------------------------- */

/* batonctl --endpoints E args... run to its end. */
#define ctl(p, timeout_ms, ...)                                                \
        ctlcluster_ctl((p), batonctl, &cluster, (timeout_ms), __VA_ARGS__)

/* Run `prog` args... (nothing added) to its end, with BATON_ENDPOINTS set
 * to `env` (NULL: unset) in its environment. */
static int run_env(struct proc *p, const char *prog, const char *env, ...)
{
        va_list ap;
        int rv;

        if (env != NULL) {
                setenv("BATON_ENDPOINTS", env, 1);
        }
        va_start(ap, env);
        rv = proc_vrun(p, prog, 0, RUN_MS, NULL, ap);
        va_end(ap);
        unsetenv("BATON_ENDPOINTS");
        return rv;
}

/* --- Cases ---------------------------------------------------------------- */

#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A usage error: exit `status`, and on stderr one line saying what is
 * wrong that contains each of `want` (NULL-terminated), then one line
 * pointing to --help; never the whole usage text. One test, `what`. */
static void usage_error(const struct proc *p, int status,
                        const char *const *want, const char *what)
{
        const char *nl = strchr(p->err, '\n');
        const char *missing = NULL;
        bool good = p->status == status &&
                    ctlcluster_count(p->err, "\n") == 2 &&
                    strncmp(p->err, "batonctl: ", 10) == 0 &&
                    strstr(p->err, "--help") != NULL &&
                    strstr(p->err, "Exit status") == NULL && p->n_out == 0;

        for (; *want != NULL && missing == NULL; want++) {
                const char *at = strstr(p->err, *want);
                if (at == NULL || at > nl) {
                        missing = *want;
                }
        }
        if (!ok(good && missing == NULL, "%s", what)) {
                if (missing != NULL) {
                        tap_diag("the first line lacks \"%s\"", missing);
                }
                proc_show(p);
        }
}

/* rule's subcommands and their operands, refused before the cluster is
 * asked: exit 2, one line naming what is wrong. */
static void rule_usage_errors(void)
{
        char long_prefix[BATON_ACL_PREFIX_MAX + 2];
        struct proc p;

        ctl(&p, RUN_MS, "rule", "frob", NULL);
        usage_error(&p, 2, WANT("rule: unknown subcommand \"frob\""),
                    "rule frob: exit 2, one line names the subcommand");
        ctl(&p, RUN_MS, "rule", "add", "x", "a/", NULL);
        usage_error(&p, 2, WANT("rule add", "too few", "SUBJECT PREFIX PERMS"),
                    "rule add without PERMS: exit 2, too few, with the usage");
        ctl(&p, RUN_MS, "rule", "remove", "x", "a/", "read", NULL);
        usage_error(&p, 2, WANT("rule remove", "too many"),
                    "rule remove with PERMS: exit 2, too many arguments");
        ctl(&p, RUN_MS, "rule", "list", "x", NULL);
        usage_error(&p, 2, WANT("rule list", "too many"),
                    "rule list with an operand: exit 2");
        ctl(&p, RUN_MS, "rule", "add", "x", "a/", "write", NULL);
        usage_error(&p, 2,
                    WANT("rule add", "\"write\" is not a permission",
                         "read, lock, manage"),
                    "rule add with an unknown permission: exit 2, one line "
                    "names it and the permissions");
        ctl(&p, RUN_MS, "rule", "add", "x", "a/", "lock,", NULL);
        usage_error(&p, 2, WANT("\"lock,\" is not a permission"),
                    "rule add lock, (an empty item): exit 2");
        ctl(&p, RUN_MS, "rule", "add", "x", "a/", "lock,,manage", NULL);
        usage_error(&p, 2, WANT("\"lock,,manage\" is not a permission"),
                    "rule add lock,,manage: exit 2");
        ctl(&p, RUN_MS, "rule", "add", "group:", "a/", "read", NULL);
        usage_error(&p, 2, WANT("rule add", "SUBJECT \"group:\""),
                    "rule add group: (no group's name): exit 2, one line "
                    "names SUBJECT");
        ctl(&p, RUN_MS, "rule", "remove", "", "a/", NULL);
        usage_error(&p, 2, WANT("rule remove", "SUBJECT \"\""),
                    "rule remove of an empty subject: exit 2");
        memset(long_prefix, 'p', sizeof long_prefix - 1);
        long_prefix[sizeof long_prefix - 1] = '\0';
        ctl(&p, RUN_MS, "rule", "add", "x", long_prefix, "read", NULL);
        usage_error(&p, 2, WANT("rule add", "PREFIX: 256 bytes, at most 255"),
                    "rule add of a 256-byte prefix: exit 2, the size and the "
                    "limit");
}

static void usage_errors(void)
{
        const char *none[] = {NULL};
        const char *bad_opt[] = {"--bogus", "status", NULL};
        const char *bad_json[] = {"--json=yes", "status", NULL};
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, none);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("no command"),
                    "no command: exit 2, one line says so");
        proc_start(&p, batonctl, 0, NULL, bad_opt);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("unknown option --bogus"),
                    "unknown global option: exit 2, one line names it");
        proc_start(&p, batonctl, 0, NULL, bad_json);
        proc_wait(&p, RUN_MS);
        usage_error(&p, 2, WANT("--json takes no value"),
                    "--json=yes: exit 2, one line says --json takes no value");
        ctl(&p, RUN_MS, "frobnicate", "x", NULL);
        usage_error(&p, 2, WANT("unknown command \"frobnicate\""),
                    "unknown command: exit 2, one line names it");
        ctl(&p, RUN_MS, "holder", NULL);
        usage_error(
            &p, 2, WANT("holder", "too few", "NAME"),
            "holder without a name: exit 2, one line says what is missing");
        ctl(&p, RUN_MS, "holder", "x", "y", NULL);
        usage_error(&p, 2, WANT("holder", "unexpected argument \"y\""),
                    "holder with two names: exit 2, one line names the extra");
        ctl(&p, RUN_MS, "check", "x", "notanumber", NULL);
        usage_error(
            &p, 2,
            WANT("check: TOKEN", "\"notanumber\"", "not a number",
                 "0 to 18446744073709551615"),
            "check with a bad token: exit 2, one line names TOKEN and its "
            "range");
        ctl(&p, RUN_MS, "acquire", "x", "--ttl", NULL);
        usage_error(&p, 2, WANT("--ttl needs a value"),
                    "acquire --ttl without a value: exit 2, one line says so");
        ctl(&p, RUN_MS, "release", "x", "5", NULL);
        usage_error(&p, 2, WANT("--session and --secret are required"),
                    "release without --session: exit 2, one line says so");
        ctl(&p, RUN_MS, "set-value", "x", "5", "v", NULL);
        usage_error(&p, 2,
                    WANT("set-value: --session and --secret are required"),
                    "set-value without --session: exit 2, one line says so");
        ctl(&p, RUN_MS, "set-value", "x", "5", "--value", "v", "--session", "1",
            "--secret", "00112233445566778899aabbccddeeff", NULL);
        usage_error(&p, 2, WANT("set-value", "too few"),
                    "set-value with --value for VALUE: exit 2, too few "
                    "arguments");
        ctl(&p, RUN_MS, "lock", "x", "y", "--hold", "1000", "--", "true", NULL);
        usage_error(&p, 125, WANT("--hold", "multi-lock have no hold time"),
                    "lock of two names with --hold: exit 125, one line says "
                    "a multi-lock's grants have none");
        ctl(&p, RUN_MS, "elect", "x", "--hold", "1000", "--", "true", NULL);
        usage_error(&p, 125, WANT("--hold is not an option of elect"),
                    "elect --hold: exit 125, not an option of elect");
        ctl(&p, RUN_MS, "acquire", "x", "--hold", "0", NULL);
        usage_error(&p, 2, WANT("--hold", "1 to 604800000 ms"),
                    "acquire --hold 0: exit 2 with the range");
        ctl(&p, RUN_MS, "holder", "x", "--value", "v", NULL);
        usage_error(&p, 2, WANT("--value is not an option of holder"),
                    "holder --value: exit 2, one line says so");
        ctl(&p, RUN_MS, "lock", "x", "y", "--value", "v", "--", "true", NULL);
        usage_error(&p, 125, WANT("--value", "multi-lock carry no value"),
                    "lock of two names with --value: exit 125 (lock's usage "
                    "status), one line says a multi-lock's grants carry none");
        {
                char longest[BATON_VALUE_MAX + 2];
                memset(longest, 'v', sizeof longest - 1);
                longest[sizeof longest - 1] = '\0';
                ctl(&p, RUN_MS, "acquire", "x", "--value", longest, NULL);
                usage_error(&p, 2, WANT("--value: 256 bytes, at most 255"),
                            "acquire --value of 256 bytes: exit 2, one line "
                            "gives the size and the limit");
        }
        ctl(&p, RUN_MS, "holder", "x", "--ttl", "5000", NULL);
        usage_error(&p, 2, WANT("--ttl is not an option of holder"),
                    "holder --ttl: exit 2, one line says it does not apply");
        ctl(&p, RUN_MS, "lock", "x", "--detach", "--", "true", NULL);
        usage_error(&p, 125, WANT("--detach is not an option of lock"),
                    "lock --detach: exit 125 (lock's usage status), one line");
        /* Without --, the command reads as more names of a multi-lock. */
        ctl(&p, RUN_MS, "lock", "x", "true", NULL);
        usage_error(&p, 125, WANT("no command to run", "after --"),
                    "lock without --: exit 125, one line says where CMD goes");
        ctl(&p, RUN_MS, "lock", "a", "b", "--permits", "3", "--", "true", NULL);
        usage_error(&p, 125, WANT("multi-lock", "--permits"),
                    "lock A B --permits: exit 125, a multi-lock takes no "
                    "permits");
        rule_usage_errors();
}

/* Every number is checked in full and against its range, wherever the
 * option stands: 4294967297 is not taken for --ttl 1. */
static void bad_numbers(void)
{
        struct proc p;

        ctl(&p, RUN_MS, "try", "cli-num", "--ttl", "4294967297", NULL);
        usage_error(
            &p, 2,
            WANT("--ttl", "4294967297", "out of range", "1 to 4294967295 ms"),
            "--ttl 4294967297: exit 2, out of range 1 to 4294967295 ms");
        ctl(&p, RUN_MS, "--ttl=0", "acquire", "cli-num", NULL);
        usage_error(&p, 2, WANT("--ttl", "out of range"),
                    "--ttl=0 before the command: exit 2, out of range");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait", "-5", NULL);
        usage_error(
            &p, 2,
            WANT("--wait", "\"-5\"", "not a number", "0 to 4294967294 ms"),
            "--wait -5: exit 2, not a number, with the range");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait", "4294967295", NULL);
        usage_error(&p, 2, WANT("--wait", "out of range"),
                    "--wait 4294967295 (libbaton's limit): exit 2");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--wait=12abc", NULL);
        usage_error(&p, 2, WANT("--wait", "\"12abc\"", "not a number"),
                    "--wait=12abc: exit 2, trailing junk refused");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--ttl", "+5000", NULL);
        usage_error(&p, 2, WANT("--ttl", "\"+5000\""),
                    "--ttl +5000: exit 2, no sign accepted");
        ctl(&p, RUN_MS, "acquire", "cli-num", "--ttl", "", NULL);
        usage_error(&p, 2, WANT("--ttl", "\"\"", "not a number"),
                    "--ttl '': exit 2");
        ctl(&p, RUN_MS, "--timeout", "99999999999999999999", "holder", "x",
            NULL);
        usage_error(
            &p, 2, WANT("--timeout", "out of range", "1 to 2147483647 ms"),
            "--timeout 99999999999999999999 (overflow): exit 2, the range");
        ctl(&p, RUN_MS, "check", "x", "18446744073709551616", NULL);
        usage_error(&p, 2, WANT("check: TOKEN", "18446744073709551616"),
                    "check with a token of 2^64: exit 2, not wrapped");
        ctl(&p, RUN_MS, "release", "x", "5", "--session", "0", NULL);
        usage_error(&p, 2, WANT("--session", "1 to 18446744073709551615"),
                    "--session 0: exit 2, range from 1");
        ctl(&p, RUN_MS, "member", "remove", "0", NULL);
        usage_error(&p, 2, WANT("member remove: ID", "out of range"),
                    "member remove 0: exit 2");
        ctl(&p, RUN_MS, "transfer", "-1", NULL);
        usage_error(&p, 2, WANT("unknown option -1"), "transfer -1: exit 2");
        ctl(&p, RUN_MS, "lock", "cli-num", "--grace", "4294967296", "--",
            "true", NULL);
        usage_error(&p, 125, WANT("--grace", "0 to 4294967295 ms"),
                    "lock --grace 4294967296: exit 125 with the range");
}

/* Options before or after the command and its arguments, as --opt VALUE
 * or --opt=VALUE. */
static void options_anywhere(void)
{
        const char *after[] = {"holder",      "cli-opt", "--json",
                               "--endpoints", NULL,      NULL};
        const char *equals[] = {NULL, "--timeout=3000", "check", "cli-opt", "1",
                                NULL};
        char ep[sizeof cluster.endpoints + 16];
        char name[64], tok[32], sess[32], secret[64], secret_opt[80];
        unsigned long long token = 0, session = 0;
        struct proc p;

        after[4] = cluster.endpoints;
        proc_start(&p, batonctl, 0, NULL, after);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    strstr(p.out, "\"held\":false") != NULL,
                "holder NAME --json --endpoints E: options after the name")) {
                proc_show(&p);
        }
        snprintf(ep, sizeof ep, "--endpoints=%s", cluster.endpoints);
        equals[0] = ep;
        proc_start(&p, batonctl, 0, NULL, equals);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 1 && strcmp(p.out, "cli-opt 1 stale\n") == 0,
                "--endpoints=E --timeout=3000 check NAME 1: exit 1, stale")) {
                proc_show(&p);
        }

        ctl(&p, RUN_MS, "--ttl=3000", "try", "--detach", "cli-opt", NULL);
        if (!ok(p.status == 0 &&
                    sscanf(p.out, "%63s %llu %llu %63s", name, &token, &session,
                           secret) == 4 &&
                    strcmp(name, "cli-opt") == 0,
                "--ttl=3000 try --detach NAME: exit 0, NAME TOKEN SESSION")) {
                proc_show(&p);
                return;
        }
        snprintf(tok, sizeof tok, "%llu", token);
        snprintf(sess, sizeof sess, "--session=%llu", session);
        snprintf(secret_opt, sizeof secret_opt, "--secret=%s", secret);
        ctl(&p, RUN_MS, sess, secret_opt, "release", "cli-opt", tok, NULL);
        if (!ok(p.status == 0,
                "--session=S release NAME TOKEN: exit 0 (option first)")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--wait", "5000", "lock", "cli-opt", "--grace=100",
            "--", "sh", "-c", "exit 3", NULL);
        if (!ok(p.status == 3,
                "--wait 5000 lock NAME --grace=100 -- CMD: the command's "
                "status")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "lock", "cli-opt", "--", "sh", "-c",
            "test \"$1\" = --json", "sh", "--json", NULL);
        if (!ok(p.status == 0 && p.n_out == 0,
                "lock NAME -- CMD --json: options after -- are CMD's")) {
                proc_show(&p);
        }
}

/* --json is UTF-8: names that are valid UTF-8 pass through, others get
 * U+FFFD and their exact bytes in "lock_hex". */
static void json_names(void)
{
        const char *utf8 = "cli-caf\xc3\xa9-\xe6\x97\xa5";
        const char *latin1 = "cli-caf\xe9";
        const char *want_latin1 = "{\"lock\":\"cli-caf\xef\xbf\xbd\","
                                  "\"lock_hex\":\"636c692d636166e9\","
                                  "\"held\":false,";
        char want[128], tok[2][32], sess[2][32], secret[2][40];
        unsigned long long token, session;
        const char *names[2], *at;
        struct proc p;
        unsigned i;

        ctl(&p, RUN_MS, "--json", "holder", utf8, NULL);
        snprintf(want, sizeof want, "{\"lock\":\"%s\",\"held\":false,", utf8);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    jsoncheck_utf8(p.out) &&
                    strncmp(p.out, want, strlen(want)) == 0 &&
                    strstr(p.out, "lock_hex") == NULL,
                "--json holder of a UTF-8 name: the name as it is")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", latin1, NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    jsoncheck_utf8(p.out) &&
                    strncmp(p.out, want_latin1, strlen(want_latin1)) == 0,
                "--json holder of a Latin-1 name: U+FFFD and lock_hex")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "check", "cli-\x01\x1b[1m\x7f", "1", NULL);
        if (!ok(p.status == 1 && jsoncheck_valid(p.out) &&
                    strstr(p.out, "\"cli-\\u0001\\u001b[1m\\u007f\"") != NULL,
                "--json check: control characters escaped")) {
                proc_show(&p);
        }

        /* The same in a listing, of locks held. */
        names[0] = utf8;
        names[1] = latin1;
        for (i = 0; i < 2; i++) {
                ctl(&p, RUN_MS, "--json", "try", names[i], "--detach", NULL);
                token = session = 0;
                at = strstr(p.out, "\"token\":");
                if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                            jsoncheck_utf8(p.out) &&
                            (strstr(p.out, "\"lock_hex\":") != NULL) ==
                                (i == 1) &&
                            at != NULL &&
                            sscanf(at, "\"token\":%llu,\"session\":%llu",
                                   &token, &session) == 2,
                        "--json try --detach name %u: valid, token, session",
                        i)) {
                        proc_show(&p);
                        return;
                }
                snprintf(tok[i], sizeof tok[i], "%llu", token);
                snprintf(sess[i], sizeof sess[i], "%llu", session);
                at = strstr(p.out, "\"secret\":\"");
                snprintf(secret[i], sizeof secret[i], "%.32s",
                         at != NULL ? at + 10 : "");
        }
        ctl(&p, RUN_MS, "--json", "list", "cli-caf", NULL);
        if (!ok(p.status == 0 && jsoncheck_valid(p.out) &&
                    jsoncheck_utf8(p.out) &&
                    ctlcluster_count(p.out, "\"lock\":") == 2 &&
                    ctlcluster_count(p.out,
                                     "\"lock_hex\":\"636c692d636166e9\"") == 1,
                "--json list: both names, valid UTF-8, one lock_hex")) {
                proc_show(&p);
        }
        for (i = 0; i < 2; i++) {
                ctl(&p, RUN_MS, "release", names[i], tok[i], "--session",
                    sess[i], "--secret", secret[i], NULL);
                if (!ok(p.status == 0, "release name %u", i)) {
                        proc_show(&p);
                }
        }
}

/* --version: batonctl's and libbaton's; batond's and its libraries',
 * without any configuration. */
static void versions(void)
{
        const char *const only[] = {"--version", NULL};
        const char *const late[] = {"holder", "x", "--version", NULL};
        const char *const id_only[] = {"--id", "1", "--version", NULL};
        const char *const no_file[] = {"--config", "/nonexistent/baton.conf",
                                       "--version", NULL};
        const char *want_ctl =
            "batonctl " PACKAGE_VERSION " (libbaton " PACKAGE_VERSION ")\n";
        const char *want_d = "batond " PACKAGE_VERSION " (libraft 0.";
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strcmp(p.out, want_ctl) == 0 && p.n_err == 0,
                "batonctl --version: exit 0, batonctl and libbaton versions")) {
                proc_show(&p);
        }
        proc_start(&p, batonctl, 0, NULL, late);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strcmp(p.out, want_ctl) == 0,
                "batonctl holder x --version: the version, nothing asked")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0 &&
                    strstr(p.out, ", libuv 1.") != NULL &&
                    strstr(p.out, ", liblz4 1.") != NULL && p.n_err == 0,
                "batond --version: exit 0, libraft, libuv and liblz4")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, id_only);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0,
                "batond --id 1 --version: exit 0 without the other keys")) {
                proc_show(&p);
        }
        proc_start(&p, cluster.batond, 0, NULL, no_file);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 0 && strncmp(p.out, want_d, strlen(want_d)) == 0,
                "batond --config MISSING --version: exit 0, nothing read")) {
                proc_show(&p);
        }
}

/* BATON_ENDPOINTS: used without --endpoints, which wins over it. */
static void endpoints_env(void)
{
        struct proc p;
        unsigned i, listed = 0;

        run_env(&p, batonctl, cluster.endpoints, "status", NULL);
        for (i = 1; i <= cluster.n; i++) {
                listed +=
                    strstr(p.out, harness_client_address(&cluster, i)) != NULL;
        }
        if (!ok(p.status == 0 && listed == cluster.n &&
                    ctlcluster_count(p.out, "\n") == cluster.n,
                "BATON_ENDPOINTS=E status: every node of E")) {
                proc_show(&p);
        }
        run_env(&p, batonctl, "127.0.0.1:1", "--endpoints", cluster.endpoints,
                "holder", "cli-env", NULL);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-env free\n") == 0,
                "--endpoints wins over BATON_ENDPOINTS")) {
                proc_show(&p);
        }
        run_env(&p, batonctl, "garbage", "holder", "cli-env", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "\"garbage\"") != NULL &&
                    strstr(p.err, "BATON_ENDPOINTS") != NULL,
                "BATON_ENDPOINTS=garbage: exit 2, names the value and where "
                "it came from")) {
                proc_show(&p);
        }
        if (access(bench, X_OK) != 0) {
                tap_diag("no baton-bench at %s: its BATON_ENDPOINTS not tried",
                         bench);
                return;
        }
        run_env(&p, bench, cluster.endpoints, "--duration", "0.3", "--warmup",
                "0", "--prefix", "cli-bench", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "\"errors\":0,") != NULL &&
                    strstr(p.out, "\"ops\":0,") == NULL,
                "BATON_ENDPOINTS=E baton-bench: ops, no errors")) {
                proc_show(&p);
        }
        run_env(&p, bench, "127.0.0.1:1", "--endpoints", cluster.endpoints,
                "--duration", "0.3", "--warmup", "0", "--prefix", "cli-bench",
                NULL);
        if (!ok(p.status == 0 && strstr(p.out, "\"errors\":0,") != NULL &&
                    strstr(p.out, "\"ops\":0,") == NULL,
                "baton-bench: --endpoints wins over BATON_ENDPOINTS")) {
                proc_show(&p);
        }
        run_env(&p, bench, "garbage", "--duration", "0.3", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "BATON_ENDPOINTS") != NULL,
                "BATON_ENDPOINTS=garbage baton-bench: exit 2, says so")) {
                proc_show(&p);
        }
}

/* holder and list name the holder's client: a session opened as
 * "build-42" holds a lock. */
static void client_names(void)
{
        struct tclient c;
        struct tclient_result r;
        struct proc p;
        int rv;

        if (tclient_init(&c, cluster.endpoints) != 0) {
                ok(false, "tclient_init");
                return;
        }
        rv = tclient_session_open(&c, 10000, "build-42", RUN_MS, &r);
        if (rv == 0) {
                rv = tclient_acquire(&c, "cli-names", 1, 0, RUN_MS, &r);
        }
        if (!ok(rv == 0, "a session named build-42 holds cli-names")) {
                tap_diag("%d %s", rv, c.errmsg);
                tclient_close(&c);
                return;
        }
        ctl(&p, RUN_MS, "holder", "cli-names", NULL);
        if (!ok(p.status == 0 && strstr(p.out, " client build-42\n") != NULL,
                "holder: ends with client build-42")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "holder", "cli-names", NULL);
        if (!ok(p.status == 0 &&
                    strstr(p.out, "\"client_name\":\"build-42\"") != NULL,
                "holder --json: \"client_name\":\"build-42\"")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "list", "cli-names", NULL);
        if (!ok(p.status == 0 && strstr(p.out, "cli-names session ") == p.out &&
                    strstr(p.out, " client build-42\n") != NULL,
                "list: the line ends with client build-42")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--json", "list", "cli-names", NULL);
        if (!ok(p.status == 0 &&
                    strstr(p.out, "\"client_name\":\"build-42\"") != NULL,
                "list --json: \"client_name\":\"build-42\"")) {
                proc_show(&p);
        }
        tclient_session_close(&c, RUN_MS, &r);
        tclient_close(&c);
}

/* Run batonctl `args` with the TLS variables cleared. */
static void run_without_tls_env(struct proc *p, const char *const *args)
{
        proc_run(p, batonctl, PROC_NO_TLS_ENV, RUN_MS, NULL, args);
}

/* --cacert, --cert and --key, over the environment or without it; a node
 * that requires TLS says so to a plain client. */
static void tls_flags(void)
{
        char ca[300], cert[300], key[300], wrong[300];
        struct proc p;

        if (!tlsfiles_on()) {
                tap_diag("the cluster runs without TLS: TLS flags not tried");
                return;
        }
        snprintf(ca, sizeof ca, "%s/ca.crt", tlsfiles_dir());
        snprintf(cert, sizeof cert, "%s/admin.crt", tlsfiles_dir());
        snprintf(key, sizeof key, "%s/admin.key", tlsfiles_dir());
        snprintf(wrong, sizeof wrong, "%s/node1.key", tlsfiles_dir());
        const char *flags_only[] = {
            "--endpoints", cluster.endpoints, "--cacert", ca,       "--cert",
            cert,          "--key",           key,        "holder", "cli-tls",
            NULL};
        run_without_tls_env(&p, flags_only);
        if (!ok(p.status == 0 && strcmp(p.out, "cli-tls free\n") == 0,
                "--cacert --cert --key without the environment")) {
                proc_show(&p);
        }
        ctl(&p, RUN_MS, "--key", wrong, "holder", "cli-tls", NULL);
        if (!ok(p.status == 2 && strstr(p.err, "node1.key") != NULL &&
                    strstr(p.err, "does not match") != NULL,
                "--key of another certificate over BATON_KEY: exit 2, names "
                "the file")) {
                proc_show(&p);
        }
        const char *partial[] = {"--endpoints", cluster.endpoints, "--cert",
                                 cert,          "holder",          "cli-tls",
                                 NULL};
        run_without_tls_env(&p, partial);
        if (!ok(p.status == 2 && strstr(p.err, "--cacert") != NULL,
                "--cert alone: exit 2, says which are missing")) {
                proc_show(&p);
        }
        const char *plain[] = {"--endpoints", cluster.endpoints, "--timeout",
                               "1500",        "holder",          "cli-tls",
                               NULL};
        run_without_tls_env(&p, plain);
        if (!ok(p.status == 3 && strstr(p.err, "TLS") != NULL,
                "no TLS files against TLS nodes: exit 3, says TLS")) {
                proc_show(&p);
        }
}

static void unreachable(void)
{
        const char *holder[] = {"--endpoints", "127.0.0.1:1", "--timeout",
                                "500",         "holder",      "x",
                                NULL};
        const char *status[] = {"--endpoints", "127.0.0.1:1", "--timeout",
                                "500",         "status",      NULL};
        struct proc p;

        proc_start(&p, batonctl, 0, NULL, holder);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000 && p.n_err > 0,
                "holder on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000), with a message",
                p.elapsed_ms)) {
                proc_show(&p);
        }
        proc_start(&p, batonctl, 0, NULL, status);
        proc_wait(&p, RUN_MS);
        if (!ok(p.status == 3 && p.elapsed_ms < 5000,
                "status on an unreachable cluster: exit 3 in %" PRId64
                " ms (< 5000)",
                p.elapsed_ms)) {
                proc_show(&p);
        }
}

int main(int argc, char **argv)
{
        int64_t t0 = tclient_now_ms();
        const char *b;
        unsigned leader;

        (void)argc;
        batonctl = ctlcluster_program("BATONCTL", "./batonctl");
        if (batonctl == NULL) {
                return 0;
        }
        b = getenv("BATON_BENCH");
        if (b != NULL && *b != '\0') {
                bench = b;
        }
        if (ctlcluster_open(&cluster, argv[0], WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        tap_diag("cluster %s, leader %u, batonctl %s", cluster.endpoints,
                 leader, batonctl);

        usage_errors();
        bad_numbers();
        options_anywhere();
        json_names();
        versions();
        endpoints_env();
        tls_flags();
        client_names();
        unreachable();

        return ctlcluster_close(&cluster, &tap, false, t0);
}
