/* Real batond clusters on 127.0.0.1 for the integration tests: start,
 * kill, pause, restart and stop nodes by the PIDs we started. */
#ifndef TESTS_INTEGRATION_HARNESS_H
#define TESTS_INTEGRATION_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HARNESS_MAX_NODES 6 /* a cluster of 5 and a node joining it */
#define HARNESS_ADDR_MAX  32
#define HARNESS_MAX_FLAGS 6
#define HARNESS_FLAG_MAX  64

struct harness_node {
        unsigned id;     /* 1..n */
        pid_t pid;       /* 0: not running */
        bool paused;     /* SIGSTOPped */
        bool stopping;   /* sent SIGTERM: its exit is expected */
        bool join;       /* started with --join true (harness_add_node) */
        bool no_roles;   /* started without the tests' role lines */
        int exit_status; /* of the last expected exit: code, or 128 + signal */
        unsigned starts;
        char raft_address[HARNESS_ADDR_MAX];
        char client_address[HARNESS_ADDR_MAX];
        char metrics_address[HARNESS_ADDR_MAX];
        /* Extra flags of its next starts (harness_set_flags). */
        char flags[HARNESS_MAX_FLAGS][HARNESS_FLAG_MAX];
        unsigned n_flags;
        char data_dir[PATH_MAX];
        char apply_log[PATH_MAX];
        char audit_log[PATH_MAX]; /* its audit-log ("": off) */
        char log_path[PATH_MAX];
};

struct harness {
        unsigned n;
        int base_port;
        int block_lock;        /* fd holding flock() on the block's lock file */
        char dir[256];         /* per-run temp dir under /tmp */
        char batond[PATH_MAX]; /* the binary we run */
        char endpoints[HARNESS_MAX_NODES * HARNESS_ADDR_MAX];
        char raft_host[16];   /* host part of the raft addresses */
        char client_host[16]; /* of the client addresses ("[::1]": IPv6) */
        struct harness_node nodes[HARNESS_MAX_NODES];
        bool failed; /* keep the directory at close, and say where */
        bool keep;   /* keep it whatever happens */
        /* harness_add_node() starts the new node without the tests' role
         * lines, as a config that has none. */
        bool add_without_roles;
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
 * Re-arm the watchdog with harness_setup_process()'s `watchdog_s` (no-op
 * when that was 0). A program that runs many scenarios calls it at the
 * start of each, so that the watchdog bounds one scenario (a hang) rather
 * than the whole run, whose length grows with every scenario added and
 * with slower builds (sanitizers).
 */
void harness_rearm_watchdog(void);

/* Set h->errmsg to the printf-formatted text (the harness's parts say why
 * a call failed this way). */
