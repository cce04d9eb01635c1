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

#define STATUS_MS    300 /* one STATUS poll of one node */
#define POLL_MS      20  /* between polls of the cluster's state */
#define STOP_MS      3000
#define MAX_PIDS     64
#define MAX_DIRS     8
#define PORT_BLOCKS  5  /* clusters of one run rotate through these */
#define BLOCK_PORTS  20 /* raft, client and metrics ports of one cluster */
#define RAFT_PORT    0  /* offsets in a block, + node index */
#define CLIENT_PORT  6
#define METRICS_PORT 12
#define HTTP_MAX     (1 << 20) /* a metrics reply, at most */

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

static void set_err(struct harness *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_err(struct harness *h, const char *fmt, ...)
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
                set_err(h, "no batond binary at %s (set BATOND)", h->batond);
                return -1;
        }
        return 0;
}

static int spawn(struct harness *h, struct harness_node *nd)
{
        char id[24], members[HARNESS_MAX_NODES][3 * HARNESS_ADDR_MAX];
        char *argv[28 + 2 * HARNESS_MAX_NODES + HARNESS_MAX_FLAGS];
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
                set_err(h, "open %s: %s", nd->log_path, strerror(errno));
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
                set_err(h, "fork: %s", strerror(errno));
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
                set_err(h, "bad cluster size %u", n);
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
                set_err(h, "no free block of ports near %d", base_port);
                return -1;
        }
        h->base_port = block;
        snprintf(h->dir, sizeof h->dir, "%s/baton-it-%d-XXXXXX", tmp,
                 (int)getpid());
        if (mkdtemp(h->dir) == NULL) {
                set_err(h, "mkdtemp: %s", strerror(errno));
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
                set_err(h, "no node %u", id);
                return NULL;
        }
        return &h->nodes[id - 1];
}

