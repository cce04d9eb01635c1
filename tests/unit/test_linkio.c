/* The I/O side of libbaton's link (src/client/linkio.c): the words in
 * which it tells an endpoint's failure (the system's, lower-cased, and a
 * failed connect's kind, which test_failfast then finds in what a call
 * says), and how it reads a connection, over a socketpair standing for the
 * node's socket: what the first bytes say before the node answered, and
 * that nothing is read of a connection after the frame that gave it up. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/client/linkio.h"
#include "../../src/client/reach.h"
#include "../../src/proto/reply.h"

/* strerror()'s words, lower-cased, then what the caller adds. */
static void errno_words(void **state)
{
        char why[REACH_WHY_MAX];

        (void)state;
        linkio_why_errno(why, sizeof why, ECONNREFUSED, " before answering");
        assert_string_equal(why, "connection refused before answering");
        linkio_why_errno(why, sizeof why, ECONNRESET, "");
        assert_string_equal(why, "connection reset by peer");
}

/* A connect's failure by its kind: a timeout names the time it was given,
 * a route that does not go (a firewall's "permission denied" too) is
 * "unreachable", anything else is the system's words. */
static void connect_words(void **state)
{
        char why[REACH_WHY_MAX];

        (void)state;
        linkio_why_connect(why, sizeof why, ETIMEDOUT, 1000);
        assert_string_equal(why, "timed out: no connection within 1000 ms");
        linkio_why_connect(why, sizeof why, EHOSTUNREACH, 1000);
        assert_string_equal(why, "unreachable: no route to host");
        linkio_why_connect(why, sizeof why, ENETUNREACH, 1000);
        assert_string_equal(why, "unreachable: network is unreachable");
        linkio_why_connect(why, sizeof why, EACCES, 1000);
        assert_string_equal(why, "unreachable: permission denied");
        linkio_why_connect(why, sizeof why, EPERM, 1000);
        assert_string_equal(why, "unreachable: operation not permitted");
        linkio_why_connect(why, sizeof why, ECONNREFUSED, 1000);
        assert_string_equal(why, "connection refused");
}

/* A reason longer than the room for it is cut, never overrun. */
static void words_fit(void **state)
{
        char why[12];

        (void)state;
        linkio_why_connect(why, sizeof why, ETIMEDOUT, 1000);
        assert_string_equal(why, "timed out: ");
        linkio_why_connect(why, sizeof why, EHOSTUNREACH, 1000);
        assert_string_equal(why, "unreachable");
}

#define T0 100000

static const char eps[2][LINK_ADDR_MAX] = {"a:1", "b:2"};

/* A link and its I/O whose connection is one end of a socketpair: the
 * other end, `node`, is what the node sends. */
struct pair {
        struct core_env env;
        struct link l;
        struct linkio io;
        int node;
        uint64_t conn;
        unsigned frames, closed;
        uint8_t types[8]; /* of the frames the owner got */
};

static uint64_t one(void *data)
{
        (void)data;
        return 1;
}

static int no_secret(void *data, uint8_t *buf, size_t n)
{
        (void)data;
        (void)buf;
        (void)n;
        return BATON_EIO;
}

static void on_connected(void *data, int64_t now)
{
        (void)data;
        (void)now;
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct pair *p = data;

        (void)body;
        (void)now;
        if (p->frames < sizeof p->types) {
                p->types[p->frames] = h->type;
        }
        p->frames++;
}

static void on_closed(void *data, uint64_t gen, int64_t now)
{
        struct pair *p = data;

        (void)gen;
        (void)now;
        p->closed++;
}

/* The link dials, and the "connect" is through: its first PING is out
 * on the socketpair. */
static struct pair *pair_new(void)
{
        struct pair *p = calloc(1, sizeof *p);
        struct link_cb cb = {NULL, on_connected, on_frame, on_closed, NULL};
        int sv[2];

