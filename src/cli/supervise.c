/* Run a command while holding a lock, and stop it if the lock is lost. */
#include "supervise.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lockenv.h"
#include "watchdog.h"

/* The command is sent SIGKILL this long before the local lease ends, so
 * that it is gone, not merely signalled, by then. */
#define KILL_SLACK_MS 50

/* How often batonctl looks at the session and renews the deadlines. */
#define POLL_MS 10

/* The watchdog stops the command this long after the moment batonctl
 * would, so that a batonctl that runs is always first (and says why). */
#define TERM_LATER_MS 100

/* libbaton's lease margin, as include/baton.h states it for
 * baton_session_remaining_ms(): max(TTL/10, 200 ms). Only the moment of
 * the SIGTERM depends on it, never the SIGKILL's. */
#define MARGIN_MIN_MS 200

/* Signals to pass on to the command: set by the handler, read by the loop. */
static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
        pending_signal = sig;
}

static int64_t now_ms(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* When batonctl stops the command for its hold time: the grace and
 * KILL_SLACK_MS before the hold time can run out, so that it ends on its
 * own SIGTERM's grace rather than on a SIGKILL. */
static int64_t hold_stop_at(const struct supervise *s)
{
        int64_t at = s->hold_from + s->hold_ms - KILL_SLACK_MS - s->grace_ms;

        return at > s->hold_from ? at : s->hold_from;
}

/*
 * The watchdog's deadlines, from the local lease (and the hold time) as it
 * stands: kill_at,
 * KILL_SLACK_MS before the lease ends, and term_at, the moment the session
 * goes into jeopardy when no further keepalive is acknowledged (TTL/2
 * after the send of the last acknowledged one, which is the lease's end
 * minus TTL plus the margin), when batonctl itself would stop the command,
 * plus TERM_LATER_MS. Both are CLOCK_MONOTONIC ms, libbaton's clock.
 */
static void deadlines(const struct supervise *s, int64_t *term_at,
                      int64_t *kill_at)
{
        /* The clock first, the lease second: the lease's end computed from
         * the two is then never later than libbaton's own. */
        int64_t now = now_ms(CLOCK_MONOTONIC);
        int64_t end = now + baton_session_remaining_ms(s->client);
        int64_t ttl = s->ttl_ms;
        int64_t margin = ttl / 10 > MARGIN_MIN_MS ? ttl / 10 : MARGIN_MIN_MS;

        *kill_at = end - KILL_SLACK_MS;
        *term_at = end - ttl + margin + ttl / 2 + TERM_LATER_MS;
        if (s->hold_ms != 0) {
                int64_t held_kill = s->hold_from + s->hold_ms - KILL_SLACK_MS;
                int64_t held_term = hold_stop_at(s) + TERM_LATER_MS;
                *kill_at = held_kill < *kill_at ? held_kill : *kill_at;
                *term_at = held_term < *term_at ? held_term : *term_at;
        }
        if (*term_at > *kill_at) {
                *term_at = *kill_at;
        }
}

/* Why the lock is lost, for the message. */
static const char *lost_why(const struct supervise *s, int state)
{
        if (!*s->lost) {
                return "session in jeopardy";
        }
        return state == BATON_SESSION_LIVE ? "revoked by an administrator"
                                           : "session expired";
}

/* Why the command is being stopped (supervise_run's `stopping`). */
enum stop_why {
        RUNNING = 0,
        STOP_LOST,      /* the lock is lost */
        STOP_UNHEALTHY, /* a --check run failed */
        STOP_HELD,      /* the hold time runs out */
};

/* The exit status of a command stopped for `why`. */
static int stopped_status(int why)
{
        return why == STOP_UNHEALTHY ? SUPERVISE_UNHEALTHY
               : why == STOP_HELD    ? SUPERVISE_HELD
                                     : SUPERVISE_LOST;
}

/*
 * One look at the session: pass a signal on; when the lock is lost or a
 * check failed, stop the command (once); else renew the deadlines when
 * the lease moved on.
 */
static void tick(const struct supervise *s, const struct watchdog *w,
                 int *stopping, int64_t *sent_kill_at)
{
        int64_t term_at, kill_at;
        int sig = pending_signal;
        int state;

        if (sig != 0) {
                pending_signal = 0;
                watchdog_send(w, WATCHDOG_SIGNAL, sig, 0, 0);
        }
        if (*stopping != RUNNING) {
                return;
        }
        state = baton_session_state(s->client);
        if (*s->lost || state != BATON_SESSION_LIVE) {
                fprintf(stderr,
                        "batonctl: lock %s lost (%s): stopping the command\n",
                        s->name, lost_why(s, state));
                watchdog_send(w, WATCHDOG_STOP, 0, 0, 0);
                *stopping = STOP_LOST;
                return;
        }
        if (s->check != NULL &&
            healthcheck_poll(s->check, healthcheck_now_ms())) {
                char why[128];

                healthcheck_describe(s->check, why, sizeof why);
                fprintf(stderr,
                        "batonctl: health check of lock %s failed (%s): "
                        "stopping the command, then releasing the lock\n",
                        s->name, why);
                watchdog_send(w, WATCHDOG_STOP, 0, 0, 0);
                *stopping = STOP_UNHEALTHY;
                return;
        }
        if (s->hold_ms != 0 && now_ms(CLOCK_MONOTONIC) >= hold_stop_at(s)) {
                fprintf(stderr,
                        "batonctl: hold time of lock %s (%" PRIu32
                        " ms) runs out: stopping the command, then releasing "
                        "the lock\n",
                        s->name, s->hold_ms);
                watchdog_send(w, WATCHDOG_STOP, 0, 0, 0);
                *stopping = STOP_HELD;
                return;
        }
        deadlines(s, &term_at, &kill_at);
        if (kill_at > *sent_kill_at) {
                watchdog_send(w, WATCHDOG_DEADLINE, 0, term_at, kill_at);
                *sent_kill_at = kill_at;
        }
}

/* Wait for the watchdog's answer, looking at the session meanwhile.
 * Returns whether it answered (else it died without a word). */
static bool watch(const struct supervise *s, const struct watchdog *w,
                  int64_t kill_at, int *stopping, struct watchdog_msg *m)
{
        for (;;) {
                struct pollfd pfd = {w->report_fd, POLLIN, 0};
                int ready = poll(&pfd, 1, POLL_MS);
                ssize_t n;

                if (ready == 0) {
                        tick(s, w, stopping, &kill_at);
                }
                if (ready <= 0) {
                        /* A signal, or SIGCONT after a stop: the answer
                         * may be waiting, so look again before the
                         * session. */
                        continue;
                }
                do {
                        n = read(w->report_fd, m, sizeof *m);
                } while (n < 0 && errno == EINTR);
                return n == (ssize_t)sizeof *m && m->kind == WATCHDOG_END;
        }
}

/* The exit status for the watchdog's answer (or its silent death). */
static int outcome(const struct supervise *s, const struct watchdog *w,
                   bool answered, const struct watchdog_msg *m, int stopping)
{
        int status = (int)m->a;

        if (!answered) {
                waitpid(w->pid, &status, 0);
                fprintf(stderr,
                        "batonctl: the command's watchdog (pid %d) died "
                        "(%s %d): the command was killed with it\n",
                        (int)w->pid,
                        WIFSIGNALED(status) ? "signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status)
                                            : WEXITSTATUS(status));
                return SUPERVISE_FAILED;
        }
        waitpid(w->pid, NULL, 0);
        switch (m->arg) {
        case WATCHDOG_NOFORK:
                fprintf(stderr, "batonctl: cannot start the command: %s\n",
                        strerror((int)m->a));
                return SUPERVISE_FAILED;
        case WATCHDOG_EXPIRED:
        case WATCHDOG_ORPHANED:
                if (stopping == RUNNING) {
                        fprintf(stderr,
                                "batonctl: lock %s lost (its lease was not "
                                "renewed in time: batonctl could not run): "
                                "the command was stopped\n",
                                s->name);
                }
                return SUPERVISE_LOST;
        case WATCHDOG_STOPPED:
                return stopped_status(stopping);
        default:
                break;
        }
        if (stopping != RUNNING) {
                /* It ended on its own while being stopped. */
                return stopped_status(stopping);
        }
        if (WIFSIGNALED(status)) {
                return 128 + WTERMSIG(status);
        }
        return WEXITSTATUS(status);
}

int supervise_run(const struct supervise *s)
{
        struct sigaction sa = {0};
        struct watchdog_msg m = {0};
        struct watchdog w;
        sigset_t handled, mask;
        int64_t term_at, kill_at;
        int stopping = RUNNING;
        bool answered;
        int rv;

        lockenv_set(s->client, s->name, s->token,
                    s->hold_ms != 0
                        ? s->hold_from + s->hold_ms - now_ms(CLOCK_MONOTONIC)
                        : -1);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        /* Not in the watchdog before it has handlers of its own. */
        sigemptyset(&handled);
        sigaddset(&handled, SIGINT);
        sigaddset(&handled, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &handled, &mask);
        deadlines(s, &term_at, &kill_at);
        rv = watchdog_start(&w, s->argv, s->grace_ms, term_at, kill_at, &mask);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        if (rv != 0) {
                fprintf(stderr, "batonctl: cannot start the command: %s\n",
                        strerror(errno));
                return SUPERVISE_FAILED;
        }
        answered = watch(s, &w, kill_at, &stopping, &m);
        if (s->check != NULL) {
                healthcheck_stop(s->check);
        }
        rv = outcome(s, &w, answered, &m, stopping);
        close(w.ctl_fd);
        close(w.report_fd);
        return rv;
}
