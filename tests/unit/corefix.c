/* batond's request core on a fake host, for the unit tests that drive it
 * by its inputs alone: no raft node, no socket, no clock. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"
#include "../../src/proto/aclwire.h"
#include "../../src/proto/command.h"
#include "../../src/proto/query.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"
#include "corefix.h"

static struct corefix_fake *fake_of(struct gateway_host *h)
{
        return h->data;
}

/* Append a call of `op` to the effect list. */
static struct corefix_effect *note(struct gateway_host *h, enum corefix_op op)
{
        struct corefix_fake *f = fake_of(h);
        struct corefix_effect *e;

        if (f->n_effects == f->cap_effects) {
                size_t cap = f->cap_effects == 0 ? 256 : 2 * f->cap_effects;
                e = realloc(f->effects, cap * sizeof *e);
                assert_non_null(e);
                f->effects = e;
                f->cap_effects = cap;
        }
        e = &f->effects[f->n_effects++];
        memset(e, 0, sizeof *e);
        e->op = op;
        return e;
}

static const struct lockfsm *fsm_op(struct gateway_host *h)
{
        note(h, COREFIX_LOCKFSM);
        fake_of(h)->fsm_calls++;
        return fake_of(h)->fsm;
}

static const struct lockfsm *nowait_op(struct gateway_host *h)
{
        note(h, COREFIX_LOCKFSM_NOWAIT);
        fake_of(h)->nowait_calls++;
        return fake_of(h)->fsm;
}

static void leader_op(struct gateway_host *h, uint64_t *id,
                      const char **address)
{
        note(h, COREFIX_LEADER);
        fake_of(h)->leader_calls++;
        *id = fake_of(h)->leader;
        *address = fake_of(h)->leader_address;
}

static uint64_t applied_op(struct gateway_host *h)
{
        note(h, COREFIX_LAST_APPLIED);
        return fake_of(h)->applied;
}

static uint64_t last_op(struct gateway_host *h)
{
        note(h, COREFIX_LAST_INDEX);
        return fake_of(h)->last_index;
}

static void status_op(struct gateway_host *h, struct proto_status *st,
                      struct proto_versions *v)
{
        note(h, COREFIX_STATUS);
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
        note(h, COREFIX_RESTORES);
        *started = fake_of(h)->restores;
        *pending = false;
}

static const struct acl *acl_op(struct gateway_host *h)
{
        note(h, COREFIX_ACL);
        return &fake_of(h)->acl;
}

static uint64_t epoch_op(struct gateway_host *h)
{
        note(h, COREFIX_ACL_EPOCH);
        return 1;
}

static const struct directory *dir_op(struct gateway_host *h)
{
        note(h, COREFIX_DIRECTORY);
        return &fake_of(h)->dir;
}

static bool member_op(struct gateway_host *h, uint64_t id)
{
        (void)id;
        note(h, COREFIX_HAS_MEMBER)->arg = id;
        fake_of(h)->member_calls++;
        return fake_of(h)->has_member;
}

static bool digest_op(struct gateway_host *h, uint64_t *index, uint64_t *digest)
{
        struct corefix_fake *f = fake_of(h);
        bool some = f->digest;

        note(h, COREFIX_DIGEST);
        f->digest_calls++;
        f->digest = false;
        if (some) {
                *index = f->applied;
                *digest = 0x5eed;
        }
        return some;
}

static void timer_op(struct gateway_host *h, uint64_t at_ms)
{
        note(h, COREFIX_TIMER)->arg = at_ms;
}

static void log_op(struct gateway_host *h, enum log_level level,
                   const struct log_fields *f, const char *message)
{
        (void)f;
        (void)message;
        note(h, COREFIX_LOG)->arg = (uint64_t)level;
}

