/*
 * libbaton's protocol behaviour against a scripted fake server: the paths a
 * real cluster takes only by bad luck, made deterministic. Each fake node
 * listens on an ephemeral port of 127.0.0.1; one thread serves them all,
 * logs every frame it receives and answers through the case's hook (or a
 * default that acts as a healthy leader). Cases wait for frames with
 * deadlines, never bare sleeps.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/status.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/watch.h"

#define NODES     2
#define MAX_CONNS 16
#define MAX_LOG   512
#define WAIT_MS   5000 /* a frame that must come comes within this */

/* --- The fake server ------------------------------------------------------ */

struct frame {
        unsigned node;
        unsigned conn;
        struct proto_header h;
        struct command k; /* COMMAND frames: decoded; name points in body */
        uint8_t body[COMMAND_MAX_SIZE + 64];
};

struct fake;

/* Answer a frame, or not (then the default does). Runs on the server
 * thread with f->mu held. 1: handled. */
typedef int (*fake_hook)(struct fake *f, const struct frame *fr);

struct fake_conn {
        int fd; /* -1: free */
        unsigned node;
        struct proto_reader reader;
};

struct fake {
        int lfd[NODES];
        char addr[NODES][32];
        char endpoints[NODES * 32];
        bool silent[NODES]; /* accept, read, never answer */
        struct fake_conn conns[MAX_CONNS];
        int stop[2];
        pthread_t thread;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct frame log[MAX_LOG];
        unsigned n_log;
        fake_hook hook;
        uint64_t next_session;
        uint64_t next_token;
        uint32_t ttl_ms;
        void *data; /* for the hooks */
};

static struct fake F;

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fake_send(struct fake *f, unsigned conn, const uint8_t *p, size_t n)
{
        int fd = f->conns[conn].fd;

        while (fd >= 0 && n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
                if (w <= 0) {
                        return;
                }
                p += w;
                n -= (size_t)w;
        }
}

static void fake_result(struct fake *f, const struct frame *fr,
                        const struct proto_result *r)
{
        uint8_t out[128];

        fake_send(f, fr->conn, out,
                  proto_write_result(out, sizeof out, fr->h.id, 0, r));
}

static void fake_status(struct fake *f, const struct frame *fr, int status)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        fake_result(f, fr, &r);
}

static void fake_close_conn(struct fake *f, unsigned conn)
{
        if (f->conns[conn].fd >= 0) {
                close(f->conns[conn].fd);
                f->conns[conn].fd = -1;
                proto_reader_close(&f->conns[conn].reader);
        }
}

/* The healthy leader: answers everything at once. */
static void fake_default(struct fake *f, const struct frame *fr)
{
        struct proto_result r;
        uint8_t out[128];

        memset(&r, 0, sizeof r);
        switch (fr->h.type) {
        case PROTO_PING:
                fake_send(
                    f, fr->conn, out,
                    proto_write_empty(out, sizeof out, fr->h.id, PROTO_PONG));
                return;
        case PROTO_KEEPALIVE:
                fake_send(f, fr->conn, out,
                          proto_write_keepalive_ok(out, sizeof out, fr->h.id, 0,
                                                   f->ttl_ms, 0));
                return;
        case PROTO_QUERY:
                r.kind = PROTO_KIND_FREE;
                fake_result(f, fr, &r);
                return;
        case PROTO_COMMAND:
                break;
        default:
                fake_status(f, fr, BATON_EUNSUPPORTED);
                return;
        }
        r.session = fr->k.session;
        r.owner = fr->k.owner;
        switch (fr->k.type) {
        case COMMAND_OPEN:
                r.kind = PROTO_KIND_OPENED;
                r.session = ++f->next_session;
                break;
        case COMMAND_CLOSE:
                r.kind = PROTO_KIND_CLOSED;
                break;
        case COMMAND_ACQUIRE:
                r.kind = PROTO_KIND_GRANTED;
                r.token = ++f->next_token;
                r.count = 1;
                break;
        case COMMAND_RELEASE:
                r.kind = PROTO_KIND_RELEASED;
                r.token = fr->k.token;
                break;
        case COMMAND_CANCEL:
                r.kind = PROTO_KIND_CANCELLED;
                break;
        default:
                r.status = BATON_EINVAL;
        }
        fake_result(f, fr, &r);
}

/* One frame from a client; f->mu held. cmocka's asserts belong to the
 * main thread: the server thread aborts on its own trouble. */
static void fake_frame(struct fake *f, unsigned conn,
                       const struct proto_header *h, const uint8_t *body)
{
        struct frame *fr;

        if (f->n_log >= MAX_LOG) {
                abort();
        }
        fr = &f->log[f->n_log++];
        memset(fr, 0, sizeof *fr);
        fr->node = f->conns[conn].node;
        fr->conn = conn;
        fr->h = *h;
        /* An empty first frame (the PING libbaton greets a node with)
         * comes with no body buffer at all. */
        if (h->length > 0 && h->length <= sizeof fr->body) {
                memcpy(fr->body, body, h->length);
        }
        if (h->type == PROTO_COMMAND &&
            command_decode(&fr->k, fr->body, h->length) != 0) {
                abort(); /* libbaton sent a command that does not decode */
        }
        if (!f->silent[fr->node] && (f->hook == NULL || !f->hook(f, fr))) {
                fake_default(f, fr);
        }
        pthread_cond_broadcast(&f->cv);
}

/* Read what a connection sent and handle each whole frame, under the
 * lock (a case may reset the server meanwhile). */
static void serve(struct fake *f, unsigned k, int fd, uint8_t *buf, size_t cap)
{
        struct fake_conn *fc = &f->conns[k];
        size_t off = 0;
        ssize_t got;

        pthread_mutex_lock(&f->mu);
        got = fc->fd == fd ? read(fd, buf, cap) : -1;
        if (got <= 0 && fc->fd == fd) {
                fake_close_conn(f, k);
        }
        while (got > 0 && off < (size_t)got && fc->fd == fd) {
                long used = proto_reader_feed(&fc->reader, buf + off,
                                              (size_t)got - off);
                if (used < 0) {
                        abort(); /* libbaton sent a bad frame */
                }
                off += (size_t)used;
                if (fc->reader.ready) {
                        fake_frame(f, k, &fc->reader.h, fc->reader.body);
                }
        }
        pthread_mutex_unlock(&f->mu);
}

