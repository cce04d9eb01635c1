/* A program run by a test as its child, with the arguments it is given:
 * its exit status, standard output and error, and how long it took, every
 * wait bounded; and what /proc says of a process. */
#ifndef TESTS_PROC_H
#define TESTS_PROC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_OUT_MAX  32768 /* kept of stdout, and of stderr, NUL included */
#define PROC_MAX_ARGS 64    /* the program's name included */

/* How the child starts (or'ed together). */
enum {
        /* In a process group of its own, stdin from /dev/null: a signal
         * to the group (kill(-pid, ...)) reaches it and its children and
         * nothing of ours, and it never reads our terminal. */
        PROC_OWN_GROUP = 1,
        /* Without BATON_CACERT, BATON_CERT and BATON_KEY in its
         * environment: a client given no TLS files. */
        PROC_NO_TLS_ENV = 2,
};

/* One run. */
struct proc {
        pid_t pid;
        int out_fd, err_fd; /* -1 once read to the end */
        char out[PROC_OUT_MAX];
        char err[PROC_OUT_MAX];
        size_t n_out, n_err;
        size_t n_dropped; /* read past a full buffer */
        int status;       /* exit code, 128 + signal, or -1: not started, or did
                             not end in time */
        int64_t started_ms, elapsed_ms;
};

/*
 * Start `prog` with `head` (NULL-terminated; NULL: none) then `args`
 * (NULL-terminated) after its name, at most PROC_MAX_ARGS in all (the
 * rest are dropped), started as `flags` says; its stdout and stderr go to
 * pipes that proc_read() reads, its stdin is ours. The arguments are
 * borrowed until the call returns. 0, or -1 when no child started.
 */
int proc_start(struct proc *p, const char *prog, unsigned flags,
               const char *const *head, const char *const *args);

/* Read what there is on the child's stdout and stderr, waiting up to
 * timeout_ms for something to come. */
void proc_read(struct proc *p, int timeout_ms);

/* Read until stdout holds a full line, for up to timeout_ms; whether it
 * does. */
bool proc_wait_line(struct proc *p, int timeout_ms);

/*
 * Wait up to timeout_ms for the child's exit, reading its output
 * meanwhile (SIGKILL at the bound: status -1), then read what is left:
 * to the end, or until 200 ms pass with nothing (a grandchild keeps a
 * pipe open). Returns p->status.
 */
int proc_wait(struct proc *p, int timeout_ms);

/* proc_start(), then proc_wait() with timeout_ms: p->status. */
int proc_run(struct proc *p, const char *prog, unsigned flags, int timeout_ms,
             const char *const *head, const char *const *args);

/* proc_run() with the arguments after `head` from `ap`, up to a NULL. */
int proc_vrun(struct proc *p, const char *prog, unsigned flags, int timeout_ms,
              const char *const *head, va_list ap);

/* A TAP comment with the run's exit status, its time, and the start of
 * its stdout and stderr. */
void proc_show(const struct proc *p);

/* Whether process `pid` is gone, or a zombie no one reaped yet. */
bool proc_gone(pid_t pid);

/* The parent of process `pid`, 0 if unknown. */
pid_t proc_parent(pid_t pid);

#endif /* TESTS_PROC_H */
