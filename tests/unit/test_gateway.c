/* The request core's contract (gateway.h), case by case, on a fake host
 * that records every op the core calls (corefix.h): each case drives the
 * core by its inputs alone and asserts on the list of effects, that is,
 * what it proposed to raft, which barriers it started, what it wrote to
 * which connection and when it asked for its timer. That a connection
 * reported gone gets no more answers and no watch events is
 * test_conngone's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/proto/keepalive.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"
#include "../../src/server/gateway/access.h"
#include "../../src/server/gateway/leader.h"
#include "corefix.h"

#define TERM 7
#define WALL 1700000000000ULL /* the wall clock of a flush, ms */
#define TTL  10000            /* the sessions' TTL here */

/* An OPEN with nonce `nonce` on `conn` (c when NULL); its id. */
static uint64_t send_open(struct corefix *x, struct corefix_conn *conn,
                          uint64_t nonce)
{
        static const uint8_t hash[COMMAND_HASH_SIZE] = {1};
        struct command c = {.type = COMMAND_OPEN, .nonce = nonce};
        uint8_t cmd[COMMAND_MAX_SIZE], buf[COMMAND_MAX_SIZE + 64];
        size_t len, n;

        c.ttl_ms = TTL;
        c.hash = hash;
        len = command_encode(&c, cmd, sizeof cmd);
        assert_true(len > 0);
        n = proto_write_command(buf, sizeof buf, x->next_id++, cmd, len);
        assert_true(n > 0);
        return corefix_send_on(x, conn != NULL ? conn : &x->c, buf, n);
}

/* `n` OPENs on c, with nonces from 1000. */
static void send_opens(struct corefix *x, unsigned n)
{
        unsigned i;

        for (i = 0; i < n; i++) {
                send_open(x, NULL, 1000 + i);
        }
}

static uint64_t send_keepalive(struct corefix *x, uint64_t session)
{
        uint8_t buf[64];
        size_t n =
            proto_write_keepalive(buf, sizeof buf, x->next_id++, 0, session);

        assert_true(n > 0);
        return corefix_send_frame(x, buf, n);
}

static void flush(struct corefix *x, uint64_t wall_ms)
{
        gateway_flush(&x->g, &x->now, wall_ms);
}

/* A flush at `wall_ms` that proposes `n` entries; where the effect list
 * ended before it. */
static size_t flush_proposing(struct corefix *x, uint64_t wall_ms, unsigned n)
{
        size_t m = corefix_mark(x);

        flush(x, wall_ms);
        corefix_expect_count(x, m, COREFIX_PROPOSE, n);
        return m;
}

/* The `nth` proposal from `from` on: a batch stamped TERM of `n`
 * commands, the first of type `first` and the rest of type `rest`. */
static void expect_batch(const struct corefix *x, size_t from, unsigned nth,
                         uint32_t n, uint8_t first, uint8_t rest)
{
        const struct corefix_effect *e =
            corefix_nth(x, from, COREFIX_PROPOSE, nth);
        uint32_t i;

        assert_non_null(e);
        assert_true(e->batch);
        assert_int_equal(e->term, TERM);
        assert_int_equal(e->n, n);
        for (i = 0; i < n; i++) {
                assert_int_equal(e->types[i], i == 0 ? first : rest);
        }
}

/* The `nth` proposal from `from` on is an entry of its own: one command
 * of `type`, no batch. */
static void expect_alone(const struct corefix *x, size_t from, unsigned nth,
                         uint8_t type)
{
        const struct corefix_effect *e =
            corefix_nth(x, from, COREFIX_PROPOSE, nth);

        assert_non_null(e);
        assert_false(e->batch);
        assert_int_equal(e->n, 1);
        assert_int_equal(e->types[0], type);
}

/* The last timer the core asked for from `from` on was for `at_ms`. */
static void expect_timer(const struct corefix *x, size_t from, uint64_t at_ms)
{
        unsigned n = corefix_count(x, from, COREFIX_TIMER);

        assert_true(n > 0);
        assert_int_equal(corefix_nth(x, from, COREFIX_TIMER, n - 1)->arg,
                         at_ms);
}

/* --- Batching ------------------------------------------------------------ */

/* Frames are only queued; the flush proposes every one of them, in
 * ceil(n/256) batch entries stamped with the serving term, the first
 * headed by a CLOCK; a flush with nothing new proposes nothing. */
static void frames_become_few_batches(void **state)
{
        struct corefix *x = *state;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        send_opens(x, 600);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        /* 600 OPENs and the CLOCK: 601 commands, 3 entries. */
        m = flush_proposing(x, WALL, 3);
        expect_batch(x, m, 0, ENTRY_MAX_COMMANDS, COMMAND_CLOCK, COMMAND_OPEN);
        expect_batch(x, m, 1, ENTRY_MAX_COMMANDS, COMMAND_OPEN, COMMAND_OPEN);
        expect_batch(x, m, 2, 601 - 2 * ENTRY_MAX_COMMANDS, COMMAND_OPEN,
                     COMMAND_OPEN);
        corefix_expect_count(x, m, COREFIX_BARRIER, 0);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        assert_int_equal(x->g.stats.batches, 3);
        assert_int_equal(x->g.stats.proposed, 601);
        flush_proposing(x, WALL + 1, 0);
}

