/* Integration scenarios on the metric families a Prometheus user expects
 * (sc_metrics.h). */
#include "sc_metrics.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <raft.h>
#include <uv.h>

#include "../../include/baton.h"
#include "prom.h"

/* The value of `series` in node `id`'s metrics, 0 when it has no such
 * series (an error result not seen yet); false when the scrape fails. */
static bool value_or_0(struct ctx *x, unsigned id, const char *series,
                       double *v, int line)
{
        char *text = malloc(METRICS_MAX);
        long len;

        if (text == NULL) {
                fail_at(x, line, "out of memory");
                return false;
        }
        len = harness_metrics(&x->h, id, text, METRICS_MAX, OP_MS);
        if (len < 0) {
                fail_at(x, line, "%s", x->h.errmsg);
                free(text);
                return false;
        }
        if (!prom_value(text, series, v)) {
                *v = 0;
        }
        free(text);
        return true;
}

/* Poll node `id` until `series` reaches `want` or more (entries apply on
 * followers a moment after the leader answers), up to HEALTHY_MS. */
static bool reaches(struct ctx *x, unsigned id, const char *series, double want,
                    int line)
{
        int64_t deadline = tclient_now_ms() + HEALTHY_MS;
        double v = 0;

        do {
                if (!value_or_0(x, id, series, &v, line)) {
                        return false;
                }
                if (v >= want) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < deadline);
        fail_at(x, line, "node %u: %s stayed at %g, below %g", id, series, v,
                want);
        return false;
}

/* build_info names the versions batond runs with. */
static bool build_info_right(struct ctx *x, const char *text, unsigned id)
{
        char want[256];

        snprintf(want, sizeof want,
                 "\nbaton_build_info{version=\"%s\",raft=\"%d.%d.%d\","
                 "libuv=\"%d.%d.%d\",openssl=\"%s\"} 1\n",
                 PACKAGE_VERSION, RAFT_VERSION_MAJOR, RAFT_VERSION_MINOR,
                 RAFT_VERSION_RELEASE, UV_VERSION_MAJOR, UV_VERSION_MINOR,
                 UV_VERSION_PATCH, OpenSSL_version(OPENSSL_VERSION_STRING));
        if (strstr(text, want) == NULL) {
                fail_at(x, __LINE__, "node %u's metrics have no %s", id,
                        want + 1);
                return false;
        }
        return true;
}

/* The process_* set is this process's: descriptors open and within the
 * limit, memory resident, started in the last day. */
static bool process_right(struct ctx *x, const char *text, unsigned id)
{
        double fds = 0, max = 0, rss = 0, start = 0, cpu = -1;
        double now = (double)time(NULL);

        if (!prom_value(text, "process_open_fds", &fds) ||
            !prom_value(text, "process_max_fds", &max) ||
            !prom_value(text, "process_resident_memory_bytes", &rss) ||
            !prom_value(text, "process_start_time_seconds", &start) ||
            !prom_value(text, "process_cpu_seconds_total", &cpu) ||
            !(fds > 0 && fds <= max) || !(rss > 1e6) || cpu < 0 ||
            !(start > now - 86400 && start < now + 60)) {
                fail_at(x, __LINE__,
                        "node %u: process_open_fds %g, max_fds %g, "
                        "resident %g, start %g (now %g), cpu %g",
                        id, fds, max, rss, start, now, cpu);
                return false;
        }
        return true;
}

