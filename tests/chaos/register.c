/*
 * chaos-register: the fenced register of the chaos suite (docs/chaos.md,
 * "Fenced register"). It is never faulted. Per key it keeps the highest
 * token seen, the highest token a writer's request carried, a value and a
 * version (the count of accepted writes); it refuses a writer's request
 * whose token is below the highest and a reader's whose token is below the
 * highest writer's (unless --no-fencing), and logs every request, flushed,
 * before it answers. The counter workload's requests are all a writer's;
 * the rwlock workload's say which they are. A semaphore holder's requests
 * (mode s) name the grant's session, and tokens do not order a
 * semaphore's holders: the register refuses one once a node's apply log
 * (--apply-log, one per node) shows that grant ended. --init KEY=VALUE
 * starts a key at that value (version 0), logged as an `init` line
 * before the first request: the transfers workload's accounts and their
 * starting balances.
 *
 *     chaos-register --socket PATH --log FILE [--no-fencing]
 *         [--apply-log PATH]... [--init KEY=VALUE]...
 *
 * One thread, one ppoll() loop over a Unix stream listener and up to
 * MAX_CONNS clients. SIGTERM or SIGINT: close everything, remove the
 * socket, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "applyfeed.h"

#define LINE_MAX_BYTES 512    /* a request line, newline excluded */
#define KEY_MAX        255    /* bytes of a key */
#define MAX_KEYS       100000 /* keys the register will ever hold */
#define MAX_CONNS      256    /* clients at once; more are closed at once */
#define OUT_CAP        16384  /* unsent answer bytes of one client */
#define OUT_PAUSE      4096   /* stop reading a client with this much unsent */
#define N_BUCKETS      4096   /* hash buckets (a power of two) */
#define NO_WORKER      (-1)   /* w= of a connection that sent no HELLO */
#define MAX_INITS      64     /* --init options */

struct key {
        struct key *next; /* bucket chain */
        uint64_t max;     /* highest token seen */
        uint64_t wmax;    /* highest token of a writer's request seen */
        uint64_t value;
        uint64_t version; /* accepted writes */
        char name[];
};

struct conn {
        int fd;
        long worker;
        bool discarding; /* skipping the rest of an over-long line */
        size_t in_len;
        size_t out_len;
        char in[LINE_MAX_BYTES + 1];
        char out[OUT_CAP];
};

struct reg {
        const char *socket_path;
        bool fencing;
        struct applyfeed *feed; /* the nodes' apply logs */
        int log_fd;
        int listen_fd;
        size_t n_keys;
        struct key *buckets[N_BUCKETS];
        struct conn *conns[MAX_CONNS];
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
        stop_signal = sig;
}

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
               (uint64_t)ts.tv_nsec;
}

/* FNV-1a: enough for a few hundred keys named by the suite. */
static size_t bucket_of(const char *name)
{
        uint64_t h = UINT64_C(14695981039346656037);

        for (; *name != '\0'; name++) {
                h = (h ^ (unsigned char)*name) * UINT64_C(1099511628211);
        }
        return (size_t)(h & (N_BUCKETS - 1));
}

/* The key `name`, created (all zero) if new; NULL when the register is
 * full or out of memory. */
static struct key *key_get(struct reg *r, const char *name)
{
        size_t b = bucket_of(name), len;
        struct key *k;

        for (k = r->buckets[b]; k != NULL; k = k->next) {
                if (strcmp(k->name, name) == 0) {
                        return k;
                }
        }
        if (r->n_keys >= MAX_KEYS) {
                return NULL;
        }
        len = strlen(name);
        k = calloc(1, sizeof *k + len + 1);
        if (k == NULL) {
                return NULL;
        }
        memcpy(k->name, name, len + 1);
        k->next = r->buckets[b];
        r->buckets[b] = k;
        r->n_keys++;
        return k;
}

/* Queue an answer line for `c`; the caller flushes. */
__attribute__((format(printf, 2, 3))) static void reply(struct conn *c,
                                                        const char *fmt, ...)
{
        size_t room = sizeof c->out - c->out_len;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(c->out + c->out_len, room, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= room) {
                return; /* cannot happen: reading pauses long before */
        }
        c->out_len += (size_t)n;
}