void harness_set_err(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Start an n-node cluster (3 or 5) of `batond` (path `batond`, or NULL:
 * $BATOND, ./batond, then next to the test binary `argv0`) on free ports
 * from `base_port` (<= 0: $BATON_TEST_BASE_PORT or 17000 + 100 * (pid %
 * 50)), with data dirs, apply logs, audit logs and logs in a fresh temp
 * dir under
 * $BATON_TEST_TMPDIR or /tmp. Each cluster takes a block of 20 ports:
 * raft addresses at block + 0.., client addresses at block + 6.. and
 * metrics addresses (every node serves metrics) at block + 12.., room
 * for HARNESS_MAX_NODES nodes. The block stays ours until harness_close()
 * (a flock() on /tmp/baton-it-ports-BLOCK.lock), so that a run in
 * another build dir cannot take a port of a node we have stopped for a
 * while. Does not wait for a leader. 0, or -1 with h->errmsg.
 */
int harness_start(struct harness *h, unsigned n, const char *batond,
                  const char *argv0, int base_port);

/* As harness_start(), with raft and client addresses on `raft_host` and
 * `client_host` ("127.0.0.1", "localhost", "[::1]", ...) instead of
 * 127.0.0.1; metrics addresses stay on 127.0.0.1. */
int harness_start_on(struct harness *h, unsigned n, const char *batond,
                     const char *argv0, int base_port, const char *raft_host,
                     const char *client_host);

/* Stop every node: SIGCONT, SIGTERM, wait up to 3 s, then SIGKILL; reap. */
void harness_stop(struct harness *h);

/* harness_stop(), then remove the temp dir unless h->failed or h->keep
 * (then print where it is). */
void harness_close(struct harness *h);

/*
 * The usual start of a test program that needs one healthy cluster:
 * harness_setup_process() with `watchdog_s` ($BATON_TEST_WATCHDOG
 * overrides it), harness_start() of n nodes from `argv0`'s neighbourhood,
 * then harness_wait_healthy() for up to `healthy_ms`. 0 with *leader, or
 * -1 with h->errmsg and h->failed set (the caller reports and closes).
 */
int harness_open_healthy(struct harness *h, unsigned n, const char *argv0,
                         unsigned watchdog_s, int healthy_ms, unsigned *leader);

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

/*
 * Extra command-line flags (copied, at most HARNESS_MAX_FLAGS of
 * HARNESS_FLAG_MAX - 1 bytes each) for node `id` from its next start on;
 * n = 0 clears them. 0, or -1 with h->errmsg.
 */
int harness_set_flags(struct harness *h, unsigned id, const char *const *flags,
                      unsigned n);

/*
 * SIGTERM node `id` (SIGCONT first if paused): from now on its exit is
 * expected, it is no longer "running" for the harness and is never taken
 * for the leader. `*when_ns` (may be NULL) gets the CLOCK_MONOTONIC time
 * just before kill().
 */
int harness_term(struct harness *h, unsigned id, int64_t *when_ns);

/*
 * Wait up to timeout_ms for node `id`, sent SIGTERM by harness_term(), to
 * exit, and reap it. 0 with `*status` (may be NULL) = its exit code, or
 * 128 + the signal that ended it; -1 with h->errmsg when it is still
 * running (it is left so: harness_stop() will SIGKILL it).
 */
int harness_wait_exit(struct harness *h, unsigned id, int timeout_ms,
                      int *status);

/*
 * Run node `id`'s batond once with `flags` (n of them, as
 * harness_set_flags()) added to its usual command line, for a mode that
 * exits by itself (--restore), and wait up to timeout_ms for it. The node
 * must not be running; its usual flags are kept for later starts. 0 with
 * `*status` as harness_wait_exit(), or -1 with h->errmsg.
 */
int harness_run_once(struct harness *h, unsigned id, const char *const *flags,
                     unsigned n, int timeout_ms, int *status);

/*
 * Start one more node, id h->n + 1, on the block's next ports, with an
 * empty data dir and --join true; its --member lines name every node so
 * far and itself. It is not a member until the leader is sent MEMBER_ADD;
 * until then it is not healthy in harness_wait_healthy()'s sense, so do
 * not wait for that meanwhile. 0 with `*id`, or -1 with h->errmsg.
 */
int harness_add_node(struct harness *h, unsigned *id);

/* Reap nodes that exited without being told to; each one counts in
 * h->unexpected_exits and is reported on stdout as a TAP comment. Nodes
 * sent SIGTERM by harness_term() are reaped quietly, their exit status
 * kept. */
unsigned harness_reap(struct harness *h);

/* The client address of node `id` ("" when out of range). */
const char *harness_client_address(const struct harness *h, unsigned id);

/* The metrics address of node `id` ("" when out of range). */
const char *harness_metrics_address(const struct harness *h, unsigned id);

/* Whether node `id` runs, is not paused and was not told to stop. */
bool harness_running(const struct harness *h, unsigned id);

/* The harness's other parts, for every test that includes it. */
#include "harnesshttp.h"
#include "harnesslogs.h"
#include "harnesswait.h"

#endif /* TESTS_INTEGRATION_HARNESS_H */
