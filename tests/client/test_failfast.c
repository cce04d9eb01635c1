/*
 * libbaton's connection failures against live clusters
 * (tests/integration/harness): a call that no node can answer, because
 * nothing listens, the name does not resolve, the port is a raft port, or
 * TLS fails either way (no client certificate, an expired one, another
 * CA's, a wrong CA file, TLS against a tls = off node, a certificate for
 * another host name), fails at once with BATON_ECONNECT or BATON_ETLS and
 * a detail (baton_errmsg()) that names the endpoint and the reason. Every
 * such call gets a 15 s request timeout and must end within 5 s: the
 * behaviour is "one pass over the endpoints", not waiting out the timeout.
 *
 * And the other side: a cluster that lost its majority still waits the
 * whole timeout and says "no leader"; a blocking acquire that went out
 * before every node was killed never fails early (its outcome is unknown:
 * BATON_ETIMEDOUT at its deadline, never BATON_ECONNECT); a session
 * outlives an outage during which calls failed at once.
 *
 * One cmocka case per scenario (a pattern as the first argument runs only
 * the cases it matches). Every wait is bounded; a watchdog
 * (BATON_TEST_WATCHDOG seconds, default 240) bails out of a hung run, and
 * every node is killed by PID on any exit. Environment as the integration
 * tests: BATOND, BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_TLS.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../integration/harness.h"
#include "../integration/lonenode.h"
#include "../integration/tlsfiles.h"
#include "../lib/certs.h"
#include "../lib/tclient.h"
#include "livecluster.h"

#define WATCHDOG_S 240
#define HEALTHY_MS 20000
#define LONG_MS    15000 /* the request timeout of the failing calls */
#define PROMPT_MS  5000  /* they must end well before it */
#define SHORT_MS   3000  /* the timeout of calls that must wait it out */
#define SLACK_MS   1000  /* a call may end this much past its deadline */
/* A resolver that loses a query asks again after resolv.conf's timeout,
 * 5 s by default: a name lookup may take that long on its own. */
#define RESOLVER_MS 5000
#define DETAIL_MAX  1024

static struct harness cluster;
static const char *argv0;

static int64_t now_ms(void)
{
        return tclient_now_ms();
}

/* A port of 127.0.0.1 nothing listens on (lonenode.h). */
static unsigned free_port(void)
{
        unsigned port = lonenode_free_port();

        assert_true(port != 0);
        return port;
}

/* What one call came to. */
struct outcome {
        int rv;
        int64_t ms;
        char detail[DETAIL_MAX];
};

/* The environment's TLS files, put aside while a client must have none
 * (libbaton reads them when the options name no file). */
static char saved_env[3][512];
static const char *const env_names[3] = {"BATON_CACERT", "BATON_CERT",
                                         "BATON_KEY"};

static void env_aside(void)
{
        for (unsigned i = 0; i < 3; i++) {
                const char *v = getenv(env_names[i]);
                snprintf(saved_env[i], sizeof saved_env[i], "%s",
                         v != NULL ? v : "");
                unsetenv(env_names[i]);
        }
}

static void env_back(void)
{
        for (unsigned i = 0; i < 3; i++) {
                if (saved_env[i][0] != '\0') {
                        setenv(env_names[i], saved_env[i], 1);
                }
        }
}

/*
 * A new handle for `endpoints` with a request timeout of `timeout_ms`,
 * the TLS files `ca`, `cert`, `key` (paths; all NULL: the environment's,
 * "" for all three: a plain client), then one call: a try of a lock
 * (which opens a session first) or, with `holder`, a QUERY (which does
 * not). Returns what the call came to, timed from the call to its return.
 */
static struct outcome call(const char *endpoints, uint32_t timeout_ms,
                           const char *ca, const char *cert, const char *key,
                           bool holder)
{
        struct baton_options o;
        struct baton_holder h;
        struct outcome out;
        baton_client *c = NULL;
        bool plain = ca != NULL && ca[0] == '\0';
        uint64_t token;
        int64_t t0;
        int rv;

        baton_options_init(&o);
        o.request_timeout_ms = timeout_ms;
        o.client_name = "test_failfast";
        if (!plain) {
                o.tls_ca = ca;
                o.tls_cert = cert;
                o.tls_key = key;
        } else {
                env_aside();
        }
        rv = baton_client_create(&c, endpoints, &o);
        if (plain) {
                env_back();
        }
        if (rv != 0) {
                print_message("# create %s: %s\n", endpoints, baton_errmsg(rv));
        }
        assert_int_equal(rv, 0);
        t0 = now_ms();
        out.rv = holder
                     ? baton_holder(c, "failfast", &h)
                     : baton_acquire(c, "failfast", 0, BATON_WAIT_TRY, &token);
        out.ms = now_ms() - t0;
        snprintf(out.detail, sizeof out.detail, "%s", baton_errmsg(out.rv));
        print_message("# %s: %s after %" PRId64 " ms: %s\n", endpoints,
                      baton_errname(out.rv), out.ms, out.detail);
        baton_client_destroy(c);
        return out;
}

