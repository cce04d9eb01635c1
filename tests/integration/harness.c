/* Real batond clusters on 127.0.0.1 for the integration tests: start,
 * kill, pause, restart and stop nodes by the PIDs we started. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../lib/tclient.h"
#include "tlsfiles.h"

#define POLL_MS      20 /* between polls of the cluster's state */
#define STOP_MS      3000
#define MAX_PIDS     64
#define MAX_DIRS     8
#define PORT_BLOCKS  5  /* clusters of one run rotate through these */
#define BLOCK_PORTS  20 /* raft, client and metrics ports of one cluster */
#define RAFT_PORT    0  /* offsets in a block, + node index */
#define CLIENT_PORT  6
#define METRICS_PORT 12

/*
 * Every PID and temp dir any harness owns, for the atexit and signal
 * cleanup: a signal handler can reach nothing else, which is why this is
 * the one mutable global of the test program.
 */
static struct {
        volatile pid_t pids[MAX_PIDS];
        char dirs[MAX_DIRS][PATH_MAX];
        unsigned clusters; /* started so far, to rotate port blocks */
        bool installed;
} reg;

static void reg_add(pid_t pid)
{
        unsigned i;

        for (i = 0; i < MAX_PIDS; i++) {
                if (reg.pids[i] == 0) {
                        reg.pids[i] = pid;
                        return;
                }
        }
}

static void reg_remove(pid_t pid)
{
        unsigned i;

        for (i = 0; i < MAX_PIDS; i++) {
                if (reg.pids[i] == pid) {
                        reg.pids[i] = 0;
                }
        }
}

static void reg_dir(const char *dir, bool add)
{
        unsigned i;

        for (i = 0; i < MAX_DIRS; i++) {
                if (add && reg.dirs[i][0] == '\0') {
                        snprintf(reg.dirs[i], sizeof reg.dirs[i], "%s", dir);
                        return;
                }
                if (!add && strcmp(reg.dirs[i], dir) == 0) {
                        reg.dirs[i][0] = '\0';
                        return;
                }
        }
}

static void say(const char *s)
{
        ssize_t rv = write(STDOUT_FILENO, s, strlen(s));

        (void)rv;
}

/* Async-signal-safe: SIGKILL what we started, say where the logs are. */
static void kill_registered(void)
{
        unsigned i;

        for (i = 0; i < MAX_PIDS; i++) {
                pid_t pid = reg.pids[i];
                if (pid > 0) {
                        kill(pid, SIGKILL);
                }
        }
        for (i = 0; i < MAX_DIRS; i++) {
                if (reg.dirs[i][0] != '\0') {
                        say("# node logs and data kept in ");
                        say(reg.dirs[i]);
                        say("\n");
                }
        }
}

static void on_exit_cleanup(void)
{
        unsigned i;

        kill_registered();
        for (i = 0; i < MAX_PIDS; i++) {
                if (reg.pids[i] > 0) {
                        waitpid(reg.pids[i], NULL, 0);
                        reg.pids[i] = 0;
                }
        }
}

static void on_fatal_signal(int sig)
{
        if (sig == SIGALRM) {
                say("Bail out! watchdog: the run took too long\n");
        }
        kill_registered();
        signal(sig, SIG_DFL);
        raise(sig);
}

static const int fatal_signals[] = {SIGINT,  SIGTERM, SIGHUP, SIGQUIT, SIGALRM,
                                    SIGABRT, SIGSEGV, SIGBUS, SIGFPE,  SIGILL};

#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static unsigned watchdog_seconds;

void harness_setup_process(unsigned watchdog_s)
{
        struct sigaction sa;
        unsigned i;

        if (!reg.installed) {
                reg.installed = true;
                atexit(on_exit_cleanup);
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = on_fatal_signal;
                sigemptyset(&sa.sa_mask);
                for (i = 0; i < N_FATAL; i++) {
                        sigaction(fatal_signals[i], &sa, NULL);
                }
                signal(SIGPIPE, SIG_IGN);
        }
        watchdog_seconds = watchdog_s;
        harness_rearm_watchdog();
}

void harness_rearm_watchdog(void)
{
        if (watchdog_seconds > 0) {
                alarm(watchdog_seconds);
        }
}

