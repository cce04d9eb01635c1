/* batond's host of the request core defers a connection's gone report it
 * gets inside one of the core's inputs (corehost.h, gateway.h): when net
 * drops a connection inside the core's fail op (conn_fail() could not
 * queue the ERROR frame: here the connection is closing already, as it is
 * when its output cannot grow), the core hears gateway_conn_gone() only
 * once the input has returned, and then forgets the connection's watch.
 * The connection is net's own record on a loop that never runs a socket;
 * the core's other ops are the fake host's (corefix.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../src/proto/watch.h"
#include "../../src/server/host/coreconn.h"
#include "../../src/server/host/corehost.h"
#include "corefix.h"

/* The host, its core on the fake host with net's connection ops, one
 * connection of a set that owns no socket, and what the probe saw. */
struct fix {
        uv_loop_t loop;
        struct config cfg;
        struct corefix_fake fake;
        struct corehost h;
        struct conn_set *set;
        struct conn *c;
        void (*net_fail)(struct gateway_host *ops, struct gateway_conn *gw,
                         uint64_t id, int status, const char *message);
        unsigned fails;
        uint64_t watches_in_fail; /* the core's active watches, then */
        bool queued_in_fail;      /* the host held a gone report, then */
};

static struct fix *probe_fix; /* for the fail probe: one test at a time */

/* net's fail op, then a look at what the core has heard by then. */
static void fail_probe(struct gateway_host *ops, struct gateway_conn *gw,
                       uint64_t id, int status, const char *message)
{
        struct fix *x = probe_fix;

        x->net_fail(ops, gw, id, status, message);
        x->fails++;
        x->watches_in_fail = x->h.core.watches.stats.active;
        x->queued_in_fail = !queue_empty(&x->h.gone);
}

/* A connection closed by the test itself: what conn.c's on_closed()
 * frees. */
static void free_conn(uv_handle_t *handle)
{
        struct conn *c = handle->data;

        proto_reader_close(&c->reader);
        free(c->out);
        free(c->wbuf);
        free(c);
}

static int setup(void **state)
{
        struct fix *x = calloc(1, sizeof *x);

        assert_non_null(x);
        assert_int_equal(uv_loop_init(&x->loop), 0);
        config_defaults(&x->cfg);
        x->cfg.id = SELF;
        x->cfg.n_members = 0;
        x->cfg.tls = false;
        corefix_fake_init(&x->fake);
        coreconn_init(&x->fake.host);
        x->net_fail = x->fake.host.fail;
        x->fake.host.fail = fail_probe;
        probe_fix = x;
        /* What corehost_init() sets up, without a node or an apply log. */
        x->h.loop = &x->loop;
        queue_init(&x->h.gone);
        backups_init(&x->h.backups, &x->loop, NULL);
        assert_int_equal(
            gateway_init(&x->h.core, &x->fake.host, &x->cfg, LOG_ERROR), 0);
        /* What conn_listen() and its accept set up, without a socket. */
        x->set = calloc(1, sizeof *x->set);
        assert_non_null(x->set);
        x->set->loop = &x->loop;
        x->set->limits.output_limit = 1u << 20;
        x->set->on_frame = corehost_on_frame;
        x->set->on_gone = corehost_on_gone;
        x->set->data = &x->h;
        queue_init(&x->set->all);
        queue_init(&x->set->dirty);
        queue_init(&x->set->later);
        x->c = calloc(1, sizeof *x->c);
        assert_non_null(x->c);
        assert_int_equal(uv_tcp_init(&x->loop, &x->c->tcp), 0);
        x->c->tcp.data = x->c;
        x->c->set = x->set;
        x->c->id = 1;
        queue_init(&x->c->dirty_link);
        queue_init(&x->c->later_link);
        queue_init(&x->c->pace_link);
        gateway_conn_init(&x->c->gw, x->c->id, x->c->identity, true);
        proto_reader_init(&x->c->reader, 1u << 20, &mem_libc);
        queue_push_tail(&x->set->all, &x->c->link);
        x->set->n = 1;
        x->c->authenticated = true;
        *state = x;
        return 0;
}

static int teardown(void **state)
{
        struct fix *x = *state;

        gateway_close(&x->h.core, &(struct gateway_now){2000, 0});
        /* The close phase frees the connection (conn.c's on_closed). */
        assert_int_equal(uv_run(&x->loop, UV_RUN_DEFAULT), 0);
        assert_int_equal(uv_loop_close(&x->loop), 0);
        corefix_fake_close(&x->fake);
        free(x->set);
        free(x);
        probe_fix = NULL;
        return 0;
}

/* A WATCH of "a" as net hands frames over; a body of `len` bytes of it
 * (all of it: 0). */
static void watch_frame(struct fix *x, uint64_t id, size_t cut)
{
        struct proto_watch w = {.flags = 0, .from_index = 0};
        struct proto_header h;
        uint8_t buf[256];
        size_t n;

        w.name.p = "a";
        w.name.len = 1;
        n = proto_write_watch(buf, sizeof buf, id, &w);
        assert_true(n > PROTO_HEADER_SIZE + cut);
        n -= cut;
        assert_int_equal(proto_header_decode(&h, buf, 1u << 20), 0);
        h.length = (uint32_t)(n - PROTO_HEADER_SIZE);
        corehost_on_frame(&x->h, x->c, &h, buf + PROTO_HEADER_SIZE);
}

/* Dropped inside the core's fail op: the report waits for the input. */
static void gone_in_an_op_is_deferred(void **state)
{
        struct fix *x = *state;

        watch_frame(x, 7, 0);
        assert_int_equal(x->h.core.watches.stats.active, 1);
        assert_int_equal(x->c->gw.n_watches, 1);
        assert_true(x->c->out_len > 0); /* WATCHING */

        /* Its output can grow no more; a malformed WATCH: ERROR, close. */
        x->c->closing = true;
        watch_frame(x, 8, 3);
        assert_int_equal(x->fails, 1);
        assert_true(x->c->closed);               /* dropped inside the op */
        assert_true(x->queued_in_fail);          /* the host held the report */
        assert_int_equal(x->watches_in_fail, 1); /* the core had not heard */
        /* Reported once the input returned: the watch went with it. */
        assert_int_equal(x->h.core.watches.stats.active, 0);
        assert_true(queue_empty(&x->h.gone));
        assert_int_equal(x->h.depth, 0);
}

/* Between inputs (a read error, a timeout) the report is at once. */
static void gone_between_inputs_is_at_once(void **state)
{
        struct fix *x = *state;

        watch_frame(x, 7, 0);
        assert_int_equal(x->h.core.watches.stats.active, 1);
        corehost_on_gone(&x->h, x->c);
        assert_int_equal(x->h.core.watches.stats.active, 0);
        assert_true(queue_empty(&x->h.gone));
        assert_int_equal(x->fails, 0);
        /* What net's drop does after the report. */
        x->c->closed = true;
        queue_remove(&x->c->link);
        queue_remove(&x->c->dirty_link);
        uv_close((uv_handle_t *)&x->c->tcp, free_conn);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(gone_in_an_op_is_deferred, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(gone_between_inputs_is_at_once,
                                            setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