/* MEMBER, ACL and DIGEST commands go in entries of their own, never in a
 * batch, and in the order they were queued: the members the new leader
 * records at ready, then the frames, then the access list's seed, then
 * the digest. None of them carries the CLOCK. */
static void member_acl_digest_alone(void **state)
{
        struct corefix *x = *state;
        size_t m;

        x->cfg.n_members = 2;
        x->cfg.members[0] =
            (struct config_member){1, "127.0.0.1:8001", "127.0.0.1:7001"};
        x->cfg.members[1] =
            (struct config_member){2, "127.0.0.1:8002", "127.0.0.1:7002"};
        x->cfg.tls = true;     /* the access list is seeded... */
        x->fake.digest = true; /* ... and a digest is due */
        gateway_on_ready(&x->g, &x->now, TERM);
        send_opens(x, 3);
        x->now.ms += ACCESS_SEED_DELAY_MS(&x->cfg); /* ... by now */
        m = corefix_mark(x);
        flush(x, WALL);
        x->cfg.tls = false;
        corefix_expect_count(x, m, COREFIX_PROPOSE, 5);
        expect_alone(x, m, 0, COMMAND_MEMBER);
        expect_alone(x, m, 1, COMMAND_MEMBER);
        expect_batch(x, m, 2, 4, COMMAND_CLOCK, COMMAND_OPEN);
        expect_alone(x, m, 3, COMMAND_ACL);
        expect_alone(x, m, 4, COMMAND_DIGEST);
}

/* The leader's wall clock goes into the log at the head of a batch once a
 * second at most, and only with a batch: a flush with nothing to propose
 * proposes no CLOCK alone. */
static void clock_first_once_a_second(void **state)
{
        struct corefix *x = *state;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        send_opens(x, 1);
        flush(x, WALL);
        send_open(x, NULL, 2000);
        flush(x, WALL + 999);
        send_open(x, NULL, 2001);
        flush(x, WALL + 1000);
        flush(x, WALL + 5000);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 3);
        expect_batch(x, m, 0, 2, COMMAND_CLOCK, COMMAND_OPEN);
        expect_batch(x, m, 1, 1, COMMAND_OPEN, COMMAND_OPEN);
        expect_batch(x, m, 2, 2, COMMAND_CLOCK, COMMAND_OPEN);
}

/* Sessions `a` and `b` (entries 41 and 42), then an entry that grants x
 * to a and frees it again while b's try waits: x is left between
 * holders (lockfsm_deferred()) for the next entry to hand on. */
static void leave_a_lock_deferred(struct corefix *x)
{
        struct command open = {.type = COMMAND_OPEN, .ttl_ms = TTL};
        struct command cmds[3];
        uint64_t a, b;

        open.nonce = 1;
        a = corefix_apply(x, 41, &open).session;
        open.nonce = 2;
        b = corefix_apply(x, 42, &open).session;
        memset(cmds, 0, sizeof cmds);
        cmds[0] = (struct command){.type = COMMAND_ACQUIRE,
                                   .session = a,
                                   .seq = 1,
                                   .ack = 1,
                                   .owner = 1,
                                   .name = "x",
                                   .name_len = 1};
        cmds[1] = cmds[0];
        cmds[1].type = COMMAND_RELEASE;
        cmds[1].seq = cmds[1].ack = 2;
        cmds[1].token = 43;
        cmds[2] = cmds[0];
        cmds[2].session = b;
        cmds[2].wait_ms = COMMAND_WAIT_TRY;
        corefix_apply_batch(x, 43, cmds, 3);
        x->fake.last_index = 43;
        assert_int_equal(lockfsm_deferred(x->fake.fsm), 1);
}

/* With a lock left between holders and no entry of its own on the way,
 * a flush proposes an empty batch to hand it on (the nudge); not while
 * an entry is out, which hands it on anyway, and not once none is
 * left. */
static void nudge_hands_on_a_deferred_lock(void **state)
{
        struct corefix *x = *state;
        size_t m;

        leave_a_lock_deferred(x);
        gateway_on_ready(&x->g, &x->now, TERM);
        m = flush_proposing(x, WALL, 1);
        expect_batch(x, m, 0, 1, COMMAND_CLOCK, COMMAND_CLOCK);
        /* Out, not applied yet: no second nudge. */
        flush_proposing(x, WALL + 10, 0);
        /* Applied without handing x on (not as the state machine would:
         * here, to see the nudge again): another, empty. */
        corefix_complete(x, 0, 0);
        x->fake.applied = x->fake.last_index;
        m = flush_proposing(x, WALL + 20, 1);
        expect_batch(x, m, 0, 0, 0, 0);
        /* The state machine handed it on: nothing more. */
        corefix_complete(x, 1, 0);
        corefix_apply_batch(x, 45, NULL, 0);
        x->fake.last_index = 45;
        assert_int_equal(lockfsm_deferred(x->fake.fsm), 0);
        flush_proposing(x, WALL + 30, 0);
}

