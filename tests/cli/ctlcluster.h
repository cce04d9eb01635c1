/* The program a command-line test runs (batonctl, baton-bench) and the
 * live 3-node cluster it runs it against: found, started, and at the end
 * reaped and closed under the TAP plan. */
#ifndef TESTS_CLI_CTLCLUSTER_H
#define TESTS_CLI_CTLCLUSTER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "../integration/harness.h"
#include "../lib/proc.h"
#include "../lib/tap.h"

#define CTLCLUSTER_HEALTHY_MS 20000 /* the cluster up and converged */

/*
 * The program under test, called first: stdout is made line-buffered (a
 * TAP line reaches the log when it is printed), and the program is $`env`
 * when that is set and not empty, else `dflt` (a path relative to the
 * build dir). NULL, after the plan "1..0 # SKIP no NAME at PATH" with
 * NAME the last part of `dflt`, when it is not an executable.
 */
const char *ctlcluster_program(const char *env, const char *dflt);

/*
 * Run `prog` with --endpoints of `h` (NULL: no --endpoints) and the
 * NULL-terminated arguments that follow, to its end within `timeout_ms`:
 * p->status, as proc_run().
 * A test names it ctl() with its program and cluster bound.
 */
int ctlcluster_ctl(struct proc *p, const char *prog, const struct harness *h,
                   int timeout_ms, ...);

/* Start `prog` --endpoints of `h` `args` (NULL-terminated) in a process
 * group of its own (a group signal reaches it and its children, nothing
 * of the test's), to be read and waited for with proc_wait(): 0, or -1
 * when it did not start. */
int ctlcluster_start(struct proc *p, const char *prog, const struct harness *h,
                     const char *const *args);

/* The wall clock in ms since the epoch, which batonctl's BATON_DEADLINE_MS
 * counts in (tclient_now_ms() is monotonic). */
int64_t ctlcluster_wall_ms(void);

/* How many times `what` occurs in `s` (a run's output). */
unsigned ctlcluster_count(const char *s, const char *what);

/*
 * Start the test's cluster: BATON_ENDPOINTS is unset first (every run
 * names the cluster it talks to, so that none reaches another one), then
 * harness_open_healthy() of 3 nodes with the watchdog `watchdog_s`. 0 with
 * `*leader`, or -1 after "Bail out! cluster: ..." with `h` closed.
 */
int ctlcluster_open(struct harness *h, const char *argv0, unsigned watchdog_s,
                    unsigned *leader);

/*
 * The start of a test of identities and roles: ctlcluster_open(), then,
 * with the tests' TLS files (tlsfiles_on()), a certificate of the tests'
 * CA for `identity` (the default role unless the list names it), and a
 * comment naming the cluster, its leader and `prog`, the program under
 * test. True when the test goes on, with `*leader`; false with the program's
 * exit status in `*status` once the cluster could not start ("Bail out!"), the
 * certificate could not be made ("Bail out!"), or the cluster runs
 * without TLS, where roles are not checked (closed, after a comment that
 * says so; `started_ms` as ctlcluster_close()).
 */
bool ctlcluster_open_tls(struct harness *h, struct tap *t, const char *argv0,
                         unsigned watchdog_s, const char *identity,
                         const char *prog, unsigned *leader, int64_t started_ms,
                         int *status);

/*
 * The end of the test: a node that exited on its own is a failed case;
 * with `scan_logs`, every node is stopped and a case checks that their
 * logs hold no sanitizer or assertion report; the cluster is closed (its
 * directory kept when a case failed); then the plan, and a comment with
 * the failures and the time since `started_ms` (tclient_now_ms()).
 * Returns the program's exit status.
 */
int ctlcluster_close(struct harness *h, struct tap *t, bool scan_logs,
                     int64_t started_ms);

/*
 * A TAP line `name`: batonctl's run `r` exited `status` within `within_ms`
 * and wrote one line to stderr, "batonctl: WHAT: ...", holding each of the
 * NULL-terminated strings in `ap` (the address, the reason). The line it
 * wrote follows as a comment. Returns the verdict.
 */
bool ctlcluster_one_line(struct tap *t, const struct proc *r, int status,
                         int64_t within_ms, const char *name, const char *what,
                         va_list ap);

#endif /* TESTS_CLI_CTLCLUSTER_H */