static void audit_op(struct gateway_host *h, const struct audit_event *e)
{
        struct corefix_effect *n = note(h, COREFIX_AUDIT);

        n->arg = (uint64_t)-e->result;
        snprintf(n->audit, sizeof n->audit, "%s %.*s %s by %s at %s: %s",
                 e->action, (int)e->target_len,
                 e->target != NULL ? e->target : "",
                 e->result == 0 ? "ok" : baton_errname(e->result), e->identity,
                 e->address, e->detail != NULL ? e->detail : "");
}

/* Raft's requests: recorded, never completed by the host itself. */
static void *entry_alloc_op(struct gateway_host *h, size_t size)
{
        note(h, COREFIX_ENTRY_ALLOC)->arg = size;
        return malloc(size);
}

static void entry_free_op(struct gateway_host *h, void *buf)
{
        note(h, COREFIX_ENTRY_FREE);
        free(buf);
}

/* The request, in `sent` and in the effect list; the effect. */
static struct corefix_effect *record(struct gateway_host *h,
                                     struct gateway_req *req,
                                     enum corefix_op effect, char op,
                                     int change, uint64_t id, void *buf)
{
        struct corefix_fake *f = fake_of(h);
        struct corefix_effect *e = note(h, effect);

        if (f->n_sent == f->cap_sent) {
                unsigned cap = f->cap_sent == 0 ? 16 : 2 * f->cap_sent;
                struct corefix_sent *sent =
                    realloc(f->sent, cap * sizeof *sent);
                assert_non_null(sent);
                f->sent = sent;
                f->cap_sent = cap;
        }
        e->arg = id;
        e->sent = f->n_sent;
        f->sent[f->n_sent++] = (struct corefix_sent){
            .req = req, .op = op, .change = change, .id = id, .buf = buf};
        return e;
}

/* What raft got: a batch's term and its commands' types, or one
 * command's. */
static void read_entry(struct corefix_effect *e, const void *buf, size_t len)
{
        struct entry_reader r;
        struct command c;
        const uint8_t *cmd;
        size_t n;

        if (!entry_is_batch(buf, len)) {
                assert_int_equal(command_decode(&c, buf, len), 0);
                e->n = 1;
                e->types[0] = c.type;
                return;
        }
        e->batch = true;
        assert_int_equal(entry_reader_init(&r, buf, len), 0);
        e->term = r.term;
        while (entry_reader_next(&r, &cmd, &n)) {
                assert_int_equal(command_decode(&c, cmd, n), 0);
                assert_true(e->n < ENTRY_MAX_COMMANDS);
                e->types[e->n++] = c.type;
        }
}

/* A proposal or barrier appends an entry to raft's log. */
static int propose_op(struct gateway_host *h, struct gateway_req *req,
                      void *buf, size_t len)
{
        read_entry(record(h, req, COREFIX_PROPOSE, 'p', 0, 0, buf), buf, len);
        fake_of(h)->last_index++;
        return 0;
}

static int barrier_op(struct gateway_host *h, struct gateway_req *req)
{
        record(h, req, COREFIX_BARRIER, 'b', 0, 0, NULL);
        fake_of(h)->last_index++;
        return 0;
}

static int change_op(struct gateway_host *h, struct gateway_req *req,
                     enum gateway_change kind, uint64_t id,
                     const char *raft_address)
{
        (void)raft_address;
        record(h, req, COREFIX_CHANGE, 'c', (int)kind, id, NULL);
        return 0;
}

static int probe_op(struct gateway_host *h, struct gateway_req *req,
                    uint64_t id, const char *address, unsigned timeout_ms)
{
        (void)address;
        (void)timeout_ms;
        record(h, req, COREFIX_PROBE, 'r', 0, id, NULL);
        return 0;
}

static int transfer_op(struct gateway_host *h, struct gateway_req *req,
                       uint64_t to)
{
        record(h, req, COREFIX_TRANSFER, 't', 0, to, NULL);
        return 0;
}

/* --- Client connections: buffers ---------------------------------------- */