/* Append one line to the log with a single write(2): 0 or -1. */
static int log_line(struct reg *r, const char *line, size_t len)
{
        ssize_t n;

        do {
                n = write(r->log_fd, line, len);
        } while (n < 0 && errno == EINTR);
        return n == (ssize_t)len ? 0 : -1;
}

/* Split `line` at runs of spaces into at most `max` fields: their count,
 * or max + 1 when there are more. */
static int split(char *line, char **fields, int max)
{
        int n = 0;
        char *p = line;

        for (;;) {
                while (*p == ' ') {
                        p++;
                }
                if (*p == '\0') {
                        return n;
                }
                if (n == max) {
                        return max + 1;
                }
                fields[n++] = p;
                while (*p != ' ' && *p != '\0') {
                        p++;
                }
                if (*p == ' ') {
                        *p++ = '\0';
                }
        }
}

/* A decimal number with no sign, up to 2^64-1: 0 or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
        uint64_t v = 0;

        if (*s == '\0' || strlen(s) > 20) {
                return -1;
        }
        for (; *s != '\0'; s++) {
                unsigned d;
                if (*s < '0' || *s > '9') {
                        return -1;
                }
                d = (unsigned)(*s - '0');
                if (v > (UINT64_MAX - d) / 10) {
                        return -1;
                }
                v = v * 10 + d;
        }
        *out = v;
        return 0;
}

/* 1..KEY_MAX printable bytes (fields hold no spaces already). */
static bool key_ok(const char *s)
{
        size_t n = strlen(s), i;

        if (n == 0 || n > KEY_MAX) {
                return false;
        }
        for (i = 0; i < n; i++) {
                if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127) {
                        return false;
                }
        }
        return true;
}

/* The requests, and the words the log names them by. */
enum req {
        REQ_READ,
        REQ_WRITE,
        REQ_ENTER,
        REQ_LEAVE,
};

static const char *const req_names[] = {"read", "write", "enter", "leave"};

/* A parsed request: `reader` for a reader's (mode r), `sem` for a
 * semaphore holder's (mode s), else a writer's. */
struct request {
        enum req op;
        const char *name;
        uint64_t token;
        uint64_t value; /* WRITE */
        uint64_t based; /* WRITE */
        bool reader;
        bool sem;
        uint64_t session; /* sem: the session of the grant */
};

/*
 * Whether the fence lets `q` through: a writer's token must be at least
 * every token seen (a writer's grant is newer than every grant before
 * it), a reader's at least every writer's (readers hold together). A
 * semaphore's tokens do not order its holders (one granted long ago may
 * hold on while later ones come and go), so the register asks, as a
 * resource would ask the lock service, whether the grant ended: in the
 * nodes' apply logs; `*ended` is where.
 */
static bool admitted(const struct reg *r, const struct key *k,
                     const struct request *q, uint64_t *ended)
{
        *ended = 0;
        if (!r->fencing) {
                return true;
        }
        if (q->sem) {
                if (r->feed != NULL) {
                        applyfeed_update(r->feed);
                        *ended = applyfeed_ended(r->feed, q->name, q->token,
                                                 q->session);
                }
                return *ended == 0;
        }
        return q->token >= (q->reader ? k->wmax : k->max);
}

/* The mode's letter in the log. */
static char mode_letter(const struct request *q)
{
        return q->sem ? 's' : q->reader ? 'r' : 'w';
}