static void *fake_main(void *arg)
{
        struct fake *f = arg;
        struct pollfd pfd[1 + NODES + MAX_CONNS];
        unsigned map[1 + NODES + MAX_CONNS];
        uint8_t buf[4096];

        for (;;) {
                nfds_t n = 0;
                unsigned i;
                pfd[n].fd = f->stop[0];
                pfd[n++].events = POLLIN;
                for (i = 0; i < NODES; i++) {
                        map[n] = i;
                        pfd[n].fd = f->lfd[i];
                        pfd[n++].events = POLLIN;
                }
                pthread_mutex_lock(&f->mu);
                for (i = 0; i < MAX_CONNS; i++) {
                        if (f->conns[i].fd >= 0) {
                                map[n] = NODES + i;
                                pfd[n].fd = f->conns[i].fd;
                                pfd[n++].events = POLLIN;
                        }
                }
                pthread_mutex_unlock(&f->mu);
                if (poll(pfd, n, 100) < 0 && errno != EINTR) {
                        return NULL;
                }
                if (pfd[0].revents != 0) {
                        return NULL;
                }
                for (i = 1; i < n; i++) {
                        if (pfd[i].revents == 0) {
                                continue;
                        }
                        if (map[i] < NODES) {
                                int fd = accept(pfd[i].fd, NULL, NULL);
                                unsigned k;
                                pthread_mutex_lock(&f->mu);
                                for (k = 0; fd >= 0 && k < MAX_CONNS; k++) {
                                        if (f->conns[k].fd < 0) {
                                                f->conns[k].fd = fd;
                                                f->conns[k].node = map[i];
                                                proto_reader_init(
                                                    &f->conns[k].reader,
                                                    PROTO_MAX_BODY, &mem_libc);
                                                fd = -1;
                                        }
                                }
                                pthread_mutex_unlock(&f->mu);
                                if (fd >= 0) {
                                        close(fd);
                                }
                                continue;
                        }
                        serve(f, map[i] - NODES, pfd[i].fd, buf, sizeof buf);
                }
        }
}

static int fake_up(void **state)
{
        struct fake *f = &F;
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        size_t off = 0;
        unsigned i;

        (void)state;
        memset(f, 0, sizeof *f);
        f->ttl_ms = 10000;
        f->next_session = 100;
        f->next_token = 1000;
        pthread_mutex_init(&f->mu, NULL);
        pthread_cond_init(&f->cv, NULL);
        for (i = 0; i < MAX_CONNS; i++) {
                f->conns[i].fd = -1;
        }
        for (i = 0; i < NODES; i++) {
                f->lfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                memset(&sa, 0, sizeof sa);
                sa.sin_family = AF_INET;
                sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                if (f->lfd[i] < 0 ||
                    bind(f->lfd[i], (struct sockaddr *)&sa, sizeof sa) != 0 ||
                    listen(f->lfd[i], 16) != 0 ||
                    getsockname(f->lfd[i], (struct sockaddr *)&sa, &len) != 0) {
                        return -1;
                }
                snprintf(f->addr[i], sizeof f->addr[i], "127.0.0.1:%u",
                         (unsigned)ntohs(sa.sin_port));
                off += (size_t)snprintf(f->endpoints + off,
                                        sizeof f->endpoints - off, "%s%s",
                                        i > 0 ? "," : "", f->addr[i]);
        }
        if (pipe(f->stop) != 0) {
                return -1;
        }
        return pthread_create(&f->thread, NULL, fake_main, f) == 0 ? 0 : -1;
}

static int fake_down(void **state)
{
        struct fake *f = &F;
        unsigned i;

        (void)state;
        if (write(f->stop[1], "x", 1) != 1) {
                return -1;
        }
        pthread_join(f->thread, NULL);
        for (i = 0; i < MAX_CONNS; i++) {
                fake_close_conn(f, i);
        }
        for (i = 0; i < NODES; i++) {
                close(f->lfd[i]);
        }
        close(f->stop[0]);
        close(f->stop[1]);
        return 0;
}

/* Each case starts with a quiet server: no hook, no log, all answering,
 * no connection left from the case before. */
static int fake_reset(void **state)
{
        struct fake *f = &F;
        unsigned i;

        (void)state;
        pthread_mutex_lock(&f->mu);
        for (i = 0; i < MAX_CONNS; i++) {
                fake_close_conn(f, i);
        }
        memset(f->silent, 0, sizeof f->silent);
        f->hook = NULL;
        f->data = NULL;
        f->n_log = 0;
        f->ttl_ms = 10000;
        pthread_mutex_unlock(&f->mu);
        return 0;
}

/* Script the server for a case. */
static void set_hook(fake_hook hook, void *data)
{
        pthread_mutex_lock(&F.mu);
        F.hook = hook;
        F.data = data;
        pthread_mutex_unlock(&F.mu);
}

static void set_silent(unsigned node, bool silent)
{
        pthread_mutex_lock(&F.mu);
        F.silent[node] = silent;
        pthread_mutex_unlock(&F.mu);
}

/* Wait for the next frame at or after log[*from] of `type` (and command
 * type `cmd` if non-zero); returns a copy and moves *from past it. */
static struct frame wait_frame(unsigned *from, uint8_t type, uint8_t cmd)
{
        struct fake *f = &F;
        int64_t deadline = now_ms() + WAIT_MS;
        struct frame fr;

        pthread_mutex_lock(&f->mu);
        for (;;) {
                for (; *from < f->n_log; (*from)++) {
                        const struct frame *x = &f->log[*from];
                        if (x->h.type == type &&
                            (cmd == 0 || x->k.type == cmd)) {
                                fr = *x;
                                (*from)++;
                                pthread_mutex_unlock(&f->mu);
                                fr.k.name =
                                    (const char *)fr.body +
                                    (x->k.name != NULL
                                         ? x->k.name - (const char *)x->body
                                         : 0);
                                return fr;
                        }
                }
                if (now_ms() >= deadline) {
                        pthread_mutex_unlock(&f->mu);
                        fail_msg("no %s frame (command %u) within %d ms",
                                 proto_type_name(type), cmd, WAIT_MS);
                }
                {
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        ts.tv_nsec += 20 * 1000000;
                        if (ts.tv_nsec >= 1000000000) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000;
                        }
                        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
                }
        }
}

/* How many frames of a type (and command type) the log holds. */
static unsigned count_frames(uint8_t type, uint8_t cmd)
{
        unsigned i, n = 0;

        pthread_mutex_lock(&F.mu);
        for (i = 0; i < F.n_log; i++) {
                n += F.log[i].h.type == type &&
                     (cmd == 0 || F.log[i].k.type == cmd);
        }
        pthread_mutex_unlock(&F.mu);
        return n;
}

static baton_client *client(const char *endpoints, uint32_t ttl_ms,
                            uint32_t timeout_ms, struct baton_options *o)
{
        struct baton_options def;
        baton_client *c = NULL;

        if (o == NULL) {
                baton_options_init(&def);
                o = &def;
        }
        o->ttl_ms = ttl_ms;
        o->request_timeout_ms = timeout_ms;
        assert_int_equal(baton_client_create(&c, endpoints, o), 0);
        return c;
}

/* --- Cases ---------------------------------------------------------------- */

