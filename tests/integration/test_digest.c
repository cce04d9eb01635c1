/* The state digests (src/server/raft/fsmdigest.h) on real batond processes
 * on 127.0.0.1, printing TAP: with batond-diverge, whose node 2 alters one
 * grant in its own memory, the replicas whose state is not the leader's
 * say so (the log line, baton_fsm_digest_mismatch_total, GET /ready 503
 * "diverged", and `batonctl status` names the node and the index); with
 * batond, every node compares digests and stays ready, and `batonctl
 * status` names no alarm. Environment as test_integration (BATOND,
 * BATON_TEST_BASE_PORT, BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG),
 * BATOND_DIVERGE: the deliberately broken server (default:
 * tests/chaos/batond-diverge of this build), and BATONCTL (default: the
 * batonctl of this build). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/proc.h"
#include "harness.h"
#include "scenario.h"

#define WATCHDOG_S 240
#define DRIVE_MS   60000 /* for the digests to be compared */
#define ROUNDS_MIN 120   /* grants and releases: past entry 100 and more */

/* Small, so that a few hundred entries make many digests. */
static const char *const every_20[] = {"--digest-interval", "20"};

/* A program of this build: $`env` when set, else `rel` from the test's
 * own directory (tests/integration/). */
static const char *built(const struct ctx *x, const char *env, const char *rel,
                         char *buf, size_t cap)
{
        const char *set = getenv(env);
        const char *slash = strrchr(x->run->argv0, '/');

        if (set != NULL && set[0] != '\0') {
                return set;
        }
        snprintf(buf, cap, "%.*s/%s",
                 slash != NULL ? (int)(slash - x->run->argv0) : 1,
                 slash != NULL ? x->run->argv0 : ".", rel);
        return buf;
}

/* `what`'s output `out` as TAP comments, a line each. */
static void comment(const char *what, const char *out)
{
        const char *eol;

        printf("# %s:\n", what);
        for (; *out != '\0'; out = eol != NULL ? eol + 1 : out + strlen(out)) {
                eol = strchr(out, '\n');
                printf("#   %.*s\n",
                       eol != NULL ? (int)(eol - out) : (int)strlen(out), out);
        }
}

/* Node `id`'s line of `batonctl status` (`out`) says "alarms=diverged"
 * with the index of the mismatch its /ready gives when `diverged`, and no
 * alarm otherwise. */
static void status_line(struct ctx *x, const char *out, unsigned id,
                        bool diverged)
{
        char line[1024] = "", want[64], body[2048];
        const char *at, *end, *idx;
        int status = 0;

        snprintf(want, sizeof want, " id=%u ", id);
        at = strstr(out, want);
        end = at != NULL ? strchr(at, '\n') : NULL;
        EXPECT(x, end != NULL, "batonctl status has no line for node %u", id);
        snprintf(line, sizeof line, "%.*s", (int)(end - at), at);
        EXPECT(x, (strstr(line, " alarms=diverged") != NULL) == diverged,
               "node %u's status line %s alarms=diverged: %s", id,
               diverged ? "lacks" : "has", line);
        harness_http_get(&x->h, id, "/ready", &status, body, sizeof body,
                         OP_MS);
        idx = strstr(body, "at index ");
        if (diverged && idx != NULL) {
                snprintf(want, sizeof want, " diverged_index=%llu ",
                         strtoull(idx + 9, NULL, 10));
                EXPECT(x, strstr(line, want) != NULL,
                       "node %u's status line lacks%s: %s", id, want, line);
        }
}

/* The same of node `id`'s object in `batonctl --json status` (`out`):
 * "alarms":["diverged"] and the index, or "alarms":[]. */
static void status_json(struct ctx *x, const char *out, unsigned id,
                        bool diverged)
{
        char line[1024], want[64];
        const char *at, *end;

        snprintf(want, sizeof want, "\"id\":%u,", id);
        at = strstr(out, want);
        EXPECT(x, at != NULL, "no JSON object for node %u", id);
        /* Up to the next node's object. */
        end = strstr(at, "{\"endpoint\"");
        snprintf(line, sizeof line, "%.*s",
                 end != NULL ? (int)(end - at) : (int)sizeof line, at);
        EXPECT(x,
               strstr(line, diverged ? "\"alarms\":[\"diverged\"],"
                                       "\"diverged\":{\"index\":"
                                     : "\"alarms\":[]") != NULL,
               "node %u's JSON object %s: %s", id,
               diverged ? "lacks \"alarms\":[\"diverged\"]"
                        : "lacks \"alarms\":[]",
               line);
}