/* What every node says of the leader and the voters. */
static bool raft_right(struct ctx *x, const char *text, unsigned id,
                       unsigned leader)
{
        double has = 0, ready = 0, voters = 0, reach = -1, changes = 0;
        double won = -1;
        bool is_leader = id == leader;

        (void)prom_value(text, "baton_raft_voters_reachable", &reach);
        if (!prom_value(text, "baton_has_leader", &has) ||
            !prom_value(text, "baton_ready", &ready) ||
            !prom_value(text, "baton_raft_voters", &voters) ||
            !prom_value(text, "baton_leader_changes_total", &changes) ||
            !prom_value(text, "baton_leader_elections_won_total", &won) ||
            has != 1 || ready != 1 || voters != x->n || changes < 1 ||
            (is_leader ? won < 1 || reach != x->n : reach != -1)) {
                fail_at(x, __LINE__,
                        "node %u (leader %u): has_leader %g, ready %g, "
                        "voters %g, reachable %g (-1: none), leader changes "
                        "%g, elections won %g",
                        id, leader, has, ready, voters, reach, changes, won);
                return false;
        }
        return true;
}

/* With TLS, the certificate's notAfter agrees with the time it has left. */
static bool cert_right(struct ctx *x, const char *text, unsigned id)
{
        double at = 0, left = 0;
        double now = (double)time(NULL);

        if (!prom_value(text, "baton_tls_cert_expiry_seconds", &left)) {
                return true; /* no TLS */
        }
        if (!prom_value(text, "baton_tls_cert_expiry_timestamp_seconds", &at) ||
            at - left < now - 60 || at - left > now + 60) {
                fail_at(x, __LINE__,
                        "node %u: cert expiry at %g, %g s left, now %g", id, at,
                        left, now);
                return false;
        }
        return true;
}

void sc_metrics_node(struct ctx *x)
{
        char *text = malloc(METRICS_MAX);
        unsigned leader, i;
        double writes;
        bool ok = true;

        EXPECT(x, text != NULL, "out of memory");
        if (harness_wait_healthy(&x->h, HEALTHY_MS, &leader) != 0) {
                fail_at(x, __LINE__, "%s", x->h.errmsg);
                free(text);
                return;
        }
        for (i = 1; i <= x->n && ok; i++) {
                SCRAPE(x, i, text, "baton_disk_write_seconds_count", &writes);
                ok = build_info_right(x, text, i) &&
                     process_right(x, text, i) &&
                     raft_right(x, text, i, leader) && cert_right(x, text, i);
                if (ok && writes < 1) {
                        fail_at(x, __LINE__,
                                "node %u: no disk write timed (%g)", i, writes);
                        ok = false;
                }
        }
        free(text);
}

static const char ebusy[] =
    "baton_requests_total{type=\"acquire\",result=\"ebusy\"}";
static const char waits[] = "baton_acquire_wait_seconds_count";
static const char holds_ended[] = "baton_hold_seconds_count";
static const char revoked[] = "baton_grants_revoked_total";
static const char expired[] = "baton_sessions_expired_total";
static const char gaps[] = "baton_keepalive_gap_seconds_count";

/* The counters before a step and what the step must add to them. */
struct counts {
        double ebusy, waits, holds, revoked, expired, gaps;
        double f_holds, f_revoked, f_expired; /* on a follower */
};

static bool read_counts(struct ctx *x, unsigned leader, unsigned f,
                        struct counts *c, int line)
{
        return value_or_0(x, leader, ebusy, &c->ebusy, line) &&
               value_or_0(x, leader, waits, &c->waits, line) &&
               value_or_0(x, leader, holds_ended, &c->holds, line) &&
               value_or_0(x, leader, revoked, &c->revoked, line) &&
               value_or_0(x, leader, expired, &c->expired, line) &&
               value_or_0(x, leader, gaps, &c->gaps, line) &&
               value_or_0(x, f, holds_ended, &c->f_holds, line) &&
               value_or_0(x, f, revoked, &c->f_revoked, line) &&
               value_or_0(x, f, expired, &c->f_expired, line);
}

/* Three tries of a held lock: the leader's ebusy series rose by three;
 * a waiter granted at the release: one acquire wait observed. */