/* No more than max-inflight-entries entries are proposed and not yet
 * applied (last_index - last_applied): the rest waits, in order, for a
 * later flush once raft applied some. */
static void inflight_entries_bounded(void **state)
{
        struct corefix *x = *state;
        size_t m;

        x->cfg.max_inflight_entries = 2;
        gateway_on_ready(&x->g, &x->now, TERM);
        send_opens(x, 600);
        /* Entry 41 is not applied yet: room for one. */
        m = flush_proposing(x, WALL, 1);
        expect_batch(x, m, 0, ENTRY_MAX_COMMANDS, COMMAND_CLOCK, COMMAND_OPEN);
        flush_proposing(x, WALL + 1, 0);
        /* Raft applied up to 42, the first batch: room for two. */
        x->fake.applied = 42;
        m = flush_proposing(x, WALL + 2, 2);
        expect_batch(x, m, 0, ENTRY_MAX_COMMANDS, COMMAND_OPEN, COMMAND_OPEN);
        expect_batch(x, m, 1, 601 - 2 * ENTRY_MAX_COMMANDS, COMMAND_OPEN,
                     COMMAND_OPEN);
        assert_int_equal(x->g.stats.proposed, 601);
}

/* --- Reads -----------------------------------------------------------------
 */

/* Every read since the last flush waits for one barrier, started after
 * the flush's proposals; none is answered before it applies, each once
 * after. */
static void reads_share_one_barrier(void **state)
{
        struct corefix *x = *state;
        const struct corefix_effect *p, *b;
        uint64_t q1, q2, q3;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        q1 = corefix_send_query_on(x, &x->c);
        send_open(x, NULL, 1);
        q2 = corefix_send_query_on(x, &x->other);
        q3 = corefix_send_query_on(x, &x->c);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        p = corefix_nth(x, m, COREFIX_PROPOSE, 0);
        b = corefix_nth(x, m, COREFIX_BARRIER, 0);
        assert_true(p < b);
        m = corefix_mark(x);
        corefix_complete(x, b->sent, 0);
        corefix_expect_count(x, m, COREFIX_COMMIT, 3);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 0)->id, q1);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 1)->id, q2);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 2)->id, q3);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 1)->conn, &x->other);
        corefix_expect_status(x, q1, 0);
        corefix_expect_status(x, q3, 0);
        corefix_expect_status_on(&x->other, q2, 0);
}

/* While a read barrier is out, reads that arrive wait: the flushes
 * start no barrier for them until it completes, and the next flush then
 * starts one for all of them, answered when it applies. */
static void reads_wait_for_the_barrier_out(void **state)
{
        struct corefix *x = *state;
        const struct corefix_effect *b1, *b2;
        uint64_t q1, q2, q3;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        m = corefix_mark(x);
        q1 = corefix_send_query_on(x, &x->c);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        b1 = corefix_nth(x, m, COREFIX_BARRIER, 0);
        m = corefix_mark(x);
        q2 = corefix_send_query_on(x, &x->c);
        flush(x, WALL + 1);
        q3 = corefix_send_query_on(x, &x->other);
        flush(x, WALL + 2);
        corefix_expect_count(x, m, COREFIX_BARRIER, 0);
        m = corefix_mark(x);
        corefix_complete(x, b1->sent, 0);
        corefix_expect_count(x, m, COREFIX_COMMIT, 1);
        corefix_expect_status(x, q1, 0);
        flush(x, WALL + 3);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        b2 = corefix_nth(x, m, COREFIX_BARRIER, 0);
        m = corefix_mark(x);
        corefix_complete(x, b2->sent, 0);
        corefix_expect_count(x, m, COREFIX_COMMIT, 2);
        corefix_expect_status(x, q2, 0);
        corefix_expect_status_on(&x->other, q3, 0);
}

/* --- Leadership -------------------------------------------------------------
 */

/* A node that does not serve, and knows another leader, sends each
 * leader-only request there at once (NOT_LEADER, asking its host who
 * leads) and proposes nothing, then or at the flush. */