static struct corefix_conn *conn_of(struct gateway_conn *gw)
{
        return (
            struct corefix_conn *)(void *)((char *)gw -
                                           offsetof(struct corefix_conn, gw));
}

/* Any op on a connection reported gone is the core's bug: counted. */
static struct corefix_conn *touch(struct gateway_conn *gw)
{
        struct corefix_conn *conn = conn_of(gw);

        if (conn->gone) {
                conn->after_gone++;
        }
        return conn;
}

/* Room for `n` more bytes of c's output; NULL once it is closing. */
static uint8_t *room(struct corefix_conn *conn, size_t n)
{
        size_t cap = conn->cap == 0 ? 4096 : conn->cap;
        uint8_t *p;

        if (conn->closing || conn->gone) {
                return NULL;
        }
        while (cap < conn->len + n) {
                cap *= 2;
        }
        if (cap != conn->cap) {
                p = realloc(conn->out, cap);
                assert_non_null(p);
                conn->out = p;
                conn->cap = cap;
        }
        return conn->out + conn->len;
}

static uint8_t *reserve_op(struct gateway_host *h, struct gateway_conn *gw,
                           size_t n)
{
        struct corefix_conn *conn = touch(gw);
        struct corefix_effect *e = note(h, COREFIX_RESERVE);

        e->conn = conn;
        e->arg = n;
        return room(conn, n);
}

/* The effect says which frame was committed: its type and request id. */
static void commit_op(struct gateway_host *h, struct gateway_conn *gw, size_t n,
                      bool later)
{
        struct corefix_conn *conn = touch(gw);
        struct corefix_effect *e = note(h, COREFIX_COMMIT);
        struct proto_header fh;

        e->conn = conn;
        assert_true(conn->len + n <= conn->cap);
        assert_true(n >= PROTO_HEADER_SIZE);
        assert_int_equal(proto_header_decode(&fh, conn->out + conn->len,
                                             (uint32_t)(n - PROTO_HEADER_SIZE)),
                         0);
        e->arg = fh.type;
        e->id = fh.id;
        conn->len += n;
        conn->commits_later += later;
}

static void fail_op(struct gateway_host *h, struct gateway_conn *gw,
                    uint64_t id, int status, const char *message)
{
        struct corefix_conn *conn = touch(gw);
        struct corefix_effect *e = note(h, COREFIX_FAIL);
        size_t cap = PROTO_HEADER_SIZE + 5 + 256;
        uint8_t *out = room(conn, cap);

        e->conn = conn;
        e->arg = id;
        if (out != NULL) {
                conn->len += proto_write_error(out, cap, id, status, message);
        }
        conn->closing = true;
}

static size_t backlog_op(struct gateway_host *h, const struct gateway_conn *gw)
{
        struct corefix_conn *conn = touch((struct gateway_conn *)gw);

        note(h, COREFIX_BACKLOG)->conn = conn;
        return conn->len - conn->read + conn->unread;
}

void corefix_fake_init(struct corefix_fake *f)
{
        struct lockfsm_limits l;

        memset(f, 0, sizeof *f);
        lockfsm_limits_default(&l);
        f->fsm = lockfsm_create(&l, NULL);
        assert_non_null(f->fsm);
        acl_init(&f->acl);
        directory_init(&f->dir);
        f->applied = 40;
        f->last_index = 41;
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
        f->host.audit = audit_op;
        f->host.entry_alloc = entry_alloc_op;
        f->host.entry_free = entry_free_op;
        f->host.propose = propose_op;
        f->host.barrier = barrier_op;
        f->host.change = change_op;
        f->host.probe = probe_op;
        f->host.transfer = transfer_op;
        f->host.reserve = reserve_op;
        f->host.commit = commit_op;
        f->host.fail = fail_op;
        f->host.backlog = backlog_op;
}

void corefix_fake_close(struct corefix_fake *f)
{
        lockfsm_destroy(f->fsm);
        free(f->effects);
        f->effects = NULL;
        free(f->sent);
        f->sent = NULL;
}

