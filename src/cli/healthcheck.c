/* A health command run again and again beside a held lock. */
#include "healthcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often healthcheck_once() looks at its run. */
#define ONCE_POLL_MS 5

int64_t healthcheck_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void healthcheck_init(struct healthcheck *h, const char *cmd,
                      uint32_t interval_ms, uint32_t timeout_ms,
                      uint32_t first_in_ms)
{
        memset(h, 0, sizeof *h);
        h->cmd = cmd;
        h->interval_ms = interval_ms;
        h->timeout_ms = timeout_ms;
        h->next_at = healthcheck_now_ms() + first_in_ms;
}

/* The child's side: only async-signal-safe calls, for the parent may
 * have threads (libbaton's). */
static void run_child(const char *cmd)
{
        sigset_t none;
        int null = open("/dev/null", O_RDONLY);

        setpgid(0, 0);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (null >= 0) {
                dup2(null, STDIN_FILENO);
        }
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
}

static void start(struct healthcheck *h, int64_t now)
{
        pid_t pid = fork();

        if (pid == 0) {
                run_child(h->cmd);
        }
        h->started_at = now;
        h->next_at = now + h->interval_ms;
        if (pid < 0) {
                h->failed = HEALTHCHECK_NOSTART;
                h->status = errno;
                h->runs++;
                return;
        }
        /* Also here: a kill before the child ran its setpgid must reach
         * the group all the same. */
        setpgid(pid, pid);
        h->pid = pid;
}

/* The run ended with wait status `st`. */
static void finished(struct healthcheck *h, int st)
{
        h->pid = 0;
        h->runs++;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                h->failed = HEALTHCHECK_PASSED;
        } else if (WIFEXITED(st)) {
                h->failed = HEALTHCHECK_EXIT;
                h->status = WEXITSTATUS(st);
        } else {
                h->failed = HEALTHCHECK_SIGNAL;
                h->status = WTERMSIG(st);
        }
}

static void kill_run(struct healthcheck *h)
{
        kill(-h->pid, SIGKILL);
        kill(h->pid, SIGKILL);
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR) {
        }
        h->pid = 0;
}

bool healthcheck_poll(struct healthcheck *h, int64_t now)
{
        int st;
        pid_t r;

        if (h->pid != 0) {
                do {
                        r = waitpid(h->pid, &st, WNOHANG);
                } while (r < 0 && errno == EINTR);
                if (r == h->pid) {
                        finished(h, st);
                        return h->failed != HEALTHCHECK_PASSED;
                }
                if (now - h->started_at < (int64_t)h->timeout_ms) {
                        return false;
                }
                kill_run(h);
                h->runs++;
                h->failed = HEALTHCHECK_TIMEOUT;
                return true;
        }
        if (now < h->next_at) {
                return false;
        }
        start(h, now);
        return h->failed == HEALTHCHECK_NOSTART;
}

bool healthcheck_once(struct healthcheck *h)
{
        struct timespec pause = {0, ONCE_POLL_MS * 1000000L};
        unsigned runs = h->runs;

        h->next_at = healthcheck_now_ms();
        while (!healthcheck_poll(h, healthcheck_now_ms())) {
                if (h->runs > runs) {
                        return true; /* passed */
                }
                nanosleep(&pause, NULL);
        }
        return false;
}

void healthcheck_stop(struct healthcheck *h)
{
        if (h->pid != 0) {
                kill_run(h);
        }
}

void healthcheck_describe(const struct healthcheck *h, char *buf, size_t cap)
{
        switch (h->failed) {
        case HEALTHCHECK_EXIT:
                snprintf(buf, cap, "exited with status %d", h->status);
                break;
        case HEALTHCHECK_SIGNAL:
                snprintf(buf, cap, "was killed by signal %d (%s)", h->status,
                         strsignal(h->status));
                break;
        case HEALTHCHECK_TIMEOUT:
                snprintf(buf, cap, "timed out after %u ms (killed)",
                         h->timeout_ms);
                break;
        case HEALTHCHECK_NOSTART:
                snprintf(buf, cap, "could not be started: %s",
                         strerror(h->status));
                break;
        default:
                snprintf(buf, cap, "passed");
                break;
        }
}
