/* The request core's leadership as its host reports it (gateway.h): it
 * serves from gateway_on_ready() to gateway_on_lost() and at no other
 * time, sends clients to the leader its host names, holds requests while
 * the host names this node, and asks its host, not the raft node, what
 * the node knows. The core runs with no raft node at all (NULL), so a
 * query that still went to the node would crash here; its frames go
 * through real connection records, whose output is read back. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"
#include "../../src/proto/command.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../../src/server/config/config.h"
#include "../../src/server/gateway/core.h"
#include "../../src/server/gateway/gateway.h"
#include "../lib/forkrun.h"

#define SELF  1
#define OTHER 2

/* A raft request the core handed to the fake host: which op ('p'ropose,
 * 'b'arrier, 'c'hange, p'r'obe, 't'ransfer), with what. */
struct sent {
        struct gateway_req *req;
        char op;
        int change;
        uint64_t id;
        void *buf; /* a proposal's entry, the host's until completed */
};

#define MAX_SENT 16

/* The fake host: what its queries answer, and how often each was asked;
 * the requests it was handed, which a test completes when it likes. */
struct fake {
        struct gateway_host host;
        struct lockfsm *fsm;
        struct acl acl;
        struct directory dir;
        uint64_t leader; /* what leader() says */
        const char *leader_address;
        unsigned leader_calls, fsm_calls, nowait_calls, status_calls,
            versions_calls, digest_calls, member_calls;
        bool has_member; /* what has_member() says */
        bool voter;      /* status() has member OTHER, a voter */
        struct sent sent[MAX_SENT];
        unsigned n_sent;
};

static struct fake *fake_of(struct gateway_host *h)
{
        return h->data;
}

static const struct lockfsm *fsm_op(struct gateway_host *h)
{
        fake_of(h)->fsm_calls++;
        return fake_of(h)->fsm;
}

static const struct lockfsm *nowait_op(struct gateway_host *h)
{
        fake_of(h)->nowait_calls++;
        return fake_of(h)->fsm;
}

static void leader_op(struct gateway_host *h, uint64_t *id,
                      const char **address)
{
        fake_of(h)->leader_calls++;
        *id = fake_of(h)->leader;
        *address = fake_of(h)->leader_address;
}

static uint64_t applied_op(struct gateway_host *h)
{
        (void)h;
        return 40;
}

static uint64_t last_op(struct gateway_host *h)
{
        (void)h;
        return 41;
}

static void status_op(struct gateway_host *h, struct proto_status *st,
                      struct proto_versions *v)
{
        fake_of(h)->status_calls++;
        memset(st, 0, sizeof *st);
        if (fake_of(h)->voter) {
                st->n_members = 1;
                st->members[0].id = OTHER;
                st->members[0].role = BATON_MEMBER_VOTER;
        }
        st->role = 3;
        st->term = 7;
        st->applied_index = 40;
        if (v != NULL) {
                fake_of(h)->versions_calls++;
                v->release.p = "9.8.7";
                v->release.len = 5;
                v->command = 11;
                v->snapshot = 12;
                v->container = 13;
        }
}

static void restores_op(struct gateway_host *h, uint64_t *started,
                        bool *pending)
{
        (void)h;
        *started = 0;
        *pending = false;
}

static const struct acl *acl_op(struct gateway_host *h)
{
        return &fake_of(h)->acl;
}

static uint64_t epoch_op(struct gateway_host *h)
{
        (void)h;
        return 1;
}

static const struct directory *dir_op(struct gateway_host *h)
{
        return &fake_of(h)->dir;
}

static bool member_op(struct gateway_host *h, uint64_t id)
{
        (void)id;
        fake_of(h)->member_calls++;
        return fake_of(h)->has_member;
}

static bool digest_op(struct gateway_host *h, uint64_t *index, uint64_t *digest)
{
        (void)index;
        (void)digest;
        fake_of(h)->digest_calls++;
        return false;
}

