/* A health command run again and again beside a held lock (`batonctl lock
 * --check CMD`): the client-side half of a session bound to its owner's
 * health, as Consul's script checks are on the agent. */
#ifndef CLI_HEALTHCHECK_H
#define CLI_HEALTHCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Why on the client: the cluster sees a session's keepalives, not whether
 * the program behind them is well; only something beside the program can
 * ask. What a failed check guarantees is batonctl's ordering: the command
 * is stopped first, the lock released after it has ended, so nobody else
 * holds the lock while the unhealthy command still runs. A batonctl that
 * cannot run its checks (stopped, killed) falls back on the lease: the
 * watchdog stops the command and the session expires as without --check.
 *
 * Each run is `/bin/sh -c CMD` in a process group of its own (a timeout
 * kills the whole group), with batonctl's environment (BATON_LOCK,
 * BATON_TOKEN...), stdin from /dev/null, and its stdout on batonctl's
 * stderr, so that it never mixes with the command's output. A run
 * passes when it exits 0 within `timeout_ms`; anything else fails.
 * Runs never overlap: the next starts `interval_ms` after the start of
 * the one before, or when it ends if it took longer.
 *
 * Every time is CLOCK_MONOTONIC ms. Single-threaded, no callbacks: the
 * caller polls.
 */

/* The largest --check-interval and --check-timeout, ms: a day. */
#define HEALTHCHECK_MAX_MS 86400000u
/* The smallest: checks every few ms would be a fork bomb, not a check. */
#define HEALTHCHECK_MIN_MS 100u

/* How a finished run failed (struct healthcheck.failed). */
enum healthcheck_failure {
        HEALTHCHECK_PASSED = 0,
        HEALTHCHECK_EXIT,    /* exited non-zero: `status` */
        HEALTHCHECK_SIGNAL,  /* killed by signal `status` */
        HEALTHCHECK_TIMEOUT, /* still running after timeout_ms: killed */
        HEALTHCHECK_NOSTART, /* could not be started: errno `status` */
};

struct healthcheck {
        const char *cmd; /* borrowed */
        uint32_t interval_ms;
        uint32_t timeout_ms;
        pid_t pid;          /* the run under way; 0: none */
        int64_t started_at; /* its start */
        int64_t next_at;    /* when the next run starts */
        unsigned runs;      /* runs finished */
        int failed;         /* enum healthcheck_failure of the last run */
        int status;         /* its detail (see the enum) */
};

/* A check of `cmd` whose first run is due `first_in_ms` from now. */
void healthcheck_init(struct healthcheck *h, const char *cmd,
                      uint32_t interval_ms, uint32_t timeout_ms,
                      uint32_t first_in_ms);

/* The clock of the check, CLOCK_MONOTONIC ms. */
int64_t healthcheck_now_ms(void);

/*
 * Move the check on to `now`: reap a run that ended, kill one past its
 * timeout, start one that is due. Never blocks. Returns true when a run
 * has just failed (h->failed says how); the caller acts on the first
 * failure and need not poll again.
 */
bool healthcheck_poll(struct healthcheck *h, int64_t now);

/* One run now, to its end or its timeout (blocking, sleeping between
 * looks): true when it passed. */
bool healthcheck_once(struct healthcheck *h);

/* Kill and reap a run under way, if any. */
void healthcheck_stop(struct healthcheck *h);

/* The last failure in words ("exited with status 3", "timed out after
 * 500 ms"...), into `buf`. */
void healthcheck_describe(const struct healthcheck *h, char *buf, size_t cap);

#endif /* CLI_HEALTHCHECK_H */