static void bad_arguments(void **state)
{
        struct baton_options o;
        baton_client *c = NULL;
        char long_name[300];

        (void)state;
        assert_int_equal(baton_client_create(&c, "nonsense", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "127.0.0.1:0", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "127.0.0.1:1,", NULL),
                         BATON_EINVAL);
        /* Host names and [ipv6] are endpoints; these are malformed. */
        assert_int_equal(baton_client_create(&c, "host_1:7101", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "::1:7101", NULL),
                         BATON_EINVAL);
        assert_int_equal(baton_client_create(&c, "[::1]:0", NULL),
                         BATON_EINVAL);
        baton_options_init(&o);
        o.ttl_ms = 0;
        assert_int_equal(baton_client_create(&c, NULL, &o), BATON_EINVAL);
        assert_null(c);
        baton_client_destroy(NULL);
        c = client(F.endpoints, 10000, 1000, NULL);
        memset(long_name, 'x', sizeof long_name - 1);
        long_name[sizeof long_name - 1] = '\0';
        assert_int_equal(baton_acquire(c, long_name, 0, 0, NULL), BATON_ENAME);
        assert_int_equal(baton_release(c, "", 0, 1), BATON_ENAME);
        assert_int_equal(baton_acquire(c, "x", 0, -5, NULL), BATON_EINVAL);
        /* Nothing was sent for any of them, not even an OPEN. */
        assert_int_equal(count_frames(PROTO_COMMAND, 0), 0);
        assert_int_equal(baton_session_state(c), BATON_SESSION_NONE);
        baton_client_destroy(c);
}

static void fence(void **state)
{
        struct baton_fence f;

        (void)state;
        baton_fence_init(&f);
        assert_int_equal(baton_fence_admit(&f, 5), 0);
        assert_int_equal(baton_fence_admit(&f, 5), 0);
        assert_int_equal(baton_fence_admit(&f, 4), BATON_ESTALE);
        assert_int_equal(baton_fence_admit(&f, 9), 0);
        assert_int_equal(f.highest, 9);
}

/* BATON_EUNKNOWN: the very same bytes (same seq) go out again. */
static int unknown_once(struct fake *f, const struct frame *fr)
{
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE &&
            f->data == NULL) {
                f->data = (void *)1;
                fake_status(f, fr, BATON_EUNKNOWN);
                return 1;
        }
        return 0;
}

static void unknown_resent_same_bytes(void **state)
{
        baton_client *c;
        struct frame a, b;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        set_hook(unknown_once, NULL);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, &token), 0);
        assert_true(token > 1000);
        a = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        b = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a.h.length, b.h.length);
        assert_memory_equal(a.body, b.body, a.h.length);
        assert_int_equal(a.k.seq, 1);
        assert_true(a.h.id != b.h.id);
        baton_client_destroy(c);
}

/* NOT_LEADER with the leader's address: the library goes there, and only
 * there, with the same request. */
static int node0_redirects(struct fake *f, const struct frame *fr)
{
        uint8_t out[128];

        if (fr->node == 0 && fr->h.type != PROTO_PING) {
                fake_send(f, fr->conn, out,
                          proto_write_not_leader(out, sizeof out, fr->h.id, 2,
                                                 f->addr[1]));
                return 1;
        }
        return 0;
}

static void not_leader_followed(void **state)
{
        baton_client *c;
        struct frame open0, open1;
        unsigned from = 0;

        (void)state;
        set_hook(node0_redirects, NULL);
        c = client(F.addr[0], 10000, 2000, NULL); /* only node 0 listed */
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        open0 = wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        open1 = wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        assert_int_equal(open0.node, 0);
        assert_int_equal(open1.node, 1);
        assert_int_equal(open0.k.nonce, open1.k.nonce);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        baton_client_destroy(c);
}

/* TRANSFER answered as a leader that stepped down knowing no successor
 * yet (it was told of a newer term), then STATUS: no leader for three
 * answers (the election runs), then node 2 leads. */
static int transfer_unknown_winner(struct fake *f, const struct frame *fr)
{
        struct proto_result r;
        struct proto_status st;
        uint8_t out[512];
        unsigned *asked = f->data;

        memset(&r, 0, sizeof r);
        memset(&st, 0, sizeof st);
        if (fr->h.type == PROTO_TRANSFER) {
                r.kind = PROTO_KIND_TRANSFERRED;
                r.session = 1; /* it led */
                fake_result(f, fr, &r);
                return 1;
        }
        if (fr->h.type != PROTO_STATUS) {
                return 0;
        }
        st.id = 1;
        st.role = ++*asked > 3 ? BATON_ROLE_LEADER : BATON_ROLE_FOLLOWER;
        st.leader_id = *asked > 3 ? 2 : 0;
        fake_send(f, fr->conn, out,
                  proto_write_status(out, sizeof out, fr->h.id, 0, &st, NULL));
        return 1;
}

/* baton_transfer_to() reports where leadership actually went: the node
 * that led stepped down before the election ended, so the call asks the
 * cluster until a leader is known, and it is node 2, not node 3. */
static void transfer_reports_the_winner(void **state)
{
        baton_client *c;
        uint64_t from = 9, to = 9;
        unsigned asked = 0;

        (void)state;
        set_hook(transfer_unknown_winner, &asked);
        c = client(F.addr[0], 10000, 3000, NULL);
        assert_int_equal(baton_transfer_to(c, 3, &from, &to), 0);
        assert_int_equal(from, 1);
        assert_int_equal(to, 2);
        assert_true(asked > 3);
        baton_client_destroy(c);
}

/* An election: every node answers NOT_LEADER naming no leader, 20 times
 * in all, then serves. The library asks again every few tens of ms, so
 * the acquire is served within its 5 s deadline; backing off exponentially
 * (10 ms doubling to 1 s, jittered) would take at least 6.6 s for the 20
 * answers and time out. */
static int no_leader_20(struct fake *f, const struct frame *fr)
{
        unsigned *answered = f->data;
        uint8_t out[128];

        if (fr->h.type != PROTO_COMMAND || *answered >= 20) {
                return 0;
        }
        (*answered)++;
        fake_send(f, fr->conn, out,
                  proto_write_not_leader(out, sizeof out, fr->h.id, 0, ""));
        return 1;
}

static void election_ridden_out(void **state)
{
        static unsigned answered;
        baton_client *c;

        (void)state;
        answered = 0;
        set_hook(no_leader_20, &answered);
        c = client(F.endpoints, 10000, 5000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        pthread_mutex_lock(&F.mu);
        assert_int_equal(answered, 20);
        pthread_mutex_unlock(&F.mu);
        baton_client_destroy(c);
}

/* ACQUIREs the server holds without answering, for the test to answer. */
struct held {
        struct frame acquire;
        bool have;
};

static int hold_acquire(struct fake *f, const struct frame *fr)
{
        struct held *h = f->data;

        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE &&
            !h->have) {
                h->acquire = *fr;
                h->have = true;
                return 1;
        }
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_CANCEL) {
                fake_status(f, fr, BATON_ENOTWAITING); /* the grant won */
                return 1;
        }
        return 0;
}

/* The ACQUIRE the server holds, copied under the lock. */
static struct frame held_acquire(struct held *h)
{
        struct frame fr;