/* The call failed with `rv` within PROMPT_MS (and `extra_ms`), and its
 * detail names each of the NULL-terminated strings that follow (endpoints,
 * reasons). */
static void expect_within(const struct outcome *o, int64_t extra_ms, int rv,
                          ...)
{
        const char *want;
        va_list ap;

        assert_int_equal(o->rv, rv);
        if (o->ms >= PROMPT_MS + extra_ms) {
                fail_msg("took %" PRId64 " ms of a %d ms timeout", o->ms,
                         LONG_MS);
        }
        va_start(ap, rv);
        while ((want = va_arg(ap, const char *)) != NULL) {
                if (strstr(o->detail, want) == NULL) {
                        va_end(ap);
                        fail_msg("detail \"%s\" does not say \"%s\"", o->detail,
                                 want);
                }
        }
        va_end(ap);
}

static void need_tls(void)
{
        if (!tlsfiles_on()) {
                print_message("# SKIP: the clusters run without TLS\n");
                skip();
        }
}

/* A one-node cluster of its own whose node starts with `flags` (n of
 * them, lonenode.h); the case fails when it does not listen. */
static void single_node(struct harness *h, const char *const *flags, unsigned n)
{
        if (lonenode_start(h, flags, n, argv0, HEALTHY_MS) != 0) {
                print_message("# one-node cluster: %s\n", h->errmsg);
                h->failed = true;
                harness_close(h);
                fail();
        }
}

/* --- Nothing to connect to ------------------------------------------------ */

/* Nothing listens on either endpoint: both are named, each refused. */
static void nothing_listening(void **state)
{
        char eps[64], a[32], b[32];
        struct outcome o;

        (void)state;
        snprintf(a, sizeof a, "127.0.0.1:%u", free_port());
        snprintf(b, sizeof b, "127.0.0.1:%u", free_port());
        snprintf(eps, sizeof eps, "%s,%s", a, b);
        o = call(eps, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, 0, BATON_ECONNECT, "cannot connect to any node", a,
                      "connection refused", b, NULL);
        /* A read, which opens no session, the same. */
        o = call(eps, LONG_MS, NULL, NULL, NULL, true);
        expect_within(&o, 0, BATON_ECONNECT, a, "connection refused", NULL);
}

/* A name that does not resolve, beside a port nothing listens on. */
static void name_does_not_resolve(void **state)
{
        char eps[96], a[32];
        struct outcome o;

        (void)state;
        snprintf(a, sizeof a, "127.0.0.1:%u", free_port());
        snprintf(eps, sizeof eps, "nosuchhost.invalid:8601,%s", a);
        o = call(eps, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, RESOLVER_MS, BATON_ECONNECT,
                      "nosuchhost.invalid:8601", "name does not resolve", a,
                      "connection refused", NULL);
}

/* The raft port given as the client endpoint: it takes the connection
 * and never answers the client's first PING (with TLS, after a handshake
 * it accepts). The PING goes out alone, so no request reached the port. */
static void raft_port(void **state)
{
        const char *raft = cluster.nodes[0].raft_address;
        struct outcome o;

        (void)state;
        o = call(raft, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, 0, BATON_ECONNECT, raft, "answer", NULL);
}

/* baton_status() of one node that cannot be reached: the node's own
 * reason, at once. */
static void status_of_a_dead_node(void **state)
{
        struct baton_options o;
        struct baton_status st;
        baton_client *c = NULL;
        char ep[32];
        int64_t t0, ms;
        int rv;

        (void)state;
        snprintf(ep, sizeof ep, "127.0.0.1:%u", free_port());
        baton_options_init(&o);
        o.request_timeout_ms = LONG_MS;
        assert_int_equal(baton_client_create(&c, cluster.endpoints, &o), 0);
        t0 = now_ms();
        rv = baton_status(c, ep, &st);
        ms = now_ms() - t0;
        print_message("# status %s: %s after %" PRId64 " ms: %s\n", ep,
                      baton_errname(rv), ms, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ECONNECT);
        assert_true(ms < PROMPT_MS);
        assert_non_null(strstr(baton_errmsg(rv), ep));
        assert_non_null(strstr(baton_errmsg(rv), "connection refused"));
        /* The control: a node that is there answers. */
        assert_int_equal(baton_status(c, cluster.nodes[0].client_address, &st),
                         0);
        baton_client_destroy(c);
}