void harness_set_err(struct harness *h, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
        va_end(ap);
}

/* Print the last lines of a node's log as TAP comments. */
static void print_tail(const char *path, unsigned lines)
{
        char buf[8192];
        FILE *f = fopen(path, "r");
        long size;
        size_t n, i, start;
        unsigned seen = 0;

        if (f == NULL) {
                return;
        }
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0,
              SEEK_SET);
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        start = 0;
        for (i = n; i > 0; i--) {
                if (buf[i - 1] == '\n' && i != n && ++seen == lines) {
                        start = i;
                        break;
                }
        }
        printf("# --- last lines of %s\n", path);
        for (i = start; i < n;) {
                char *nl = strchr(buf + i, '\n');
                size_t len = nl != NULL ? (size_t)(nl - (buf + i)) : n - i;
                printf("#   %.*s\n", (int)len, buf + i);
                i += len + 1;
        }
        fflush(stdout);
}

/* --- Starting ------------------------------------------------------------ */

static bool port_free(int port)
{
        struct sockaddr_in sa;
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok;

        if (fd < 0) {
                return false;
        }
        /* As libuv binds: SO_REUSEADDR, so TIME_WAIT does not count. */
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        close(fd);
        return ok;
}

/* Every port of a block, for as many nodes as a cluster may grow to. */
static bool block_free(int block)
{
        int i;

        for (i = 0; i < HARNESS_MAX_NODES; i++) {
                if (!port_free(block + RAFT_PORT + i) ||
                    !port_free(block + CLIENT_PORT + i) ||
                    !port_free(block + METRICS_PORT + i)) {
                        return false;
                }
        }
        return true;
}

/*
 * Claim a block for this process with a flock() on a file named after it:
 * every harness, whatever its build dir, skips a claimed block, even while
 * its owner's nodes are down. The fd, or -1 when another process has it.
 */
