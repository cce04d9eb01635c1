/*
 * A negative control of the chaos suite (docs/chaos.md), never shipped:
 * batonctl's supervision of a lock's command as it was before the
 * watchdog (src/cli/watchdog.h), built into tests/chaos/batonctl-nowatchdog
 * in place of src/cli/supervise.c. The command is batonctl's own child,
 * stopped by batonctl's loop alone: when batonctl is killed or stopped,
 * nothing stops the command, and the supervise workload's checker (S15)
 * must see it write while another holder holds the lock. The command's
 * environment is batonctl's own (lockenv.h): only the stopping differs.
 */
#include "../../src/cli/supervise.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/cli/lockenv.h"

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

static void child(const struct supervise *s)
{
        execvp(s->argv[0], s->argv);
        fprintf(stderr, "batonctl: cannot run %s: %s\n", s->argv[0],
                strerror(errno));
        _exit(errno == ENOENT ? SUPERVISE_NOT_FOUND : SUPERVISE_CANNOT);
}

int supervise_run(const struct supervise *s)
{
        struct sigaction sa = {0};
        bool stopping = false;
        int64_t kill_at = 0;
        int status;
        pid_t pid;

        lockenv_set(s->client, s->name, s->token, -1); /* no --hold */
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        pid = fork();
        if (pid < 0) {
                return SUPERVISE_FAILED;
        }
        if (pid == 0) {
                child(s);
        }
        for (;;) {
                pid_t done = waitpid(pid, &status, WNOHANG);
                int state;

                if (done == pid) {
                        break;
                }
                if (pending_signal != 0) {
                        kill(pid, pending_signal);
                        pending_signal = 0;
                }
                state = baton_session_state(s->client);
                if (!stopping && (*s->lost || state != BATON_SESSION_LIVE)) {
                        int64_t left = baton_session_remaining_ms(s->client);
                        int64_t grace = s->grace_ms;
                        /* Dead before the lease ends, whatever the grace. */
                        if (left - 50 < grace) {
                                grace = left > 50 ? left - 50 : 0;
                        }
                        fprintf(stderr,
                                "batonctl: lock %s lost (%s): stopping the "
                                "command\n",
                                s->name,
                                !*s->lost ? "session in jeopardy"
                                : state == BATON_SESSION_LIVE
                                    ? "revoked by an administrator"
                                    : "session expired");
                        kill(pid, SIGTERM);
                        stopping = true;
                        kill_at = now_ms(CLOCK_MONOTONIC) + grace;
                }
                if (stopping && now_ms(CLOCK_MONOTONIC) >= kill_at) {
                        kill(pid, SIGKILL);
                }
                usleep(10 * 1000);
        }
        if (stopping) {
                return SUPERVISE_LOST;
        }
        if (WIFSIGNALED(status)) {
                return 128 + WTERMSIG(status);
        }
        return WEXITSTATUS(status);
}