static bool busy_then_wait(struct ctx *x, struct tclient *a, struct tclient *b,
                           const char *name, const struct counts *c0,
                           unsigned leader, uint64_t *token)
{
        struct tclient_result r;
        uint64_t t = granted(x, a, name, 1000, __LINE__);
        double v;
        int i, rv;

        for (i = 0; t != 0 && i < 3; i++) {
                rv = tclient_try(b, name, 1, OP_MS, &r);
                if (rv != BATON_EBUSY) {
                        fail_at(x, __LINE__, "try of a held lock: %d", rv);
                        return false;
                }
        }
        if (t == 0 || !value_or_0(x, leader, ebusy, &v, __LINE__)) {
                return false;
        }
        if (v != c0->ebusy + 3) {
                fail_at(x, __LINE__, "%s went from %g to %g over 3 EBUSY",
                        ebusy, c0->ebusy, v);
                return false;
        }
        if (!start_wait(x, b, name, 5000, NULL, __LINE__) ||
            !await_waiters(x, a, name, 1, __LINE__) ||
            !released(x, a, name, t, __LINE__)) {
                return false;
        }
        rv = tclient_finish(b, OP_MS, &r);
        if (rv != 0 || r.kind != PROTO_KIND_GRANTED) {
                fail_at(x, __LINE__, "the waiter: %d %s", rv, rs(x, &r));
                return false;
        }
        *token = r.token;
        return reaches(x, leader, waits, c0->waits + 1, __LINE__);
}

/* The admin's REVOKE_LOCK of b's grant: revoked on the leader and on a
 * follower, and two holds ended (a's release, b's revoke) on both. */
static bool revoke_counted(struct ctx *x, struct tclient *a,
                           const struct tclient *b, const char *name,
                           uint64_t token, const struct counts *c0,
                           unsigned leader, unsigned f)
{
        struct command k = {.type = COMMAND_REVOKE_LOCK,
                            .session = b->session,
                            .token = token,
                            .name = name,
                            .name_len = (uint8_t)strlen(name)};
        struct tclient_result r;
        int rv = tclient_command(a, &k, OP_MS, &r);

        if (rv != 0) {
                fail_at(x, __LINE__, "REVOKE_LOCK of %s: %d %s", name, rv,
                        rs(x, &r));
                return false;
        }
        return reaches(x, leader, revoked, c0->revoked + 1, __LINE__) &&
               reaches(x, f, revoked, c0->f_revoked + 1, __LINE__) &&
               reaches(x, leader, holds_ended, c0->holds + 2, __LINE__) &&
               reaches(x, f, holds_ended, c0->f_holds + 2, __LINE__);
}

void sc_metrics_grants(struct ctx *x)
{
        struct tclient a, b, c;
        struct counts c0;
        char name[64];
        unsigned leader, f;
        uint64_t token;
        uint32_t ttl;
        bool ok;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        f = a_follower(x, leader);
        EXPECT(x, read_counts(x, leader, f, &c0, __LINE__), "scrape failed");
        lock_name(x, name, sizeof name, "metrics-grants");
        OPEN(x, &a, TTL_MS);
        if (!client_open(x, &b, TTL_MS, __LINE__)) {
                tclient_close(&a);
                return;
        }
        ok = busy_then_wait(x, &a, &b, name, &c0, leader, &token) &&
             revoke_counted(x, &a, &b, name, token, &c0, leader, f);
        /* Two keepalives of a: two gaps on the leader (since the open,
         * then since the first). */
        ok = ok && tclient_keepalive(&a, OP_MS, &ttl) == 0 &&
             tclient_keepalive(&a, OP_MS, &ttl) == 0 &&
             reaches(x, leader, gaps, c0.gaps + 2, __LINE__);
        /* A session left to expire: counted on the leader and a follower. */
        ok = ok && client_open(x, &c, 2000, __LINE__);
        if (ok) {
                tclient_close(&c); /* no keepalive from here */
                ok = reaches(x, leader, expired, c0.expired + 1, __LINE__) &&
                     reaches(x, f, expired, c0.f_expired + 1, __LINE__);
        }
        tclient_close(&a);
        tclient_close(&b);
}