static int claim_block(int block)
{
        char path[64];
        int fd;

        /* In /tmp whatever BATON_TEST_TMPDIR says: ports are machine-wide. */
        snprintf(path, sizeof path, "/tmp/baton-it-ports-%d.lock", block);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
                return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static bool executable(const char *path)
{
        return access(path, X_OK) == 0;
}

static int find_batond(struct harness *h, const char *batond, const char *argv0)
{
        const char *env = getenv("BATOND");
        const char *slash;

        if (batond != NULL && batond[0] != '\0') {
                snprintf(h->batond, sizeof h->batond, "%s", batond);
        } else if (env != NULL && env[0] != '\0') {
                snprintf(h->batond, sizeof h->batond, "%s", env);
        } else if (executable("./batond")) {
                snprintf(h->batond, sizeof h->batond, "./batond");
        } else if (argv0 != NULL && (slash = strrchr(argv0, '/')) != NULL) {
                /* tests/integration/test_integration -> ../../batond */
                snprintf(h->batond, sizeof h->batond, "%.*s/../../batond",
                         (int)(slash - argv0), argv0);
        } else {
                snprintf(h->batond, sizeof h->batond, "batond");
        }
        if (!executable(h->batond)) {
                harness_set_err(h, "no batond binary at %s (set BATOND)",
                                h->batond);
                return -1;
        }
        return 0;
}

static int spawn(struct harness *h, struct harness_node *nd)
{
        char id[24], members[HARNESS_MAX_NODES][3 * HARNESS_ADDR_MAX];
        char *argv[30 + 2 * HARNESS_MAX_NODES + HARNESS_MAX_FLAGS];
        sigset_t all, old;
        unsigned i, a = 0;
        pid_t parent = getpid(), pid;
        int fd;

        snprintf(id, sizeof id, "%u", nd->id);
        argv[a++] = h->batond;
        argv[a++] = "--id";
        argv[a++] = id;
        argv[a++] = "--data-dir";
        argv[a++] = nd->data_dir;
        argv[a++] = "--apply-log";
        argv[a++] = nd->apply_log;
        argv[a++] = "--audit-log";
        argv[a++] = nd->audit_log;
        argv[a++] = "--metrics-address";
        argv[a++] = nd->metrics_address;
        if (nd->join) {
                argv[a++] = "--join";
                argv[a++] = "true";
        }
        if (nd->no_roles) {
                tlsfiles_node_tls_args(nd->id, argv, &a);
        } else {
                tlsfiles_node_args(nd->id, argv, &a);
        }
        for (i = 0; i < nd->n_flags; i++) {
                argv[a++] = nd->flags[i];
        }
        for (i = 0; i < h->n; i++) {
                snprintf(members[i], sizeof members[i], "%u %s %s",
                         h->nodes[i].id, h->nodes[i].raft_address,
                         h->nodes[i].client_address);
                argv[a++] = "--member";
                argv[a++] = members[i];
        }
        argv[a] = NULL;

        fd =
            open(nd->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
                harness_set_err(h, "open %s: %s", nd->log_path,
                                strerror(errno));
                return -1;
        }
        dprintf(fd, "=== harness: start %u of node %u at %" PRId64 " ms\n",
                nd->starts + 1, nd->id, tclient_now_ms());
        fflush(stdout);
        /* Until the child has dropped our handlers, a signal must not run
         * them there (they would kill every node): block them over fork. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        pid = fork();
        if (pid < 0) {
                sigprocmask(SIG_SETMASK, &old, NULL);
                close(fd);
                harness_set_err(h, "fork: %s", strerror(errno));
                return -1;
        }
        if (pid == 0) {
                sigset_t none;
                for (i = 0; i < N_FATAL; i++) {
                        signal(fatal_signals[i], SIG_DFL);
                }
                signal(SIGPIPE, SIG_DFL);
                /* Die with the test, even if it is SIGKILLed. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent) {
                        _exit(127);
                }
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                dup2(fd, STDOUT_FILENO);
                dup2(fd, STDERR_FILENO);
                execv(h->batond, argv);
                dprintf(STDERR_FILENO, "exec %s: %s\n", h->batond,
                        strerror(errno));
                _exit(127);
        }
        close(fd);
        nd->pid = pid;
        nd->paused = false;
        nd->stopping = false;
        nd->starts++;
        reg_add(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 0;
}

/* Addresses and paths of node index i (id i + 1) of the cluster. */
static void node_setup(struct harness *h, unsigned i)
{
        struct harness_node *nd = &h->nodes[i];
        int port = h->base_port + (int)i;

        memset(nd, 0, sizeof *nd);
        nd->id = i + 1;
        snprintf(nd->raft_address, sizeof nd->raft_address, "%s:%d",
                 h->raft_host, port + RAFT_PORT);
        snprintf(nd->client_address, sizeof nd->client_address, "%s:%d",
                 h->client_host, port + CLIENT_PORT);
        snprintf(nd->metrics_address, sizeof nd->metrics_address,
                 "127.0.0.1:%d", port + METRICS_PORT);
        snprintf(nd->data_dir, sizeof nd->data_dir, "%s/n%u", h->dir, nd->id);
        snprintf(nd->apply_log, sizeof nd->apply_log, "%s/apply%u.log", h->dir,
                 nd->id);
        snprintf(nd->audit_log, sizeof nd->audit_log, "%s/audit%u.log", h->dir,
                 nd->id);
        snprintf(nd->log_path, sizeof nd->log_path, "%s/n%u.log", h->dir,
                 nd->id);
}

int harness_start(struct harness *h, unsigned n, const char *batond,
                  const char *argv0, int base_port)
{
        return harness_start_on(h, n, batond, argv0, base_port, "127.0.0.1",
                                "127.0.0.1");
}

int harness_start_on(struct harness *h, unsigned n, const char *batond,
                     const char *argv0, int base_port, const char *raft_host,
                     const char *client_host)
{
        const char *env = getenv("BATON_TEST_BASE_PORT");
        const char *tmp = getenv("BATON_TEST_TMPDIR");
        unsigned i, attempt;
        int block = -1;
        size_t off = 0;

        memset(h, 0, sizeof *h);
        snprintf(h->raft_host, sizeof h->raft_host, "%s", raft_host);
        snprintf(h->client_host, sizeof h->client_host, "%s", client_host);
        h->block_lock = -1;
        if (tmp == NULL || tmp[0] == '\0') {
                tmp = "/tmp";
        }
        if (n < 1 || n > HARNESS_MAX_NODES) {
                harness_set_err(h, "bad cluster size %u", n);
                return -1;
        }
        h->n = n;
        if (find_batond(h, batond, argv0) != 0 ||
            tlsfiles_prepare(h->errmsg, sizeof h->errmsg) != 0) {
                return -1;
        }
        if (base_port <= 0 && env != NULL && env[0] != '\0') {
                base_port = atoi(env);
        }
        if (base_port <= 0) {
                base_port = 17000 + 100 * (int)(getpid() % 50);
        }
        /* Each cluster of this run takes the next block of ports; a block
         * another harness has claimed, or someone listens on, is skipped. */
        for (attempt = 0; attempt < 2 * PORT_BLOCKS && block < 0; attempt++) {
                int b =
                    base_port +
                    BLOCK_PORTS * (int)((reg.clusters + attempt) % PORT_BLOCKS);
                if (attempt >= PORT_BLOCKS) {
                        b = 17000 +
                            BLOCK_PORTS * (int)(tclient_now_ns() % 1000);
                }
                if (b <= 0 || b + BLOCK_PORTS >= 65536) {
                        continue;
                }
                h->block_lock = claim_block(b);
                if (h->block_lock < 0) {
                        continue;
                }
                if (block_free(b)) {
                        block = b;
                } else {
                        close(h->block_lock);
                        h->block_lock = -1;
                }
        }
        reg.clusters++;
        if (block < 0) {
                harness_set_err(h, "no free block of ports near %d", base_port);
                return -1;
        }
        h->base_port = block;
        snprintf(h->dir, sizeof h->dir, "%s/baton-it-%d-XXXXXX", tmp,
                 (int)getpid());
        if (mkdtemp(h->dir) == NULL) {
                harness_set_err(h, "mkdtemp: %s", strerror(errno));
                return -1;
        }
        reg_dir(h->dir, true);
        for (i = 0; i < n; i++) {
                node_setup(h, i);
                off += (size_t)snprintf(
                    h->endpoints + off, sizeof h->endpoints - off, "%s%s",
                    i > 0 ? "," : "", h->nodes[i].client_address);
        }
        for (i = 0; i < n; i++) {
                if (spawn(h, &h->nodes[i]) != 0) {
                        h->failed = true;
                        return -1;
                }
        }
        return 0;
}

/* --- Stopping ------------------------------------------------------------ */

static void reaped(struct harness_node *nd)
{
        reg_remove(nd->pid);
        nd->pid = 0;
        nd->paused = false;
}

void harness_stop(struct harness *h)
{
        int64_t deadline = tclient_now_ms() + STOP_MS;
        unsigned i, left;

        for (i = 0; i < h->n; i++) {
                struct harness_node *nd = &h->nodes[i];
                if (nd->pid > 0) {
                        if (nd->paused) {
                                kill(nd->pid, SIGCONT);
                        }
                        kill(nd->pid, SIGTERM);
                }
        }
        do {
                left = 0;
                for (i = 0; i < h->n; i++) {
                        struct harness_node *nd = &h->nodes[i];
                        if (nd->pid > 0) {
                                if (waitpid(nd->pid, NULL, WNOHANG) ==
                                    nd->pid) {
                                        reaped(nd);
                                } else {
                                        left++;
                                }
                        }
                }
                if (left > 0) {
                        struct timespec ts = {0, 10 * 1000000};
                        nanosleep(&ts, NULL);
                }
        } while (left > 0 && tclient_now_ms() < deadline);
        for (i = 0; i < h->n; i++) {
                struct harness_node *nd = &h->nodes[i];
                if (nd->pid > 0) {
                        printf("# node %u did not stop on SIGTERM: SIGKILL\n",
                               nd->id);
                        kill(nd->pid, SIGKILL);
                        waitpid(nd->pid, NULL, 0);
                        reaped(nd);
                }
        }
}

static int remove_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
        (void)sb;
        (void)flag;
        (void)ftw;
        return remove(path);
}

void harness_close(struct harness *h)
{
        if (h->n == 0) {
                return;
        }
        harness_stop(h);
        if (h->dir[0] != '\0') {
                if (h->failed || h->keep) {
                        printf("# node logs and data kept in %s\n", h->dir);
                } else {
                        nftw(h->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
                }
                reg_dir(h->dir, false);
        }
        if (h->block_lock >= 0) {
                close(h->block_lock); /* the block is free for others */
                h->block_lock = -1;
        }
        fflush(stdout);
        h->n = 0;
}

/* --- Faults ----------------------------------------------------------------
 */

static void poll_pause(void)
{
        struct timespec ts = {0, POLL_MS * 1000000};

        nanosleep(&ts, NULL);
}

static struct harness_node *node_of(struct harness *h, unsigned id)
{
        if (id < 1 || id > h->n) {
                harness_set_err(h, "no node %u", id);
                return NULL;
        }
        return &h->nodes[id - 1];
}

int harness_kill(struct harness *h, unsigned id, int64_t *when_ns)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL || nd->pid <= 0) {
                harness_set_err(h, "node %u is not running", id);
                return -1;
        }
        if (when_ns != NULL) {
                *when_ns = tclient_now_ns();
        }
        kill(nd->pid, SIGKILL);
        waitpid(nd->pid, NULL, 0);
        reaped(nd);
        return 0;
}