/* Decide, log, then apply and answer. */
static void serve(struct reg *r, struct conn *c, struct request *q)
{
        char line[LINE_MAX_BYTES + 256];
        struct key *k = key_get(r, q->name);
        uint64_t max, wmax, version, ended;
        bool ok, write = q->op == REQ_WRITE;
        int n;

        if (k == NULL) {
                reply(c, "ERR too many keys\n");
                return;
        }
        max = k->max;
        wmax = k->wmax;
        ok = admitted(r, k, q, &ended);
        version = k->version + (ok && write ? 1 : 0);
        if (!write) {
                q->value = k->value;
                q->based = 0;
        }
        n = snprintf(line, sizeof line,
                     "t=%llu w=%ld op=%s key=%s token=%llu result=%s "
                     "max=%llu value=%llu version=%llu based=%llu mode=%c "
                     "wmax=%llu",
                     (unsigned long long)now_ns(), c->worker, req_names[q->op],
                     q->name, (unsigned long long)q->token, ok ? "ok" : "stale",
                     (unsigned long long)max, (unsigned long long)q->value,
                     (unsigned long long)version, (unsigned long long)q->based,
                     mode_letter(q), (unsigned long long)wmax);
        if (n >= 0 && (size_t)n < sizeof line) {
                n += q->sem ? snprintf(line + n, sizeof line - (size_t)n,
                                       " session=%llu ended=%llu\n",
                                       (unsigned long long)q->session,
                                       (unsigned long long)ended)
                            : snprintf(line + n, sizeof line - (size_t)n, "\n");
        }
        /* Unlogged means undone: the log is the register's testimony. */
        if (n < 0 || (size_t)n >= sizeof line ||
            log_line(r, line, (size_t)n) != 0) {
                reply(c, "ERR log write failed\n");
                return;
        }
        if (!ok) {
                reply(c, "STALE %llu\n",
                      (unsigned long long)(q->sem      ? ended
                                           : q->reader ? wmax
                                                       : max));
                return;
        }
        /* A semaphore holder's token raises no bound: tokens do not order
         * its holders. */
        if (!q->sem && q->token > k->max) {
                k->max = q->token;
        }
        if (!q->sem && !q->reader && q->token > k->wmax) {
                k->wmax = q->token;
        }
        switch (q->op) {
        case REQ_WRITE:
                k->value = q->value;
                k->version = version;
                reply(c, "OK %llu\n", (unsigned long long)version);
                break;
        case REQ_LEAVE:
                reply(c, "OK\n");
                break;
        default:
                reply(c, "OK %llu %llu\n", (unsigned long long)k->value,
                      (unsigned long long)k->version);
                break;
        }
}

/* --init KEY=VALUE: the key starts at VALUE (version 0), and the log says
 * so first. 0, or -1 with a message on stderr. */
static int init_key(struct reg *r, const char *arg)
{
        char name[KEY_MAX + 1], line[LINE_MAX_BYTES + 128];
        const char *eq = strchr(arg, '=');
        size_t before = r->n_keys;
        struct key *k;
        uint64_t value;
        int n;

        if (eq == NULL || (size_t)(eq - arg) > KEY_MAX ||
            parse_u64(eq + 1, &value) != 0) {
                fprintf(stderr, "chaos-register: --init KEY=VALUE: %s\n", arg);
                return -1;
        }
        memcpy(name, arg, (size_t)(eq - arg));
        name[eq - arg] = '\0';
        if (!key_ok(name)) {
                fprintf(stderr, "chaos-register: --init: bad key in %s\n", arg);
                return -1;
        }
        k = key_get(r, name);
        if (k == NULL || r->n_keys == before) {
                fprintf(stderr, "chaos-register: --init %s: %s\n", name,
                        k == NULL ? "out of memory" : "given twice");
                return -1;
        }
        k->value = value;
        n = snprintf(line, sizeof line,
                     "t=%llu w=%d op=init key=%s token=0 result=ok max=0 "
                     "value=%llu version=0 based=0 mode=w wmax=0\n",
                     (unsigned long long)now_ns(), NO_WORKER, name,
                     (unsigned long long)value);
        if (n < 0 || (size_t)n >= sizeof line ||
            log_line(r, line, (size_t)n) != 0) {
                fprintf(stderr, "chaos-register: cannot log --init %s\n", name);
                return -1;
        }
        return 0;
}

/* The mode fields `f[0..n)` after the token: "r", "w" or "s <session>",
 * into `q`: 0 or -1. */
static int parse_mode(char **f, int n, struct request *q)
{
        if (n == 1 && (strcmp(f[0], "r") == 0 || strcmp(f[0], "w") == 0)) {
                q->reader = f[0][0] == 'r';
                return 0;
        }
        if (n == 2 && strcmp(f[0], "s") == 0 &&
            parse_u64(f[1], &q->session) == 0) {
                q->sem = true;
                return 0;
        }
        return -1;
}

/* The fields after the verb of READ, WRITE, ENTER or LEAVE into `q`: 0,
 * or -1 when they are malformed. */
