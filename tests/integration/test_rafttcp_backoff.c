/* The retransmission cap on batond's raft streams (src/server/raft/rafttcp.c,
 * docs/raft.md §2), on real batond processes on 127.0.0.1, printing TAP:
 * every raft stream of every node, dialled or accepted, retransmits at
 * least once a second (TCP_RTO_MAX_MS of 1000), so that a node cut off
 * for seconds is heard again within a second of the heal. The test takes
 * each node's sockets with pidfd_getfd(2) and reads the option; it skips
 * when the kernel has no such option (before Linux 6.15) or may not take
 * another process's descriptors.
 * Environment as test_integration (BATOND, BATON_TEST_BASE_PORT,
 * BATON_TEST_TMPDIR, BATON_TEST_WATCHDOG). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "scenario.h"

#define WATCHDOG_S 120
#ifndef TCP_RTO_MAX_MS
#define TCP_RTO_MAX_MS 44
#endif
#define WANT_MS 1000

/* Ports of the nodes' raft addresses ("host:port"). */
static unsigned raft_port(const struct harness *h, unsigned i)
{
        const char *p = strrchr(h->nodes[i].raft_address, ':');
        return p != NULL ? (unsigned)atoi(p + 1) : 0;
}

static bool is_raft_port(const struct harness *h, unsigned n, unsigned port)
{
        unsigned i;
        for (i = 0; i < n; i++) {
                if (raft_port(h, i) == port) {
                        return true;
                }
        }
        return false;
}

/* The port of fd's local (peer = false) or remote end, or 0. */
static unsigned end_port(int fd, bool peer)
{
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        int rv = peer ? getpeername(fd, (struct sockaddr *)&sa, &len)
                      : getsockname(fd, (struct sockaddr *)&sa, &len);
        if (rv != 0 || sa.sin_family != AF_INET) {
                return 0;
        }
        return ntohs(sa.sin_port);
}

struct tally {
        unsigned streams, capped, unsupported, denied;
        int worst; /* the first uncapped value seen */
};

/* Read the option on every connected raft stream of process pid. */
static void count_streams(const struct harness *h, unsigned n, pid_t pid,
                          struct tally *t)
{
        char dir[64];
        struct dirent *e;
        DIR *d;
        int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

        snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
        d = opendir(dir);
        if (pfd < 0 || d == NULL) {
                t->denied++;
                if (d != NULL) {
                        closedir(d);
                }
                if (pfd >= 0) {
                        close(pfd);
                }
                return;
        }
        while ((e = readdir(d)) != NULL) {
                int fd, v = 0;
                socklen_t len = sizeof v;
                if (e->d_name[0] == '.') {
                        continue;
                }
                fd = (int)syscall(SYS_pidfd_getfd, pfd, atoi(e->d_name), 0);
                if (fd < 0) {
                        if (errno == EPERM) {
                                t->denied++;
                        }
                        continue;
                }
                if (end_port(fd, true) != 0 &&
                    (is_raft_port(h, n, end_port(fd, false)) ||
                     is_raft_port(h, n, end_port(fd, true)))) {
                        t->streams++;
                        if (getsockopt(fd, IPPROTO_TCP, TCP_RTO_MAX_MS, &v,
                                       &len) != 0) {
                                t->unsupported++;
                        } else if (v == WANT_MS) {
                                t->capped++;
                        } else if (t->worst == 0) {
                                t->worst = v;
                        }
                }
                close(fd);
        }
        closedir(d);
        close(pfd);
}

/* 0 pass, 1 fail, 77 skip (why in *why). */
static int sc_backoff(struct ctx *x, char *why, size_t cap)
{
        struct harness *h = &x->h;
        struct tally t = {0};
        unsigned leader, i;

        if (harness_wait_leader(h, HEALTHY_MS, &leader) != 0) {
                snprintf(why, cap, "no leader: %.200s", h->errmsg);
                return 1;
        }
        for (i = 0; i < x->n; i++) {
                count_streams(h, x->n, h->nodes[i].pid, &t);
        }
        printf("# %u raft streams, %u capped at %d ms, %u without the option, "
               "%u descriptors denied\n",
               t.streams, t.capped, WANT_MS, t.unsupported, t.denied);
        if (t.streams == 0 && t.denied > 0) {
                snprintf(why, cap,
                         "cannot take batond's descriptors (pidfd_getfd)");
                return 77;
        }
        if (t.unsupported > 0 && t.capped == 0) {
                snprintf(why, cap,
                         "the kernel has no TCP_RTO_MAX_MS (Linux 6.15)");
                return 77;
        }
        /* Each node dials its 2 peers and accepts their 2 dials. */
        if (t.streams < 2 * x->n) {
                snprintf(why, cap,
                         "%u raft streams found, expected at least %u",
                         t.streams, 2 * x->n);
                return 1;
        }
        if (t.capped != t.streams) {
                snprintf(why, cap,
                         "%u of %u raft streams keep the kernel's backoff "
                         "(TCP_RTO_MAX_MS %d ms)",
                         t.streams - t.capped, t.streams, t.worst);
                return 1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        const char *wd = getenv("BATON_TEST_WATCHDOG");
        struct run r;
        struct ctx x;
        char why[256] = "";
        int st = 1;

        (void)argc;
        memset(&r, 0, sizeof r);
        memset(&x, 0, sizeof x);
        r.argv0 = argv[0];
        x.run = &r;
        x.n = 3;
        setvbuf(stdout, NULL, _IOLBF, 0);
        harness_setup_process(wd != NULL ? (unsigned)atoi(wd) : WATCHDOG_S);
        printf("1..1\n");
        if (harness_start(&x.h, 3, NULL, r.argv0, 0) != 0) {
                snprintf(why, sizeof why, "a new cluster: %.200s", x.h.errmsg);
        } else {
                st = sc_backoff(&x, why, sizeof why);
        }
        if (st == 77) {
                printf("ok 1 # SKIP %s\n", why);
        } else {
                printf("%s 1 - every raft stream retransmits at least once a "
                       "second%s%s\n",
                       st == 0 ? "ok" : "not ok", st == 0 ? "" : ": ", why);
        }
        harness_stop(&x.h);
        x.h.failed = st == 1;
        harness_close(&x.h);
        return st == 1 ? 1 : 0;
}
