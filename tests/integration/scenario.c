/* The integration scenarios' context: assertions and client steps. */
#include "scenario.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/baton.h"
#include "prom.h"

/* --- Assertions ----------------------------------------------------------- */

void fail_at(struct ctx *x, int line, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        printf("# line %d: %s\n", line, msg);
        fflush(stdout);
        if (x->ok) {
                /* The TAP line gets the first line; the rest is above. */
                snprintf(x->why, sizeof x->why, "%.*s", (int)strcspn(msg, "\n"),
                         msg);
        }
        x->ok = false;
}

/* A call's outcome, for failure messages (a few may be in one message). */
const char *rs(struct ctx *x, const struct tclient_result *r)
{
        x->rk = (x->rk + 1) % 4;
        return tclient_result_str(r, x->rbuf[x->rk], sizeof x->rbuf[x->rk]);
}

void note(struct ctx *x, const struct tclient_result *r)
{
        if (r->token > x->max_index) {
                x->max_index = r->token;
        }
        if (r->index > x->max_index) {
                x->max_index = r->index;
        }
}

/* --- Helpers ----------------------------------------------------------------
 */

void lock_name(struct ctx *x, char *buf, size_t cap, const char *what)
{
        snprintf(buf, cap, "it-%u-%s-%u", x->n, what, ++x->names);
}

/* A client on every endpoint with a session of `ttl` ms. */
bool client_open(struct ctx *x, struct tclient *c, uint32_t ttl, int line)
{
        struct tclient_result res;
        int rv;

        if (tclient_init(c, x->h.endpoints) != 0) {
                fail_at(x, line, "tclient_init(%s) failed", x->h.endpoints);
                return false;
        }
        rv = tclient_session_open(c, ttl, "integration", OP_MS, &res);
        if (rv != 0 || res.kind != PROTO_KIND_OPENED || res.session == 0) {
                fail_at(x, line, "OPEN ttl %u: %d %s (%s)", ttl, rv,
                        rs(x, &res), c->errmsg);
                return false;
        }
        note(x, &res);
        return true;
}

/* Acquire that must be GRANTED; returns the token (0 on failure). */
uint64_t granted(struct ctx *x, struct tclient *c, const char *name,
                 uint32_t wait_ms, int line)
{
        struct tclient_result res;
        int rv = tclient_acquire(c, name, 1, wait_ms, OP_MS, &res);

        if (rv != 0 || res.kind != PROTO_KIND_GRANTED || res.token == 0 ||
            res.token != res.index || res.session != c->session) {
                fail_at(x, line, "ACQUIRE %s: %d %s (%s)", name, rv,
                        rs(x, &res), c->errmsg);
                return 0;
        }
        note(x, &res);
        return res.token;
}

bool released(struct ctx *x, struct tclient *c, const char *name,
              uint64_t token, int line)
{
        struct tclient_result res;
        int rv = tclient_release(c, name, 1, token, OP_MS, &res);

        if (rv != 0 || res.kind != PROTO_KIND_RELEASED || res.token != token ||
            res.count != 0) {
                fail_at(x, line, "RELEASE %s token %" PRIu64 ": %d %s (%s)",
                        name, token, rv, rs(x, &res), c->errmsg);
                return false;
        }
        note(x, &res);
        return true;
}

/* QUERY must show `session` holding with `token` and `waiters`. */
bool holds(struct ctx *x, struct tclient *q, const char *name, uint64_t session,
           uint64_t token, uint32_t waiters, int line)
{
        struct tclient_result res;
        int rv = tclient_query(q, name, OP_MS, &res);

        if (rv != 0 || res.kind != PROTO_KIND_HOLDER ||
            res.session != session || res.token != token || res.count != 1 ||
            res.waiters != waiters) {
                fail_at(x, line,
                        "QUERY %s: %d %s, expected holder %" PRIu64
                        " token %" PRIu64 " count 1 waiters %u (%s)",
                        name, rv, rs(x, &res), session, token, waiters,
                        q->errmsg);
                return false;
        }
        return true;
}

