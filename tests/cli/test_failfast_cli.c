/*
 * batonctl when no node can answer (tests/integration/harness): nothing
 * listening, a name that does not resolve, the raft port given as the
 * endpoint, and TLS failing either way (no client files, an expired
 * certificate, another CA's, a wrong --cacert, TLS against a tls = off
 * node, a certificate for another host name). Each run has --timeout
 * 15000 and must end within 5 s with exit status 3 and one line on
 * standard error naming the endpoint and the reason. A cluster that lost
 * its majority still waits out --timeout and says "no leader"; `status`
 * gives a node that cannot be asked a line with its reason. Prints TAP.
 *
 * The built batonctl is $BATONCTL, or ./batonctl in the build dir. Every
 * wait is bounded; a watchdog (BATON_TEST_WATCHDOG seconds, default 180)
 * bails out of a hung run, and the harness kills every node by PID on any
 * exit. Environment as the integration tests: BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_TLS.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../integration/harness.h"
#include "../integration/lonenode.h"
#include "../integration/tlsfiles.h"
#include "../lib/proc.h"
#include "../lib/tap.h"
#include "../lib/tclient.h"
#include "ctlcluster.h"

#define WATCHDOG_S 180
#define HEALTHY_MS 20000
#define RUN_MS     30000 /* a batonctl run that must end on its own */
#define PROMPT_MS  5000  /* ... and these must end this soon */
#define LONG       "15000"
#define SHORT_MS   3000
/* A resolver that loses a query asks again after resolv.conf's timeout,
 * 5 s by default: a name lookup may take that long on its own. */
#define RESOLVER_MS 5000

static struct harness cluster;
static const char *batonctl = "./batonctl";
static const char *argv0;
/* Every case of this program, in one TAP stream. */
static struct tap tap;
#define ok(...) tap_ok(&tap, __VA_ARGS__)

/* --- Running batonctl ----------------------------------------------------- */

/*
 * Run batonctl with the NULL-terminated arguments that follow, to its end
 * (killed after RUN_MS); with `plain`, without the environment's TLS
 * files (a client given none).
 */
static void ctl(struct proc *r, bool plain, ...)
{
        va_list ap;

        va_start(ap, plain);
        proc_vrun(r, batonctl, plain ? PROC_NO_TLS_ENV : 0, RUN_MS, NULL, ap);
        va_end(ap);
}

/*
 * The run failed as a connection failure must: exit status 3 within
 * PROMPT_MS (and `extra_ms`), and standard error one line that starts
 * "batonctl: `what`: " and says each of the NULL-terminated strings that
 * follow.
 */
static void expect_within(const struct proc *r, int64_t extra_ms,
                          const char *name, const char *what, ...)
{
        va_list ap;

        va_start(ap, what);
        ctlcluster_one_line(&tap, r, 3, PROMPT_MS + extra_ms, name, what, ap);
        va_end(ap);
}

/* --- Helpers -------------------------------------------------------------- */

/* A one-node cluster whose node runs with `flags` (lonenode.h). 0 or -1,
 * after saying why. */
static int single_node(struct harness *h, const char *const *flags, unsigned n)
{
        if (lonenode_start(h, flags, n, argv0, HEALTHY_MS) != 0) {
                printf("# one-node cluster: %s\n", h->errmsg);
                return -1;
        }
        return 0;
}

/* --- Cases ---------------------------------------------------------------- */

static void nothing_to_connect_to(void)
{
        char eps[128], a[32], b[32];
        const char *raft = cluster.nodes[0].raft_address;
        struct proc r;

        snprintf(a, sizeof a, "127.0.0.1:%u", lonenode_free_port());
        snprintf(b, sizeof b, "127.0.0.1:%u", lonenode_free_port());
        snprintf(eps, sizeof eps, "%s,%s", a, b);
        ctl(&r, false, "--endpoints", eps, "--timeout", LONG, "holder", "x",
            NULL);
        expect_within(&r, 0, "nothing listening", "holder",
                      "cannot connect to any node", a, b, "connection refused",
                      NULL);
        snprintf(eps, sizeof eps, "nosuchhost.invalid:8601,%s", a);
        ctl(&r, false, "--endpoints", eps, "--timeout", LONG, "acquire", "x",
            "--detach", NULL);
        expect_within(
            &r, RESOLVER_MS, "a name that does not resolve", "acquire",
            "nosuchhost.invalid:8601: name does not resolve", a, NULL);
        ctl(&r, false, "--endpoints", raft, "--timeout", LONG, "holder", "x",
            NULL);
        expect_within(&r, 0, "the raft port", "holder", raft, "did not answer",
                      NULL);
}

