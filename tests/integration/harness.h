/* Real batond clusters on 127.0.0.1 for the integration tests: start,
 * kill, pause, restart and stop nodes by the PIDs we started. */
#ifndef TESTS_INTEGRATION_HARNESS_H
#define TESTS_INTEGRATION_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HARNESS_MAX_NODES 5
#define HARNESS_ADDR_MAX  32

struct harness_node {
        unsigned id; /* 1..n */
        pid_t pid;   /* 0: not running */
        bool paused; /* SIGSTOPped */
        unsigned starts;
        char raft_address[HARNESS_ADDR_MAX];
        char client_address[HARNESS_ADDR_MAX];
        char data_dir[PATH_MAX];
        char apply_log[PATH_MAX];
        char log_path[PATH_MAX];
};

struct harness {
        unsigned n;
        int base_port;
        char dir[256];         /* per-run temp dir under /tmp */
        char batond[PATH_MAX]; /* the binary we run */
        char endpoints[HARNESS_MAX_NODES * HARNESS_ADDR_MAX];
        struct harness_node nodes[HARNESS_MAX_NODES];
        bool failed; /* keep the directory at close, and say where */
        bool keep;   /* keep it whatever happens */
        unsigned unexpected_exits;
        char errmsg[512];
};

/*
 * Install the process-wide cleanup (atexit and a handler for SIGINT,
 * SIGTERM, SIGHUP, SIGALRM, SIGABRT, SIGSEGV...) that SIGKILLs every node
 * any harness started, by PID, and says where the logs are. `watchdog_s`
 * > 0 arms alarm(): when it fires the run bails out. Call once, first.
 */
void harness_setup_process(unsigned watchdog_s);

/*
 * Start an n-node cluster (3 or 5) of `batond` (path `batond`, or NULL:
 * $BATOND, ./batond, then next to the test binary `argv0`) on free ports
 * from `base_port` (<= 0: $BATON_TEST_BASE_PORT or 17000 + 100 * (pid %
 * 50)), with data dirs, apply logs and logs in a fresh temp dir under
 * $BATON_TEST_TMPDIR or /tmp. Does not wait for a leader. 0, or -1 with
 * h->errmsg.
 */
int harness_start(struct harness *h, unsigned n, const char *batond,
                  const char *argv0, int base_port);

/* Stop every node: SIGCONT, SIGTERM, wait up to 3 s, then SIGKILL; reap. */
void harness_stop(struct harness *h);

/* harness_stop(), then remove the temp dir unless h->failed or h->keep
 * (then print where it is). */
void harness_close(struct harness *h);

/*
 * Poll every running node's STATUS until the leader with the highest term
 * answers a linearizable QUERY (so it serves). 0 with *leader, or -1 after
 * timeout_ms with h->errmsg.
 */
int harness_wait_leader(struct harness *h, int timeout_ms, unsigned *leader);

/*
 * As harness_wait_leader(), and every running, unpaused node follows that
 * leader in its term and has applied the leader's commit index.
 */
int harness_wait_healthy(struct harness *h, int timeout_ms, unsigned *leader);

/* kill -9 node `id` and reap it. `*when_ns` (may be NULL) gets the
 * CLOCK_MONOTONIC time just before kill(). */
int harness_kill(struct harness *h, unsigned id, int64_t *when_ns);

/* Find the serving leader (within timeout_ms) and kill -9 it. */
int harness_kill_leader(struct harness *h, int timeout_ms, unsigned *id,
                        int64_t *when_ns);

/* SIGSTOP / SIGCONT node `id`. */
int harness_pause(struct harness *h, unsigned id);
int harness_resume(struct harness *h, unsigned id);

/* Start node `id` again on its data dir (it must not be running). */
int harness_restart(struct harness *h, unsigned id);

/* Reap nodes that exited without being told to; each one counts in
 * h->unexpected_exits and is reported on stdout as a TAP comment. */
unsigned harness_reap(struct harness *h);

/*
 * CHAOS.md S9: every pair of nodes' apply logs agree on every index both
 * applied (a node's replay after a restart must repeat itself too). 0 with
 * `*compared` = (pair of nodes, index) comparisons made, or -1 with the
 * first difference in h->errmsg.
 */
int harness_check_apply_logs(struct harness *h, unsigned *compared);

/*
 * Apply-log RESULT lines of committed entries that did not decode as a
 * command (BATON_EVERSION or BATON_EMALFORMED with cause UNKNOWN), over all
 * nodes. The gateway proposes only commands that decode, so each one is an
 * entry corrupted between the leader's proposal and a node's apply.
 * `*node` (may be NULL) gets the first node that has one.
 */
unsigned harness_undecodable_entries(struct harness *h, unsigned *node);

/*
 * CHAOS.md L4: lines of the nodes' logs that report a sanitizer error or a
 * failed assertion. `first` (may be NULL) gets the first, with its node.
 */
unsigned harness_scan_logs(struct harness *h, char *first, size_t cap);

/* The client address of node `id` ("" when out of range). */
const char *harness_client_address(const struct harness *h, unsigned id);

/* Whether node `id` runs and is not paused. */
bool harness_running(const struct harness *h, unsigned id);

#endif /* TESTS_INTEGRATION_HARNESS_H */