static void timer_op(struct gateway_host *h, uint64_t at_ms)
{
        (void)h;
        (void)at_ms;
}

static void log_op(struct gateway_host *h, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        (void)h;
        (void)level;
        (void)f;
        (void)message;
}

/* Raft's requests: recorded, never completed by the host itself. */
static void *entry_alloc_op(struct gateway_host *h, size_t size)
{
        (void)h;
        return malloc(size);
}

static void entry_free_op(struct gateway_host *h, void *buf)
{
        (void)h;
        free(buf);
}

static int record(struct gateway_host *h, struct gateway_req *req, char op,
                  int change, uint64_t id, void *buf)
{
        struct fake *f = fake_of(h);

        assert_true(f->n_sent < MAX_SENT);
        f->sent[f->n_sent++] = (struct sent){
            .req = req, .op = op, .change = change, .id = id, .buf = buf};
        return 0;
}

static int propose_op(struct gateway_host *h, struct gateway_req *req,
                      void *buf, size_t len)
{
        (void)len;
        return record(h, req, 'p', 0, 0, buf);
}

static int barrier_op(struct gateway_host *h, struct gateway_req *req)
{
        return record(h, req, 'b', 0, 0, NULL);
}

static int change_op(struct gateway_host *h, struct gateway_req *req,
                     enum gateway_change kind, uint64_t id,
                     const char *raft_address)
{
        (void)raft_address;
        return record(h, req, 'c', (int)kind, id, NULL);
}

static int probe_op(struct gateway_host *h, struct gateway_req *req,
                    uint64_t id, const char *address, unsigned timeout_ms)
{
        (void)address;
        (void)timeout_ms;
        return record(h, req, 'r', 0, id, NULL);
}

static int transfer_op(struct gateway_host *h, struct gateway_req *req,
                       uint64_t to)
{
        return record(h, req, 't', 0, to, NULL);
}

/* A core on no raft node, one client connection, and where its output
 * has been read up to. */
struct fix {
        struct config cfg;
        struct fake fake;
        struct gateway g;
        struct conn_set set;
        struct conn c;
        size_t read;
        struct gateway_now now;
        uint64_t next_id;
        bool closed; /* the test closed the core itself */
};

static void fake_init(struct fake *f)
{
        struct lockfsm_limits l;

        memset(f, 0, sizeof *f);
        lockfsm_limits_default(&l);
        f->fsm = lockfsm_create(&l, NULL);
        assert_non_null(f->fsm);
        acl_init(&f->acl);
        directory_init(&f->dir);
        f->leader = OTHER;
        f->leader_address = "127.0.0.1:7002";
        f->host.data = f;
        f->host.lockfsm = fsm_op;
        f->host.lockfsm_nowait = nowait_op;
        f->host.leader = leader_op;
        f->host.last_applied = applied_op;
        f->host.last_index = last_op;
        f->host.status = status_op;
        f->host.restores = restores_op;
        f->host.acl = acl_op;
        f->host.acl_epoch = epoch_op;
        f->host.directory = dir_op;
        f->host.has_member = member_op;
        f->host.digest_to_propose = digest_op;
        f->host.timer = timer_op;
        f->host.log = log_op;
        f->host.entry_alloc = entry_alloc_op;
        f->host.entry_free = entry_free_op;
        f->host.propose = propose_op;
        f->host.barrier = barrier_op;
        f->host.change = change_op;
        f->host.probe = probe_op;
        f->host.transfer = transfer_op;
}