static void follower_sends_clients_on(void **state)
{
        struct corefix *x = *state;
        const struct corefix_effect *e;
        uint64_t open, query;
        size_t m;

        m = corefix_mark(x);
        open = send_open(x, NULL, 1);
        query = corefix_send_query_on(x, &x->c);
        flush(x, WALL);
        /* Asked at each request (twice, in fact: once to route it, once
         * to name the leader in the answer). */
        assert_true(corefix_count(x, m, COREFIX_LEADER) >= 2);
        corefix_expect_count(x, m, COREFIX_COMMIT, 2);
        e = corefix_nth(x, m, COREFIX_COMMIT, 0);
        assert_int_equal(e->arg, PROTO_NOT_LEADER);
        assert_int_equal(e->id, open);
        e = corefix_nth(x, m, COREFIX_COMMIT, 1);
        assert_int_equal(e->arg, PROTO_NOT_LEADER);
        assert_int_equal(e->id, query);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        corefix_expect_count(x, m, COREFIX_BARRIER, 0);
        corefix_expect_count(x, m, COREFIX_DIGEST, 0);
        corefix_expect_not_leader(x, open, OTHER, "127.0.0.1:7002");
        corefix_expect_not_leader(x, query, OTHER, "127.0.0.1:7002");
        /* baton_requests_total{result="enotleader"}, by type. */
        assert_int_equal(x->g.stats.results[GATEWAY_OPEN][-BATON_ENOTLEADER],
                         1);
        assert_int_equal(x->g.stats.results[GATEWAY_QUERY][-BATON_ENOTLEADER],
                         1);
        assert_int_equal(x->g.stats.results[GATEWAY_OPEN][0], 0);
}

/* While the host names this node leader before it serves, requests are
 * held: nothing written, nothing proposed; ready releases them to the
 * next flush, which proposes the command and starts the read's barrier. */
static void held_until_ready(void **state)
{
        struct corefix *x = *state;
        size_t m;

        x->fake.leader = SELF;
        x->fake.leader_address = "127.0.0.1:7001";
        m = corefix_mark(x);
        send_open(x, NULL, 1);
        corefix_send_query_on(x, &x->c);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        corefix_expect_count(x, m, COREFIX_BARRIER, 0);
        m = corefix_mark(x);
        gateway_on_ready(&x->g, &x->now, TERM);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        flush(x, WALL + 1);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        expect_batch(x, m, 0, 2, COMMAND_CLOCK, COMMAND_OPEN);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
}

/* At lost, every client whose command was proposed hears that its outcome
 * is unknown (it may still commit under the next leader), a read still
 * waiting for its barrier is sent on, the timer stops; the proposal's
 * completion after that answers no one again. */
static void lost_answers_proposed_unknown(void **state)
{
        struct corefix *x = *state;
        uint64_t a, b, query;
        size_t m;

        gateway_on_ready(&x->g, &x->now, TERM);
        a = send_open(x, &x->c, 1);
        b = send_open(x, &x->other, 2);
        flush(x, WALL);
        query = corefix_send_query_on(x, &x->c);
        m = corefix_mark(x);
        gateway_on_lost(&x->g, &x->now);
        corefix_expect_count(x, m, COREFIX_COMMIT, 3);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        expect_timer(x, m, GATEWAY_NEVER);
        corefix_expect_not_leader(x, query, OTHER, "127.0.0.1:7002");
        corefix_expect_status(x, a, BATON_EUNKNOWN);
        corefix_expect_status_on(&x->other, b, BATON_EUNKNOWN);
        assert_int_equal(x->g.stats.unknown, 2);
        m = corefix_mark(x);
        corefix_complete(x, 0, BATON_EUNKNOWN);
        corefix_expect_count(x, m, COREFIX_COMMIT, 0);
        assert_int_equal(x->g.stats.unknown, 2);
}

/* --- Deadlines --------------------------------------------------------------
 */

/* Session `nonce` opened by entry `index` with TTL; its id. */
static uint64_t open_session(struct corefix *x, uint64_t index, uint64_t nonce)
{
        struct command open = {.type = COMMAND_OPEN, .ttl_ms = TTL};

        open.nonce = nonce;
        return corefix_apply(x, index, &open).session;
}

/* A keepalive's new lease runs from when it arrived, not from when its
 * barrier applied: the client dates its lease from its send, earlier. */
static void keepalive_dated_from_arrival(void **state)
{
        struct corefix *x = *state;
        uint64_t session, id;
        size_t m;

        session = open_session(x, 41, 1);
        gateway_conn_attach(&x->c.gw, session);
        m = corefix_mark(x);
        gateway_on_ready(&x->g, &x->now, TERM); /* at 1000 */
        expect_timer(x, m, 1000 + TTL);
        x->now.ms = 3000;
        id = send_keepalive(x, session);
        x->now.ms = 3500;
        flush(x, WALL);
        x->now.ms = 7000;
        m = corefix_mark(x);
        corefix_complete(x, corefix_nth(x, 0, COREFIX_BARRIER, 0)->sent, 0);
        expect_timer(x, m, 3000 + TTL);
        corefix_expect_count(x, m, COREFIX_COMMIT, 1);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 0)->arg,
                         PROTO_KEEPALIVE_OK);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 0)->id, id);
        /* Its gap is from the lease this leader started at 1000 to its
         * arrival at 3000; it is counted ok. */
        assert_int_equal(x->g.stats.keepalive_gap.count, 1);
        assert_int_equal(x->g.stats.keepalive_gap.sum_us, 2000 * 1000);
        assert_int_equal(x->g.stats.results[GATEWAY_KEEPALIVE][0], 1);
}