/* `batonctl status` over every node, plain and --json, names the nodes of
 * `which` diverged and no other. */
static void status_names(struct ctx *x, const bool which[4])
{
        static const char *const plain[] = {"status", NULL};
        static const char *const json[] = {"--json", "status", NULL};
        const char *head[] = {"--endpoints", x->h.endpoints, NULL};
        char path[512];
        struct proc p, pj;
        unsigned id;
        const char *ctl =
            built(x, "BATONCTL", "../../batonctl", path, sizeof path);

        proc_run(&p, ctl, 0, OP_MS, head, plain);
        proc_run(&pj, ctl, 0, OP_MS, head, json);
        comment("batonctl status", p.out);
        comment("batonctl --json status", pj.out);
        EXPECT(x, p.status == 0 && pj.status == 0,
               "batonctl status exited %d, --json %d", p.status, pj.status);
        for (id = 1; id <= 3 && x->ok; id++) {
                status_line(x, p.out, id, which[id]);
        }
        for (id = 1; id <= 3 && x->ok; id++) {
                status_json(x, pj.out, id, which[id]);
        }
}

/* Node `id`'s /ready: its status code, and whether its body has `word`. */
static int ready(struct ctx *x, unsigned id, const char *word, bool *has)
{
        char body[2048];
        int status = 0;

        *has = false;
        if (harness_http_get(&x->h, id, "/ready", &status, body, sizeof body,
                             OP_MS) < 0) {
                return -1;
        }
        *has = strstr(body, word) != NULL;
        return status;
}

static double value(struct ctx *x, unsigned id, const char *series)
{
        double v = -1;

        return metric(x, id, series, &v, __LINE__) ? v : -1;
}

/* The nodes of the cluster with at least one mismatch counted. */
static unsigned mismatched(struct ctx *x, bool which[4])
{
        unsigned id, n = 0;

        for (id = 1; id <= 3; id++) {
                which[id] =
                    value(x, id, "baton_fsm_digest_mismatch_total") >= 1;
                n += which[id];
        }
        return n;
}

/* Start 3 nodes of `batond`, then restart each with digests every 20
 * entries; hold one lock, then grant and release another until `done`
 * says so (or DRIVE_MS passed and ROUNDS_MIN were made). */
static bool drive(struct ctx *x, const char *batond,
                  bool (*done)(struct ctx *x, unsigned rounds))
{
        char held[64], name[64];
        struct tclient c;
        uint64_t token, t;
        unsigned rounds = 0;
        int64_t deadline;

        if (harness_start(&x->h, 3, batond, x->run->argv0, 0) != 0) {
                fail_at(x, __LINE__, "start %s: %s", batond, x->h.errmsg);
                return false;
        }
        x->h.keep = x->run->keep;
        if (!restart_all(x, every_20, 2, __LINE__)) {
                return false;
        }
        lock_name(x, held, sizeof held, "held");
        lock_name(x, name, sizeof name, "busy");
        if (!client_open(x, &c, TTL_MS, __LINE__)) {
                return false;
        }
        token = granted(x, &c, held, 1000, __LINE__);
        deadline = tclient_now_ms() + DRIVE_MS;
        while (x->ok && token != 0 && tclient_now_ms() < deadline &&
               !(rounds >= ROUNDS_MIN && done(x, rounds))) {
                t = granted(x, &c, name, 1000, __LINE__);
                if (t == 0 || !released(x, &c, name, t, __LINE__)) {
                        break;
                }
                rounds++;
                if (rounds % 20 == 0 && !kept_alive(x, &c, __LINE__)) {
                        break;
                }
        }
        printf("# %u rounds of grant and release\n", rounds);
        tclient_close(&c);
        return x->ok && token != 0;
}

/* Leadership handed to diverged node `to`: it must not serve, and hands
 * it on; the leader that serves is a node that counted no mismatch. */
