/* Run a command while holding a lock, and stop it if the lock is lost. */
#ifndef CLI_SUPERVISE_H
#define CLI_SUPERVISE_H

#include <signal.h>
#include <stdint.h>

#include "../../include/baton.h"
#include "healthcheck.h"

/* Exit statuses of `batonctl lock` besides the command's own. */
#define SUPERVISE_LOST 121 /* lock lost: the command was stopped */
#define SUPERVISE_UNHEALTHY                                                    \
        122 /* --check failed: the command was stopped                         \
               (and then the lock released) */
#define SUPERVISE_HELD                                                         \
        123                     /* --hold ran out: the command was stopped     \
                                   (and then the lock released) */
#define SUPERVISE_NOT_TAKEN 124 /* not acquired within --wait */
#define SUPERVISE_FAILED    125 /* batonctl itself failed */
#define SUPERVISE_CANNOT    126 /* the command could not be executed */
#define SUPERVISE_NOT_FOUND 127 /* the command was not found */

struct supervise {
        baton_client *client;
        const char *name;
        uint64_t token;
        uint32_t ttl_ms;             /* the session's TTL */
        uint32_t grace_ms;           /* SIGTERM to SIGKILL, at most */
        char **argv;                 /* the command, NULL-terminated */
        volatile sig_atomic_t *lost; /* set by the on_lock_lost callback */
        struct healthcheck *check;   /* --check; NULL: none */
        /* --hold: the grant's hold time (0: none), counted from
         * hold_from, CLOCK_MONOTONIC ms when the request that started it
         * was sent (its ACQUIRE, or an EXTEND after a wait): the cluster
         * applied it after that, so its clock runs out no earlier than
         * hold_from + hold_ms. */
        uint32_t hold_ms;
        int64_t hold_from;
};

/*
 * Run argv with BATON_LOCK, BATON_TOKEN and BATON_DEADLINE_MS (wall-clock
 * ms until which the lock is held even if no further keepalive succeeds)
 * in its environment, under a watchdog process (watchdog.h), forwarding
 * SIGINT and SIGTERM to it. When the session leaves the live state
 * (jeopardy or expiry) or the lock is reported lost, the command gets
 * SIGTERM, then SIGKILL after grace_ms or 50 ms before the local lease
 * runs out, whichever is first. batonctl renews the watchdog's deadlines
 * with each acknowledged keepalive; if it cannot (killed, stopped,
 * starved), the watchdog does the same on its own just after the moment
 * the session would have gone into jeopardy, and at once when batonctl is
 * gone. Either way the command is dead before the local lease ends, and so
 * before the cluster can grant the lock to anyone else.
 *
 * With a `check`, its runs go on meanwhile (healthcheck.h); the first that
 * fails stops the command as a lost lock does, and a run under way when
 * the command ends is killed. With a `hold_ms`, the command is stopped so
 * that it is dead before the hold time can run out: SIGTERM grace_ms and
 * 50 ms before, SIGKILL 50 ms before (the watchdog's deadlines include
 * them too).
 *
 * Returns the command's exit status (128 + N when a signal N killed it),
 * SUPERVISE_LOST when it was stopped for a lost lock, SUPERVISE_UNHEALTHY
 * when it was stopped for a failed check and SUPERVISE_HELD for its hold
 * time (the lock is still held: the caller releases it), or
 * SUPERVISE_CANNOT / SUPERVISE_NOT_FOUND / SUPERVISE_FAILED.
 */
int supervise_run(const struct supervise *s);

#endif /* CLI_SUPERVISE_H */
