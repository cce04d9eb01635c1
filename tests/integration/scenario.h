/* The context the integration scenarios share: one cluster per size, the
 * run's TAP counters, the failure of the scenario running, and the
 * assertions and client steps every scenario is written with. */
#ifndef TESTS_INTEGRATION_SCENARIO_H
#define TESTS_INTEGRATION_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/tclient.h"
#include "harness.h"

#define OP_MS      10000 /* deadline of one client call (retries included) */
#define HEALTHY_MS 20000 /* a cluster (re)converging after a fault */
#define TTL_MS     5000  /* sessions that must outlive a failover */
#define SHORT_TTL  1000  /* sessions that are meant to expire */

/* A whole run: its TAP counters and options. */
struct run {
        unsigned tap;    /* TAP test number */
        unsigned failed; /* not ok */
        const char *argv0;
        int base_port;
        bool keep;
        const char *only; /* run only scenarios whose name contains this */
};

/* The scenarios of one cluster size: the cluster they share, and the
 * scenario running. */
struct ctx {
        struct run *run;
        struct harness h;
        unsigned n;
        bool have_cluster;
        bool diverged; /* apply logs differ: the next scenario needs a
                          fresh cluster */
        bool ok;
        unsigned names;       /* lock name counter */
        unsigned clusters;    /* clusters started and stopped */
        unsigned log_reports; /* sanitizer/assertion lines in their logs */
        uint64_t max_index;   /* highest token or index seen on this cluster */
        char why[1024];       /* first failure of the scenario */
        char rbuf[4][256];    /* for rs() */
        unsigned rk;
};

/* Fails the running scenario: prints `fmt` with `line` as a TAP comment;
 * the first failure's first line is what its TAP line says. */