/* --- TLS ------------------------------------------------------------------ */

/* A client with no TLS files (a plain client) against TLS nodes. */
static void no_client_certificate(void **state)
{
        const char *ep = cluster.nodes[0].client_address;
        struct outcome o;

        (void)state;
        need_tls();
        o = call(ep, LONG_MS, "", "", "", false);
        expect_within(&o, 0, BATON_ETLS, ep, "the node requires TLS", NULL);
        /* Every endpoint is named with its reason. */
        o = call(cluster.endpoints, LONG_MS, "", "", "", true);
        expect_within(&o, 0, BATON_ETLS, cluster.nodes[0].client_address,
                      cluster.nodes[1].client_address,
                      cluster.nodes[2].client_address, "requires TLS", NULL);
}

/* A client certificate that expired: the node's alert says so. */
static void expired_certificate(void **state)
{
        struct outcome o;

        (void)state;
        need_tls();
        assert_int_equal(tlsfiles_issue("ff-expired", "admin", -30, -1, 0), 0);
        o = call(cluster.endpoints, LONG_MS, tlsfiles_path("ca.crt"),
                 tlsfiles_path("ff-expired.crt"),
                 tlsfiles_path("ff-expired.key"), false);
        expect_within(&o, 0, BATON_ETLS, cluster.nodes[0].client_address,
                      "refused this client's certificate",
                      "certificate expired", NULL);
}

/* A client certificate of another CA than the cluster's. */
static void certificate_of_another_ca(void **state)
{
        struct outcome o;

        (void)state;
        need_tls();
        assert_int_equal(tlsfiles_issue("ff-foreign", "admin", -1, 30, 1), 0);
        o = call(cluster.endpoints, LONG_MS, tlsfiles_path("ca.crt"),
                 tlsfiles_path("ff-foreign.crt"),
                 tlsfiles_path("ff-foreign.key"), false);
        expect_within(&o, 0, BATON_ETLS, cluster.nodes[1].client_address,
                      "refused this client's certificate", "unknown CA", NULL);
}

/* A CA file of another CA: the client refuses the nodes' certificates. */
static void wrong_ca_file(void **state)
{
        struct certs_ca *other;
        struct outcome o;

        (void)state;
        need_tls();
        other = certs_ca_create("Not the cluster's CA");
        assert_non_null(other);
        assert_int_equal(
            certs_ca_write(other, tlsfiles_path("ff-other-ca.crt")), 0);
        certs_ca_destroy(other);
        o = call(cluster.endpoints, LONG_MS, tlsfiles_path("ff-other-ca.crt"),
                 tlsfiles_path("admin.crt"), tlsfiles_path("admin.key"), false);
        expect_within(&o, 0, BATON_ETLS, cluster.nodes[2].client_address,
                      "the node's certificate is refused here", NULL);
}

/* A TLS client against a node with tls = off. */
static void tls_against_plain_node(void **state)
{
        static const char *const plain[] = {"--tls", "false"};
        struct harness h;
        struct outcome o;

        (void)state;
        need_tls();
        single_node(&h, plain, 2);
        /* The control, first (the node may be electing itself): a plain
         * client gets in. */
        o = call(h.endpoints, LONG_MS, "", "", "", false);
        assert_int_equal(o.rv, 0);
        o = call(h.endpoints, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, 0, BATON_ETLS, h.endpoints,
                      "the node speaks plain TCP (tls = off) but this client "
                      "uses TLS",
                      NULL);
        harness_close(&h);
}

/* Until the log at `path` has `needle`, for up to `ms`. */
static bool log_says(const char *path, const char *needle, int ms)
{
        static char text[1 << 20];
        int64_t until = tclient_now_ms() + ms;
        FILE *f;
        size_t n;

        do {
                f = fopen(path, "r");
                n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;
                if (f != NULL) {
                        fclose(f);
                }
                text[n] = '\0';
                if (strstr(text, needle) != NULL) {
                        return true;
                }
                tclient_sleep_ms(50);
        } while (tclient_now_ms() < until);
        return false;
}