int harness_kill_leader(struct harness *h, int timeout_ms, unsigned *id,
                        int64_t *when_ns)
{
        unsigned leader;

        if (harness_wait_leader(h, timeout_ms, &leader) != 0) {
                return -1;
        }
        if (id != NULL) {
                *id = leader;
        }
        return harness_kill(h, leader, when_ns);
}

int harness_pause(struct harness *h, unsigned id)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL || nd->pid <= 0 || kill(nd->pid, SIGSTOP) != 0) {
                return -1;
        }
        nd->paused = true;
        return 0;
}

int harness_resume(struct harness *h, unsigned id)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL || nd->pid <= 0 || kill(nd->pid, SIGCONT) != 0) {
                return -1;
        }
        nd->paused = false;
        return 0;
}

int harness_restart(struct harness *h, unsigned id)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL) {
                return -1;
        }
        if (nd->pid > 0) {
                harness_set_err(h, "node %u is still running", id);
                return -1;
        }
        return spawn(h, nd);
}

int harness_run_once(struct harness *h, unsigned id, const char *const *flags,
                     unsigned n, int timeout_ms, int *status)
{
        struct harness_node *nd = node_of(h, id);
        struct harness_node saved;
        unsigned i;
        int rv;

        if (nd == NULL || nd->pid > 0 || nd->n_flags + n > HARNESS_MAX_FLAGS) {
                harness_set_err(h, "node %u: running, or too many flags", id);
                return -1;
        }
        saved = *nd;
        for (i = 0; i < n; i++) {
                snprintf(nd->flags[nd->n_flags++], HARNESS_FLAG_MAX, "%s",
                         flags[i]);
        }
        rv = spawn(h, nd);
        memcpy(nd->flags, saved.flags, sizeof nd->flags);
        nd->n_flags = saved.n_flags;
        if (rv != 0) {
                return rv;
        }
        nd->stopping = true; /* it exits by itself */
        return harness_wait_exit(h, id, timeout_ms, status);
}