void fail_at(struct ctx *x, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define EXPECT(x, cond, ...)                                                   \
        do {                                                                   \
                if (!(cond)) {                                                 \
                        fail_at(x, __LINE__, __VA_ARGS__);                     \
                        return;                                                \
                }                                                              \
        } while (0)

/* A call's outcome, for failure messages (a few may be in one message). */
const char *rs(struct ctx *x, const struct tclient_result *r);

/* Keeps the highest token or index seen on this cluster in `x`. */
void note(struct ctx *x, const struct tclient_result *r);

/* A lock name of its own for this scenario, with `what` in it. */
void lock_name(struct ctx *x, char *buf, size_t cap, const char *what);

/* A client on every endpoint with a session of `ttl` ms. */
bool client_open(struct ctx *x, struct tclient *c, uint32_t ttl, int line);

#define OPEN(x, c, ttl)                                                        \
        do {                                                                   \
                if (!client_open(x, c, ttl, __LINE__)) {                       \
                        return;                                                \
                }                                                              \
        } while (0)

/* Acquire that must be GRANTED; returns the token (0 on failure). */
uint64_t granted(struct ctx *x, struct tclient *c, const char *name,
                 uint32_t wait_ms, int line);

#define GRANT(x, var, c, name)                                                 \
        do {                                                                   \
                var = granted(x, c, name, 1000, __LINE__);                     \
                if (var == 0) {                                                \
                        return;                                                \
                }                                                              \
        } while (0)

/* Release that must be RELEASED with count 0. */
bool released(struct ctx *x, struct tclient *c, const char *name,
              uint64_t token, int line);

#define RELEASE(x, c, name, token)                                             \
        do {                                                                   \
                if (!released(x, c, name, token, __LINE__)) {                  \
                        return;                                                \
                }                                                              \
        } while (0)

/* QUERY must show `session` holding with `token` and `waiters`. */
bool holds(struct ctx *x, struct tclient *q, const char *name, uint64_t session,
           uint64_t token, uint32_t waiters, int line);

#define HOLDS(x, q, name, session, token, waiters)                             \
        do {                                                                   \
                if (!holds(x, q, name, session, token, waiters, __LINE__)) {   \
                        return;                                                \
                }                                                              \
        } while (0)

/* QUERY must show `name` FREE. */
bool is_free(struct ctx *x, struct tclient *q, const char *name, int line);

#define FREE(x, q, name)                                                       \
        do {                                                                   \
                if (!is_free(x, q, name, __LINE__)) {                          \
                        return;                                                \
                }                                                              \
        } while (0)

/* Between two polls of the cluster's state (each QUERY costs a barrier). */
void poll_pause(void);

/* Poll QUERY until `name` has `waiters` waiters (a queued ACQUIRE has been
 * applied). */
bool await_waiters(struct ctx *x, struct tclient *q, const char *name,
                   uint32_t waiters, int line);

#define WAITERS(x, q, name, n)                                                 \
        do {                                                                   \
                if (!await_waiters(x, q, name, n, __LINE__)) {                 \
                        return;                                                \
                }                                                              \
        } while (0)

/* Start a blocking ACQUIRE of `name` by `c` (its answer comes later). */
bool start_wait(struct ctx *x, struct tclient *c, const char *name,
                uint32_t wait_ms, uint64_t *seq, int line);

#define START_WAIT(x, c, name, wait_ms, seqp)                                  \
        do {                                                                   \
                if (!start_wait(x, c, name, wait_ms, seqp, __LINE__)) {        \
                        return;                                                \
                }                                                              \
        } while (0)

/* Keep `c`'s session alive through a failover: keepalive until the new
 * leader acknowledges. */
bool kept_alive(struct ctx *x, struct tclient *c, int line);

#define KEEPALIVE(x, c)                                                        \
        do {                                                                   \
                if (!kept_alive(x, c, __LINE__)) {                             \
                        return;                                                \
                }                                                              \
        } while (0)

/* kill -9 of the leader; `*id` is the node killed. */
bool kill_leader(struct ctx *x, unsigned *id, int line);

#define KILL_LEADER(x, idp)                                                    \
        do {                                                                   \
                if (!kill_leader(x, idp, __LINE__)) {                          \
                        return;                                                \
                }                                                              \
        } while (0)

/* Restart node `id` and wait until the cluster is healthy again. */
bool restarted(struct ctx *x, unsigned id, int line);

#define RESTART(x, id)                                                         \
        do {                                                                   \
                if (!restarted(x, id, __LINE__)) {                             \
                        return;                                                \
                }                                                              \
        } while (0)

/* A follower's id (not `leader`, running), or 0. */
unsigned a_follower(struct ctx *x, unsigned leader);

/* Room for one node's metrics text. */
#define METRICS_MAX (256 * 1024)

/* Fetch node `id`'s metrics into `text` (METRICS_MAX bytes), check that
 * they are Prometheus text, and read the value of `series` into `*v`. */
bool scrape(struct ctx *x, unsigned id, char *text, const char *series,
            double *v, int line);

/* Frees `text` when the scrape fails. */
#define SCRAPE(x, id, text, series, v)                                         \
        do {                                                                   \
                if (!scrape(x, id, text, series, v, __LINE__)) {               \
                        free(text);                                            \
                        return;                                                \
                }                                                              \
        } while (0)

/* The value of `series` in node `id`'s metrics (scrape() on a buffer of
 * its own). */
bool metric(struct ctx *x, unsigned id, const char *series, double *v,
            int line);

/* Stop every node in turn and start it again with `flags` (n of them; 0:
 * none), the cluster healthy again after each: one node down at a time,
 * so the cluster serves throughout. */
bool restart_all(struct ctx *x, const char *const *flags, unsigned n, int line);

/* Whether the file at `path` has a line with `needle` in it (lines are
 * read 1,023 bytes at a time). */
bool file_has(const char *path, const char *needle);

/* Whether the log of node `id` has a line with `needle` in it. */
bool log_has(struct ctx *x, unsigned id, const char *needle);

/* Start node `id` again with `flags` (n of them, as harness_set_flags()),
 * SIGTERMing it first and waiting for its exit when `stop` (else it is
 * stopped already); a failure fails the scenario at `line`. */
bool scenario_restart(struct ctx *x, unsigned id, const char *const *flags,
                      unsigned n, bool stop, int line);

#define RESTART_WITH(x, id, flags, n, stop)                                    \
        do {                                                                   \
                if (!scenario_restart(x, id, flags, n, stop, __LINE__)) {      \
                        return;                                                \
                }                                                              \
        } while (0)

/* --- A program of scenarios ----------------------------------------------- */

/* One scenario of a program that runs a list of them in turn: its TAP
 * name, its body, and whether the body starts and closes a cluster of
 * its own rather than being given one. */
struct scenario_entry {
        const char *name;
        void (*fn)(struct ctx *x);
        bool own_cluster;
};

/*
 * The main() of such a program (`prog` in its usage line): --only TEXT
 * (the scenarios whose name has TEXT) and --keep (every cluster's
 * directory kept), the watchdog ($BATON_TEST_WATCHDOG, else `watchdog_s`
 * seconds, for each scenario), the plan, `run_one` for each scenario
 * selected, on one context of 3 nodes, the cluster it left open closed,
 * and a comment with the failures. Returns the exit status (2: a bad
 * argument).
 */
int scenario_main(int argc, char **argv, const char *prog, unsigned watchdog_s,
                  const struct scenario_entry *list, unsigned n,
                  void (*run_one)(struct ctx *x,
                                  const struct scenario_entry *s));

/* The start of a scenario: the watchdog rearmed, no failure yet. Returns
 * the time it began (tclient_now_ms()), for scenario_close(). */
int64_t scenario_begin(struct ctx *x);

/* The end of a scenario that had its cluster to itself (begun at `t0`,
 * tclient_now_ms()): a node that exited on its own fails it, its TAP line
 * says how it went, and the cluster is closed (kept when it failed). */
void scenario_close(struct ctx *x, const struct scenario_entry *s, int64_t t0);

#endif /* TESTS_INTEGRATION_SCENARIO_H */