bool is_free(struct ctx *x, struct tclient *q, const char *name, int line)
{
        struct tclient_result res;
        int rv = tclient_query(q, name, OP_MS, &res);

        if (rv != 0 || res.kind != PROTO_KIND_FREE) {
                fail_at(x, line, "QUERY %s: %d %s, expected FREE (%s)", name,
                        rv, rs(x, &res), q->errmsg);
                return false;
        }
        return true;
}

/* Between two polls of the cluster's state (each QUERY costs a barrier). */
void poll_pause(void)
{
        struct timespec ts = {0, 10 * 1000000};

        nanosleep(&ts, NULL);
}

/* Poll QUERY until `name` has `waiters` waiters (a queued ACQUIRE has been
 * applied). */
bool await_waiters(struct ctx *x, struct tclient *q, const char *name,
                   uint32_t waiters, int line)
{
        int64_t deadline = tclient_now_ms() + OP_MS;
        struct tclient_result res;
        int rv;

        do {
                rv = tclient_query(q, name, OP_MS, &res);
                if (rv == 0 && res.waiters == waiters) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < deadline);
        fail_at(x, line, "QUERY %s never showed %u waiters: %d %s", name,
                waiters, rv, rs(x, &res));
        return false;
}

/* Start a blocking ACQUIRE of `name` by `c` (its answer comes later). */
bool start_wait(struct ctx *x, struct tclient *c, const char *name,
                uint32_t wait_ms, uint64_t *seq, int line)
{
        struct command k;
        int rv;

        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.owner = 1;
        k.wait_ms = wait_ms;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        rv = tclient_start(c, &k, seq);
        if (rv != 0) {
                fail_at(x, line, "start ACQUIRE %s: %d (%s)", name, rv,
                        c->errmsg);
                return false;
        }
        return true;
}

/* Keep `c`'s session alive through a failover: keepalive until the new
 * leader acknowledges. */
bool kept_alive(struct ctx *x, struct tclient *c, int line)
{
        uint32_t ttl = 0;
        int rv = tclient_keepalive(c, HEALTHY_MS, &ttl);

        if (rv != 0 || ttl != c->ttl_ms) {
                fail_at(x, line,
                        "KEEPALIVE session %" PRIu64 ": %d ttl %u (%s)",
                        c->session, rv, ttl, c->errmsg);
                return false;
        }
        return true;
}

bool kill_leader(struct ctx *x, unsigned *id, int line)
{
        if (harness_kill_leader(&x->h, HEALTHY_MS, id, NULL) != 0) {
                fail_at(x, line, "kill leader: %s", x->h.errmsg);
                return false;
        }
        printf("# killed leader %u (kill -9)\n", *id);
        return true;
}

bool restarted(struct ctx *x, unsigned id, int line)
{
        unsigned leader;

        if (harness_restart(&x->h, id) != 0 ||
            harness_wait_healthy(&x->h, HEALTHY_MS, &leader) != 0) {
                fail_at(x, line, "restart node %u: %s", id, x->h.errmsg);
                return false;
        }
        printf("# node %u restarted; leader is %u\n", id, leader);
        return true;
}

/* A follower's id (not `leader`, running), or 0. */
unsigned a_follower(struct ctx *x, unsigned leader)
{
        unsigned i;

        for (i = 1; i <= x->n; i++) {
                if (i != leader && harness_running(&x->h, i)) {
                        return i;
                }
        }
        return 0;
}

/* Fetch node `id`'s metrics, check the format, and read one value. */
bool scrape(struct ctx *x, unsigned id, char *text, const char *series,
            double *v, int line)
{
        char why[256];
        unsigned samples;
        long len = harness_metrics(&x->h, id, text, METRICS_MAX, OP_MS);

        if (len < 0) {
                fail_at(x, line, "%s", x->h.errmsg);
                return false;
        }
        if (!prom_valid(text, &samples, why, sizeof why)) {
                fail_at(x, line,
                        "node %u's metrics are not Prometheus text: %s", id,
                        why);
                return false;
        }
        if (!prom_value(text, series, v)) {
                fail_at(x, line, "node %u's metrics have no %s", id, series);
                return false;
        }
        return true;
}