int harness_kill(struct harness *h, unsigned id, int64_t *when_ns)
{
        struct harness_node *nd = node_of(h, id);

        if (nd == NULL || nd->pid <= 0) {
                set_err(h, "node %u is not running", id);
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
                set_err(h, "node %u is still running", id);
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
                set_err(h, "node %u: running, or too many flags", id);
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
                set_err(h, "%u flags: at most %d", n, HARNESS_MAX_FLAGS);
                return -1;
        }
        for (i = 0; i < n; i++) {
                if (strlen(flags[i]) >= HARNESS_FLAG_MAX) {
                        set_err(h, "flag %s too long", flags[i]);
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
                set_err(h, "node %u is not running", id);
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
                        set_err(h,
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
                set_err(h, "the cluster has %u nodes: no room for another", i);
                return -1;
        }
        node_setup(h, i);
        nd = &h->nodes[i];
        if (!port_free(h->base_port + RAFT_PORT + (int)i) ||
            !port_free(h->base_port + CLIENT_PORT + (int)i) ||
            !port_free(h->base_port + METRICS_PORT + (int)i)) {
                set_err(h, "the ports of node %u are taken", nd->id);
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

long harness_rss_kib(const struct harness *h, unsigned id)
{
        char path[64], line[256];
        long kib = -1;
        FILE *f;

        if (id < 1 || id > h->n || h->nodes[id - 1].pid <= 0) {
                return -1;
        }
        snprintf(path, sizeof path, "/proc/%d/status",
                 (int)h->nodes[id - 1].pid);
        f = fopen(path, "r");
        if (f == NULL) {
                return -1;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                if (strncmp(line, "VmRSS:", 6) == 0) {
                        kib = strtol(line + 6, NULL, 10);
                        break;
                }
        }
        fclose(f);
        return kib;
}

/* Connect to "a.b.c.d:port" (blocking, on loopback). */
static int http_connect(struct harness *h, const char *address, int timeout_ms)
{
        struct sockaddr_in sa;
        struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
        const char *colon = strrchr(address, ':');
        char host[HARNESS_ADDR_MAX];
        int fd;

        if (colon == NULL || (size_t)(colon - address) >= sizeof host) {
                set_err(h, "bad address %s", address);
                return -1;
        }
        memcpy(host, address, (size_t)(colon - address));
        host[colon - address] = '\0';
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
                set_err(h, "bad address %s", address);
                return -1;
        }
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                set_err(h, "socket: %s", strerror(errno));
                return -1;
        }
        /* Every later send and recv gives up after the timeout. */
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                set_err(h, "connect %s: %s", address, strerror(errno));
                close(fd);
                return -1;
        }
        return fd;
}

long harness_http_get(struct harness *h, unsigned id, const char *path,
                      int *status, char *buf, size_t cap, int timeout_ms)
{
        const char *address = harness_metrics_address(h, id);
        int64_t deadline = tclient_now_ms() + timeout_ms;
        char *reply, *body, req[256];
        size_t len = 0;
        int fd, n_req;

        if (address[0] == '\0' || cap == 0) {
                set_err(h, "node %u has no metrics address", id);
                return -1;
        }
        n_req = snprintf(req, sizeof req,
                         "GET %s HTTP/1.0\r\nHost: baton\r\n\r\n", path);
        fd = http_connect(h, address, timeout_ms);
        if (fd < 0) {
                return -1;
        }
        reply = malloc(HTTP_MAX + 1);
        if (reply == NULL ||
            send(fd, req, (size_t)n_req, MSG_NOSIGNAL) != (ssize_t)n_req) {
                set_err(h, "GET %s of node %u: send failed", path, id);
                goto fail;
        }
        for (;;) {
                ssize_t n;
                if (tclient_now_ms() >= deadline) {
                        set_err(h, "GET %s of node %u: no end within %d ms",
                                path, id, timeout_ms);
                        goto fail;
                }
                n = recv(fd, reply + len, HTTP_MAX - len, 0);
                if (n == 0) {
                        break;
                }
                if (n < 0 && errno == EINTR && tclient_now_ms() < deadline) {
                        continue;
                }
                if (n < 0 || len + (size_t)n >= HTTP_MAX) {
                        set_err(h, "GET %s of node %u: %s after %zu bytes",
                                path, id, n < 0 ? strerror(errno) : "too long",
                                len);
                        goto fail;
                }
                len += (size_t)n;
        }
        reply[len] = '\0';
        body = strstr(reply, "\r\n\r\n");
        if (strncmp(reply, "HTTP/1.", 7) != 0 || strlen(reply) != len ||
            body == NULL || len < 12 || reply[8] != ' ' || reply[12] != ' ') {
                set_err(h, "GET %s of node %u: bad reply: %.80s", path, id,
                        reply);
                goto fail;
        }
        *status = atoi(reply + 9);
        body += 4;
        len -= (size_t)(body - reply);
        if (len >= cap) {
                set_err(h, "GET %s of node %u: %zu bytes do not fit", path, id,
                        len);
                goto fail;
        }
        memcpy(buf, body, len + 1);
        free(reply);
        close(fd);
        return (long)len;

fail:
        free(reply);
        close(fd);
        return -1;
}

long harness_metrics(struct harness *h, unsigned id, char *buf, size_t cap,
                     int timeout_ms)
{
        int status = 0;
        long n =
            harness_http_get(h, id, "/metrics", &status, buf, cap, timeout_ms);

        if (n >= 0 && status != 200) {
                set_err(h, "metrics of node %u: status %d: %.80s", id, status,
                        buf);
                return -1;
        }
        return n;
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

/* The running node that claims leadership in the highest term, or 0. */
static unsigned claimed_leader(struct harness *h, struct baton_status *out)
{
        struct baton_status st;
        unsigned i, best = 0;
        uint64_t best_term = 0;

        for (i = 1; i <= h->n; i++) {
                if (!harness_running(h, i) ||
                    tclient_status_of(harness_client_address(h, i), STATUS_MS,
                                      &st) != 0) {
                        continue;
                }
                if (st.role == BATON_ROLE_LEADER && st.term > best_term) {
                        best = i;
                        best_term = st.term;
                        if (out != NULL) {
                                *out = st;
                        }
                }
        }
        return best;
}

/* Whether `id` answers a linearizable QUERY itself: it serves. */
static bool serves(struct harness *h, unsigned id, int timeout_ms)
{
        struct tclient c;
        struct tclient_result res;
        int rv;

        if (tclient_init(&c, harness_client_address(h, id)) != 0) {
                return false;
        }
        c.follow = false;
        c.try_ms = 0;
        rv = tclient_query(&c, "harness-probe", timeout_ms, &res);
        tclient_close(&c);
        return rv == 0;
}

int harness_wait_leader(struct harness *h, int timeout_ms, unsigned *leader)
{
        int64_t deadline = tclient_now_ms() + timeout_ms;

        for (;;) {
                unsigned id;
                int64_t left;
                harness_reap(h);
                id = claimed_leader(h, NULL);
                left = deadline - tclient_now_ms();
                if (id != 0 && left > 0 &&
                    serves(h, id, left < 1000 ? (int)left : 1000)) {
                        if (leader != NULL) {
                                *leader = id;
                        }
                        return 0;
                }
                if (tclient_now_ms() >= deadline) {
                        set_err(h, "no serving leader within %d ms",
                                timeout_ms);
                        return -1;
                }
                poll_pause();
        }
}

int harness_wait_healthy(struct harness *h, int timeout_ms, unsigned *leader)
{
        int64_t deadline = tclient_now_ms() + timeout_ms;
        unsigned id = 0;
        char why[256] = "";

        /* The serving check is a QUERY, whose barrier is a new entry: done
         * once per leader, or the followers would chase it forever. */
        for (;;) {
                struct baton_status ls, st;
                unsigned i;
                bool ok = true;
                int64_t left = deadline - tclient_now_ms();

                if (left <= 0 ||
                    (id == 0 && harness_wait_leader(h, (int)left, &id) != 0)) {
                        set_err(h, "cluster not healthy within %d ms%s%s",
                                timeout_ms, why[0] ? ": " : "", why);
                        return -1;
                }
                if (!harness_running(h, id) ||
                    tclient_status_of(harness_client_address(h, id), STATUS_MS,
                                      &ls) != 0 ||
                    ls.role != BATON_ROLE_LEADER) {
                        snprintf(why, sizeof why, "leader %u went away", id);
                        id = 0;
                        continue;
                }
                for (i = 1; i <= h->n && ok; i++) {
                        if (!harness_running(h, i) || i == id) {
                                continue;
                        }
                        if (tclient_status_of(harness_client_address(h, i),
                                              STATUS_MS, &st) != 0) {
                                snprintf(why, sizeof why,
                                         "node %u does not answer STATUS", i);
                                ok = false;
                        } else if (st.term != ls.term || st.leader_id != id ||
                                   st.applied_index < ls.commit_index) {
                                snprintf(why, sizeof why,
                                         "node %u: term %" PRIu64
                                         " leader %" PRIu64 " applied %" PRIu64
                                         "; leader %u: term %" PRIu64
                                         " commit %" PRIu64,
                                         i, st.term, st.leader_id,
                                         st.applied_index, id, ls.term,
                                         ls.commit_index);
                                ok = false;
                        }
                }
                if (ok) {
                        if (leader != NULL) {
                                *leader = id;
                        }
                        return 0;
                }
                harness_reap(h);
                poll_pause();
        }
}

/* --- Apply logs (S9) ---------------------------------------------------------
 */

/* One node's apply log: the event lines of each index, concatenated. */
struct applied {
        char **at; /* at[index]: NULL when this node did not log it */
        uint64_t cap;
        uint64_t last; /* highest index logged */
};

static void applied_free(struct applied *a)
{
        uint64_t i;

        for (i = 0; i < a->cap; i++) {
                free(a->at[i]);
        }
        free(a->at);
        memset(a, 0, sizeof *a);
}

static char *read_file(const char *path, size_t *len)
{
        FILE *f = fopen(path, "r");
        char *buf = NULL;
        size_t cap = 0, n = 0;

        *len = 0;
        if (f == NULL) {
                return NULL;
        }
        for (;;) {
                size_t got;
                if (cap - n < 65536) {
                        char *p = realloc(buf, cap + 65536 + 1);
                        if (p == NULL) {
                                break;
                        }
                        buf = p;
                        cap += 65536;
                }
                got = fread(buf + n, 1, cap - n, f);
                n += got;
                if (got == 0) {
                        break;
                }
        }
        fclose(f);
        if (buf != NULL) {
                buf[n] = '\0';
        }
        *len = n;
        return buf;
}

static bool is_prefix(const char *a, const char *b)
{
        return strncmp(a, b, strlen(a)) == 0;
}

/* Store one index's lines. A replay after a restart must repeat what was
 * logged before (or extend it, if the node died within the entry). */
static int applied_put(struct harness *h, unsigned id, struct applied *a,
                       uint64_t index, char *text)
{
        char **slot;

        if (index >= a->cap) {
                uint64_t cap = a->cap == 0 ? 1024 : a->cap;
                char **p;
                while (cap <= index) {
                        cap *= 2;
                }
                p = realloc(a->at, cap * sizeof *p);
                if (p == NULL) {
                        free(text);
                        return -1;
                }
                memset(p + a->cap, 0, (cap - a->cap) * sizeof *p);
                a->at = p;
                a->cap = cap;
        }
        slot = &a->at[index];
        if (*slot != NULL) {
                if (is_prefix(*slot, text)) {
                        free(*slot);
                        *slot = text;
                } else if (!is_prefix(text, *slot)) {
                        set_err(h,
                                "node %u applied index %" PRIu64
                                " differently when it replayed its log:\n"
                                "#   first:  %.300s\n#   replay: %.300s",
                                id, index, *slot, text);
                        free(text);
                        return -1;
                }
        } else {
                *slot = text;
        }
        if (index > a->last) {
                a->last = index;
        }
        return 0;
}

static int applied_load(struct harness *h, unsigned id, struct applied *a)
{
        size_t len;
        char *buf = read_file(h->nodes[id - 1].apply_log, &len);
        char *p, *group = NULL;
        uint64_t group_index = 0;
        bool group_done = false;
        size_t glen = 0;
        int rv = 0;

        memset(a, 0, sizeof *a);
        if (buf == NULL) {
                return 0; /* never applied anything */
        }
        /* Each line is cut at its newline before it is searched: a search
         * that ran on into the rest of the file made the check quadratic
         * in the log's length (and ASan's strstr measures its whole
         * haystack on every call). */
        for (p = buf; *p != '\0' && rv == 0;) {
                char *nl = strchr(p, '\n');
                char *ix, *mono, *g;
                uint64_t index;
                size_t l;
                if (nl == NULL) {
                        break; /* a torn last line: the node died */
                }
                *nl = '\0';
                ix = strstr(p, "\"index\":");
                if (ix == NULL) {
                        p = nl + 1;
                        continue;
                }
                index = strtoull(ix + 8, NULL, 10);
                if (group != NULL && (index != group_index || group_done)) {
                        rv = applied_put(h, id, a, group_index, group);
                        group = NULL;
                        glen = 0;
                        if (rv != 0) {
                                break;
                        }
                }
                /* Nodes apply at different times: compare the lines
                 * without their trailing mono_ns. */
                mono = strstr(p, ",\"mono_ns\":");
                if (mono != NULL) {
                        *mono++ = '}';
                        *mono = '\0';
                }
                l = strlen(p);
                g = realloc(group, glen + l + 2);
                if (g == NULL) {
                        rv = -1;
                        break;
                }
                group = g;
                memcpy(group + glen, p, l);
                glen += l;
                group[glen++] = '\n';
                group[glen] = '\0';
                group_index = index;
                /* Every entry's events end with an ENTRY line. */
                group_done = strstr(p, "\"event\":\"ENTRY\"") != NULL;
                p = nl + 1;
        }
        if (rv == 0 && group != NULL) {
                rv = applied_put(h, id, a, group_index, group);
                group = NULL;
        }
        free(group);
        free(buf);
        return rv;
}

int harness_check_apply_logs(struct harness *h, unsigned *compared)
{
        struct applied logs[HARNESS_MAX_NODES];
        unsigned i, j, n = 0;
        uint64_t k;
        int rv = 0;

        memset(logs, 0, sizeof logs);
        for (i = 0; i < h->n && rv == 0; i++) {
                rv = applied_load(h, i + 1, &logs[i]);
        }
        for (i = 0; i < h->n && rv == 0; i++) {
                for (j = i + 1; j < h->n && rv == 0; j++) {
                        uint64_t last = logs[i].last < logs[j].last
                                            ? logs[i].last
                                            : logs[j].last;
                        for (k = 1; k <= last && rv == 0; k++) {
                                const char *x = logs[i].at[k];
                                const char *y = logs[j].at[k];
                                if (x == NULL || y == NULL) {
                                        continue;
                                }
                                n++;
                                if (strcmp(x, y) == 0) {
                                        continue;
                                }
                                /* Killed within an entry, never restarted. */
                                if ((k == logs[i].last && is_prefix(x, y)) ||
                                    (k == logs[j].last && is_prefix(y, x))) {
                                        continue;
                                }
                                set_err(h,
                                        "apply logs differ at index %" PRIu64
                                        ":\n#   node %u: %.300s\n#   node "
                                        "%u: %.300s",
                                        k, i + 1, x, j + 1, y);
                                rv = -1;
                        }
                }
        }
        for (i = 0; i < h->n; i++) {
                applied_free(&logs[i]);
        }
        if (compared != NULL) {
                *compared = n;
        }
        return rv;
}

unsigned harness_undecodable_entries(struct harness *h, unsigned *node)
{
        unsigned i, total = 0;

        for (i = 0; i < h->n; i++) {
                size_t len;
                char *buf = read_file(h->nodes[i].apply_log, &len);
                char *p = buf;
                unsigned n = 0;
                while (p != NULL &&
                       (p = strstr(p, "\"cause\":\"UNKNOWN\"")) != NULL) {
                        char *st = strstr(p, "\"status\":");
                        int status = st != NULL ? atoi(st + 9) : 0;
                        if (status == BATON_EVERSION ||
                            status == BATON_EMALFORMED) {
                                n++;
                        }
                        p++;
                }
                free(buf);
                if (n > 0 && total == 0 && node != NULL) {
                        *node = i + 1;
                }
                total += n;
        }
        return total;
}

unsigned harness_log_count(const struct harness *h, unsigned id,
                           const char *needle)
{
        FILE *f = fopen(h->nodes[id - 1].log_path, "r");
        char line[2048];
        unsigned n = 0;

        if (f == NULL) {
                return 0;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                n += strstr(line, needle) != NULL;
        }
        fclose(f);
        return n;
}

/* Print the first report's line and the ones after it (up to REPORT_LINES):
 * a sanitizer's stack, which the summary line alone does not give. `nl` is
 * where `line` ended (NULL: the end of the log). */
#define REPORT_LINES 36
static void report_lines(unsigned node, const char *line, const char *nl)
{
        unsigned k;

        printf("# node %u's log: %s\n", node, line);
        for (k = 1; k < REPORT_LINES && nl != NULL; k++) {
                const char *next = nl + 1;
                const char *end = strchr(next, '\n');

                if (*next == '\0') {
                        break;
                }
                printf("#   %.*s\n",
                       (int)(end != NULL ? end - next : (long)strlen(next)),
                       next);
                nl = end;
        }
}

unsigned harness_scan_logs(struct harness *h, char *first, size_t cap)
{
        static const char *const bad[] = {
            "ERROR: AddressSanitizer",
            "ERROR: LeakSanitizer",
            "runtime error:",
            "Assertion",
            "assertion",
            "WARNING: ThreadSanitizer",
        };
        unsigned i, k, n = 0;

        if (first != NULL && cap > 0) {
                first[0] = '\0';
        }
        for (i = 0; i < h->n; i++) {
                size_t len;
                char *buf = read_file(h->nodes[i].log_path, &len);
                char *line = buf;
                while (line != NULL && *line != '\0') {
                        char *nl = strchr(line, '\n');
                        if (nl != NULL) {
                                *nl = '\0';
                        }
                        for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
                                if (strstr(line, bad[k]) == NULL) {
                                        continue;
                                }
                                if (n++ == 0) {
                                        report_lines(i + 1, line, nl);
                                }
                                if (n == 1 && first != NULL) {
                                        snprintf(first, cap, "node %u: %.200s",
                                                 i + 1, line);
                                }
                                break;
                        }
                        line = nl != NULL ? nl + 1 : NULL;
                }
                free(buf);
        }
        return n;
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

bool harness_apply_log_has(struct harness *h, const char *needle)
{
        for (unsigned i = 0; i < h->n; i++) {
                size_t len;
                char *buf = read_file(h->nodes[i].apply_log, &len);
                bool found = buf != NULL && strstr(buf, needle) != NULL;

                free(buf);
                if (found) {
                        return true;
                }
        }
        return false;
}