/* A keepalive whose barrier completes after leadership was lost is
 * answered (the barrier proves the node led after it arrived), but
 * starts no lease: a node that does not serve keeps no deadline, so its
 * timer stays stopped and no EXPIRE of it is left to be proposed when the
 * node leads again, perhaps long after the client renewed elsewhere. */
static void keepalive_after_lost_keeps_no_lease(void **state)
{
        struct corefix *x = *state;
        uint64_t session, id;
        size_t m;

        session = open_session(x, 41, 1);
        gateway_conn_attach(&x->c.gw, session);
        gateway_on_ready(&x->g, &x->now, TERM);
        id = send_keepalive(x, session);
        flush(x, WALL);
        gateway_on_lost(&x->g, &x->now);
        m = corefix_mark(x);
        corefix_complete(x, corefix_nth(x, 0, COREFIX_BARRIER, 0)->sent, 0);
        assert_int_equal(corefix_nth(x, m, COREFIX_COMMIT, 0)->id, id);
        if (corefix_count(x, m, COREFIX_TIMER) > 0) {
                expect_timer(x, m, GATEWAY_NEVER);
        }
        /* Were a lease kept, its timer would fire here... */
        x->now.ms += 2 * TTL;
        gateway_on_timer(&x->g, &x->now);
        /* ... and lead again later: only its own clocks, none expired. */
        x->now.ms += 1000;
        gateway_on_ready(&x->g, &x->now, TERM);
        flush_proposing(x, WALL + 2 * TTL, 0);
}

/* A node that does not serve keeps no deadline: the events that would
 * start one start nothing, its timer input queues nothing, and a
 * session's END only tells the timer again that there is none. */
static void follower_keeps_no_deadline(void **state)
{
        struct corefix *x = *state;
        struct command close = {.type = COMMAND_CLOSE, .seq = 1, .ack = 1};
        size_t m;

        m = corefix_mark(x);
        close.session = open_session(x, 41, 1);
        corefix_expect_count(x, m, COREFIX_TIMER, 0);
        m = corefix_mark(x);
        assert_int_equal(corefix_apply(x, 42, &close).status, 0);
        corefix_expect_count(x, m, COREFIX_TIMER, 1);
        expect_timer(x, m, GATEWAY_NEVER);
        x->now.ms += 2 * TTL;
        gateway_on_timer(&x->g, &x->now);
        gateway_on_ready(&x->g, &x->now, TERM);
        flush_proposing(x, WALL, 0);
}

/* How many commands of `type` the `nth` proposal from `from` on has. */
static unsigned count_type(const struct corefix *x, size_t from, unsigned nth,
                           uint8_t type)
{
        const struct corefix_effect *e =
            corefix_nth(x, from, COREFIX_PROPOSE, nth);
        unsigned n = 0;
        uint32_t i;

        assert_non_null(e);
        for (i = 0; i < e->n; i++) {
                n += e->types[i] == type;
        }
        return n;
}

/* A keepalive whose barrier applies after the session's lease ran out
 * and its EXPIRE went out is not answered OK: the client would date a new
 * lease from its send, inside which the EXPIRE ends the session. It is
 * answered BATON_EUNKNOWN (asked again), and BATON_EEXPIRED once the END
 * applied; the mark outlives a change of leadership, under which the
 * EXPIRE may still commit. */
static void keepalive_not_renewed_once_expire_out(void **state)
{
        struct corefix *x = *state;
        struct command expire = {.type = COMMAND_EXPIRE};
        uint64_t session, k1, k2, k3;
        size_t m, b;

        session = open_session(x, 41, 1);
        gateway_conn_attach(&x->c.gw, session);
        gateway_on_ready(&x->g, &x->now, TERM); /* at 1000: lease to 11000 */
        x->now.ms = 1000 + TTL - 100;
        m = corefix_mark(x);
        k1 = send_keepalive(x, session);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_BARRIER, 1);
        b = corefix_nth(x, m, COREFIX_BARRIER, 0)->sent;
        /* The barrier is slow: the lease runs out first. */
        x->now.ms = 1000 + TTL;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL + 1000);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        assert_int_equal(count_type(x, m, 0, COMMAND_EXPIRE), 1);
        corefix_complete(x, b, 0);
        corefix_expect_status(x, k1, BATON_EUNKNOWN);
        /* Leadership changes before the EXPIRE applies: still no OK. */
        gateway_on_lost(&x->g, &x->now);
        gateway_on_ready(&x->g, &x->now, TERM + 1);
        m = corefix_mark(x);
        k2 = send_keepalive(x, session);
        flush(x, WALL + 2000);
        corefix_complete(x, corefix_nth(x, m, COREFIX_BARRIER, 0)->sent, 0);
        corefix_expect_status(x, k2, BATON_EUNKNOWN);
        /* The EXPIRE commits: the session ended, and says so. */
        expire.session = session;
        corefix_apply(x, 60, &expire);
        m = corefix_mark(x);
        k3 = send_keepalive(x, session);
        flush(x, WALL + 3000);
        corefix_complete(x, corefix_nth(x, m, COREFIX_BARRIER, 0)->sent, 0);
        corefix_expect_status(x, k3, BATON_EEXPIRED);
        assert_false(leader_expiring(&x->g, session));
}