bool restart_all(struct ctx *x, const char *const *flags, unsigned n, int line)
{
        unsigned i;

        for (i = 1; i <= x->n; i++) {
                if (harness_set_flags(&x->h, i, flags, n) != 0 ||
                    harness_term(&x->h, i, NULL) != 0 ||
                    harness_wait_exit(&x->h, i, HEALTHY_MS, NULL) != 0 ||
                    harness_restart(&x->h, i) != 0 ||
                    harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0) {
                        fail_at(x, line, "restart of node %u: %s", i,
                                x->h.errmsg);
                        return false;
                }
        }
        return true;
}

bool metric(struct ctx *x, unsigned id, const char *series, double *v, int line)
{
        char *text = malloc(METRICS_MAX);
        bool ok;

        if (text == NULL) {
                fail_at(x, line, "out of memory");
                return false;
        }
        ok = scrape(x, id, text, series, v, line);
        free(text);
        return ok;
}

bool file_has(const char *path, const char *needle)
{
        FILE *f = fopen(path, "r");
        char line[1024];
        bool found = false;

        while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
                found = strstr(line, needle) != NULL;
        }
        if (f != NULL) {
                fclose(f);
        }
        return found;
}

bool log_has(struct ctx *x, unsigned id, const char *needle)
{
        return file_has(x->h.nodes[id - 1].log_path, needle);
}

/* --- A program of scenarios ----------------------------------------------- */

static bool selected(const struct run *r, const struct scenario_entry *s)
{
        return r->only == NULL || strstr(s->name, r->only) != NULL;
}

int scenario_main(int argc, char **argv, const char *prog, unsigned watchdog_s,
                  const struct scenario_entry *list, unsigned n,
                  void (*run_one)(struct ctx *x,
                                  const struct scenario_entry *s))
{
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        struct run r;
        struct ctx x;
        unsigned i, planned = 0;
        int a;

        memset(&r, 0, sizeof r);
        r.argv0 = argv[0];
        for (a = 1; a < argc; a++) {
                if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) {
                        r.only = argv[++a];
                } else if (strcmp(argv[a], "--keep") == 0) {
                        r.keep = true;
                } else {
                        fprintf(stderr, "usage: %s [--only TEXT] [--keep]\n",
                                prog);
                        return 2;
                }
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : watchdog_s);
        for (i = 0; i < n; i++) {
                planned += selected(&r, &list[i]);
        }
        printf("1..%u\n", planned);
        memset(&x, 0, sizeof x);
        x.run = &r;
        x.n = 3;
        for (i = 0; i < n; i++) {
                if (selected(&r, &list[i])) {
                        run_one(&x, &list[i]);
                }
        }
        if (x.have_cluster) {
                harness_close(&x.h);
        }
        printf("# %u of %u failed\n", r.failed, planned);
        return r.failed == 0 ? 0 : 1;
}

int64_t scenario_begin(struct ctx *x)
{
        harness_rearm_watchdog();
        x->ok = true;
        x->why[0] = '\0';
        return tclient_now_ms();
}

void scenario_close(struct ctx *x, const struct scenario_entry *s, int64_t t0)
{
        harness_reap(&x->h);
        if (x->ok && x->h.unexpected_exits > 0) {
                fail_at(x, __LINE__, "a node of the cluster exited on its own");
        }
        x->run->tap++;
        if (x->ok) {
                printf("ok %u - %s (%" PRId64 " ms)\n", x->run->tap, s->name,
                       tclient_now_ms() - t0);
        } else {
                x->run->failed++;
                x->h.failed = true;
                printf("not ok %u - %s: %s\n", x->run->tap, s->name, x->why);
        }
        fflush(stdout);
        harness_close(&x->h);
}

bool scenario_restart(struct ctx *x, unsigned id, const char *const *flags,
                      unsigned n, bool stop, int line)
{
        if ((stop && (harness_term(&x->h, id, NULL) != 0 ||
                      harness_wait_exit(&x->h, id, HEALTHY_MS, NULL) != 0)) ||
            harness_set_flags(&x->h, id, flags, n) != 0 ||
            harness_restart(&x->h, id) != 0) {
                fail_at(x, line, "restarting node %u: %s", id, x->h.errmsg);
                return false;
        }
        return true;
}