        pthread_mutex_lock(&F.mu);
        if (!h->have) {
                pthread_mutex_unlock(&F.mu);
                fail_msg("the server saw no ACQUIRE");
        }
        fr = h->acquire;
        pthread_mutex_unlock(&F.mu);
        return fr;
}

/* Answer the held ACQUIRE: GRANTED with `token`. */
static void late_grant(struct held *h, uint64_t token)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_GRANTED;
        r.token = token;
        r.count = 1;
        pthread_mutex_lock(&F.mu);
        r.session = h->acquire.k.session;
        r.owner = h->acquire.k.owner;
        fake_result(&F, &h->acquire, &r);
        pthread_mutex_unlock(&F.mu);
}

/* A try whose answer comes after the caller's deadline: BATON_ENOANSWER,
 * and the grant that arrives later is released, with its token. */
static void late_grant_released(void **state)
{
        static struct held h;
        baton_client *c;
        struct frame acq, rel;
        unsigned from = 0;
        int64_t t0;

        (void)state;
        memset(&h, 0, sizeof h);
        set_hook(hold_acquire, &h);
        c = client(F.endpoints, 10000, 300, NULL);
        t0 = now_ms();
        assert_int_equal(baton_acquire(c, "job", 3, BATON_WAIT_TRY, NULL),
                         BATON_ENOANSWER);
        assert_true(now_ms() - t0 < 300 + 200);
        acq = held_acquire(&h);
        late_grant(&h, 4242);
        rel = wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 4242);
        assert_int_equal(rel.k.owner, 3);
        assert_int_equal(rel.k.session, acq.k.session);
        baton_client_destroy(c);
}

/* A blocking wait that outlives the caller's deadline: BATON_ETIMEDOUT,
 * a CANCEL of exactly that ACQUIRE follows, and a grant that raced the
 * CANCEL is released. */
static void wait_withdrawn(void **state)
{
        static struct held h;
        baton_client *c;
        struct frame acq, cancel, rel;
        unsigned from = 0;
        int64_t t0;

        (void)state;
        memset(&h, 0, sizeof h);
        set_hook(hold_acquire, &h);
        c = client(F.endpoints, 10000, 300, NULL);
        t0 = now_ms();
        assert_int_equal(baton_acquire(c, "job", 3, 200, NULL),
                         BATON_ETIMEDOUT);
        assert_true(now_ms() - t0 < 200 + 300 + 200);
        cancel = wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        acq = held_acquire(&h);
        assert_int_equal(cancel.k.target, acq.k.seq);
        assert_true(cancel.k.seq > acq.k.seq);
        /* The CANCEL is answered ENOTWAITING at once; the grant it lost to
         * arrives a little later. */
        {
                struct timespec ts = {0, 200 * 1000000};
                nanosleep(&ts, NULL);
        }
        late_grant(&h, 777);
        rel = wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 777);
        /* One CANCEL for the one send of the ACQUIRE, not one per answer. */
        assert_int_equal(count_frames(PROTO_COMMAND, COMMAND_CANCEL), 1);
        baton_client_destroy(c);
}

/* A node that accepts connections but never answers (as a SIGSTOPped
 * one): the heartbeat gives up on it and the other node serves. */
static void silent_node_abandoned(void **state)
{
        baton_client *c;
        int64_t t0, took;

        (void)state;
        set_silent(0, true);
        c = client(F.endpoints, 1500, 5000, NULL); /* heartbeat 300 ms */
        t0 = now_ms();
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        took = now_ms() - t0;
        print_message("# served after %" PRId64 " ms\n", took);
        assert_true(took < 2000);
        baton_client_destroy(c);
}

/* Once `*swallowed` (f->data) is set by the first ACQUIRE, which gets no
 * answer, every node closes each connection at its first frame: as a
 * cluster that went away, every endpoint now fails before answering. */
static int swallow_then_close(struct fake *f, const struct frame *fr)
{
        bool *swallowed = f->data;

        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_ACQUIRE) {
                *swallowed = true;
        } else if (!*swallowed) {
                return 0;
        }
        fake_close_conn(f, fr->conn);
        return 1;
}

/*
 * A request that went out and got no answer keeps its outcome unknown,
 * even when every endpoint then fails at once: the try waits out its
 * timeout and says so (BATON_ENOANSWER), never BATON_ECONNECT. A request
 * that never goes out fails within a pass: BATON_ECONNECT, each endpoint
 * named with its reason.
 */
static void sent_then_nodes_gone(void **state)
{
        bool swallowed = false;
        struct baton_holder h;
        baton_client *c;
        int64_t t0, took;
        int rv;

        (void)state;
        set_hook(swallow_then_close, &swallowed);
        c = client(F.endpoints, 10000, 4000, NULL);
        t0 = now_ms();
        rv = baton_acquire(c, "job", 0, 0, NULL);
        took = now_ms() - t0;
        print_message("# sent: %s after %" PRId64 " ms: %s\n",
                      baton_errname(rv), took, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ENOANSWER);
        assert_true(took >= 3950);
        assert_non_null(strstr(baton_errmsg(rv), "outcome is unknown"));
        assert_non_null(strstr(baton_errmsg(rv), F.addr[1]));
        assert_non_null(strstr(baton_errmsg(rv), "without answering"));
        /* A QUERY never gets out: it fails with the next pass, after at
         * most the longest pause between passes (1.5 s). */
        t0 = now_ms();
        rv = baton_holder(c, "job", &h);
        took = now_ms() - t0;
        print_message("# never sent: %s after %" PRId64 " ms: %s\n",
                      baton_errname(rv), took, baton_errmsg(rv));
        assert_int_equal(rv, BATON_ECONNECT);
        assert_true(took < 2500);
        assert_non_null(strstr(baton_errmsg(rv), F.addr[0]));
        assert_non_null(strstr(baton_errmsg(rv), F.addr[1]));
        baton_client_destroy(c);
}

/* The cluster says the session expired: it is over for good. Its locks
 * are reported lost, a release of them is refused without a word to the
 * cluster, and the next acquire opens a NEW session. */
static atomic_int states[8];
static atomic_int n_states;
static atomic_int lost;
static atomic_uint_fast64_t lost_token;

static void on_session(baton_client *c, int state, void *data)
{
        int i = atomic_fetch_add(&n_states, 1);

        (void)c;
        (void)data;
        if (i < 8) {
                atomic_store(&states[i], state);
        }
}

static void on_lost(baton_client *c, const char *name, uint64_t token,
                    void *data)
{
        (void)c;
        (void)data;
        if (strcmp(name, "job") == 0) {
                atomic_store(&lost_token, token);
        }
        atomic_fetch_add(&lost, 1);
}

static int keepalive_expired(struct fake *f, const struct frame *fr)
{
        if (fr->h.type == PROTO_KEEPALIVE) {
                fake_status(f, fr, BATON_EEXPIRED);
                return 1;
        }
        return 0;
}