/*
 * A node whose certificate names another host than the one dialled:
 * "localhost" and "127.0.0.1" are both refused, each for its name. batond
 * does not start with a certificate that lacks its own client address, so
 * the node starts with one naming 127.0.0.1 alone, and is then given one
 * naming elsewhere.example alone by SIGHUP (a rotation gone wrong).
 */
static void name_mismatch(void **state)
{
        const char *flags[4];
        char by_name[64];
        struct harness h;
        struct outcome o;
        const char *port;

        (void)state;
        need_tls();
        assert_int_equal(
            tlsfiles_issue_only("ff-elsewhere", "node-1", "IP:127.0.0.1"), 0);
        flags[0] = "--tls-cert";
        flags[1] = tlsfiles_path("ff-elsewhere.crt");
        flags[2] = "--tls-key";
        flags[3] = tlsfiles_path("ff-elsewhere.key");
        single_node(&h, flags, 4);
        assert_int_equal(tlsfiles_issue_only("ff-elsewhere", "node-1",
                                             "DNS:elsewhere.example"),
                         0);
        assert_int_equal(kill(h.nodes[0].pid, SIGHUP), 0);
        assert_true(log_says(h.nodes[0].log_path,
                             "SIGHUP: certificates reloaded", HEALTHY_MS));
        o = call(h.endpoints, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, 0, BATON_ETLS, h.endpoints,
                      "the node's certificate is refused here",
                      "IP address mismatch", NULL);
        port = strrchr(h.endpoints, ':');
        assert_non_null(port);
        snprintf(by_name, sizeof by_name, "localhost%s", port);
        o = call(by_name, LONG_MS, NULL, NULL, NULL, false);
        expect_within(&o, 0, BATON_ETLS, by_name, "hostname mismatch", NULL);
        harness_close(&h);
}

/* --- What must still wait ------------------------------------------------- */

/* Two of three nodes stopped: the third answers, knowing no leader. The
 * call waits out its whole timeout and says "no leader". */
static void lost_majority(void **state)
{
        struct outcome o;

        (void)state;
        assert_int_equal(harness_kill(&cluster, 1, NULL), 0);
        assert_int_equal(harness_kill(&cluster, 2, NULL), 0);
        o = call(cluster.endpoints, SHORT_MS, NULL, NULL, NULL, false);
        assert_int_equal(o.rv, BATON_ENOANSWER);
        assert_true(o.ms >= SHORT_MS - 50 && o.ms < SHORT_MS + SLACK_MS);
        assert_non_null(strstr(o.detail, "no leader"));
        assert_non_null(strstr(o.detail, cluster.nodes[2].client_address));
}

struct waiter {
        baton_client *c;
        int rv;
        int64_t ms;
        char detail[DETAIL_MAX];
};

static void *wait_main(void *arg)
{
        struct waiter *w = arg;
        int64_t t0 = now_ms();
        uint64_t token;

        w->rv = baton_acquire(w->c, "failfast-queued", 0, SHORT_MS, &token);
        w->ms = now_ms() - t0;
        snprintf(w->detail, sizeof w->detail, "%s", baton_errmsg(w->rv));
        return NULL;
}

/*
 * A blocking acquire is queued behind a holder, then every node is killed:
 * every endpoint now refuses, but the acquire went out, and the cluster
 * may have applied it. It must not fail early: it ends at its deadline
 * (wait + timeout) with the code a blocking acquire gives when the cluster
 * did not answer, BATON_ETIMEDOUT, and never BATON_ECONNECT. (Giving it
 * BATON_ECONNECT once a pass failed, as a request never sent gets, fails
 * this case: the registry's sent() is what keeps it waiting.)
 */
