/* batond under a service manager (see sc_notify.h). */
#include "sc_notify.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tlsfiles.h"

/* Half of it is how often a node pings. */
#define WATCHDOG_USEC 400000

/* What one node sent the socket, in order of arrival. */
struct heard_from {
        unsigned ready;    /* READY=1 */
        unsigned pings;    /* WATCHDOG=1 */
        unsigned stopping; /* STOPPING=1 */
        unsigned messages;
        bool ready_first;     /* its first message was READY=1 */
        bool served_at_ready; /* /health answered 200 right after */
        char status[8][160];  /* STATUS= texts */
        unsigned n_status;
};

struct notify_sink {
        int fd;
        char path[108];
        struct heard_from nodes[HARNESS_MAX_NODES];
        unsigned strangers; /* messages from no node of ours */
};

static int sink_open(struct notify_sink *s, const char *dir)
{
        struct sockaddr_un sa;
        int on = 1;

        memset(s, 0, sizeof *s);
        snprintf(s->path, sizeof s->path, "%s/notify-%d.sock", dir,
                 (int)getpid());
        unlink(s->path);
        s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s->fd < 0) {
                return -1;
        }
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        memcpy(sa.sun_path, s->path, strlen(s->path) + 1);
        /* The kernel then says which process sent each message. */
        if (setsockopt(s->fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
            bind(s->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                close(s->fd);
                return -1;
        }
        return 0;
}

static void sink_close(struct notify_sink *s)
{
        close(s->fd);
        unlink(s->path);
}

/* The node (index) that process `pid` is, or -1. */
static int node_of_pid(const struct harness *h, pid_t pid)
{
        unsigned i;

        for (i = 0; i < h->n; i++) {
                if (h->nodes[i].pid == pid) {
                        return (int)i;
                }
        }
        return -1;
}

/* Take one message apart: its lines are assignments. */
static void take(struct ctx *x, struct notify_sink *s, int i, char *msg)
{
        struct heard_from *f = &s->nodes[i];
        char *save = NULL, *line;
        int status = 0;
        char body[1024];

        for (line = strtok_r(msg, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                if (strcmp(line, "READY=1") == 0) {
                        f->ready_first = f->messages == 0;
                        f->ready++;
                        /* Sent once the node serves: its metrics port
                         * answers now, not later. */
                        f->served_at_ready =
                            harness_http_get(&x->h, (unsigned)i + 1, "/health",
                                             &status, body, sizeof body,
                                             2000) > 0 &&
                            status == 200;
                } else if (strcmp(line, "WATCHDOG=1") == 0) {
                        f->pings++;
                } else if (strcmp(line, "STOPPING=1") == 0) {
                        f->stopping++;
                } else if (strncmp(line, "STATUS=", 7) == 0 &&
                           f->n_status < 8) {
                        snprintf(f->status[f->n_status++], sizeof f->status[0],
                                 "%s", line + 7);
                }
        }
        f->messages++;
}

/* Read what arrives for `ms`, or until `done` says so. */
static void sink_listen(struct ctx *x, struct notify_sink *s, int ms,
                        bool (*done)(const struct notify_sink *s,
                                     const void *arg),
                        const void *arg)
{
        int64_t end = tclient_now_ms() + ms;
        char buf[1024];
        union {
                struct cmsghdr h;
                char room[CMSG_SPACE(sizeof(struct ucred))];
        } control;

        while (tclient_now_ms() < end && (done == NULL || !done(s, arg))) {
                struct pollfd p = {s->fd, POLLIN, 0};
                struct iovec iov = {buf, sizeof buf - 1};
                struct msghdr m;
                struct cmsghdr *c;
                pid_t pid = 0;
                ssize_t n;
                int i;

                if (poll(&p, 1, 50) <= 0) {
                        continue;
                }
                memset(&m, 0, sizeof m);
                m.msg_iov = &iov;
                m.msg_iovlen = 1;
                m.msg_control = &control;
                m.msg_controllen = sizeof control;
                n = recvmsg(s->fd, &m, MSG_DONTWAIT);
                if (n <= 0) {
                        continue;
                }
                buf[n] = '\0';
                for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
                        if (c->cmsg_level == SOL_SOCKET &&
                            c->cmsg_type == SCM_CREDENTIALS) {
                                struct ucred cred;
                                memcpy(&cred, CMSG_DATA(c), sizeof cred);
                                pid = cred.pid;
                        }
                }
                i = node_of_pid(&x->h, pid);
                if (i < 0) {
                        s->strangers++;
                        continue;
                }
                take(x, s, i, buf);
        }
}

static bool all_ready(const struct notify_sink *s, const void *arg)
{
        const struct harness *h = arg;
        unsigned i;

        for (i = 0; i < h->n; i++) {
                if (s->nodes[i].ready == 0) {
                        return false;
                }
        }
        return true;
}

/* Some node said it leads, another that it follows. */
static bool roles_told(const struct notify_sink *s, const void *arg)
{
        const struct harness *h = arg;
        bool lead = false, follow = false;
        unsigned i, k;

        for (i = 0; i < h->n; i++) {
                for (k = 0; k < s->nodes[i].n_status; k++) {
                        lead = lead || strstr(s->nodes[i].status[k],
                                              "leader of term") != NULL;
                        follow = follow || strstr(s->nodes[i].status[k],
                                                  "follower of node") != NULL;
                }
        }
        return lead && follow;
}

static bool stopped_told(const struct notify_sink *s, const void *arg)
{
        return s->nodes[*(const unsigned *)arg].stopping > 0;
}

static bool ready_again(const struct notify_sink *s, const void *arg)
{
        return s->nodes[*(const unsigned *)arg].ready > 0;
}

/* The environment a service manager gives a Type=notify service with a
 * watchdog; `pid` NULL leaves WATCHDOG_PID out. */
static void manager_env(const char *socket_path, const char *pid)
{
        char usec[32];

        snprintf(usec, sizeof usec, "%d", WATCHDOG_USEC);
        if (socket_path == NULL) {
                unsetenv("NOTIFY_SOCKET");
                unsetenv("WATCHDOG_USEC");
                unsetenv("WATCHDOG_PID");
                return;
        }
        setenv("NOTIFY_SOCKET", socket_path, 1);
        setenv("WATCHDOG_USEC", usec, 1);
        if (pid != NULL) {
                setenv("WATCHDOG_PID", pid, 1);
        } else {
                unsetenv("WATCHDOG_PID");
        }
}

/* Pings every 200 ms: in the next 1.5 s at least 4 from every node. */
static void expect_pings(struct ctx *x, struct notify_sink *s, const char *when)
{
        unsigned i;

        for (i = 0; i < x->h.n; i++) {
                s->nodes[i].pings = 0;
        }
        sink_listen(x, s, 1500, NULL, NULL);
        for (i = 0; i < x->h.n; i++) {
                EXPECT(x, s->nodes[i].pings >= 4,
                       "node %u sent %u WATCHDOG=1 in 1.5 s %s with "
                       "WATCHDOG_USEC=%d (want >= 4)",
                       i + 1, s->nodes[i].pings, when, WATCHDOG_USEC);
        }
}

/* The checks after the cluster started: one failure ends the scenario. */
static void check_started(struct ctx *x, struct notify_sink *s)
{
        unsigned i;

        sink_listen(x, s, HEALTHY_MS, all_ready, &x->h);
        for (i = 0; i < x->h.n; i++) {
                struct heard_from *f = &s->nodes[i];
                EXPECT(x, f->ready == 1,
                       "node %u sent READY=1 %u times (want once)", i + 1,
                       f->ready);
                EXPECT(x, f->ready_first,
                       "node %u sent something before READY=1", i + 1);
                EXPECT(x, f->served_at_ready,
                       "node %u sent READY=1 before its metrics port "
                       "answered GET /health with 200",
                       i + 1);
                EXPECT(x, f->n_status > 0 && f->status[0][0] != '\0',
                       "node %u: READY=1 without a STATUS= line", i + 1);
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
        sink_listen(x, s, 6000, roles_told, &x->h);
        EXPECT(x, roles_told(s, &x->h),
               "no STATUS= said 'leader of term' and another 'follower of "
               "node' (node 1's last: '%s')",
               s->nodes[0].status[s->nodes[0].n_status - 1]);
        expect_pings(x, s, "from the start");
        if (!x->ok) {
                return;
        }
        EXPECT(x, s->strangers == 0, "%u messages from unknown processes",
               s->strangers);
}

/* A manager that stops reading: its queue is full after 10 datagrams
 * (net.unix.max_dgram_qlen), 3 nodes pinging 5 times a second fill it in
 * a second. The nodes go on serving, and ping again once it reads again.
 * With sd_notify's blocking send, every node's loop froze here. */
static void check_not_reading(struct ctx *x, struct notify_sink *s)
{
        struct timespec pause = {2, 500000000};

        nanosleep(&pause, NULL);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0,
               "with the manager not reading: %s", x->h.errmsg);
        sink_listen(x, s, 500, NULL, NULL); /* what was queued */
        expect_pings(x, s, "once the manager read again");
}

/* SIGTERM of a follower: STOPPING=1; restarted with the WATCHDOG_PID of
 * another process, it says READY=1 and does not ping. */
static void check_restart(struct ctx *x, struct notify_sink *s)
{
        unsigned leader = 0, id, i;

        EXPECT(x, harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        id = leader % x->h.n + 1;
        i = id - 1;
        EXPECT(x, harness_term(&x->h, id, NULL) == 0, "%s", x->h.errmsg);
        sink_listen(x, s, 5000, stopped_told, &i);
        EXPECT(x, s->nodes[i].stopping == 1,
               "node %u sent STOPPING=1 %u times after SIGTERM (want once)", id,
               s->nodes[i].stopping);
        EXPECT(x, harness_wait_exit(&x->h, id, HEALTHY_MS, NULL) == 0, "%s",
               x->h.errmsg);
        memset(&s->nodes[i], 0, sizeof s->nodes[i]);
        manager_env(s->path, "1"); /* init's pid, not batond's */
        EXPECT(x, harness_restart(&x->h, id) == 0, "%s", x->h.errmsg);
        sink_listen(x, s, HEALTHY_MS, ready_again, &i);
        EXPECT(x, s->nodes[i].ready == 1, "restarted node %u: no READY=1", id);
        sink_listen(x, s, 1500, NULL, NULL);
        EXPECT(x, s->nodes[i].pings == 0,
               "node %u pinged %u times with WATCHDOG_PID=1", id,
               s->nodes[i].pings);
        EXPECT(x, s->nodes[(i + 1) % x->h.n].pings >= 4,
               "node %u stopped pinging", (i + 1) % x->h.n + 1);
}

void sc_notify_socket(struct ctx *x)
{
        const char *tmp = getenv("BATON_TEST_TMPDIR");
        struct notify_sink *s = calloc(1, sizeof *s);

        EXPECT(x, s != NULL, "out of memory");
        if (sink_open(s, tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp") != 0) {
                fail_at(x, __LINE__, "a NOTIFY_SOCKET of the test's own: %s",
                        strerror(errno));
                free(s);
                return;
        }
        manager_env(s->path, NULL);
        if (harness_start(&x->h, 3, NULL, x->run->argv0, x->run->base_port) !=
            0) {
                fail_at(x, __LINE__, "%s", x->h.errmsg);
        } else {
                check_started(x, s);
                if (x->ok) {
                        check_not_reading(x, s);
                }
                if (x->ok) {
                        check_restart(x, s);
                }
        }
        manager_env(NULL, NULL);
        if (!x->ok) {
                x->h.failed = true;
        }
        harness_close(&x->h);
        sink_close(s);
        free(s);
}

/* --- systemd-run ----------------------------------------------------------
 */

/* Run argv (stdout and stderr to /dev/null); its exit status, or -1. */
static int run(char *const argv[])
{
        int st = 0;
        pid_t pid = fork();

        if (pid < 0) {
                return -1;
        }
        if (pid == 0) {
                if (freopen("/dev/null", "w", stdout) == NULL ||
                    freopen("/dev/null", "w", stderr) == NULL) {
                        _exit(127);
                }
                execvp(argv[0], argv);
                _exit(127);
        }
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
                return -1;
        }
        return WEXITSTATUS(st);
}

/* The first line `cmd` prints, without its newline ("" if none). */
static void first_line(const char *cmd, char *out, size_t cap)
{
        FILE *p = popen(cmd, "r");

        out[0] = '\0';
        if (p == NULL) {
                return;
        }
        if (fgets(out, (int)cap, p) != NULL) {
                out[strcspn(out, "\n")] = '\0';
        }
        pclose(p);
}

/* Whether systemd manages services here, as root; why not in `why`. */
static bool systemd_here(char *why, size_t cap)
{
        struct stat st;
        char state[64];

        if (stat("/run/systemd/system", &st) != 0) {
                snprintf(why, cap,
                         "systemd is not the service manager here "
                         "(no /run/systemd/system)");
                return false;
        }
        if (geteuid() != 0) {
                snprintf(why, cap, "not root: transient system units need it");
                return false;
        }
        first_line("systemctl is-system-running 2>/dev/null", state,
                   sizeof state);
        if (strcmp(state, "running") != 0 && strcmp(state, "degraded") != 0) {
                snprintf(why, cap, "systemctl is-system-running says '%s'",
                         state);
                return false;
        }
        return true;
}

/* Node 1 of x->h as a transient unit `unit`; systemd-run returns once the
 * start job is done, which for Type=notify is READY=1. */
static int run_unit(struct ctx *x, const char *unit)
{
        struct harness_node *nd = &x->h.nodes[0];
        char unit_arg[96], member[3 * HARNESS_ADDR_MAX];
        char *argv[48];
        unsigned a = 0;

        snprintf(unit_arg, sizeof unit_arg, "--unit=%s", unit);
        snprintf(member, sizeof member, "1 %s %s", nd->raft_address,
                 nd->client_address);
        argv[a++] = "systemd-run";
        argv[a++] = unit_arg;
        argv[a++] = "--collect";
        argv[a++] = "--property=Type=notify";
        argv[a++] = "--property=NotifyAccess=main";
        argv[a++] = "--property=WatchdogSec=5s";
        argv[a++] = "--property=TimeoutStartSec=60s";
        argv[a++] = x->h.batond;
        argv[a++] = "--id";
        argv[a++] = "1";
        argv[a++] = "--data-dir";
        argv[a++] = nd->data_dir;
        argv[a++] = "--metrics-address";
        argv[a++] = nd->metrics_address;
        argv[a++] = "--member";
        argv[a++] = member;
        tlsfiles_node_args(1, argv, &a);
        argv[a] = NULL;
        return run(argv);
}

static void under_systemd(struct ctx *x, const char *unit)
{
        char cmd[256], text[256], body[1024];
        int64_t end = tclient_now_ms() + 10000;
        int status = 0;

        EXPECT(x, run_unit(x, unit) == 0,
               "systemd-run of batond as %s failed (journalctl -u %s)", unit,
               unit);
        snprintf(cmd, sizeof cmd,
                 "systemctl show -p ActiveState --value %s 2>/dev/null", unit);
        first_line(cmd, text, sizeof text);
        EXPECT(x, strcmp(text, "active") == 0,
               "%s is '%s' once systemd-run returned, want active", unit, text);
        EXPECT(x,
               harness_http_get(&x->h, 1, "/health", &status, body, sizeof body,
                                5000) > 0 &&
                   status == 200,
               "GET /health of the unit's node: %d %s", status, body);
        snprintf(cmd, sizeof cmd,
                 "systemctl show -p StatusText --value %s 2>/dev/null", unit);
        do {
                first_line(cmd, text, sizeof text);
        } while (strstr(text, "leader of term") == NULL &&
                 tclient_now_ms() < end && usleep(100000) == 0);
        EXPECT(x, strstr(text, "leader of term") != NULL,
               "StatusText of %s: '%s', want 'leader of term'", unit, text);
}

void sc_systemd_run(struct ctx *x, bool *skipped)
{
        char unit[64];
        char *stop[] = {"systemctl", "stop", unit, NULL};

        *skipped = false;
        if (!systemd_here(x->why, sizeof x->why)) {
                *skipped = true;
                return;
        }
        /* A node of our own ports and directory, started by systemd. */
        if (harness_start(&x->h, 1, NULL, x->run->argv0, x->run->base_port) !=
                0 ||
            harness_wait_leader(&x->h, HEALTHY_MS, NULL) != 0) {
                fail_at(x, __LINE__, "%s", x->h.errmsg);
                harness_close(&x->h);
                return;
        }
        harness_stop(&x->h);
        snprintf(unit, sizeof unit, "baton-it-%d", (int)getpid());
        under_systemd(x, unit);
        run(stop);
        if (!x->ok) {
                x->h.failed = true;
        }
        harness_close(&x->h);
}