        assert_non_null(p);
        p->env.data = p;
        p->env.random = one;
        p->env.secret = no_secret;
        assert_int_equal(link_init(&p->l, eps, 2, &p->env), 0);
        cb.data = p;
        link_listen(&p->l, &cb);
        assert_int_equal(linkio_init(&p->io, &p->l, NULL), 0);
        assert_int_equal(
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
        p->conn = link_dial(&p->l, T0, true);
        assert_int_not_equal(p->conn, 0);
        p->io.conn = p->conn;
        p->io.fd = sv[0];
        p->node = sv[1];
        link_conn_up(&p->l, p->conn, T0);
        linkio_flush(&p->io, T0);
        assert_false(linkio_busy(&p->io));
        assert_int_equal(linkio_events(&p->io), POLLIN);
        return p;
}

static void pair_free(struct pair *p)
{
        linkio_close(&p->io);
        link_close(&p->l);
        close(p->node);
        free(p);
}

/* The node sends `n` bytes at once; the link's side reads them. */
static void node_says(struct pair *p, const uint8_t *buf, size_t n)
{
        assert_int_equal(write(p->node, buf, n), (ssize_t)n);
        linkio_ready(&p->io, POLLIN, T0 + 1);
}

static size_t put_empty(uint8_t *at, uint8_t type, uint64_t id)
{
        return proto_write_empty(at, PROTO_HEADER_SIZE, id, type);
}

/* One read brings the PING's answer, a frame, a NOT_LEADER and another
 * frame: the connection comes up, the first frame is the owner's, the
 * redirect gives the connection up, and the frame behind it is never
 * handed over; the socket is closed. */
static void nothing_read_after_the_drop(void **state)
{
        struct pair *p = pair_new();
        uint8_t buf[512];
        size_t n = 0;

        (void)state;
        n += put_empty(buf + n, PROTO_PONG, p->l.hello);
        n += put_empty(buf + n, PROTO_PONG, 77);
        n += proto_write_not_leader(buf + n, sizeof buf - n, 0, 2, "b:2");
        n += put_empty(buf + n, PROTO_PONG, 78);
        node_says(p, buf, n);
        assert_int_equal(p->l.gen, 1);
        assert_int_equal(p->frames, 1);
        assert_int_equal(p->types[0], PROTO_PONG);
        assert_int_equal(p->closed, 1);
        assert_string_equal(p->l.hint, "b:2");
        assert_int_equal(p->io.fd, -1);
        assert_int_equal(p->io.conn, 0);
        assert_int_equal(linkio_events(&p->io), 0);
        pair_free(p);
}

/* The first bytes a node sends: a TLS record to a plain client, bytes
 * that are no frame, or nothing before it closes, each a refusal in its
 * own words; after the node answered, a close is a lost connection. */
static void what_the_first_bytes_say(void **state)
{
        static const uint8_t record[] = {0x16, 0x03, 0x01, 0x00, 0x05,
                                         1,    2,    3,    4,    5};
        static const uint8_t junk[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
        struct pair *p;
        uint8_t pong[PROTO_HEADER_SIZE];

        (void)state;
        p = pair_new();
        node_says(p, record, sizeof record);
        assert_int_equal(p->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_true(p->l.reach.ends[0].tls);
        assert_string_equal(p->l.reach.ends[0].why,
                            "the node speaks TLS but this client uses plain "
                            "TCP (it was given no CA, certificate and key)");
        assert_int_equal(p->io.fd, -1);
        pair_free(p);

        p = pair_new();
        node_says(p, junk, sizeof junk - 1);
        assert_int_equal(p->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_false(p->l.reach.ends[0].tls);
        assert_string_equal(p->l.reach.ends[0].why,
                            "answered in another protocol than Baton's (not "
                            "a Baton client port?)");
        pair_free(p);

        p = pair_new();
        shutdown(p->node, SHUT_WR);
        linkio_ready(&p->io, POLLIN, T0 + 1);
        assert_int_equal(p->l.reach.ends[0].outcome, REACH_REFUSED);
        assert_string_equal(p->l.reach.ends[0].why,
                            "closed the connection without answering (not a "
                            "Baton client port?)");
        assert_string_equal(p->l.suspect, "a:1");
        pair_free(p);

        p = pair_new();
        put_empty(pong, PROTO_PONG, p->l.hello);
        node_says(p, pong, sizeof pong);
        assert_true(link_up(&p->l));
        shutdown(p->node, SHUT_WR);
        linkio_ready(&p->io, POLLIN, T0 + 2);
        assert_int_equal(p->l.reach.ends[0].outcome, REACH_LOST);
        assert_string_equal(p->l.reach.ends[0].why, "stopped answering");
        assert_int_equal(p->io.fd, -1);
        pair_free(p);
}

/* What the link puts goes out on the next write; once the owner gives the
 * connection up, the outbox is gone with it and the socket closes at the
 * next call, whatever the thread. */
static void writes_follow_the_link(void **state)
{
        struct pair *p = pair_new();
        uint8_t buf[64];

        (void)state;
        put_empty(buf, PROTO_PONG, p->l.hello);
        node_says(p, buf, PROTO_HEADER_SIZE);
        assert_int_equal(read(p->node, buf, sizeof buf), PROTO_HEADER_SIZE);
        put_empty(buf, PROTO_PING, 0);
        assert_int_not_equal(link_put(&p->l, buf, PROTO_HEADER_SIZE), 0);
        assert_true(linkio_busy(&p->io));
        assert_int_equal(linkio_events(&p->io), POLLIN | POLLOUT);
        assert_true(linkio_write(&p->io));
        assert_int_equal(read(p->node, buf, sizeof buf), PROTO_HEADER_SIZE);
        assert_int_not_equal(link_put(&p->l, buf, PROTO_HEADER_SIZE), 0);
        link_fail(&p->l, T0 + 3, false);
        assert_false(linkio_busy(&p->io));
        assert_true(p->io.fd >= 0); /* until linkio is next called */
        assert_int_equal(linkio_events(&p->io), 0);
        assert_int_equal(p->io.fd, -1);
        assert_int_equal(read(p->node, buf, sizeof buf), 0); /* closed */
        pair_free(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(errno_words),
            cmocka_unit_test(connect_words),
            cmocka_unit_test(words_fit),
            cmocka_unit_test(nothing_read_after_the_drop),
            cmocka_unit_test(what_the_first_bytes_say),
            cmocka_unit_test(writes_follow_the_link),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
