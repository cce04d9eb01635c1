/* A scripted fake Baton server for libbaton's wire tests. */
#include "fake.h"

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

/* The one server of the program: set up by fake_up(), scripted by the
 * case that runs, served by its thread. */
static struct fake F;

struct fake *fake_server(void)
{
        return &F;
}

int64_t fake_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fake_send(struct fake *f, unsigned conn, const uint8_t *p, size_t n)
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

void fake_result(struct fake *f, const struct fake_frame *fr,
                 const struct proto_result *r)
{
        uint8_t out[128];

        fake_send(f, fr->conn, out,
                  proto_write_result(out, sizeof out, fr->h.id, 0, r));
}

void fake_status(struct fake *f, const struct fake_frame *fr, int status)
{
        struct proto_result r;

        memset(&r, 0, sizeof r);
        r.status = status;
        fake_result(f, fr, &r);
}

void fake_close_conn(struct fake *f, unsigned conn)
{
        if (f->conns[conn].fd >= 0) {
                close(f->conns[conn].fd);
                f->conns[conn].fd = -1;
                proto_reader_close(&f->conns[conn].reader);
        }
}

/* The healthy leader: answers everything at once. */
static void fake_default(struct fake *f, const struct fake_frame *fr)
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
static void on_frame(struct fake *f, unsigned conn,
                     const struct proto_header *h, const uint8_t *body)
{
        struct fake_frame *fr;

        if (f->n_log >= FAKE_MAX_LOG) {
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
                        on_frame(f, k, &fc->reader.h, fc->reader.body);
                }
        }
        pthread_mutex_unlock(&f->mu);
}

static void *fake_main(void *arg)
{
        struct fake *f = arg;
        struct pollfd pfd[1 + FAKE_NODES + FAKE_MAX_CONNS];
        unsigned map[1 + FAKE_NODES + FAKE_MAX_CONNS];
        uint8_t buf[4096];

        for (;;) {
                nfds_t n = 0;
                unsigned i;
                pfd[n].fd = f->stop[0];
                pfd[n++].events = POLLIN;
                for (i = 0; i < FAKE_NODES; i++) {
                        map[n] = i;
                        pfd[n].fd = f->lfd[i];
                        pfd[n++].events = POLLIN;
                }
                pthread_mutex_lock(&f->mu);
                for (i = 0; i < FAKE_MAX_CONNS; i++) {
                        if (f->conns[i].fd >= 0) {
                                map[n] = FAKE_NODES + i;
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
                        if (map[i] < FAKE_NODES) {
                                int fd = accept(pfd[i].fd, NULL, NULL);
                                unsigned k;
                                pthread_mutex_lock(&f->mu);
                                for (k = 0; fd >= 0 && k < FAKE_MAX_CONNS;
                                     k++) {
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
                        serve(f, map[i] - FAKE_NODES, pfd[i].fd, buf,
                              sizeof buf);
                }
        }
}

int fake_up(void **state)
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
        for (i = 0; i < FAKE_MAX_CONNS; i++) {
                f->conns[i].fd = -1;
        }
        for (i = 0; i < FAKE_NODES; i++) {
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

int fake_down(void **state)
{
        struct fake *f = &F;
        unsigned i;

        (void)state;
        if (write(f->stop[1], "x", 1) != 1) {
                return -1;
        }
        pthread_join(f->thread, NULL);
        for (i = 0; i < FAKE_MAX_CONNS; i++) {
                fake_close_conn(f, i);
        }
        for (i = 0; i < FAKE_NODES; i++) {
                close(f->lfd[i]);
        }
        close(f->stop[0]);
        close(f->stop[1]);
        return 0;
}

/* Each case starts with a quiet server: no hook, no log, all answering,
 * no connection left from the case before. */
int fake_reset(void **state)
{
        struct fake *f = &F;
        unsigned i;

        (void)state;
        pthread_mutex_lock(&f->mu);
        for (i = 0; i < FAKE_MAX_CONNS; i++) {
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
void fake_set_hook(fake_hook hook, void *data)
{
        pthread_mutex_lock(&F.mu);
        F.hook = hook;
        F.data = data;
        pthread_mutex_unlock(&F.mu);
}

void fake_set_silent(unsigned node, bool silent)
{
        pthread_mutex_lock(&F.mu);
        F.silent[node] = silent;
        pthread_mutex_unlock(&F.mu);
}

/* Wait for the next frame at or after log[*from] of `type` (and command
 * type `cmd` if non-zero); returns a copy and moves *from past it. */
struct fake_frame fake_wait_frame(unsigned *from, uint8_t type, uint8_t cmd)
{
        struct fake *f = &F;
        int64_t deadline = fake_now_ms() + FAKE_WAIT_MS;
        struct fake_frame fr;

        pthread_mutex_lock(&f->mu);
        for (;;) {
                for (; *from < f->n_log; (*from)++) {
                        const struct fake_frame *x = &f->log[*from];
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
                if (fake_now_ms() >= deadline) {
                        pthread_mutex_unlock(&f->mu);
                        fail_msg("no %s frame (command %u) within %d ms",
                                 proto_type_name(type), cmd, FAKE_WAIT_MS);
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
unsigned fake_count_frames(uint8_t type, uint8_t cmd)
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

baton_client *fake_client(const char *endpoints, uint32_t ttl_ms,
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