static int parse_request(char **f, int n, struct request *q)
{
        if (n < 3 || !key_ok(f[1]) || parse_u64(f[2], &q->token) != 0) {
                return -1;
        }
        q->name = f[1];
        q->reader = false;
        q->sem = false;
        switch (q->op) {
        case REQ_READ:
                return n == 3 || parse_mode(f + 3, n - 3, q) == 0 ? 0 : -1;
        case REQ_WRITE:
                return n == 5 && parse_u64(f[3], &q->value) == 0 &&
                               parse_u64(f[4], &q->based) == 0
                           ? 0
                           : -1;
        default:
                return parse_mode(f + 3, n - 3, q);
        }
}

/* One complete request line (no newline). Malformed lines get ERR and
 * change nothing. */
static void handle_line(struct reg *r, struct conn *c, char *line)
{
        static const char *const verbs[] = {"READ", "WRITE", "ENTER", "LEAVE"};
        static const char *const usages[] = {
            "READ <key> <token> [r|w|s <session>]",
            "WRITE <key> <token> <value> <based_on>",
            "ENTER <key> <token> r|w|s <session>",
            "LEAVE <key> <token> r|w|s <session>",
        };
        struct request q;
        uint64_t w;
        char *f[6];
        size_t len = strlen(line), i;
        int n;

        if (len > 0 && line[len - 1] == '\r') {
                line[len - 1] = '\0';
        }
        n = split(line, f, 5);
        if (n == 0) {
                reply(c, "ERR empty line\n");
                return;
        }
        if (strcmp(f[0], "HELLO") == 0) {
                if (n != 2 || parse_u64(f[1], &w) != 0 || w > INT32_MAX) {
                        reply(c, "ERR usage: HELLO <worker>\n");
                } else if (c->worker != NO_WORKER) {
                        reply(c, "ERR HELLO twice\n");
                } else {
                        c->worker = (long)w;
                        reply(c, "OK\n");
                }
                return;
        }
        for (i = 0; i < sizeof usages / sizeof usages[0]; i++) {
                if (strcmp(f[0], verbs[i]) == 0) {
                        break;
                }
        }
        if (i == sizeof usages / sizeof usages[0]) {
                reply(c, "ERR unknown command\n");
                return;
        }
        memset(&q, 0, sizeof q);
        q.op = (enum req)i;
        if (parse_request(f, n, &q) != 0) {
                reply(c, "ERR usage: %s\n", usages[i]);
                return;
        }
        serve(r, c, &q);
}

static int conn_flush(struct conn *c);

/* Close a client, after a last try to send what it is owed. */
static void conn_close(struct reg *r, int i)
{
        (void)conn_flush(r->conns[i]);
        close(r->conns[i]->fd);
        free(r->conns[i]);
        r->conns[i] = NULL;
}

/* Send what is queued: 0, or -1 when the client is gone. */
static int conn_flush(struct conn *c)
{
        size_t off = 0;

        while (off < c->out_len) {
                ssize_t n = send(c->fd, c->out + off, c->out_len - off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        if (errno == EAGAIN) {
                                break;
                        }
                        return -1;
                }
                off += (size_t)n;
        }
        memmove(c->out, c->out + off, c->out_len - off);
        c->out_len -= off;
        return 0;
}

/* Handle the complete lines in the input buffer while answers can be
 * queued; an over-long line gets one ERR and is skipped to its newline. */
static void conn_process(struct reg *r, struct conn *c)
{
        size_t start = 0;

        while (c->out_len < OUT_PAUSE) {
                char *nl = memchr(c->in + start, '\n', c->in_len - start);
                if (nl == NULL) {
                        break;
                }
                *nl = '\0';
                if (c->discarding) {
                        c->discarding = false;
                } else {
                        handle_line(r, c, c->in + start);
                }
                start = (size_t)(nl - c->in) + 1;
        }
        memmove(c->in, c->in + start, c->in_len - start);
        c->in_len -= start;
        if (c->in_len == LINE_MAX_BYTES &&
            memchr(c->in, '\n', c->in_len) == NULL) {
                if (!c->discarding) {
                        reply(c, "ERR line too long\n");
                }
                c->discarding = true;
                c->in_len = 0;
        }
}