static void diverged_hands_over(struct ctx *x, unsigned to, const bool which[4])
{
        struct baton_options o;
        baton_client *c = NULL;
        unsigned leader = 0;
        int rv;

        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.client_name = "test_digest";
        if (baton_client_create(&c, x->h.endpoints, &o) != 0) {
                fail_at(x, __LINE__, "client for the transfer");
                return;
        }
        rv = baton_transfer(c, to);
        printf("# transfer to node %u: %d\n", to, rv);
        baton_client_destroy(c);
        EXPECT(x, harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        printf("# serving leader after the transfer: node %u\n", leader);
        EXPECT(x, leader != 0 && !which[leader],
               "node %u, diverged, serves as leader", leader);
        EXPECT(x,
               harness_log_count(&x->h, to, "diverged from the leader's") > 0,
               "node %u never said it would not serve diverged", to);
}

static bool some_mismatch(struct ctx *x, unsigned rounds)
{
        bool which[4];

        return rounds % 10 == 0 && mismatched(x, which) > 0;
}

/*
 * batond-diverge's node 2 alters a grant of the held lock after entry 100.
 * The leader proposes its digests: if node 2 follows, it alone differs
 * from the leader; if it leads, the two others do. Those say so once each
 * in their log, count it, and answer /ready 503 "diverged"; the others
 * stay ready. Leadership handed to a diverged node comes back to a node
 * that is not: a diverged node never serves.
 */
static void sc_diverged(struct ctx *x)
{
        char path[512];
        bool which[4], has;
        unsigned leader, id;

        if (!drive(x,
                   built(x, "BATOND_DIVERGE", "../chaos/batond-diverge", path,
                         sizeof path),
                   some_mismatch)) {
                return;
        }
        EXPECT(x, mismatched(x, which) > 0, "no node counted a mismatch");
        EXPECT(x, harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        printf("# leader %u; mismatches at nodes%s%s%s\n", leader,
               which[1] ? " 1" : "", which[2] ? " 2" : "",
               which[3] ? " 3" : "");
        for (id = 1; id <= 3; id++) {
                bool expect = leader == 2 ? id != 2 : id == 2;
                int st = ready(x, id, "\"reason\":\"diverged\"", &has);
                EXPECT(x, which[id] == expect,
                       "node %u %s a mismatch (leader %u)", id,
                       which[id] ? "counted" : "did not count", leader);
                EXPECT(x, (st == 503 && has) == expect,
                       "node %u /ready %d, diverged %s (leader %u)", id, st,
                       has ? "said" : "not said", leader);
                EXPECT(x,
                       (harness_log_count(
                            &x->h, id, "state machine digest MISMATCH") > 0) ==
                           expect,
                       "node %u's log and its mismatch disagree", id);
                EXPECT(x, value(x, id, "baton_fsm_diverged") == expect,
                       "node %u: baton_fsm_diverged", id);
        }
        status_names(x, which);
        for (id = 1; id <= 3 && !which[id]; id++) {
        }
        if (x->ok && id <= 3) {
                diverged_hands_over(x, id, which);
        }
}

static bool all_checked(struct ctx *x, unsigned rounds)
{
        unsigned id;

        if (rounds % 10 != 0) {
                return false;
        }
        for (id = 1; id <= 3; id++) {
                if (value(x, id, "baton_fsm_digest_checked_total") < 3) {
                        return false;
                }
        }
        return true;
}

/* The same with batond: every node compares digests, none differs, and
 * every node stays ready. */
static void sc_agree(struct ctx *x)
{
        unsigned id, leader;
        bool has;

        if (!drive(x, NULL, all_checked)) {
                return;
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        for (id = 1; id <= 3; id++) {
                double checked = value(x, id, "baton_fsm_digest_checked_total");
                printf("# node %u compared %.0f digests\n", id, checked);
                EXPECT(x, checked >= 3, "node %u compared %.0f digests", id,
                       checked);
                EXPECT(x, value(x, id, "baton_fsm_digest_mismatch_total") == 0,
                       "node %u counted a mismatch", id);
                EXPECT(x,
                       ready(x, id, "\"status\":\"ready\"", &has) == 200 && has,
                       "node %u is not ready", id);
        }
        status_names(x, (const bool[4]){false, false, false, false});
}

static const struct scenario_entry scenarios[] = {
    {"batond-diverge: the replicas not in the leader's state say so, and "
     "only they",
     sc_diverged, true},
    {"batond: every node compares the leader's digests, all agree, all "
     "stay ready",
     sc_agree, true},
};

static void run_one(struct ctx *x, const struct scenario_entry *s)
{
        int64_t t0 = scenario_begin(x);

        s->fn(x);
        scenario_close(x, s, t0);
}

int main(int argc, char **argv)
{
        return scenario_main(argc, argv, "test_digest", WATCHDOG_S, scenarios,
                             sizeof scenarios / sizeof scenarios[0], run_one);
}