static void tls_refusals(void)
{
        const char *ep = cluster.nodes[0].client_address;
        char other_ca[512];
        struct proc r;

        ctl(&r, true, "--endpoints", cluster.endpoints, "--timeout", LONG,
            "holder", "x", NULL);
        expect_within(&r, 0, "no TLS files against TLS nodes", "holder", ep,
                      "the node requires TLS", NULL);
        if (tlsfiles_issue("cli-expired", "admin", -30, -1, 0) != 0 ||
            tlsfiles_issue("cli-foreign", "admin", -1, 30, 1) != 0 ||
            tlsfiles_issue("cli-other", "admin", -1, 30, 1) != 0) {
                ok(false, "cannot make the certificates");
                return;
        }
        ctl(&r, false, "--endpoints", ep, "--timeout", LONG, "--cacert",
            tlsfiles_path("ca.crt"), "--cert", tlsfiles_path("cli-expired.crt"),
            "--key", tlsfiles_path("cli-expired.key"), "holder", "x", NULL);
        expect_within(&r, 0, "an expired certificate", "holder", ep,
                      "the node refused this client's certificate",
                      "certificate expired", NULL);
        ctl(&r, false, "--endpoints", ep, "--timeout", LONG, "--cacert",
            tlsfiles_path("ca.crt"), "--cert", tlsfiles_path("cli-foreign.crt"),
            "--key", tlsfiles_path("cli-foreign.key"), "holder", "x", NULL);
        expect_within(&r, 0, "a certificate of another CA", "holder", ep,
                      "unknown CA", NULL);
        /* Another CA's file as --cacert: a client certificate will do, it
         * signs nothing of the cluster's. */
        snprintf(other_ca, sizeof other_ca, "%s",
                 tlsfiles_path("cli-other.crt"));
        ctl(&r, false, "--endpoints", ep, "--timeout", LONG, "--cacert",
            other_ca, "--cert", tlsfiles_path("admin.crt"), "--key",
            tlsfiles_path("admin.key"), "holder", "x", NULL);
        expect_within(&r, 0, "a wrong --cacert", "holder", ep,
                      "the node's certificate is refused here", NULL);
}

static void tls_against_plain_node(void)
{
        static const char *const plain[] = {"--tls", "false"};
        struct harness h;
        struct proc r;

        if (single_node(&h, plain, 2) != 0) {
                ok(false, "a tls = off node");
                h.failed = true;
                harness_close(&h);
                return;
        }
        /* The control first (the node may still be electing itself). */
        ctl(&r, true, "--endpoints", h.endpoints, "--timeout", LONG, "holder",
            "x", NULL);
        ok(r.status == 0, "a plain client of a tls = off node: exit %d",
           r.status);
        ctl(&r, false, "--endpoints", h.endpoints, "--timeout", LONG, "holder",
            "x", NULL);
        expect_within(&r, 0, "TLS against a tls = off node", "holder",
                      h.endpoints, "speaks plain TCP (tls = off)", NULL);
        harness_close(&h);
}

