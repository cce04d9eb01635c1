/* A program run by a test as its child, with the arguments it is given:
 * its exit status, standard output and error, and how long it took, every
 * wait bounded; and what /proc says of a process. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tclient.h"

#define DRAIN_MS 200 /* silence that ends the reading after an exit */

/* In the child, between fork and exec: never returns. */
static void exec_child(const char *prog, unsigned flags, char *const *argv,
                       const int out[2], const int err[2])
{
        if ((flags & PROC_OWN_GROUP) != 0) {
                int null = open("/dev/null", O_RDONLY);
                setpgid(0, 0);
                dup2(null, 0);
                close(null);
        }
        if ((flags & PROC_NO_TLS_ENV) != 0) {
                unsetenv("BATON_CACERT");
                unsetenv("BATON_CERT");
                unsetenv("BATON_KEY");
        }
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(out[1]);
        close(err[0]);
        close(err[1]);
        execv(prog, argv);
        fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
        _exit(99);
}

int proc_start(struct proc *p, const char *prog, unsigned flags,
               const char *const *head, const char *const *args)
{
        const char *argv[PROC_MAX_ARGS + 1];
        int out[2], err[2];
        unsigned n = 0;

        memset(p, 0, sizeof *p);
        p->status = -1;
        p->out_fd = p->err_fd = -1;
        argv[n++] = prog;
        while (head != NULL && *head != NULL && n < PROC_MAX_ARGS) {
                argv[n++] = *head++;
        }
        while (*args != NULL && n < PROC_MAX_ARGS) {
                argv[n++] = *args++;
        }
        argv[n] = NULL;
        if (pipe(out) != 0) {
                return -1;
        }
        if (pipe(err) != 0) {
                close(out[0]);
                close(out[1]);
                return -1;
        }
        fflush(stdout); /* nothing of ours printed twice */
        p->started_ms = tclient_now_ms();
        p->pid = fork();
        if (p->pid == 0) {
                exec_child(prog, flags, (char *const *)argv, out, err);
        }
        close(out[1]);
        close(err[1]);
        if (p->pid < 0) {
                close(out[0]);
                close(err[0]);
                return -1;
        }
        if ((flags & PROC_OWN_GROUP) != 0) {
                setpgid(p->pid, p->pid); /* before we signal the group */
        }
        p->out_fd = out[0];
        p->err_fd = err[0];
        return 0;
}

void proc_read(struct proc *p, int timeout_ms)
{
        struct pollfd fds[2] = {{p->out_fd, POLLIN, 0}, {p->err_fd, POLLIN, 0}};
        int i;

        if (poll(fds, 2, timeout_ms) <= 0) {
                return;
        }
        for (i = 0; i < 2; i++) {
                char *buf = i == 0 ? p->out : p->err;
                size_t *len = i == 0 ? &p->n_out : &p->n_err;
                bool full = *len == PROC_OUT_MAX - 1;
                char spill[4096];
                ssize_t r;

                if (fds[i].fd < 0 ||
                    (fds[i].revents & (POLLIN | POLLHUP)) == 0) {
                        continue;
                }
                /* Past the buffer, read on and drop it: a pipe we closed
                 * would kill the child with SIGPIPE. */
                r = full ? read(fds[i].fd, spill, sizeof spill)
                         : read(fds[i].fd, buf + *len, PROC_OUT_MAX - 1 - *len);
                if (r > 0 && full) {
                        p->n_dropped += (size_t)r;
                } else if (r > 0) {
                        *len += (size_t)r;
                        buf[*len] = '\0';
                } else {
                        close(fds[i].fd);
                        if (i == 0) {
                                p->out_fd = -1;
                        } else {
                                p->err_fd = -1;
                        }
                }
        }
}

bool proc_wait_line(struct proc *p, int timeout_ms)
{
        int64_t end = tclient_now_ms() + timeout_ms;

        while (strchr(p->out, '\n') == NULL && tclient_now_ms() < end &&
               p->out_fd >= 0) {
                proc_read(p, 50);
        }
        return strchr(p->out, '\n') != NULL;
}

int proc_wait(struct proc *p, int timeout_ms)
{
        int64_t end = tclient_now_ms() + timeout_ms;
        int st;

        for (;;) {
                pid_t r = waitpid(p->pid, &st, WNOHANG);
                if (r == p->pid) {
                        p->elapsed_ms = tclient_now_ms() - p->started_ms;
                        p->status = WIFEXITED(st) ? WEXITSTATUS(st)
                                                  : 128 + WTERMSIG(st);
                        break;
                }
                if (tclient_now_ms() >= end) {
                        kill(p->pid, SIGCONT); /* a stopped child, too */
                        kill(p->pid, SIGKILL);
                        waitpid(p->pid, &st, 0);
                        p->elapsed_ms = tclient_now_ms() - p->started_ms;
                        p->status = -1;
                        break;
                }
                proc_read(p, 10);
        }
        while (p->out_fd >= 0 || p->err_fd >= 0) {
                size_t before = p->n_out + p->n_err + p->n_dropped;
                proc_read(p, DRAIN_MS);
                if (p->n_out + p->n_err + p->n_dropped == before &&
                    (p->out_fd >= 0 || p->err_fd >= 0)) {
                        /* A grandchild keeps a pipe open: stop reading. */
                        if (p->out_fd >= 0) {
                                close(p->out_fd);
                        }
                        if (p->err_fd >= 0) {
                                close(p->err_fd);
                        }
                        p->out_fd = p->err_fd = -1;
                }
        }
        return p->status;
}

int proc_run(struct proc *p, const char *prog, unsigned flags, int timeout_ms,
             const char *const *head, const char *const *args)
{
        if (proc_start(p, prog, flags, head, args) != 0) {
                return -1;
        }
        return proc_wait(p, timeout_ms);
}

int proc_vrun(struct proc *p, const char *prog, unsigned flags, int timeout_ms,
              const char *const *head, va_list ap)
{
        const char *args[PROC_MAX_ARGS];
        unsigned n = 0;
        const char *a;

        while ((a = va_arg(ap, const char *)) != NULL &&
               n < PROC_MAX_ARGS - 1) {
                args[n++] = a;
        }
        args[n] = NULL;
        return proc_run(p, prog, flags, timeout_ms, head, args);
}

void proc_show(const struct proc *p)
{
        printf("# exit %d after %" PRId64 " ms; stdout: %.600s; stderr: "
               "%.3000s\n",
               p->status, p->elapsed_ms, p->out, p->err);
        fflush(stdout);
}

/* The state letter and the parent of `pid` from /proc/PID/stat; false
 * when there is none. */
static bool stat_of(pid_t pid, char *state, pid_t *parent)
{
        char path[64], buf[512];
        const char *rp;
        int ppid = 0;
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (f == NULL) {
                return false;
        }
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* The name, in parentheses, may hold anything: the state follows
         * the last ')'. */
        rp = strrchr(buf, ')');
        if (rp == NULL || rp[1] == '\0' || rp[2] == '\0') {
                return false;
        }
        *state = rp[2];
        *parent = sscanf(rp + 2, "%*c %d", &ppid) == 1 ? ppid : 0;
        return true;
}

bool proc_gone(pid_t pid)
{
        char state = 0;
        pid_t parent;

        return !stat_of(pid, &state, &parent) || state == 'Z' || state == 'X';
}

pid_t proc_parent(pid_t pid)
{
        char state;
        pid_t parent = 0;

        return stat_of(pid, &state, &parent) ? parent : 0;
}