static int setup(void **state)
{
        struct fix *x = calloc(1, sizeof *x);

        assert_non_null(x);
        config_defaults(&x->cfg);
        x->cfg.id = SELF;
        x->cfg.n_members = 0; /* no directory to seed at ready */
        x->cfg.tls = false;   /* no access list to seed at a flush */
        fake_init(&x->fake);
        assert_int_equal(gateway_init(&x->g, &x->fake.host, &x->cfg, LOG_ERROR),
                         0);
        queue_init(&x->set.all);
        queue_init(&x->set.dirty);
        queue_init(&x->set.later);
        x->set.limits.output_limit = 1u << 20;
        x->c.set = &x->set;
        queue_init(&x->c.link);
        queue_init(&x->c.dirty_link);
        queue_init(&x->c.later_link);
        queue_init(&x->c.pendings);
        x->c.id = 5;
        x->c.role = ROLES_ADMIN; /* plain: every client administers */
        x->now.ms = 1000;
        x->now.ns = 1000000000;
        x->next_id = 100;
        *state = x;
        return 0;
}

static int teardown(void **state)
{
        struct fix *x = *state;

        unsigned i;

        gateway_on_gone(&x->g, &x->c);
        if (!x->closed) {
                gateway_close(&x->g, &x->now);
        }
        for (i = 0; i < x->fake.n_sent; i++) {
                free(x->fake.sent[i].buf);
        }
        lockfsm_destroy(x->fake.fsm);
        free(x->c.out);
        free(x);
        return 0;
}

/* Hand the core one whole frame from the connection; its id. */
static uint64_t send_frame(struct fix *x, const uint8_t *frame, size_t len)
{
        struct proto_header h;

        assert_true(len >= PROTO_HEADER_SIZE);
        assert_int_equal(
            proto_header_decode(&h, frame, (uint32_t)(len - PROTO_HEADER_SIZE)),
            0);
        assert_int_equal(h.length, len - PROTO_HEADER_SIZE);
        gateway_on_frame(&x->g, &x->now, &x->c, &h, frame + PROTO_HEADER_SIZE);
        return h.id;
}

static uint64_t send_query(struct fix *x)
{
        uint8_t buf[256];
        size_t n = proto_write_query(buf, sizeof buf, x->next_id++, 0, "a", 1);

        assert_true(n > 0);
        return send_frame(x, buf, n);
}

static uint64_t send_acl_list(struct fix *x)
{
        struct proto_acl_request r = {.op = PROTO_ACL_LIST};
        uint8_t buf[256];
        size_t n = proto_write_acl(buf, sizeof buf, x->next_id++, &r);

        assert_true(n > 0);
        return send_frame(x, buf, n);
}

static uint64_t send_member_remove(struct fix *x, uint64_t member)
{
        uint8_t buf[64];
        size_t n = proto_write_id(buf, sizeof buf, x->next_id++,
                                  PROTO_MEMBER_REMOVE, member);

        assert_true(n > 0);
        return send_frame(x, buf, n);
}

static uint64_t send_status(struct fix *x, uint16_t flags)
{
        uint8_t buf[64];
        size_t n =
            proto_write_status_request(buf, sizeof buf, x->next_id++, flags);

        assert_true(n > 0);
        return send_frame(x, buf, n);
}

/* The next frame the core wrote to the connection, if any. */
static bool next_reply(struct fix *x, struct proto_header *h,
                       const uint8_t **body)
{
        if (x->read == x->c.out_len) {
                return false;
        }
        assert_true(x->c.out_len - x->read >= PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(h, x->c.out + x->read, 1u << 20),
                         0);
        *body = x->c.out + x->read + PROTO_HEADER_SIZE;
        x->read += PROTO_HEADER_SIZE + h->length;
        assert_true(x->read <= x->c.out_len);
        return true;
}

/* The next reply is NOT_LEADER to request `id`, naming `leader` at
 * `address`. */
static void expect_not_leader(struct fix *x, uint64_t id, uint64_t leader,
                              const char *address)
{
        struct proto_header h;
        struct proto_string a;
        const uint8_t *body;
        uint64_t got;

        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_NOT_LEADER);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_not_leader(body, h.length, &got, &a), 0);
        assert_int_equal(got, leader);
        assert_int_equal(a.len, strlen(address));
        assert_memory_equal(a.p, address, a.len);
}

static void expect_nothing(struct fix *x)
{
        assert_int_equal(x->read, x->c.out_len);
}