int corefix_setup(void **state)
{
        struct corefix *x = calloc(1, sizeof *x);

        assert_non_null(x);
        config_defaults(&x->cfg);
        x->cfg.id = SELF;
        x->cfg.n_members = 0; /* no directory to seed at ready */
        x->cfg.tls = false;   /* no access list to seed at a flush */
        corefix_fake_init(&x->fake);
        assert_int_equal(gateway_init(&x->g, &x->fake.host, &x->cfg, LOG_ERROR),
                         0);
        gateway_conn_init(&x->c.gw, 5, "", true);
        gateway_conn_init(&x->other.gw, 6, "", true);
        x->now.ms = 1000;
        x->now.ns = 1000000000;
        x->next_id = 100;
        *state = x;
        return 0;
}

void corefix_gone(struct corefix *x, struct corefix_conn *conn)
{
        assert_false(conn->gone);
        gateway_conn_gone(&x->g, &conn->gw);
        conn->gone = true;
}

int corefix_teardown(void **state)
{
        struct corefix *x = *state;
        unsigned i;

        if (!x->c.gone) {
                corefix_gone(x, &x->c);
        }
        if (!x->other.gone) {
                corefix_gone(x, &x->other);
        }
        if (!x->closed) {
                gateway_close(&x->g, &x->now);
        }
        /* As raft does at its close, once the core closed: each request
         * still out completes, which only frees it. */
        for (i = 0; i < x->fake.n_sent; i++) {
                if (!x->fake.sent[i].done) {
                        corefix_complete(x, i, BATON_ESHUTDOWN);
                }
        }
        assert_int_equal(x->c.after_gone, 0);
        assert_int_equal(x->other.after_gone, 0);
        corefix_fake_close(&x->fake);
        free(x->c.out);
        free(x->other.out);
        free(x);
        return 0;
}

uint64_t corefix_send_on(struct corefix *x, struct corefix_conn *conn,
                         const uint8_t *frame, size_t len)
{
        struct proto_header h;

        assert_true(len >= PROTO_HEADER_SIZE);
        assert_int_equal(
            proto_header_decode(&h, frame, (uint32_t)(len - PROTO_HEADER_SIZE)),
            0);
        assert_int_equal(h.length, len - PROTO_HEADER_SIZE);
        gateway_on_frame(&x->g, &x->now, &conn->gw, &h,
                         frame + PROTO_HEADER_SIZE);
        return h.id;
}

uint64_t corefix_send_frame(struct corefix *x, const uint8_t *frame, size_t len)
{
        return corefix_send_on(x, &x->c, frame, len);
}

uint64_t corefix_send_query_on(struct corefix *x, struct corefix_conn *conn)
{
        uint8_t buf[256];
        size_t n = proto_write_query(buf, sizeof buf, x->next_id++, 0, "a", 1);

        assert_true(n > 0);
        return corefix_send_on(x, conn, buf, n);
}

uint64_t corefix_send_query(struct corefix *x)
{
        return corefix_send_query_on(x, &x->c);
}

uint64_t corefix_send_watch_on(struct corefix *x, struct corefix_conn *conn)
{
        struct proto_watch w = {.flags = 0, .from_index = 0};
        uint8_t buf[256];
        size_t n;

        w.name.p = "a";
        w.name.len = 1;
        n = proto_write_watch(buf, sizeof buf, x->next_id++, &w);
        assert_true(n > 0);
        return corefix_send_on(x, conn, buf, n);
}

uint64_t corefix_send_acl_list(struct corefix *x)
{
        struct proto_acl_request r = {.op = PROTO_ACL_LIST};
        uint8_t buf[256];
        size_t n = proto_write_acl(buf, sizeof buf, x->next_id++, &r);

        assert_true(n > 0);
        return corefix_send_frame(x, buf, n);
}