static int exit_code(int st)
{
        return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

unsigned harness_reap(struct harness *h)
{
        unsigned i, n = 0;
        int st;

        for (i = 0; i < h->n; i++) {
                struct harness_node *nd = &h->nodes[i];
                if (nd->pid > 0 && waitpid(nd->pid, &st, WNOHANG) == nd->pid) {
                        if (nd->stopping) {
                                nd->exit_status = exit_code(st);
                                reaped(nd);
                                continue;
                        }
                        printf("# node %u (pid %d) exited unexpectedly: %s "
                               "%d\n",
                               nd->id, (int)nd->pid,
                               WIFSIGNALED(st) ? "signal" : "status",
                               WIFSIGNALED(st) ? WTERMSIG(st)
                                               : WEXITSTATUS(st));
                        print_tail(nd->log_path, 15);
                        reaped(nd);
                        h->unexpected_exits++;
                        h->failed = true;
                        n++;
                }
        }
        return n;
}

int harness_set_flags(struct harness *h, unsigned id, const char *const *flags,
                      unsigned n)
{
        struct harness_node *nd = node_of(h, id);
        unsigned i;

        if (nd == NULL) {
                return -1;
        }
        if (n > HARNESS_MAX_FLAGS) {
                harness_set_err(h, "%u flags: at most %d", n,
                                HARNESS_MAX_FLAGS);
                return -1;
        }
        for (i = 0; i < n; i++) {
                if (strlen(flags[i]) >= HARNESS_FLAG_MAX) {
                        harness_set_err(h, "flag %s too long", flags[i]);
                        return -1;
                }
                snprintf(nd->flags[i], sizeof nd->flags[i], "%s", flags[i]);
        }
        nd->n_flags = n;
        return 0;
}

int harness_term(struct harness *h, unsigned id, int64_t *when_ns)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL || nd->pid <= 0) {
                harness_set_err(h, "node %u is not running", id);
                return -1;
        }
        if (nd->paused) {
                kill(nd->pid, SIGCONT);
                nd->paused = false;
        }
        nd->stopping = true;
        if (when_ns != NULL) {
                *when_ns = tclient_now_ns();
        }
        kill(nd->pid, SIGTERM);
        return 0;
}