/* Before ready, leader-only requests go to the leader the host names,
 * and a flush proposes nothing and asks nothing. */
static void not_serving_sends_clients_on(void **state)
{
        struct fix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        uint64_t id;
        uint8_t ping[PROTO_HEADER_SIZE];

        id = send_query(x);
        expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        id = send_acl_list(x);
        expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        id = send_member_remove(x, 9);
        expect_not_leader(x, id, OTHER, "127.0.0.1:7002");
        assert_int_equal(x->fake.member_calls, 0);
        assert_int_equal(x->g.stats.redirects, 3);
        /* Any node answers a PING. */
        id = x->next_id++;
        send_frame(x, ping,
                   proto_write_empty(ping, sizeof ping, id, PROTO_PING));
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_PONG);
        assert_int_equal(h.id, id);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 0);
        assert_int_equal(x->fake.fsm_calls, 0);
        expect_nothing(x);
}

/* From ready the core answers leader-only requests itself; at lost it
 * answers what it holds NOT_LEADER, and sends clients on again. */
static void ready_serves_until_lost(void **state)
{
        struct fix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        struct proto_result r;
        struct proto_acl_reply acl;
        uint64_t id, query;

        gateway_on_ready(&x->g, &x->now, 7);
        assert_int_equal(x->g.term, 7); /* what its batches are stamped */
        assert_int_equal(x->g.stats.leader_changes, 1);
        assert_true(x->fake.fsm_calls > 0); /* the leader's clocks */
        id = send_acl_list(x);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_ACL_REPLY);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_acl_reply(body, h.length, &acl), 0);
        assert_int_equal(acl.seeded, 0);
        id = send_member_remove(x, 9);
        assert_int_equal(x->fake.member_calls, 1);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, BATON_ENOMEMBER);
        /* A read waits for the next flush's barrier. */
        query = send_query(x);
        expect_nothing(x);
        x->fake.leader = 3;
        x->fake.leader_address = "127.0.0.1:7003";
        gateway_on_lost(&x->g, &x->now);
        expect_not_leader(x, query, 3, "127.0.0.1:7003");
        id = send_acl_list(x);
        expect_not_leader(x, id, 3, "127.0.0.1:7003");
        expect_nothing(x);
}

/* While the host names this node leader but it does not serve yet, the
 * core holds requests rather than send clients to itself; ready queues
 * them, and lost answers them NOT_LEADER with no leader named. */
static void held_from_leading_to_ready(void **state)
{
        struct fix *x = *state;
        uint64_t query, id;

        x->fake.leader = SELF;
        x->fake.leader_address = "127.0.0.1:7001";
        query = send_query(x);
        expect_nothing(x);
        /* What is not held is not sent to this node either. */
        id = send_acl_list(x);
        expect_not_leader(x, id, 0, "");
        gateway_on_ready(&x->g, &x->now, 8);
        expect_nothing(x); /* queued for the barrier */
        gateway_on_lost(&x->g, &x->now);
        expect_not_leader(x, query, 0, "");
        expect_nothing(x);
}

/* A flush asks for the digest to propose only while serving. */
static void flush_only_while_serving(void **state)
{
        struct fix *x = *state;

        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 0);
        gateway_on_ready(&x->g, &x->now, 9);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 1);
        gateway_on_lost(&x->g, &x->now);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.digest_calls, 1);
        expect_nothing(x);
}

/* STATUS, on any node, is the host's status and lock counts, with the
 * versions only when asked. */