static void name_mismatch(void)
{
        const char *flags[4];
        char by_name[64];
        struct harness h;
        struct proc r;

        /* Its own address alone (batond does not start with a certificate
         * that lacks it), dialled by a name it does not have. */
        if (tlsfiles_issue_only("cli-elsewhere", "node-1", "IP:127.0.0.1") !=
            0) {
                ok(false, "cannot make the certificate");
                return;
        }
        flags[0] = "--tls-cert";
        flags[1] = tlsfiles_path("cli-elsewhere.crt");
        flags[2] = "--tls-key";
        flags[3] = tlsfiles_path("cli-elsewhere.key");
        if (single_node(&h, flags, 4) != 0) {
                ok(false, "a node with another host's certificate");
                h.failed = true;
                harness_close(&h);
                return;
        }
        snprintf(by_name, sizeof by_name, "localhost%s",
                 strrchr(h.endpoints, ':'));
        ctl(&r, false, "--endpoints", by_name, "--timeout", LONG, "holder", "x",
            NULL);
        expect_within(&r, 0, "a certificate for another host", "holder",
                      by_name, "hostname mismatch", NULL);
        harness_close(&h);
}

static void status_rows(void)
{
        char eps[256], dead[32];
        struct proc r;
        bool good;

        snprintf(dead, sizeof dead, "127.0.0.1:%u", lonenode_free_port());
        snprintf(eps, sizeof eps, "%s,%s", cluster.nodes[0].client_address,
                 dead);
        ctl(&r, false, "--endpoints", eps, "--timeout", LONG, "status", NULL);
        good = r.status == 3 && r.elapsed_ms < PROMPT_MS &&
               strstr(r.out, "role=") != NULL &&
               strstr(r.out, "error: cannot connect to") != NULL &&
               strstr(r.out, dead) != NULL &&
               strstr(r.out, "connection refused") != NULL;
        if (!ok(good,
                "status: the dead node's line says why, exit 3 in %" PRId64
                " ms",
                r.elapsed_ms)) {
                printf("# exit %d; stdout: %s; stderr: %s\n", r.status, r.out,
                       r.err);
        }
        ctl(&r, false, "--json", "--endpoints", eps, "--timeout", LONG,
            "status", NULL);
        good = r.status == 3 && strstr(r.out, "\"name\":\"BATON_ECONNECT\"") &&
               strstr(r.out, "\"detail\":\"cannot connect to ") != NULL;
        if (!ok(good, "status --json: the dead node's object has its error")) {
                printf("# exit %d; stdout: %s\n", r.status, r.out);
        }
}

static void lost_majority(void)
{
        char timeout[16];
        unsigned leader;
        struct proc r;
        bool good;

        snprintf(timeout, sizeof timeout, "%d", SHORT_MS);
        if (harness_kill(&cluster, 1, NULL) != 0 ||
            harness_kill(&cluster, 2, NULL) != 0) {
                ok(false, "kill: %s", cluster.errmsg);
                return;
        }
        ctl(&r, false, "--endpoints", cluster.endpoints, "--timeout", timeout,
            "holder", "x", NULL);
        good = r.status == 3 && r.elapsed_ms >= SHORT_MS - 50 &&
               strstr(r.err, "batonctl: holder: timed out waiting for an "
                             "answer: no leader") != NULL &&
               strstr(r.err, cluster.nodes[2].client_address) != NULL;
        if (!ok(good,
                "a lost majority: waits out --timeout (%" PRId64
                " ms) and says no leader",
                r.elapsed_ms)) {
                printf("# exit %d; stderr: %s\n", r.status, r.err);
        } else {
                printf("# %s", r.err);
        }
        harness_restart(&cluster, 1);
        harness_restart(&cluster, 2);
        harness_wait_healthy(&cluster, HEALTHY_MS, &leader);
}

int main(int argc, char **argv)
{
        const char *env = getenv("BATONCTL");
        unsigned leader;

        (void)argc;
        argv0 = argv[0];
        if (env != NULL && env[0] != '\0') {
                batonctl = env;
        }
        printf("TAP version 13\n");
        if (ctlcluster_open(&cluster, argv0, WATCHDOG_S, &leader) != 0) {
                return 1;
        }
        nothing_to_connect_to();
        status_rows();
        if (tlsfiles_on()) {
                tls_refusals();
                tls_against_plain_node();
                name_mismatch();
        } else {
                printf("# the TLS cases are skipped: BATON_TEST_TLS=off\n");
        }
        lost_majority();
        harness_close(&cluster);
        return tap_plan(&tap);
}
