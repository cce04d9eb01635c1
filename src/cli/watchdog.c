/* The command's watchdog: a process between batonctl and the command of
 * `lock -- CMD` that stops the command when its lease deadline comes
 * unless batonctl renews it, and at once when batonctl is gone. */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses of a command that cannot be executed, as a shell's. */
#define EXEC_CANNOT    126
#define EXEC_NOT_FOUND 127

/* batonctl's process forks the watchdog while libbaton's thread runs, so
 * the watchdog, and the command up to its exec, call only
 * async-signal-safe functions (no stdio, no malloc), as a child of a
 * threaded process must; strerror() for a failed exec's one message is
 * the exception, as batonctl's child always had it. */

/* The signals an operator, a terminal or systemd sends to the whole
 * process group: the command gets them itself (batonctl passes SIGINT
 * and SIGTERM on too), and the watchdog must live on to give the
 * command its grace and report how it ended. */
static const int group_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_signal(int sig)
{
        (void)sig; /* SIGCHLD wakes ppoll(); the others are the command's */
}

/* Give the group's signals and SIGCHLD `handler`: on_signal in the
 * watchdog, and SIG_DFL again in the command, so that the command gets
 * back exactly the dispositions the watchdog changed. */
static void handle(void (*handler)(int))
{
        struct sigaction sa = {0};
        size_t i;

        sa.sa_handler = handler;
        for (i = 0; i < sizeof group_signals / sizeof group_signals[0]; i++) {
                sigaction(group_signals[i], &sa, NULL);
        }
        sigaction(SIGCHLD, &sa, NULL);
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The watchdog's state. */
struct wd {
        pid_t child;
        int ctl_fd; /* -1 once batonctl is gone */
        int report_fd;
        uint32_t grace_ms;
        int64_t term_at, kill_at;
        int64_t sigkill_at; /* once stopping: SIGTERM + grace, <= kill_at */
        int how;            /* enum watchdog_how */
        bool killed;        /* SIGKILL sent */
        char buf[sizeof(struct watchdog_msg)];
        size_t have; /* bytes of a message read so far */
};

/* "batonctl: cannot run CMD: REASON", in one write(2) and without stdio
 * (see above). */
static void say_cannot_run(const char *cmd, int err)
{
        const char *parts[] = {"batonctl: cannot run ", cmd, ": ",
                               strerror(err), "\n"};
        char line[512];
        size_t n = 0, i;

        for (i = 0; i < sizeof parts / sizeof parts[0]; i++) {
                size_t len = strlen(parts[i]);
                if (len > sizeof line - n) {
                        len = sizeof line - n;
                }
                memcpy(line + n, parts[i], len);
                n += len;
        }
        if (write(2, line, n) < 0) {
                return; /* nowhere else to say it */
        }
}

/* The command, in the watchdog's child: dies with the watchdog, gets the
 * signal dispositions and mask batonctl had, and execs. */
static void command(char **argv, pid_t watchdog, const sigset_t *mask)
{
        int err;

        handle(SIG_DFL);
        /* The watchdog may have died between fork() and prctl(): then
         * nobody would stop the command, so it must not run. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != watchdog) {
                _exit(EXEC_CANNOT);
        }
        sigprocmask(SIG_SETMASK, mask, NULL);
        execvp(argv[0], argv);
        err = errno;
        say_cannot_run(argv[0], err);
        _exit(err == ENOENT ? EXEC_NOT_FOUND : EXEC_CANNOT);
}

/* Stop the command: SIGTERM now, SIGKILL after the grace but never after
 * kill_at. The first reason counts. */
static void stop(struct wd *w, int how, int64_t now)
{
        if (w->how != WATCHDOG_EXITED) {
                return;
        }
        w->how = how;
        kill(w->child, SIGTERM);
        w->sigkill_at = now + w->grace_ms;
        if (w->sigkill_at > w->kill_at) {
                w->sigkill_at = w->kill_at;
        }
}

static void order(struct wd *w, const struct watchdog_msg *m, int64_t now)
{
        switch (m->kind) {
        case WATCHDOG_DEADLINE:
                if (w->how == WATCHDOG_EXITED) {
                        w->term_at = m->a;
                        w->kill_at = m->b;
                } else if (m->b < w->kill_at) {
                        /* Once stopping, a deadline only comes closer. */
                        w->kill_at = m->b;
                        if (w->sigkill_at > w->kill_at) {
                                w->sigkill_at = w->kill_at;
                        }
                }
                break;
        case WATCHDOG_STOP:
                stop(w, WATCHDOG_STOPPED, now);
                break;
        case WATCHDOG_SIGNAL:
                if (m->arg > 0 && m->arg < NSIG) {
                        kill(w->child, m->arg);
                }
                break;
        default:
                break;
        }
}

/* Read what batonctl sent; its end closed means it is gone. */
static void read_orders(struct wd *w)
{
        for (;;) {
                ssize_t n =
                    read(w->ctl_fd, w->buf + w->have, sizeof w->buf - w->have);
                if (n < 0 && errno == EINTR) {
                        continue;
                }
                if (n < 0 && errno == EAGAIN) {
                        return;
                }
                if (n <= 0) {
                        close(w->ctl_fd);
                        w->ctl_fd = -1;
                        stop(w, WATCHDOG_ORPHANED, now_ms());
                        return;
                }
                w->have += (size_t)n;
                if (w->have == sizeof w->buf) {
                        struct watchdog_msg m;
                        memcpy(&m, w->buf, sizeof m);
                        w->have = 0;
                        order(w, &m, now_ms());
                }
        }
}

/* Act on the clock: SIGTERM at term_at, SIGKILL when due. Returns the ms
 * until the next thing to do, -1 for none (only the command's end). */
static int act(struct wd *w, int64_t now)
{
        int64_t next;

        if (w->how == WATCHDOG_EXITED && now >= w->term_at) {
                stop(w, WATCHDOG_EXPIRED, now);
        }
        if (!w->killed && (now >= w->kill_at || (w->how != WATCHDOG_EXITED &&
                                                 now >= w->sigkill_at))) {
                kill(w->child, SIGKILL);
                w->killed = true;
        }
        if (w->killed) {
                return -1;
        }
        next = w->how == WATCHDOG_EXITED ? w->term_at : w->sigkill_at;
        if (w->kill_at < next) {
                next = w->kill_at;
        }
        next -= now;
        return next < 1 ? 1 : next > 60000 ? 60000 : (int)next;
}

static void report(const struct wd *w, int how, int status)
{
        struct watchdog_msg m = {WATCHDOG_END, how, status, 0};

        /* batonctl may be gone: SIGPIPE is ignored, the error harmless. */
        if (write(w->report_fd, &m, sizeof m) < 0) {
                return;
        }
}

/* The watchdog process: start the command, then watch it to its end. */
static void run(struct wd *w, char **argv, const sigset_t *mask)
{
        sigset_t all, waiting;
        pid_t self;

        handle(on_signal);
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        self = getpid();
        w->child = fork();
        if (w->child < 0) {
                report(w, WATCHDOG_NOFORK, errno);
                _exit(1);
        }
        if (w->child == 0) {
                close(w->ctl_fd);
                close(w->report_fd);
                command(argv, self, mask);
        }
        /* From here, SIGCHLD only inside ppoll(): no wake-up is missed
         * between a waitpid() that finds nothing and the wait. */
        sigemptyset(&all);
        sigaddset(&all, SIGCHLD);
        sigprocmask(SIG_SETMASK, &all, NULL);
        sigemptyset(&waiting);
        for (;;) {
                struct pollfd pfd = {w->ctl_fd, POLLIN, 0};
                struct timespec ts, *tp = NULL;
                int status, ms;

                if (waitpid(w->child, &status, WNOHANG) == w->child) {
                        report(w, w->how, status);
                        _exit(0);
                }
                ms = act(w, now_ms());
                if (ms >= 0) {
                        ts.tv_sec = ms / 1000;
                        ts.tv_nsec = (long)(ms % 1000) * 1000000;
                        tp = &ts;
                }
                if (ppoll(&pfd, w->ctl_fd >= 0 ? 1 : 0, tp, &waiting) > 0 &&
                    w->ctl_fd >= 0) {
                        read_orders(w);
                }
        }
}

int watchdog_start(struct watchdog *w, char **argv, uint32_t grace_ms,
                   int64_t term_at, int64_t kill_at, const sigset_t *mask)
{
        int ctl[2], rep[2];
        struct wd d;

        if (pipe2(ctl, O_CLOEXEC) != 0) {
                return -1;
        }
        if (pipe2(rep, O_CLOEXEC) != 0) {
                goto err_after_ctl;
        }
        memset(&d, 0, sizeof d);
        d.ctl_fd = ctl[0];
        d.report_fd = rep[1];
        d.grace_ms = grace_ms;
        d.term_at = term_at < kill_at ? term_at : kill_at;
        d.kill_at = kill_at;
        d.how = WATCHDOG_EXITED;
        w->pid = fork();
        if (w->pid < 0) {
                goto err_after_rep;
        }
        if (w->pid == 0) {
                close(ctl[1]);
                close(rep[0]);
                fcntl(d.ctl_fd, F_SETFL, O_NONBLOCK);
                run(&d, argv, mask);
        }
        close(ctl[0]);
        close(rep[1]);
        fcntl(ctl[1], F_SETFL, O_NONBLOCK);
        w->ctl_fd = ctl[1];
        w->report_fd = rep[0];
        return 0;

err_after_rep:
        close(rep[0]);
        close(rep[1]);
err_after_ctl:
        close(ctl[0]);
        close(ctl[1]);
        return -1;
}

void watchdog_send(const struct watchdog *w, int kind, int arg, int64_t a,
                   int64_t b)
{
        struct watchdog_msg m = {kind, arg, a, b};
        ssize_t n;

        do {
                n = write(w->ctl_fd, &m, sizeof m);
        } while (n < 0 && errno == EINTR);
}