static void expired_for_good(void **state)
{
        struct baton_options o;
        baton_client *c;
        uint64_t t1 = 0, t2 = 0;
        struct frame open1, open2, acq2;
        unsigned from = 0, releases;
        int64_t deadline;

        (void)state;
        atomic_store(&n_states, 0);
        atomic_store(&lost, 0);
        baton_options_init(&o);
        o.on_session = on_session;
        o.on_lock_lost = on_lost;
        set_hook(keepalive_expired, NULL);
        c = client(F.endpoints, 900, 2000, &o); /* keepalive every 300 ms */
        assert_int_equal(baton_acquire(c, "job", 0, 0, &t1), 0);
        assert_int_equal(baton_acquire(c, "other", 0, 0, NULL), 0);
        deadline = now_ms() + WAIT_MS;
        while (atomic_load(&lost) < 2 && now_ms() < deadline) {
                struct timespec ts = {0, 10 * 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(atomic_load(&lost), 2);
        assert_int_equal(atomic_load(&lost_token), t1);
        assert_int_equal(baton_session_state(c), BATON_SESSION_EXPIRED);
        assert_int_equal(baton_session_remaining_ms(c), 0);
        assert_true(atomic_load(&n_states) >= 2);
        assert_int_equal(atomic_load(&states[0]), BATON_SESSION_LIVE);
        assert_int_equal(atomic_load(&states[atomic_load(&n_states) - 1]),
                         BATON_SESSION_EXPIRED);
        releases = count_frames(PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(baton_release(c, "job", 0, t1), BATON_EEXPIRED);
        assert_int_equal(count_frames(PROTO_COMMAND, COMMAND_RELEASE),
                         releases);
        /* A new session for the next acquire. */
        set_hook(NULL, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, &t2), 0);
        open1 = wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        open2 = wait_frame(&from, PROTO_COMMAND, COMMAND_OPEN);
        acq2 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_true(open1.k.nonce != open2.k.nonce);
        assert_true(acq2.k.session != 0);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        assert_true(t2 > t1);
        baton_client_destroy(c);
}

/* A server of an earlier version: a header flag it does not know is an
 * ERROR, and it closes the connection. */
static int old_server(struct fake *f, const struct frame *fr)
{
        uint8_t out[300];

        if (fr->h.type == PROTO_KEEPALIVE && fr->h.flags != 0) {
                fake_send(f, fr->conn, out,
                          proto_write_error(out, sizeof out, fr->h.id,
                                            BATON_EMALFORMED, "bad flags"));
                fake_close_conn(f, fr->conn);
                return 1;
        }
        return 0;
}

/* Keepalives ask for the count of revoked grants; a server that refuses
 * the flag gets plain ones from then on, and the session lives on. */
static void keepalive_to_old_server(void **state)
{
        baton_client *c;
        unsigned asked = 0, plain = 0;
        int64_t deadline = now_ms() + WAIT_MS;

        (void)state;
        set_hook(old_server, NULL);
        c = client(F.endpoints, 900, 2000, NULL); /* keepalive every 300 ms */
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        while (plain < 3 && now_ms() < deadline) {
                struct timespec ts = {0, 20 * 1000000};
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&F.mu);
                asked = plain = 0;
                for (unsigned i = 0; i < F.n_log; i++) {
                        if (F.log[i].h.type == PROTO_KEEPALIVE) {
                                asked += F.log[i].h.flags != 0;
                                plain += F.log[i].h.flags == 0;
                        }
                }
                pthread_mutex_unlock(&F.mu);
        }
        assert_int_equal(asked, 1);
        assert_true(plain >= 3);
        assert_int_equal(baton_session_state(c), BATON_SESSION_LIVE);
        baton_client_destroy(c);
}

/*
 * The connection drops while a blocking ACQUIRE waits, and the cluster has
 * meanwhile forgotten its outcome: the retry is answered BATON_ESEQ. The
 * library CANCELs that wait (CANCELLED: it still waited) and asks again
 * under a new seq, which is granted.
 */
static int eseq_script(struct fake *f, const struct frame *fr)
{
        int *step = f->data;

        if (fr->h.type != PROTO_COMMAND || fr->k.type == COMMAND_OPEN) {
                return 0;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step == 0) {
                *step = 1;
                fake_close_conn(f, fr->conn); /* lost, unanswered */
                return 1;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step == 1) {
                *step = 2;
                fake_status(f, fr, BATON_ESEQ);
                return 1;
        }
        return 0;
}

static void eseq_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct frame a1, a2, cancel, a3;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        set_hook(eseq_script, &step);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 1000, &token), 0);
        a1 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        a2 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        cancel = wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        a3 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_memory_equal(a1.body, a2.body, a1.h.length);
        assert_int_equal(cancel.k.target, a1.k.seq);
        assert_true(a3.k.seq > cancel.k.seq);
        assert_true(a3.k.wait_ms <= 1000);
        assert_true(token > 1000);
        baton_client_destroy(c);
}

/* The script's common part when an ACQUIRE's grant is forgotten: the
 * first ACQUIRE is granted but its answer lost with the connection, the
 * retry is answered BATON_ESEQ, the CANCEL finds no wait. 0 (not a command
 * to script) or 1 (answered), or -1: the caller answers `fr`. */
static int forgotten_grant(struct fake *f, const struct frame *fr, int *step)
{
        if (fr->h.type != PROTO_COMMAND || fr->k.type == COMMAND_OPEN) {
                return 0;
        }
        if (fr->k.type == COMMAND_ACQUIRE && *step < 2) {
                if ((*step)++ == 0) {
                        fake_close_conn(f, fr->conn); /* granted, unanswered */
                } else {
                        fake_status(f, fr, BATON_ESEQ);
                }
                return 1;
        }
        if (fr->k.type == COMMAND_CANCEL) {
                fake_status(f, fr, BATON_ENOTWAITING); /* the grant won */
                return 1;
        }
        return -1;
}

/*
 * The same for a reader, whose forgotten ACQUIRE was granted: CANCEL finds
 * no wait, and since QUERY names one holder of many, a try-acquire of the
 * read lock asks. REENTERED with two holds: the forgotten ACQUIRE was
 * granted, the try's hold is released, and the call returns the grant.
 */
static int eseq_shared_script(struct fake *f, const struct frame *fr)
{
        int *step = f->data;
        struct proto_result r;

        int rv = forgotten_grant(f, fr, step);

        if (rv >= 0) {
                return rv;
        }
        memset(&r, 0, sizeof r);
        r.session = fr->k.session;
        r.owner = fr->k.owner;
        r.token = 77;
        r.kind = fr->k.type == COMMAND_ACQUIRE ? PROTO_KIND_REENTERED
                                               : PROTO_KIND_RELEASED;
        r.count = fr->k.type == COMMAND_ACQUIRE ? 2 : 1;
        fake_result(f, fr, &r);
        return 1;
}