/* Sessions a and b (TTL), a holding w and b waiting 3 s for it; and
 * lock d, whose holder's session expired with a 2 s lock-delay. */
static void leave_deadlines(struct corefix *x)
{
        struct command c = {.type = COMMAND_ACQUIRE,
                            .seq = 1,
                            .ack = 1,
                            .owner = 1,
                            .name = "w",
                            .name_len = 1};
        uint64_t a = open_session(x, 41, 1), b = open_session(x, 42, 2), d;

        c.session = a;
        assert_int_equal(corefix_apply(x, 43, &c).status, 0);
        c.session = b;
        c.wait_ms = 3000;
        assert_int_equal(corefix_apply(x, 44, &c).kind, PROTO_KIND_QUEUED);
        d = open_session(x, 45, 3);
        c.session = d;
        c.name = "d";
        c.wait_ms = 0;
        assert_int_equal(corefix_apply(x, 46, &c).status, 0);
        c = (struct command){
            .type = COMMAND_EXPIRE, .session = d, .delay_ms = 2000};
        assert_int_equal(corefix_apply(x, 47, &c).status, 0);
        x->fake.last_index = 47;
}

/* The serving leader's one timer is at its earliest deadline; at the
 * timer input each deadline passed is queued as UNBLOCK (a lock-delay),
 * TIMEOUT (a wait) or EXPIRE (a lease), proposed at the next flush, and
 * comes again one election timeout later until an event settles it. A
 * timer input before the deadline does nothing. */
static void deadlines_proposed_after_timer(void **state)
{
        struct corefix *x = *state;
        uint64_t retry = x->cfg.election_timeout_ms;
        size_t m;

        leave_deadlines(x);
        m = corefix_mark(x);
        gateway_on_ready(&x->g, &x->now, TERM); /* at 1000 */
        expect_timer(x, m, 1000 + 2000);
        x->now.ms = 2999;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);
        expect_timer(x, m, 3000);
        x->now.ms = 4000;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0); /* queued only */
        expect_timer(x, m, 4000 + retry);
        flush(x, WALL);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        /* The earliest first: the lock-delay's, then the wait's. */
        assert_int_equal(corefix_nth(x, m, COREFIX_PROPOSE, 0)->n, 3);
        assert_int_equal(count_type(x, m, 0, COMMAND_CLOCK), 1);
        assert_memory_equal(
            corefix_nth(x, m, COREFIX_PROPOSE, 0)->types,
            ((uint8_t[]){COMMAND_CLOCK, COMMAND_UNBLOCK, COMMAND_TIMEOUT}), 3);
        /* Not settled by an event: again after an election timeout. */
        x->now.ms = 4000 + retry;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        expect_timer(x, m, 4000 + 2 * retry);
        flush(x, WALL + 1);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        /* Both due at once now: in either order. */
        assert_int_equal(corefix_nth(x, m, COREFIX_PROPOSE, 0)->n, 2);
        assert_int_equal(count_type(x, m, 0, COMMAND_UNBLOCK), 1);
        assert_int_equal(count_type(x, m, 0, COMMAND_TIMEOUT), 1);
        /* The leases, from ready at 1000. */
        x->now.ms = 1000 + TTL;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL + 1000);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 1);
        assert_int_equal(count_type(x, m, 0, COMMAND_EXPIRE), 2);
        assert_int_equal(x->g.stats.expirations, 2);
}

/* EXPIREs of every proposal from `from` on. */
static unsigned count_expires(const struct corefix *x, size_t from)
{
        unsigned i, n = 0, props = corefix_count(x, from, COREFIX_PROPOSE);

        for (i = 0; i < props; i++) {
                n += count_type(x, from, i, COMMAND_EXPIRE);
        }
        return n;
}

/* However many leases run out together, at most LEADER_EXPIRIES_MAX
 * EXPIREs are out at once: the leases beyond wait, due, neither fired
 * nor asked for by the timer (which the fired ones' retry still sets),
 * until half of those out are done; then the core asks for its timer at
 * once, and that timer input fires the rest. */