/* Read what the client sent: 0, or -1 when it is gone. */
static int conn_read(struct reg *r, struct conn *c)
{
        for (;;) {
                ssize_t n;
                if (c->out_len >= OUT_PAUSE || c->in_len == LINE_MAX_BYTES) {
                        return 0;
                }
                n = recv(c->fd, c->in + c->in_len, LINE_MAX_BYTES - c->in_len,
                         MSG_DONTWAIT);
                if (n == 0) {
                        return -1;
                }
                if (n < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        return errno == EAGAIN ? 0 : -1;
                }
                c->in_len += (size_t)n;
                conn_process(r, c);
        }
}

static void accept_all(struct reg *r)
{
        for (;;) {
                int fd = accept4(r->listen_fd, NULL, NULL,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
                struct conn *c;
                int i;

                if (fd < 0) {
                        return; /* EAGAIN, or an error the next poll repeats */
                }
                for (i = 0; i < MAX_CONNS && r->conns[i] != NULL; i++) {
                }
                c = i < MAX_CONNS ? malloc(sizeof *c) : NULL;
                if (c == NULL) {
                        fprintf(stderr,
                                "chaos-register: refusing a client (%s)\n",
                                i < MAX_CONNS ? "out of memory"
                                              : "too many clients");
                        close(fd);
                        continue;
                }
                c->fd = fd;
                c->worker = NO_WORKER;
                c->discarding = false;
                c->in_len = 0;
                c->out_len = 0;
                r->conns[i] = c;
        }
}

static int run(struct reg *r, const sigset_t *unblocked)
{
        struct pollfd pfd[MAX_CONNS + 1];
        int map[MAX_CONNS + 1];

        while (stop_signal == 0) {
                int n = 0, i, rv;
                pfd[n].fd = r->listen_fd;
                pfd[n].events = POLLIN;
                map[n++] = -1;
                for (i = 0; i < MAX_CONNS; i++) {
                        struct conn *c = r->conns[i];
                        if (c == NULL) {
                                continue;
                        }
                        pfd[n].fd = c->fd;
                        pfd[n].events = c->out_len > 0 ? POLLOUT : 0;
                        if (c->out_len < OUT_PAUSE) {
                                pfd[n].events |= POLLIN;
                        }
                        map[n++] = i;
                }
                rv = ppoll(pfd, (nfds_t)n, NULL, unblocked);
                if (rv < 0) {
                        if (errno == EINTR) {
                                continue;
                        }
                        perror("chaos-register: ppoll");
                        return -1;
                }
                for (i = 1; i < n; i++) {
                        struct conn *c = r->conns[map[i]];
                        bool gone = false;
                        if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                                gone = conn_read(r, c) != 0;
                        }
                        if (!gone && c->out_len > 0) {
                                gone = conn_flush(c) != 0;
                                /* Room again: finish lines read before. */
                                if (!gone && c->out_len < OUT_PAUSE) {
                                        conn_process(r, c);
                                        gone = conn_flush(c) != 0;
                                }
                        }
                        if (gone) {
                                conn_close(r, map[i]);
                        }
                }
                if (pfd[0].revents & POLLIN) {
                        accept_all(r);
                }
        }
        return 0;
}

/* Bind the socket; a leftover socket file nobody answers on is removed,
 * a live one (another register) is an error. */
static int listen_on(struct reg *r)
{
        struct sockaddr_un sa;
        struct stat st;
        int fd;

        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        if (strlen(r->socket_path) >= sizeof sa.sun_path) {
                fprintf(stderr, "chaos-register: --socket: path too long\n");
                return -1;
        }
        strcpy(sa.sun_path, r->socket_path);
        if (stat(r->socket_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0 &&
                    connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
                        fprintf(stderr,
                                "chaos-register: %s: another register "
                                "answers there\n",
                                r->socket_path);
                        close(fd);
                        return -1;
                }
                if (fd >= 0) {
                        close(fd);
                }
                unlink(r->socket_path);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                perror("chaos-register: socket");
                return -1;
        }
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(fd, 128) != 0) {
                fprintf(stderr, "chaos-register: %s: %s\n", r->socket_path,
                        strerror(errno));
                close(fd);
                return -1;
        }
        r->listen_fd = fd;
        return 0;
}

static void usage(FILE *f)
{
        fprintf(f, "usage: chaos-register --socket PATH --log FILE "
                   "[--no-fencing]\n"
                   "         [--apply-log PATH]... [--init KEY=VALUE]...\n");
}