static void eseq_shared_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct frame a1, try, rel;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        set_hook(eseq_shared_script, &step);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_acquire_shared(c, "job", 0, 1000, &token), 0);
        assert_int_equal(token, 77);
        a1 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a1.k.mode, COMMAND_MODE_SHARED);
        (void)wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        (void)wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        try = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(try.k.mode, COMMAND_MODE_SHARED);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        rel = wait_frame(&from, PROTO_COMMAND, COMMAND_RELEASE);
        assert_int_equal(rel.k.token, 77);
        assert_true(rel.k.seq > try.k.seq);
        baton_client_destroy(c);
}

/*
 * The same for a semaphore's permits: CANCEL finds no wait, and the
 * try-acquire of the same permits is refused BATON_EHELD with the grant's
 * token: the forgotten ACQUIRE was granted, and the call returns it.
 */
static int eseq_permits_script(struct fake *f, const struct frame *fr)
{
        int *step = f->data;
        struct proto_result r;

        int rv = forgotten_grant(f, fr, step);

        if (rv >= 0) {
                return rv;
        }
        memset(&r, 0, sizeof r);
        r.status = BATON_EHELD; /* the try: held already, by this grant */
        r.session = fr->k.session;
        r.owner = fr->k.owner;
        r.token = 78;
        r.count = 1;
        fake_result(f, fr, &r);
        return 1;
}

static void eseq_permits_recovered(void **state)
{
        static int step;
        baton_client *c;
        struct frame a1, try;
        uint64_t token = 0;
        unsigned from = 0;

        (void)state;
        step = 0;
        set_hook(eseq_permits_script, &step);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_sem_acquire(c, "pool", 3, 2, 0, 1000, &token),
                         0);
        assert_int_equal(token, 78);
        a1 = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(a1.k.mode, COMMAND_MODE_SEMAPHORE);
        (void)wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        (void)wait_frame(&from, PROTO_COMMAND, COMMAND_CANCEL);
        try = wait_frame(&from, PROTO_COMMAND, COMMAND_ACQUIRE);
        assert_int_equal(try.k.wait_ms, COMMAND_WAIT_TRY);
        assert_int_equal(try.k.permits, 2);
        assert_int_equal(try.k.limit, 3);
        baton_client_destroy(c);
}

/* The lease is dated from the SEND of the OPEN: an answer that took
 * 300 ms leaves 300 ms less. */
static int slow_open(struct fake *f, const struct frame *fr)
{
        (void)f;
        if (fr->h.type == PROTO_COMMAND && fr->k.type == COMMAND_OPEN) {
                struct timespec ts = {0, 300 * 1000000};
                nanosleep(&ts, NULL); /* the fake server is slow */
        }
        return 0;
}

static void lease_from_send(void **state)
{
        baton_client *c;
        int64_t left;

        (void)state;
        set_hook(slow_open, NULL);
        c = client(F.endpoints, 5000, 2000, NULL);
        assert_int_equal(baton_acquire(c, "job", 0, 0, NULL), 0);
        left = baton_session_remaining_ms(c);
        print_message("# lease left: %" PRId64 " ms of 5000 - 500\n", left);
        assert_true(left > 0);
        assert_true(left <= 5000 - 500 - 300);
        baton_client_destroy(c);
}

/* WATCH: started at 100:MAX ("now" there), then the connection drops;
 * the second WATCH is answered from where it asks and gets one event of
 * its name and one of another name (both with id 0: for every watch of
 * the connection that wants it). */
static int watch_script(struct fake *f, const struct frame *fr)
{
        struct proto_watch_event e;
        struct proto_result r;
        struct proto_watch w;
        uint8_t out[512];
        int *watches = f->data;

        if (fr->h.type != PROTO_WATCH ||
            proto_read_watch(fr->body, fr->h.length, &w) != 0) {
                return 0;
        }
        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_WATCHING;
        r.index = w.from_index != 0 ? w.from_index : 100;
        r.count = w.from_index != 0 ? w.from_ord : UINT32_MAX;
        fake_result(f, fr, &r);
        if ((*watches)++ == 0) {
                fake_close_conn(f, fr->conn);
                return 1;
        }
        memset(&e, 0, sizeof e);
        e.index = 101;
        e.ord = 1;
        e.kind = PROTO_EVENT_GRANTED;
        e.cause = COMMAND_ACQUIRE;
        e.session = 7;
        e.owner = 1;
        e.token = 101;
        e.name = (struct proto_string){"other", 5};
        fake_send(f, fr->conn, out,
                  proto_write_watch_event(out, sizeof out, 0, &e));
        e.ord = 2;
        e.name = (struct proto_string){"job", 3};
        fake_send(f, fr->conn, out,
                  proto_write_watch_event(out, sizeof out, 0, &e));
        return 1;
}

/* A watch from now whose connection drops before any event is sent again
 * from where the server started it, not from "now" on the next node (which
 * would skip what happened in between); an event of id 0 goes to the
 * watches that want it only. */
static void watch_resumes_from_its_start(void **state)
{
        struct baton_event ev;
        baton_client *c;
        baton_watch *w;
        struct proto_watch pw;
        struct frame a, b;
        unsigned from = 0;
        int watches = 0;

        (void)state;
        set_hook(watch_script, &watches);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        a = wait_frame(&from, PROTO_WATCH, 0);
        b = wait_frame(&from, PROTO_WATCH, 0);
        assert_int_equal(proto_read_watch(a.body, a.h.length, &pw), 0);
        assert_true(pw.from_index == 0);
        assert_int_equal(proto_read_watch(b.body, b.h.length, &pw), 0);
        assert_true(pw.from_index == 100 && pw.from_ord == UINT32_MAX);
        assert_int_equal(baton_watch_next(w, &ev, WAIT_MS), 0);
        assert_string_equal(ev.name, "job");
        assert_true(ev.index == 101 && ev.ord == 2);
        assert_int_equal(baton_watch_next(w, &ev, 100), BATON_ETIMEDOUT);
        /* Closed, it tells the server which watch to forget. */
        baton_watch_close(w);
        a = wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(a.h.length, 8);
        assert_true(a.body[0] == (uint8_t)b.h.id &&
                    a.body[1] == (uint8_t)(b.h.id >> 8));
        baton_client_destroy(c);
}

/* Many events of id 0 in a row, at 1001 + i, of names[i % 3] (i from
 * `first`). */
static const char *const share_names[] = {"a/1", "a/2", "b/1"};

static void send_events(struct fake *f, unsigned conn, unsigned first,
                        unsigned n, bool mixed)
{
        struct proto_watch_event e;
        uint8_t out[512];
        unsigned i;

        memset(&e, 0, sizeof e);
        e.ord = 1;
        e.kind = PROTO_EVENT_GRANTED;
        e.cause = COMMAND_ACQUIRE;
        e.session = 7;
        e.owner = 1;
        for (i = first; i < first + n; i++) {
                const char *name = mixed ? share_names[i % 3] : "job";
                e.index = 1001 + i;
                e.token = i;
                e.name = (struct proto_string){name, (uint8_t)strlen(name)};
                fake_send(f, conn, out,
                          proto_write_watch_event(out, sizeof out, 0, &e));
        }
}