int harness_wait_exit(struct harness *h, unsigned id, int timeout_ms,
                      int *status)
{
        struct harness_node *nd = node_of(h, id);
        int64_t deadline = tclient_now_ms() + timeout_ms;
        int st;

        if (nd == NULL) {
                return -1;
        }
        while (nd->pid > 0) {
                pid_t r = waitpid(nd->pid, &st, WNOHANG);
                if (r == nd->pid) {
                        nd->exit_status = exit_code(st);
                        reaped(nd);
                        break;
                }
                if (tclient_now_ms() >= deadline) {
                        harness_set_err(
                            h,
                            "node %u (pid %d) still runs %d ms after "
                            "SIGTERM",
                            id, (int)nd->pid, timeout_ms);
                        return -1;
                }
                poll_pause();
        }
        if (status != NULL) {
                *status = nd->exit_status;
        }
        return 0;
}

int harness_add_node(struct harness *h, unsigned *id)
{
        struct harness_node *nd;
        unsigned i = h->n;

        if (i >= HARNESS_MAX_NODES) {
                harness_set_err(
                    h, "the cluster has %u nodes: no room for another", i);
                return -1;
        }
        node_setup(h, i);
        nd = &h->nodes[i];
        if (!port_free(h->base_port + RAFT_PORT + (int)i) ||
            !port_free(h->base_port + CLIENT_PORT + (int)i) ||
            !port_free(h->base_port + METRICS_PORT + (int)i)) {
                harness_set_err(h, "the ports of node %u are taken", nd->id);
                return -1;
        }
        nd->join = true;
        nd->no_roles = h->add_without_roles;
        h->n++;
        if (spawn(h, nd) != 0) {
                h->n--;
                return -1;
        }
        if (id != NULL) {
                *id = nd->id;
        }
        return 0;
}

/* --- Watching --------------------------------------------------------------
 */

const char *harness_client_address(const struct harness *h, unsigned id)
{
        return id >= 1 && id <= h->n ? h->nodes[id - 1].client_address : "";
}

const char *harness_metrics_address(const struct harness *h, unsigned id)
{
        return id >= 1 && id <= h->n ? h->nodes[id - 1].metrics_address : "";
}

bool harness_running(const struct harness *h, unsigned id)
{
        return id >= 1 && id <= h->n && h->nodes[id - 1].pid > 0 &&
               !h->nodes[id - 1].paused && !h->nodes[id - 1].stopping;
}

int harness_open_healthy(struct harness *h, unsigned n, const char *argv0,
                         unsigned watchdog_s, int healthy_ms, unsigned *leader)
{
        const char *w = getenv("BATON_TEST_WATCHDOG");

        harness_setup_process(w != NULL ? (unsigned)atoi(w) : watchdog_s);
        if (harness_start(h, n, NULL, argv0, 0) != 0 ||
            harness_wait_healthy(h, healthy_ms, leader) != 0) {
                h->failed = true;
                return -1;
        }
        return 0;
}