static void sent_before_all_died(void **state)
{
        struct baton_options o;
        struct baton_holder hd;
        baton_client *holder = NULL;
        struct waiter w;
        pthread_t t;
        uint64_t token;
        int64_t until;
        unsigned i;

        (void)state;
        baton_options_init(&o);
        o.request_timeout_ms = SHORT_MS;
        assert_int_equal(baton_client_create(&holder, cluster.endpoints, &o),
                         0);
        memset(&w, 0, sizeof w);
        assert_int_equal(baton_client_create(&w.c, cluster.endpoints, &o), 0);
        assert_int_equal(
            baton_acquire(holder, "failfast-queued", 0, BATON_WAIT_TRY, &token),
            0);
        assert_int_equal(pthread_create(&t, NULL, wait_main, &w), 0);
        for (until = now_ms() + HEALTHY_MS;;) {
                if (baton_holder(holder, "failfast-queued", &hd) == 0 &&
                    hd.waiters >= 1) {
                        break;
                }
                assert_true(now_ms() < until);
                usleep(10 * 1000);
        }
        for (i = 1; i <= cluster.n; i++) {
                assert_int_equal(harness_kill(&cluster, i, NULL), 0);
        }
        pthread_join(t, NULL);
        print_message("# queued acquire: %s after %" PRId64 " ms: %s\n",
                      baton_errname(w.rv), w.ms, w.detail);
        assert_int_equal(w.rv, BATON_ETIMEDOUT);
        assert_true(w.ms >= 2 * SHORT_MS - 50);
        assert_non_null(strstr(w.detail, "outcome is unknown"));
        baton_client_destroy(w.c);
        baton_client_destroy(holder);
}

/* Every node down for a moment: a call made meanwhile fails at once, yet
 * the handle's session and its lock outlive the outage (the background
 * thread keeps reconnecting). */
static void session_outlives_outage(void **state)
{
        struct baton_options o;
        struct baton_holder hd;
        baton_client *c = NULL;
        uint64_t session, token, t2;
        int64_t t0, ms, until;
        unsigned i, leader;
        int rv;

        (void)state;
        baton_options_init(&o);
        o.ttl_ms = 30000;
        o.request_timeout_ms = LONG_MS;
        assert_int_equal(baton_client_create(&c, cluster.endpoints, &o), 0);
        assert_int_equal(
            baton_acquire(c, "failfast-kept", 0, BATON_WAIT_TRY, &token), 0);
        session = baton_session_id(c);
        for (i = 1; i <= cluster.n; i++) {
                assert_int_equal(harness_kill(&cluster, i, NULL), 0);
        }
        /* The handle's thread reads the dead nodes' closes first: a call
         * sent on a connection whose close it has not read yet went out,
         * and then waits out its timeout as any sent request must (seen
         * under ASan on a loaded machine). This case is about calls made
         * once the handle knows every node is gone. */
        usleep(500 * 1000);
        t0 = now_ms();
        rv = baton_holder(c, "failfast-kept", &hd);
        ms = now_ms() - t0;
        print_message("# during the outage: %s after %" PRId64 " ms: %s\n",
                      baton_errname(rv), ms, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ECONNECT);
        assert_true(ms < PROMPT_MS);
        for (i = 1; i <= cluster.n; i++) {
                assert_int_equal(harness_restart(&cluster, i), 0);
        }
        assert_int_equal(harness_wait_healthy(&cluster, HEALTHY_MS, &leader),
                         0);
        for (until = now_ms() + HEALTHY_MS;;) {
                if (baton_holder(c, "failfast-kept", &hd) == 0) {
                        break;
                }
                assert_true(now_ms() < until);
                usleep(50 * 1000);
        }
        assert_true(hd.held && hd.session == session && hd.token == token);
        assert_int_equal(baton_session_id(c), session);
        /* Still its lock: taking it again is reentrant, same token. */
        assert_int_equal(
            baton_acquire(c, "failfast-kept", 0, BATON_WAIT_TRY, &t2), 0);
        assert_true(t2 == token);
        baton_client_destroy(c);
}

int main(int argc, char **argv)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(nothing_listening),
            cmocka_unit_test(name_does_not_resolve),
            cmocka_unit_test(raft_port),
            cmocka_unit_test(status_of_a_dead_node),
            cmocka_unit_test(no_client_certificate),
            cmocka_unit_test(expired_certificate),
            cmocka_unit_test(certificate_of_another_ca),
            cmocka_unit_test(wrong_ca_file),
            cmocka_unit_test(tls_against_plain_node),
            cmocka_unit_test(name_mismatch),
            cmocka_unit_test_teardown(lost_majority, livecluster_restore),
            cmocka_unit_test_teardown(sent_before_all_died,
                                      livecluster_restore),
            cmocka_unit_test_teardown(session_outlives_outage,
                                      livecluster_restore),
        };

        argv0 = argv[0];
        if (argc > 1) {
                cmocka_set_test_filter(argv[1]); /* e.g. "sent_*" */
        }
        livecluster_use(&cluster, argv0, WATCHDOG_S);
        return cmocka_run_group_tests_name("failfast", tests, livecluster_up,
                                           livecluster_down);
}