/* Every WATCH is started at 1000 ("now"); once `want` watches are, the
 * events follow: `n` of them; the next WATCH brings `later` more, and an
 * UNWATCH 10 more after those. */
struct share {
        unsigned watches, want, n;
        bool mixed;
        unsigned later;
};

/* Answer a WATCH: started at index 1000, "now" (no events before it). */
static void start_now(struct fake *f, const struct frame *fr)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.kind = PROTO_KIND_WATCHING;
        r.index = 1000;
        r.count = UINT32_MAX;
        fake_result(f, fr, &r);
}

static int share_script(struct fake *f, const struct frame *fr)
{
        struct share *sh = f->data;
        struct proto_watch w;

        if (fr->h.type == PROTO_UNWATCH) {
                send_events(f, fr->conn, sh->n + sh->later, 10, sh->mixed);
                return 0; /* and the default answers it */
        }
        if (fr->h.type != PROTO_WATCH ||
            proto_read_watch(fr->body, fr->h.length, &w) != 0) {
                return 0;
        }
        start_now(f, fr);
        if (++sh->watches == sh->want) {
                send_events(f, fr->conn, 0, sh->n, sh->mixed);
        } else if (sh->watches == sh->want + 1) {
                send_events(f, fr->conn, sh->n, sh->later, sh->mixed);
        }
        return 1;
}

/* Read up to `n` events of `w`: each must be the next at or after `*next`
 * that `pick` accepts. */
static unsigned read_own(baton_watch *w, unsigned n, unsigned *next,
                         unsigned end, bool (*pick)(unsigned i))
{
        struct baton_event ev;
        unsigned got = 0;

        while (got < n && *next < end) {
                while (*next < end && !pick(*next)) {
                        (*next)++;
                }
                if (*next == end) {
                        break;
                }
                assert_int_equal(baton_watch_next(w, &ev, WAIT_MS), 0);
                assert_true(ev.index == 1001 + *next);
                assert_string_equal(ev.name, share_names[*next % 3]);
                assert_true(ev.token == *next && ev.session == 7);
                (*next)++;
                got++;
        }
        return got;
}

static bool pick_a1(unsigned i)
{
        return i % 3 == 0;
}
static bool pick_a(unsigned i)
{
        return i % 3 != 2;
}
static bool pick_all(unsigned i)
{
        (void)i;
        return true;
}

/* Three watches of one handle, of a name, a prefix and every name, fed
 * one stream of id 0 and each read at its own speed: each sees exactly its
 * events, in order, and nothing more. */
static void watches_share_one_log(void **state)
{
        struct share sh = {0, 3, 3000, true, 0};
        struct baton_event ev;
        baton_watch *a1, *a, *all;
        unsigned na1 = 0, na = 0, nall = 0;
        unsigned got[3] = {0, 0, 0};
        baton_client *c;

        (void)state;
        set_hook(share_script, &sh);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "a/1", 0, 0, 0, &a1), 0);
        assert_int_equal(
            baton_watch_open(c, "a/", BATON_WATCH_PREFIX, 0, 0, &a), 0);
        assert_int_equal(
            baton_watch_open(c, "", BATON_WATCH_PREFIX, 0, 0, &all), 0);
        while (na1 < sh.n || na < sh.n || nall < sh.n) {
                got[0] += read_own(a1, 1, &na1, sh.n, pick_a1);
                got[1] += read_own(a, 2, &na, sh.n, pick_a);
                got[2] += read_own(all, 5, &nall, sh.n, pick_all);
        }
        assert_int_equal(got[0], 1000);
        assert_int_equal(got[1], 2000);
        assert_int_equal(got[2], 3000);
        assert_int_equal(baton_watch_next(a1, &ev, 50), BATON_ETIMEDOUT);
        assert_int_equal(baton_watch_next(a, &ev, 50), BATON_ETIMEDOUT);
        assert_int_equal(baton_watch_next(all, &ev, 50), BATON_ETIMEDOUT);
        baton_watch_close(a1);
        baton_watch_close(a);
        baton_watch_close(all);
        baton_client_destroy(c);
}

/* Read the events of `w` from the `first`-th of the fake's stream to
 * before the `end`-th: each must be the next one. */
static void read_in_order(baton_watch *w, unsigned first, unsigned end)
{
        struct baton_event ev;

        for (unsigned i = first; i < end; i++) {
                assert_int_equal(baton_watch_next(w, &ev, WAIT_MS), 0);
                assert_true(ev.index == 1001 + i);
        }
}

/* Two watches of one name on one handle: the one never read falls more
 * than 65,536 events behind and ends with BATON_ESLOW after exactly its
 * first 65,536 (and tells the server), while the one read keeps going.
 * The events come in two bursts, 65,536 and then (brought by a third
 * WATCH, of another name) 1,000 once the fast one has read the first:
 * however slowly this thread runs, only the slow one passes the bound. */
static void slow_watch_cut_fast_goes_on(void **state)
{
        struct share sh = {0, 2, 65536, false, 1000};
        baton_watch *other;
        struct baton_event ev;
        baton_watch *fast, *slow;
        unsigned from = 0, i;
        baton_client *c;
        struct frame u;

        (void)state;
        set_hook(share_script, &sh);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &slow), 0);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &fast), 0);
        read_in_order(fast, 0, sh.n);
        assert_int_equal(baton_watch_open(c, "other", 0, 0, 0, &other), 0);
        read_in_order(fast, sh.n, sh.n + sh.later);
        for (i = 0; i < 65536; i++) {
                assert_int_equal(baton_watch_next(slow, &ev, 0), 0);
                assert_true(ev.index == 1001 + i);
                assert_string_equal(ev.name, "job");
        }
        assert_int_equal(baton_watch_next(slow, &ev, 0), BATON_ESLOW);
        assert_int_equal(baton_watch_next(slow, &ev, 0), BATON_ESLOW);
        u = wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(u.h.length, 8);
        /* Its UNWATCH brought 10 more: the fast one has them, and the
         * other name's watch none of them. */
        read_in_order(fast, sh.n + sh.later, sh.n + sh.later + 10);
        assert_int_equal(baton_watch_next(other, &ev, 0), BATON_ETIMEDOUT);
        baton_watch_close(other);
        baton_watch_close(slow);
        baton_watch_close(fast);
        baton_client_destroy(c);
}

/* A watch whose start brings more than 65,536 events at once: whether
 * the library cuts it off before or after baton_watch_open() has
 * returned (the two threads race, and under the sanitizers the first
 * order was a use of the freed WATCH), the open succeeds, and a caller
 * that reads nothing until the cut reads exactly the first 65,536, then
 * BATON_ESLOW. */