/* The command line's paths and keys. */
struct args {
        const char *log_path;
        const char *apply_logs[APPLYFEED_MAX_LOGS];
        size_t n_apply;
        const char *inits[MAX_INITS];
        size_t n_inits;
};

/* Parse the options into `r` and `a`: 0, 1 after --help, or -1 after a
 * message (usage, or a limit). */
static int parse_args(int argc, char **argv, struct reg *r, struct args *a)
{
        static const struct option opts[] = {
            {"socket", required_argument, NULL, 's'},
            {"log", required_argument, NULL, 'l'},
            {"no-fencing", no_argument, NULL, 'n'},
            {"apply-log", required_argument, NULL, 'a'},
            {"init", required_argument, NULL, 'i'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        int ch;

        while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (ch) {
                case 's':
                        r->socket_path = optarg;
                        break;
                case 'l':
                        a->log_path = optarg;
                        break;
                case 'n':
                        r->fencing = false;
                        break;
                case 'a':
                        if (a->n_apply == APPLYFEED_MAX_LOGS) {
                                fprintf(stderr,
                                        "chaos-register: at most %d "
                                        "--apply-log\n",
                                        APPLYFEED_MAX_LOGS);
                                return -1;
                        }
                        a->apply_logs[a->n_apply++] = optarg;
                        break;
                case 'i':
                        if (a->n_inits == MAX_INITS) {
                                fprintf(stderr,
                                        "chaos-register: at most %d --init\n",
                                        MAX_INITS);
                                return -1;
                        }
                        a->inits[a->n_inits++] = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 1;
                default:
                        usage(stderr);
                        return -1;
                }
        }
        if (optind < argc || r->socket_path == NULL || a->log_path == NULL) {
                usage(stderr);
                return -1;
        }
        return 0;
}

/* Close the clients and the socket, free the keys. */
static void teardown(struct reg *r)
{
        size_t b;
        int i;

        for (i = 0; i < MAX_CONNS; i++) {
                if (r->conns[i] != NULL) {
                        conn_close(r, i);
                }
        }
        close(r->listen_fd);
        unlink(r->socket_path);
        close(r->log_fd);
        applyfeed_destroy(r->feed);
        for (b = 0; b < N_BUCKETS; b++) {
                while (r->buckets[b] != NULL) {
                        struct key *k = r->buckets[b];
                        r->buckets[b] = k->next;
                        free(k);
                }
        }
}

int main(int argc, char **argv)
{
        static struct reg r; /* large: off the stack */
        static struct args a;
        struct sigaction sa;
        sigset_t block, unblocked;
        size_t k;
        int rv;

        r.fencing = true;
        rv = parse_args(argc, argv, &r, &a);
        if (rv != 0) {
                return rv > 0 ? 0 : 2;
        }
        /* SIGTERM and SIGINT only get through inside ppoll(), so none is
         * missed between the check of stop_signal and the wait. */
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &unblocked);
        sigdelset(&unblocked, SIGTERM);
        sigdelset(&unblocked, SIGINT);
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        r.log_fd =
            open(a.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (r.log_fd < 0) {
                fprintf(stderr, "chaos-register: %s: %s\n", a.log_path,
                        strerror(errno));
                return 1;
        }
        for (k = 0; k < a.n_inits; k++) {
                if (init_key(&r, a.inits[k]) != 0) {
                        close(r.log_fd);
                        return 2;
                }
        }
        r.feed = applyfeed_create(a.apply_logs, a.n_apply);
        if (r.feed == NULL) {
                fprintf(stderr, "chaos-register: out of memory\n");
                close(r.log_fd);
                return 1;
        }
        if (listen_on(&r) != 0) {
                applyfeed_destroy(r.feed);
                close(r.log_fd);
                return 1;
        }
        fprintf(stderr,
                "chaos-register: listening on %s, fencing %s, %zu apply "
                "logs, %zu keys set by --init\n",
                r.socket_path, r.fencing ? "on" : "off", a.n_apply, a.n_inits);
        rv = run(&r, &unblocked);
        teardown(&r);
        fprintf(stderr, "chaos-register: %s, %zu keys\n",
                stop_signal != 0 ? "stopped by a signal" : "failed", r.n_keys);
        return rv == 0 ? 0 : 1;
}
