/* The command's watchdog: a process between batonctl and the command of
 * `lock -- CMD` that stops the command when its lease deadline comes
 * unless batonctl renews it, and at once when batonctl is gone. */
#ifndef CLI_WATCHDOG_H
#define CLI_WATCHDOG_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Why a process of its own: batonctl may be killed (SIGKILL, the OOM
 * killer, a unit with KillMode=process) or stopped (SIGSTOP) while the
 * command goes on, and a stopped process cannot act. The watchdog is the
 * command's parent, so the command dies with it (PR_SET_PDEATHSIG), and
 * batonctl's child, talking to it through two pipes: batonctl sends the
 * deadlines of each renewed lease, a stop, or a signal to pass on; the
 * watchdog answers once, when the command has ended, how it ended.
 *
 * Every time is CLOCK_MONOTONIC in ms, the clock of both processes (and
 * of libbaton's lease). The watchdog sends SIGTERM at `term_at`, then
 * SIGKILL after the grace or at `kill_at`, whichever is first; a new
 * DEADLINE moves both later, as long as no SIGTERM was sent. When the
 * control pipe closes (batonctl is gone, whatever killed it), it sends
 * SIGTERM at once, SIGKILL after the grace but never after `kill_at`.
 */

/* What batonctl sends (struct watchdog_msg.kind). */
enum watchdog_order {
        WATCHDOG_DEADLINE = 1, /* a = term_at, b = kill_at */
        WATCHDOG_STOP,         /* stop the command now (the lock is lost) */
        WATCHDOG_SIGNAL,       /* pass signal `arg` on to the command */
};

/* The watchdog's one answer (kind WATCHDOG_END): `arg` tells how the
 * command ended, `a` is its wait status. */
#define WATCHDOG_END 100

/* How the command ended (WATCHDOG_END's arg). */
enum watchdog_how {
        WATCHDOG_EXITED = 1, /* on its own: the watchdog sent nothing */
        WATCHDOG_STOPPED,    /* stopped on batonctl's STOP */
        WATCHDOG_EXPIRED,    /* stopped at term_at, not renewed in time */
        WATCHDOG_ORPHANED,   /* stopped because batonctl was gone */
        WATCHDOG_NOFORK,     /* the command could not be started */
};

/* One message, written with one write(2) (far below PIPE_BUF, so never
 * torn). */
struct watchdog_msg {
        int32_t kind;
        int32_t arg;
        int64_t a, b;
};

/* The watchdog of a running command, as batonctl sees it. */
struct watchdog {
        pid_t pid;     /* the watchdog process */
        int ctl_fd;    /* batonctl's end: orders, non-blocking */
        int report_fd; /* batonctl's end: the answer */
};

/*
 * Fork the watchdog, which forks and execs argv (NULL-terminated,
 * borrowed) with the signal mask `mask` (the caller's own before it
 * blocked any: the command starts with the mask batonctl had), and stops
 * it at term_at / kill_at (ms, CLOCK_MONOTONIC) unless renewed, with
 * `grace_ms` between SIGTERM and SIGKILL. The caller must have blocked
 * every signal it handles around the call. A command that cannot be
 * executed exits 127 (not found) or 126 (other), as a shell's would.
 * 0, or -1 with errno set (nothing is left to clean up then).
 */
int watchdog_start(struct watchdog *w, char **argv, uint32_t grace_ms,
                   int64_t term_at, int64_t kill_at, const sigset_t *mask);

/* Send an order (enum watchdog_order) with its fields. A full pipe or a
 * watchdog gone drops it: a renewal lost only stops the command earlier. */
void watchdog_send(const struct watchdog *w, int kind, int arg, int64_t a,
                   int64_t b);

#endif /* CLI_WATCHDOG_H */