static void watch_cut_while_opening(void **state)
{
        struct share sh = {0, 1, 65536 + 100, false, 0};
        struct baton_event ev;
        unsigned from = 0;
        baton_watch *w;
        baton_client *c;
        struct frame u;

        (void)state;
        set_hook(share_script, &sh);
        c = client(F.endpoints, 10000, 2000, NULL);
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        /* Nothing read until the library has cut it off and said so. */
        u = wait_frame(&from, PROTO_UNWATCH, 0);
        assert_int_equal(u.h.length, 8);
        read_in_order(w, 0, 65536);
        assert_int_equal(baton_watch_next(w, &ev, WAIT_MS), BATON_ESLOW);
        baton_watch_close(w);
        baton_client_destroy(c);
}

/* The first heartbeat PING (the connection's second: the first greets the
 * node before any request goes out) is answered only after a stream of
 * STREAM_EVENTS events, STREAM_GAP_MS apart: the answer comes long after
 * the heartbeat's timeout, but frames never stop coming. */
#define STREAM_EVENTS 25
#define STREAM_GAP_MS 40
_Static_assert(STREAM_EVENTS *STREAM_GAP_MS > 3 * 300,
               "the stream outlasts a 300 ms heartbeat three times over");

static int stream_script(struct fake *f, const struct frame *fr)
{
        unsigned *pings = f->data;
        struct timespec gap = {0, STREAM_GAP_MS * 1000000};

        if (fr->h.type == PROTO_WATCH) {
                start_now(f, fr);
                return 1;
        }
        if (fr->h.type == PROTO_PING && (*pings)++ == 1) {
                for (unsigned i = 0; i < STREAM_EVENTS; i++) {
                        send_events(f, fr->conn, i, 1, false);
                        nanosleep(&gap, NULL);
                }
        }
        return 0; /* and the default answers it */
}

/* A server that answers a PING behind a stream of frames (a burst of
 * events to a slow reader) is not silent: the connection is kept, and the
 * watch is not started again on another. */
static void ping_answered_behind_stream(void **state)
{
        unsigned pings = 0;
        baton_watch *w;
        baton_client *c;

        (void)state;
        set_hook(stream_script, &pings);
        c = client(F.endpoints, 1500, 5000, NULL); /* heartbeat 300 ms */
        assert_int_equal(baton_watch_open(c, "job", 0, 0, 0, &w), 0);
        read_in_order(w, 0, STREAM_EVENTS);
        assert_int_equal(count_frames(PROTO_WATCH, 0), 1);
        baton_watch_close(w);
        baton_client_destroy(c);
}

/* What one callback watch of shared_callbacks() saw. */
struct counted {
        pthread_mutex_t mu;
        unsigned n, bad, stop_at; /* stop_at: closes itself there (0: never) */
        int end;
        baton_watch *self;
};

static void on_counted(void *data, const struct baton_event *ev, int status)
{
        struct counted *k = data;
        baton_watch *close_me = NULL;

        pthread_mutex_lock(&k->mu);
        if (ev == NULL) {
                k->end = status;
        } else {
                /* In order, each the shared copy of the one sent. */
                if (ev->index != 1001 + k->n || ev->token != k->n ||
                    strcmp(ev->name, "job") != 0 || ev->value[0] != '\0') {
                        k->bad++;
                }
                if (++k->n == k->stop_at) {
                        close_me = k->self;
                }
        }
        pthread_mutex_unlock(&k->mu);
        baton_watch_close(close_me); /* from inside its own callback */
}

static unsigned counted(struct counted *k)
{
        unsigned n;

        pthread_mutex_lock(&k->mu);
        n = k->n;
        pthread_mutex_unlock(&k->mu);
        return n;
}

/* Two callback watches of one name on one handle, lent the same events in
 * bursts: each is told every one in order; the one that closes itself
 * inside its callback at the 100th, in the middle of a burst, is told
 * nothing more while the other goes on to the end (and the 10 that
 * follow its UNWATCH). */
static void shared_callbacks(void **state)
{
        struct share sh = {0, 2, 5000, false, 0};
        struct counted quits = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 100, 0, NULL};
        struct counted stays = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, NULL};
        baton_watch *w;
        baton_client *c;
        int64_t deadline;

        (void)state;
        set_hook(share_script, &sh);
        c = client(F.endpoints, 10000, 2000, NULL);
        pthread_mutex_lock(&quits.mu);
        assert_int_equal(
            baton_watch_open_cb(c, "job", 0, 0, 0, on_counted, &quits, &w), 0);
        quits.self = w;
        pthread_mutex_unlock(&quits.mu);
        assert_int_equal(
            baton_watch_open_cb(c, "job", 0, 0, 0, on_counted, &stays, &w), 0);
        deadline = now_ms() + WAIT_MS;
        /* The UNWATCH of the one that quits brings 10 more. */
        while (counted(&stays) < sh.n + 10 && now_ms() < deadline) {
                struct timespec ts = {0, 5 * 1000000};
                nanosleep(&ts, NULL);
        }
        assert_int_equal(counted(&stays), sh.n + 10);
        assert_int_equal(counted(&quits), 100);
        assert_int_equal(stays.bad + quits.bad, 0);
        assert_int_equal(quits.end, 0); /* closed: told no end */
        baton_watch_close(w);
        baton_client_destroy(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(bad_arguments, fake_reset),
            cmocka_unit_test(fence),
            cmocka_unit_test_setup(transfer_reports_the_winner, fake_reset),
            cmocka_unit_test_setup(unknown_resent_same_bytes, fake_reset),
            cmocka_unit_test_setup(not_leader_followed, fake_reset),
            cmocka_unit_test_setup(late_grant_released, fake_reset),
            cmocka_unit_test_setup(wait_withdrawn, fake_reset),
            cmocka_unit_test_setup(election_ridden_out, fake_reset),
            cmocka_unit_test_setup(silent_node_abandoned, fake_reset),
            cmocka_unit_test_setup(sent_then_nodes_gone, fake_reset),
            cmocka_unit_test_setup(expired_for_good, fake_reset),
            cmocka_unit_test_setup(eseq_recovered, fake_reset),
            cmocka_unit_test_setup(eseq_shared_recovered, fake_reset),
            cmocka_unit_test_setup(eseq_permits_recovered, fake_reset),
            cmocka_unit_test_setup(lease_from_send, fake_reset),
            cmocka_unit_test_setup(keepalive_to_old_server, fake_reset),
            cmocka_unit_test_setup(watch_resumes_from_its_start, fake_reset),
            cmocka_unit_test_setup(watches_share_one_log, fake_reset),
            cmocka_unit_test_setup(slow_watch_cut_fast_goes_on, fake_reset),
            cmocka_unit_test_setup(shared_callbacks, fake_reset),
            cmocka_unit_test_setup(watch_cut_while_opening, fake_reset),
            cmocka_unit_test_setup(ping_answered_behind_stream, fake_reset),
        };

        return cmocka_run_group_tests_name("wire", tests, fake_up, fake_down);
}