uint64_t corefix_send_member_remove(struct corefix *x, uint64_t member)
{
        uint8_t buf[64];
        size_t n = proto_write_id(buf, sizeof buf, x->next_id++,
                                  PROTO_MEMBER_REMOVE, member);

        assert_true(n > 0);
        return corefix_send_frame(x, buf, n);
}

uint64_t corefix_send_status(struct corefix *x, uint16_t flags)
{
        uint8_t buf[64];
        size_t n =
            proto_write_status_request(buf, sizeof buf, x->next_id++, flags);

        assert_true(n > 0);
        return corefix_send_frame(x, buf, n);
}

uint64_t corefix_send_transfer(struct corefix *x, uint64_t to)
{
        uint8_t buf[64];
        size_t n =
            proto_write_id(buf, sizeof buf, x->next_id++, PROTO_TRANSFER, to);

        assert_true(n > 0);
        return corefix_send_frame(x, buf, n);
}

uint64_t corefix_send_acl_set(struct corefix *x)
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
        id = corefix_send_frame(x, buf, n);
        x->cfg.tls = false;
        return id;
}

uint64_t corefix_send_open_on(struct corefix *x, struct corefix_conn *conn)
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
        return corefix_send_on(x, conn, buf, n);
}

uint64_t corefix_send_open(struct corefix *x)
{
        return corefix_send_open_on(x, &x->c);
}

bool corefix_next_on(struct corefix_conn *conn, struct proto_header *h,
                     const uint8_t **body)
{
        if (conn->read == conn->len) {
                return false;
        }
        assert_true(conn->len - conn->read >= PROTO_HEADER_SIZE);
        assert_int_equal(
            proto_header_decode(h, conn->out + conn->read, 1u << 20), 0);
        *body = conn->out + conn->read + PROTO_HEADER_SIZE;
        conn->read += PROTO_HEADER_SIZE + h->length;
        assert_true(conn->read <= conn->len);
        return true;
}

bool corefix_next_reply(struct corefix *x, struct proto_header *h,
                        const uint8_t **body)
{
        return corefix_next_on(&x->c, h, body);
}

void corefix_expect_not_leader(struct corefix *x, uint64_t id, uint64_t leader,
                               const char *address)
{
        struct proto_header h;
        struct proto_string a;
        const uint8_t *body;
        uint64_t got;

        assert_true(corefix_next_reply(x, &h, &body));
        assert_int_equal(h.type, PROTO_NOT_LEADER);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_not_leader(body, h.length, &got, &a), 0);
        assert_int_equal(got, leader);
        assert_int_equal(a.len, strlen(address));
        assert_memory_equal(a.p, address, a.len);
}