static void expiries_out_bounded(void **state)
{
        struct corefix *x = *state;
        uint64_t retry = x->cfg.election_timeout_ms;
        unsigned n = LEADER_EXPIRIES_MAX + 300, i, done = 0, room;
        size_t m;

        for (i = 0; i < n; i++) {
                open_session(x, 41 + i, 1 + i);
        }
        x->fake.last_index = 41 + n - 1;
        gateway_on_ready(&x->g, &x->now, TERM); /* at 1000 */
        x->now.ms = 1000 + TTL;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL);
        assert_int_equal(count_expires(x, m), LEADER_EXPIRIES_MAX);
        expect_timer(x, m, 1000 + TTL + retry);
        assert_int_equal(x->g.expiries_out, LEADER_EXPIRIES_MAX);

        /* Nothing done yet: a timer input fires nothing more. */
        x->now.ms += 10;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL + 1);
        corefix_expect_count(x, m, COREFIX_PROPOSE, 0);

        /* The proposals apply, one entry after another; once no more than
         * half are out, the timer is asked for at once. */
        for (i = 0; done < LEADER_EXPIRIES_MAX / 2; i++) {
                const struct corefix_effect *e =
                    corefix_nth(x, 0, COREFIX_PROPOSE, i);
                if (e->n > 0 && e->types[e->n - 1] == COMMAND_EXPIRE) {
                        done += e->types[0] == COMMAND_EXPIRE ? e->n : e->n - 1;
                        m = corefix_mark(x);
                        corefix_complete(x, e->sent, 0);
                }
        }
        expect_timer(x, m, 1000 + TTL);
        assert_int_equal(x->g.expiries_out, LEADER_EXPIRIES_MAX - done);
        /* The room free now, of the 300 left. */
        room = done < 300 ? done : 300;
        m = corefix_mark(x);
        gateway_on_timer(&x->g, &x->now);
        flush(x, WALL + 2);
        assert_int_equal(count_expires(x, m), room);
        assert_int_equal(x->g.stats.expirations, LEADER_EXPIRIES_MAX + room);
        assert_true(x->g.expiries_out <= LEADER_EXPIRIES_MAX);
}

/* The ERROR that answers request `id` on `conn`: its status and
 * message. */
static void expect_error_on(struct corefix_conn *conn, uint64_t id, int status,
                            const char *message)
{
        struct proto_header h;
        struct proto_string m;
        const uint8_t *body;
        int got;

        assert_true(corefix_next_on(conn, &h, &body));
        assert_int_equal(h.type, PROTO_ERROR);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_error(body, h.length, &got, &m), 0);
        assert_int_equal(got, status);
        assert_int_equal(m.len, strlen(message));
        assert_memory_equal(m.p, message, m.len);
}

/* A COMMAND of a version this node does not read is refused as such, by
 * name; one in a version it reads but not in its own encoding (an ACQUIRE
 * of mode 0 in version 3) is malformed (docs/protocol.md, "COMMAND"). */
static void command_versions_refused_by_name(void **state)
{
        struct corefix *x = *state;
        /* Command header: version, type, flags 0, then padding: enough
         * for the decoder to see the version. */
        uint8_t v9[8] = {9, COMMAND_ACQUIRE, 0, 0}, buf[256];
        struct command acq = {.type = COMMAND_ACQUIRE,
                              .session = 1,
                              .seq = 1,
                              .owner = 1,
                              .name = "a",
                              .name_len = 1};
        uint8_t cmd[COMMAND_MAX_SIZE];
        size_t len, n;
        uint64_t id;

        gateway_on_ready(&x->g, &x->now, TERM);
        n = proto_write_command(buf, sizeof buf, x->next_id++, v9, sizeof v9);
        id = corefix_send_frame(x, buf, n);
        expect_error_on(&x->c, id, BATON_EVERSION,
                        "command version not supported");

        len = command_encode(&acq, cmd, sizeof cmd);
        assert_true(len > 0);
        assert_int_equal(cmd[0], 2); /* mode 0 is version 2's */
        cmd[0] = 3;
        n = proto_write_command(buf, sizeof buf, x->next_id++, cmd, len);
        id = corefix_send_on(x, &x->other, buf, n);
        expect_error_on(&x->other, id, BATON_EMALFORMED, "malformed command");
}

/* A WATCH whose name is not a lock's (an exact watch of "") is refused
 * as a QUERY of it is: a RESULT BATON_ENAME, the connection kept; a
 * WATCH with an unknown flag is malformed (docs/protocol.md, "Bad
 * input"). */