static void status_from_the_host(void **state)
{
        struct fix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        struct proto_status st;
        struct proto_versions v;
        uint64_t id;

        id = send_status(x, PROTO_FLAG_VERSIONS);
        assert_int_equal(x->fake.status_calls, 1);
        assert_int_equal(x->fake.versions_calls, 1);
        assert_int_equal(x->fake.nowait_calls, 1);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_STATUS_REPLY);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_status(body, h.length, h.flags, &st, &v),
                         0);
        assert_int_equal(st.id, SELF);
        assert_int_equal(st.term, 7);
        assert_int_equal(v.release.len, 5);
        assert_memory_equal(v.release.p, "9.8.7", 5);
        assert_int_equal(v.command, 11);
        assert_int_equal(v.snapshot, 12);
        assert_int_equal(v.container, 13);
        id = send_status(x, 0);
        assert_int_equal(x->fake.status_calls, 2);
        assert_int_equal(x->fake.versions_calls, 1);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_STATUS_REPLY);
        assert_int_equal(h.flags, 0);
        assert_int_equal(x->fake.leader_calls, 0);
}

/* --- Raft's requests, through the host ------------------------------- */

static uint64_t send_transfer(struct fix *x, uint64_t to)
{
        uint8_t buf[64];
        size_t n =
            proto_write_id(buf, sizeof buf, x->next_id++, PROTO_TRANSFER, to);

        assert_true(n > 0);
        return send_frame(x, buf, n);
}

/* An ACL SET, proposed only with TLS on (the config is read at the
 * frame). */
static uint64_t send_acl_set(struct fix *x)
{
        struct proto_acl_request r = {.op = PROTO_ACL_SET, .role = 1};
        uint8_t buf[256];
        size_t n;
        uint64_t id;

        r.identity.p = "reader";
        r.identity.len = 6;
        n = proto_write_acl(buf, sizeof buf, x->next_id++, &r);
        assert_true(n > 0);
        x->cfg.tls = true;
        id = send_frame(x, buf, n);
        x->cfg.tls = false;
        return id;
}

/* An OPEN of a session, proposed at the next flush. */
static uint64_t send_open(struct fix *x)
{
        static const uint8_t hash[COMMAND_HASH_SIZE] = {1};
        struct command c = {.type = COMMAND_OPEN, .nonce = 77};
        uint8_t cmd[COMMAND_MAX_SIZE], buf[COMMAND_MAX_SIZE + 64];
        size_t len, n;

        c.ttl_ms = x->cfg.min_ttl_ms;
        c.hash = hash;
        len = command_encode(&c, cmd, sizeof cmd);
        assert_true(len > 0);
        n = proto_write_command(buf, sizeof buf, x->next_id++, cmd, len);
        assert_true(n > 0);
        return send_frame(x, buf, n);
}

/* The next reply is a RESULT to request `id` with `status`. */
static void expect_status(struct fix *x, uint64_t id, int status)
{
        struct proto_header h;
        struct proto_result r;
        const uint8_t *body;

        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, status);
}

/* The host completes request `i` of those it was handed. */
static void complete(struct fix *x, unsigned i, int status)
{
        struct sent *s = &x->fake.sent[i];

        assert_true(i < x->fake.n_sent);
        gateway_on_done(&x->g, &x->now, s->req, status);
        free(s->buf);
        s->buf = NULL;
}

/* One request of each kind the core makes of raft goes out through the
 * host's ops, not the node (there is none here), and its completion
 * answers its client once. */
static void requests_go_through_the_host(void **state)
{
        struct fix *x = *state;
        struct proto_header h;
        const uint8_t *body;
        uint64_t query, remove, transfer;

        x->fake.has_member = true;
        x->fake.voter = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = send_member_remove(x, 9);
        transfer = send_transfer(x, OTHER);
        query = send_query(x);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 3);
        assert_int_equal(x->fake.sent[0].op, 'c');
        assert_int_equal(x->fake.sent[0].change, GATEWAY_REMOVE);
        assert_int_equal(x->fake.sent[0].id, 9);
        assert_int_equal(x->fake.sent[1].op, 't');
        assert_int_equal(x->fake.sent[1].id, OTHER);
        assert_int_equal(x->fake.sent[2].op, 'b');
        assert_int_equal(gateway_requests_out(&x->g), 3);
        expect_nothing(x);
        /* The barrier: the read is answered from the state machine. */
        complete(x, 2, 0);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.id, query);
        assert_int_not_equal(h.type, PROTO_NOT_LEADER);
        expect_nothing(x);
        /* The removal: answered, and its directory entry proposed as the
         * leader's own at the next flush. */
        complete(x, 0, 0);
        expect_status(x, remove, 0);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 4);
        assert_int_equal(x->fake.sent[3].op, 'p');
        /* The transfer: the host's leader() says where leadership went. */
        complete(x, 1, 0);
        assert_true(next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, transfer);
        complete(x, 3, 0);
        assert_int_equal(gateway_requests_out(&x->g), 0);
        expect_nothing(x);
}