void corefix_expect_status_on(struct corefix_conn *conn, uint64_t id,
                              int status)
{
        struct proto_header h;
        struct proto_result r;
        const uint8_t *body;

        assert_true(corefix_next_on(conn, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, status);
}

void corefix_expect_status(struct corefix *x, uint64_t id, int status)
{
        corefix_expect_status_on(&x->c, id, status);
}

void corefix_expect_nothing(struct corefix *x)
{
        assert_int_equal(x->c.read, x->c.len);
}

/* The state machine's events, into the core as batond's host hands
 * them. */
static void on_fsm_event(void *data, const struct lockfsm_event *ev)
{
        struct corefix *x = data;

        gateway_on_event(&x->g, &x->now, 0, ev);
}

struct lockfsm_result corefix_apply(struct corefix *x, uint64_t index,
                                    const struct command *cmd)
{
        struct lockfsm_result res;

        lockfsm_set_event_cb(x->fake.fsm, on_fsm_event, x);
        memset(&res, 0, sizeof res);
        assert_int_equal(lockfsm_apply_command(x->fake.fsm, index, cmd, &res),
                         0);
        lockfsm_set_event_cb(x->fake.fsm, NULL, NULL);
        x->fake.applied = index;
        return res;
}

void corefix_complete(struct corefix *x, unsigned i, int status)
{
        assert_true(i < x->fake.n_sent);
        /* The completion may send more, and so move `sent`. */
        x->fake.sent[i].done = true;
        gateway_on_done(&x->g, &x->now, x->fake.sent[i].req, status);
        free(x->fake.sent[i].buf);
        x->fake.sent[i].buf = NULL;
}

void corefix_apply_batch(struct corefix *x, uint64_t index,
                         const struct command *cmds, unsigned n)
{
        static uint8_t buf[ENTRY_MAX_SIZE];
        struct lockfsm_result res;
        struct entry_writer w;
        unsigned i;

        entry_writer_init(&w, buf, sizeof buf, 0);
        for (i = 0; i < n; i++) {
                uint8_t cmd[COMMAND_ANY_MAX_SIZE];
                size_t len = command_encode(&cmds[i], cmd, sizeof cmd);
                assert_true(len > 0);
                assert_true(entry_writer_add(&w, cmd, len));
        }
        lockfsm_set_event_cb(x->fake.fsm, on_fsm_event, x);
        memset(&res, 0, sizeof res);
        assert_int_equal(lockfsm_apply(x->fake.fsm, index, buf,
                                       entry_writer_finish(&w), &res),
                         0);
        lockfsm_set_event_cb(x->fake.fsm, NULL, NULL);
        x->fake.applied = index;
}

/* --- The effect list ------------------------------------------------------ */

size_t corefix_mark(const struct corefix *x)
{
        return x->fake.n_effects;
}

unsigned corefix_count(const struct corefix *x, size_t from, enum corefix_op op)
{
        unsigned n = 0;
        size_t i;

        for (i = from; i < x->fake.n_effects; i++) {
                n += x->fake.effects[i].op == op;
        }
        return n;
}

const struct corefix_effect *corefix_nth(const struct corefix *x, size_t from,
                                         enum corefix_op op, unsigned nth)
{
        size_t i;

        for (i = from; i < x->fake.n_effects; i++) {
                if (x->fake.effects[i].op == op && nth-- == 0) {
                        return &x->fake.effects[i];
                }
        }
        return NULL;
}

static const char *const op_names[COREFIX_N_OPS] = {
    "reserve",    "commit",         "fail",        "backlog",
    "lockfsm",    "lockfsm_nowait", "leader",      "last_applied",
    "last_index", "status",         "restores",    "acl",
    "acl_epoch",  "directory",      "has_member",  "digest_to_propose",
    "log",        "timer",          "entry_alloc", "entry_free",
    "propose",    "barrier",        "change",      "probe",
    "transfer",   "audit",
};

void corefix_print(const struct corefix *x, size_t from)
{
        size_t i;

        for (i = from; i < x->fake.n_effects; i++) {
                const struct corefix_effect *e = &x->fake.effects[i];
                fprintf(stderr, "#   %zu %s arg=%llu", i, op_names[e->op],
                        (unsigned long long)e->arg);
                if (e->op == COREFIX_COMMIT) {
                        fprintf(stderr, " (%s to %llu)",
                                proto_type_name((uint8_t)e->arg),
                                (unsigned long long)e->id);
                }
                if (e->op == COREFIX_PROPOSE) {
                        fprintf(stderr, " %s of %u, first %s",
                                e->batch ? "batch" : "entry", e->n,
                                e->n > 0 ? command_type_name(e->types[0])
                                         : "-");
                }
                fprintf(stderr, "\n");
        }
}

void corefix_expect_count(const struct corefix *x, size_t from,
                          enum corefix_op op, unsigned n)
{
        unsigned got = corefix_count(x, from, op);

        if (got != n) {
                fprintf(stderr, "# %u calls of %s, not %u; the effects:\n", got,
                        op_names[op], n);
                corefix_print(x, from);
        }
        assert_int_equal(got, n);
}