static void watch_bad_name_refused_not_dropped(void **state)
{
        struct corefix *x = *state;
        /* The header, then flags, from_index, from_ord and the name (the
         * writer refuses these, so they are built here). */
        uint8_t exact[16 + 14] = {2, PROTO_WATCH, 0, 0, 14};
        uint8_t flag[16 + 15] = {2, PROTO_WATCH, 0, 0, 15};
        uint64_t id;

        gateway_on_ready(&x->g, &x->now, TERM);
        exact[8] = (uint8_t)(id = x->next_id++);
        corefix_send_frame(x, exact, sizeof exact);
        corefix_expect_status(x, id, BATON_ENAME);
        flag[8] = (uint8_t)(id = x->next_id++);
        flag[16] = 0x80;
        flag[16 + 13] = 1;
        flag[16 + 14] = 'a';
        corefix_send_frame(x, flag, sizeof flag);
        expect_error_on(&x->c, id, BATON_EMALFORMED, "bad WATCH");
}

/* The next reply on `conn` answers `id` BATON_EQUOTA, naming quota
 * `kind` of `limit`. */
static void expect_quota_on(struct corefix_conn *conn, uint64_t id, int kind,
                            uint32_t limit)
{
        struct proto_header h;
        struct proto_result r;
        const uint8_t *body;

        assert_true(corefix_next_on(conn, &h, &body));
        assert_int_equal(h.type, PROTO_RESULT);
        assert_int_equal(h.id, id);
        assert_int_equal(proto_read_result(body, h.length, h.flags, &r), 0);
        assert_int_equal(r.status, BATON_EQUOTA);
        assert_int_equal(r.waiters, kind);
        assert_int_equal(r.count, limit);
}

/* Whether the replies on `conn` so far hold a BATON_EQUOTA. */
static bool any_quota_on(struct corefix_conn *conn)
{
        struct proto_header h;
        struct proto_result r;
        const uint8_t *body;
        bool found = false;

        while (corefix_next_on(conn, &h, &body)) {
                found |= h.type == PROTO_RESULT &&
                         proto_read_result(body, h.length, h.flags, &r) == 0 &&
                         r.status == BATON_EQUOTA;
        }
        return found;
}

/* Quotas counted on each node: an identity's requests share one bucket
 * of `rate` a second across its connections, and so do its watches
 * here; past either, a request is answered BATON_EQUOTA naming the
 * quota, and a second later the bucket has room again. Another identity
 * (no quota of its own, no default) is not limited. */
static void quotas_rate_and_watches_per_node(void **state)
{
        static const uint32_t team[ACL_QUOTA_KINDS] = {
            [ACL_QUOTA_WATCHES] = 1, [ACL_QUOTA_RATE] = 2};
        struct corefix *x = *state;
        uint64_t id;
        unsigned i;

        acl_start(&x->fake.acl, ACL_LOCK);
        assert_int_equal(acl_quota_put(&x->fake.acl, "team-a", 6, team), 0);
        gateway_conn_init(&x->c.gw, 5, "team-a", false);
        gateway_conn_init(&x->other.gw, 6, "team-a", false);
        gateway_on_ready(&x->g, &x->now, TERM);

        id = corefix_send_watch_on(x, &x->c);
        assert_false(any_quota_on(&x->c));
        assert_int_equal(x->c.gw.n_watches, 1);
        /* Its second watch on this node, from its other connection. */
        id = corefix_send_watch_on(x, &x->other);
        expect_quota_on(&x->other, id, ACL_QUOTA_WATCHES, 1);
        /* Two requests this second: the third is one too many. */
        id = corefix_send_query_on(x, &x->c);
        expect_quota_on(&x->c, id, ACL_QUOTA_RATE, 2);
        /* Half a second later, room for one. */
        x->now.ms += 500;
        corefix_send_query_on(x, &x->other);
        assert_false(any_quota_on(&x->other));
        id = corefix_send_query_on(x, &x->other);
        expect_quota_on(&x->other, id, ACL_QUOTA_RATE, 2);

        /* Someone else: as many as it likes. */
        x->other.gw.identity = "team-b";
        x->other.gw.role_epoch = 0;
        for (i = 0; i < 10; i++) {
                corefix_send_query_on(x, &x->other);
        }
        assert_false(any_quota_on(&x->other));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(frames_become_few_batches,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(member_acl_digest_alone,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(quotas_rate_and_watches_per_node,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(clock_first_once_a_second,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(nudge_hands_on_a_deferred_lock,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(inflight_entries_bounded,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(reads_share_one_barrier,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(reads_wait_for_the_barrier_out,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(follower_sends_clients_on,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(held_until_ready, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(lost_answers_proposed_unknown,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(keepalive_dated_from_arrival,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(keepalive_after_lost_keeps_no_lease,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(follower_keeps_no_deadline,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(deadlines_proposed_after_timer,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(
                keepalive_not_renewed_once_expire_out, corefix_setup,
                corefix_teardown),
            cmocka_unit_test_setup_teardown(expiries_out_bounded, corefix_setup,
                                            corefix_teardown),
            cmocka_unit_test_setup_teardown(command_versions_refused_by_name,
                                            corefix_setup, corefix_teardown),
            cmocka_unit_test_setup_teardown(watch_bad_name_refused_not_dropped,
                                            corefix_setup, corefix_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