/* gateway_close() answers every client that waits on a request still
 * out (the outcome unknown, or sent on for a read), and the requests'
 * completions after it, which batond's node delivers as it closes, only
 * free their records: no second answer, nothing proposed, nothing asked
 * of the host. */
static void close_answers_and_done_only_frees(void **state)
{
        struct fix *x = *state;
        uint64_t remove, transfer, acl, open, query;
        unsigned i, sent, calls;

        x->fake.has_member = true;
        x->fake.voter = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = send_member_remove(x, 9);
        transfer = send_transfer(x, OTHER);
        acl = send_acl_set(x);
        open = send_open(x);
        query = send_query(x);
        gateway_flush(&x->g, &x->now, 1700000000000ULL);
        assert_int_equal(x->fake.n_sent, 5); /* c, t, p (ACL), p, b */
        assert_int_equal(gateway_requests_out(&x->g), 5);
        expect_nothing(x);

        gateway_close(&x->g, &x->now);
        x->closed = true;
        expect_status(x, open, BATON_EUNKNOWN); /* proposed */
        expect_status(x, remove, BATON_EUNKNOWN);
        expect_status(x, transfer, BATON_EUNKNOWN);
        expect_status(x, acl, BATON_EUNKNOWN);
        expect_not_leader(x, query, OTHER, "127.0.0.1:7002");
        expect_nothing(x);

        /* As raft closes: success, failure, in any order. */
        sent = x->fake.n_sent;
        calls = x->fake.leader_calls + x->fake.member_calls;
        for (i = 0; i < sent; i++) {
                complete(x, sent - 1 - i, i % 2 == 0 ? 0 : BATON_EUNKNOWN);
        }
        assert_int_equal(gateway_requests_out(&x->g), 0);
        assert_int_equal(x->fake.n_sent, sent);
        assert_int_equal(x->fake.leader_calls + x->fake.member_calls, calls);
        expect_nothing(x);
}

/* The first request the host was handed, completed again. */
static void complete_again(void *arg)
{
        struct fix *x = arg;

        gateway_on_done(&x->g, &x->now, x->fake.sent[0].req, 0);
}

/* A completion of a request that is not out (here, the same one twice)
 * stops the core at its check, which says so, rather than answer twice
 * or touch a freed record. */
static void second_completion_stops_the_core(void **state)
{
        struct fix *x = *state;
        char said[1024];
        uint64_t remove;
        int status;

        x->fake.has_member = true;
        gateway_on_ready(&x->g, &x->now, 7);
        remove = send_member_remove(x, 9);
        assert_int_equal(x->fake.n_sent, 1);
        complete(x, 0, BATON_ECANTCHANGE);
        expect_status(x, remove, BATON_ECANTCHANGE);
        assert_int_equal(gateway_requests_out(&x->g), 0);
        status = forkrun(complete_again, x, said, sizeof said);
        assert_int_not_equal(status, -1);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGABRT);
        assert_non_null(strstr(said, "is_out(g, req)"));
        expect_nothing(x);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(not_serving_sends_clients_on, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(ready_serves_until_lost, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(held_from_leading_to_ready, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(flush_only_while_serving, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(status_from_the_host, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(requests_go_through_the_host, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(close_answers_and_done_only_frees,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(second_completion_stops_the_core,
                                            setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
