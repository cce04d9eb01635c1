/* Integration scenarios on locking itself. */
#include "sc_locking.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "rawframe.h"
#include "../../src/proto/list.h"

#define MIN_TTL_MS 600 /* 2 x election-timeout-ms (300) */
#define MAX_TTL_MS 3600000

void sc_acquire_release(struct ctx *x)
{
        struct tclient a;
        struct tclient_result res;
        char name[64];
        uint64_t t1, t2;
        int rv;

        lock_name(x, name, sizeof name, "basic");
        OPEN(x, &a, TTL_MS);
        GRANT(x, t1, &a, name);
        HOLDS(x, &a, name, a.session, t1, 0);
        rv = tclient_check(&a, name, t1, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_CURRENT && res.token == t1,
               "CHECK %s %" PRIu64 ": %d %s", name, t1, rv, rs(x, &res));
        RELEASE(x, &a, name, t1);
        FREE(x, &a, name);
        GRANT(x, t2, &a, name);
        EXPECT(x, t2 > t1, "second grant token %" PRIu64 " <= first %" PRIu64,
               t2, t1);
        RELEASE(x, &a, name, t2);
        rv = tclient_session_close(&a, OP_MS, &res);
        EXPECT(x,
               rv == 0 && res.kind == PROTO_KIND_CLOSED &&
                   res.session == a.session,
               "CLOSE: %d %s", rv, rs(x, &res));
        rv = tclient_keepalive(&a, OP_MS, NULL);
        EXPECT(x, rv == BATON_ECLOSED, "KEEPALIVE after CLOSE: %d", rv);
        tclient_close(&a);
}

void sc_try_busy(struct ctx *x)
{
        struct tclient a, b;
        struct tclient_result res;
        char name[64];
        uint64_t t1, t2;
        int rv;

        lock_name(x, name, sizeof name, "try");
        OPEN(x, &a, TTL_MS);
        OPEN(x, &b, TTL_MS);
        GRANT(x, t1, &a, name);
        rv = tclient_try(&b, name, 1, OP_MS, &res);
        EXPECT(x,
               rv == BATON_EBUSY && res.session == a.session &&
                   res.token == t1 && res.owner == 1 && res.count == 1,
               "try-lock of a held lock: %d %s, expected EBUSY with holder "
               "%" PRIu64 " token %" PRIu64,
               rv, rs(x, &res), a.session, t1);
        /* Reentrant for the same (session, owner): count up, token kept. */
        rv = tclient_try(&a, name, 1, OP_MS, &res);
        EXPECT(x,
               rv == 0 && res.kind == PROTO_KIND_REENTERED && res.token == t1 &&
                   res.count == 2,
               "reentrant try: %d %s", rv, rs(x, &res));
        /* Another owner tag of the same session is another owner. */
        rv = tclient_try(&a, name, 2, OP_MS, &res);
        EXPECT(x, rv == BATON_EBUSY && res.token == t1,
               "try by owner 2 of the holding session: %d %s", rv, rs(x, &res));
        rv = tclient_release(&a, name, 1, t1, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_RELEASED && res.count == 1,
               "first release of two holds: %d %s", rv, rs(x, &res));
        rv = tclient_try(&b, name, 1, OP_MS, &res);
        EXPECT(x, rv == BATON_EBUSY && res.token == t1,
               "try-lock while one hold is left: %d %s", rv, rs(x, &res));
        RELEASE(x, &a, name, t1);
        rv = tclient_try(&b, name, 1, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED && res.token > t1,
               "try-lock of a free lock: %d %s", rv, rs(x, &res));
        t2 = res.token;
        note(x, &res);
        HOLDS(x, &a, name, b.session, t2, 0);
        RELEASE(x, &b, name, t2);
        tclient_close(&a);
        tclient_close(&b);
}

void sc_waiter(struct ctx *x)
{
        struct tclient a, b;
        struct tclient_result res;
        char name[64];
        uint64_t t1, seq;
        int rv;

        lock_name(x, name, sizeof name, "wait");
        OPEN(x, &a, TTL_MS);
        OPEN(x, &b, TTL_MS);
        GRANT(x, t1, &a, name);
        START_WAIT(x, &b, name, COMMAND_WAIT_FOREVER, &seq);
        WAITERS(x, &a, name, 1);
        rv = tclient_finish(&b, 200, &res);
        EXPECT(x, rv == BATON_ENOANSWER,
               "a waiter was answered while the lock is held: %d %s", rv,
               rs(x, &res));
        RELEASE(x, &a, name, t1);
        rv = tclient_finish(&b, OP_MS, &res);
        EXPECT(x,
               rv == 0 && res.kind == PROTO_KIND_GRANTED &&
                   res.session == b.session && res.token > t1,
               "waiter after the release: %d %s, expected GRANTED with a "
               "token above %" PRIu64,
               rv, rs(x, &res), t1);
        note(x, &res);
        HOLDS(x, &a, name, b.session, res.token, 0);
        RELEASE(x, &b, name, res.token);
        tclient_close(&a);
        tclient_close(&b);
}

void sc_expiry(struct ctx *x)
{
        struct tclient a, b;
        struct tclient_result res;
        char name[64];
        uint64_t t1, t2, seq;
        int64_t opened, elapsed;
        int rv;

        lock_name(x, name, sizeof name, "expiry");
        OPEN(x, &b, TTL_MS);
        opened = tclient_now_ms();
        OPEN(x, &a, SHORT_TTL);
        GRANT(x, t1, &a, name);
        START_WAIT(x, &b, name, COMMAND_WAIT_FOREVER, &seq);
        /* No keepalive for a: its session expires after SHORT_TTL and the
         * EXPIRE entry hands the lock to b. */
        rv = tclient_finish(&b, OP_MS, &res);
        elapsed = tclient_now_ms() - opened;
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED && res.token > t1,
               "waiter after the holder's expiry: %d %s", rv, rs(x, &res));
        t2 = res.token;
        note(x, &res);
        printf("# holder's session expired and the waiter was granted %" PRId64
               " ms after the holder opened it (TTL %d ms)\n",
               elapsed, SHORT_TTL);
        EXPECT(x, elapsed >= SHORT_TTL - 50,
               "granted after %" PRId64 " ms: the session expired before its "
               "TTL of %d ms",
               elapsed, SHORT_TTL);
        HOLDS(x, &b, name, b.session, t2, 0);
        rv = tclient_release(&a, name, 1, t1, OP_MS, &res);
        EXPECT(x, rv == BATON_EEXPIRED, "release by the expired session: %d %s",
               rv, rs(x, &res));
        rv = tclient_keepalive(&a, OP_MS, NULL);
        EXPECT(x, rv == BATON_EEXPIRED, "keepalive of the expired session: %d",
               rv);
        RELEASE(x, &b, name, t2);
        tclient_close(&a);
        tclient_close(&b);
}

/* Restart every node with `flags` (NULL: none). */
static void restart_all_with(struct ctx *x, const char *const *flags,
                             unsigned n)
{
        unsigned i, leader;
        int status;

        for (i = 1; i <= x->n; i++) {
                EXPECT(x, harness_term(&x->h, i, NULL) == 0, "%s", x->h.errmsg);
                EXPECT(x, harness_wait_exit(&x->h, i, HEALTHY_MS, &status) == 0,
                       "%s", x->h.errmsg);
                EXPECT(x, harness_set_flags(&x->h, i, flags, n) == 0, "%s",
                       x->h.errmsg);
        }
        for (i = 1; i <= x->n; i++) {
                EXPECT(x, harness_restart(&x->h, i) == 0, "restart node %u: %s",
                       i, x->h.errmsg);
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
}

#define LOCK_DELAY_MS 1500

void sc_lock_delay(struct ctx *x)
{
        static const char *const delay[] = {"--lock-delay-ms", "1500"};
        struct tclient a, b;
        struct tclient_result res;
        char name[64];
        uint64_t t1, t2, seq;
        int64_t opened, elapsed;
        int rv;

        restart_all_with(x, delay, 2);
        lock_name(x, name, sizeof name, "lock-delay");
        OPEN(x, &b, TTL_MS);
        opened = tclient_now_ms();
        OPEN(x, &a, SHORT_TTL);
        GRANT(x, t1, &a, name);
        START_WAIT(x, &b, name, COMMAND_WAIT_FOREVER, &seq);
        /* a's session expires after SHORT_TTL, then the lock waits out
         * its delay before b gets it. */
        rv = tclient_finish(&b, SHORT_TTL + LOCK_DELAY_MS + OP_MS, &res);
        elapsed = tclient_now_ms() - opened;
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED && res.token > t1,
               "waiter after the holder's expiry and the delay: %d %s", rv,
               rs(x, &res));
        printf("# the waiter was granted %" PRId64 " ms after the holder "
               "opened its session (TTL %d ms, lock-delay %d ms)\n",
               elapsed, SHORT_TTL, LOCK_DELAY_MS);
        EXPECT(x, elapsed >= SHORT_TTL + LOCK_DELAY_MS - 50,
               "granted after %" PRId64 " ms: before the TTL and the delay",
               elapsed);
        t2 = res.token;
        rv = tclient_keepalive(&a, OP_MS, NULL);
        EXPECT(x, rv == BATON_EEXPIRED, "keepalive of the expired session: %d",
               rv);
        EXPECT(x,
               harness_apply_log_has(&x->h, "\"event\":\"BLOCK\"") &&
                   harness_apply_log_has(&x->h, "\"event\":\"UNBLOCK\""),
               "no BLOCK and UNBLOCK in the apply logs");
        /* A release is not a loss: the next waiter gets it at once. */
        tclient_close(&a);
        OPEN(x, &a, TTL_MS);
        START_WAIT(x, &a, name, COMMAND_WAIT_FOREVER, &seq);
        WAITERS(x, &b, name, 1);
        opened = tclient_now_ms();
        RELEASE(x, &b, name, t2);
        rv = tclient_finish(&a, OP_MS, &res);
        elapsed = tclient_now_ms() - opened;
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED,
               "waiter after a release: %d %s", rv, rs(x, &res));
        EXPECT(x, elapsed < LOCK_DELAY_MS,
               "a release delayed the next grant %" PRId64 " ms", elapsed);
        RELEASE(x, &a, name, res.token);
        tclient_close(&a);
        tclient_close(&b);
        restart_all_with(x, NULL, 0);
}

void sc_stale(struct ctx *x)
{
        struct tclient a, b;
        struct tclient_result res;
        char name[64];
        uint64_t t1, t2;
        int rv;

        lock_name(x, name, sizeof name, "stale");
        OPEN(x, &a, TTL_MS);
        OPEN(x, &b, TTL_MS);
        GRANT(x, t1, &a, name);
        rv = tclient_release(&a, name, 1, t1 + 1000, OP_MS, &res);
        EXPECT(x, rv == BATON_ESTALE, "RELEASE with a wrong token: %d %s", rv,
               rs(x, &res));
        HOLDS(x, &b, name, a.session, t1, 0);
        rv = tclient_check(&b, name, t1 - 1, OP_MS, &res);
        EXPECT(x, rv == BATON_ESTALE && res.token == t1,
               "CHECK of an older token: %d %s", rv, rs(x, &res));
        RELEASE(x, &a, name, t1);
        rv = tclient_check(&b, name, t1, OP_MS, &res);
        EXPECT(x, rv == BATON_ESTALE && res.token == 0,
               "CHECK of a released grant: %d %s", rv, rs(x, &res));
        GRANT(x, t2, &b, name);
        rv = tclient_check(&a, name, t1, OP_MS, &res);
        EXPECT(x,
               rv == BATON_ESTALE && res.token == t2 &&
                   res.session == b.session,
               "CHECK of the previous grant's token: %d %s", rv, rs(x, &res));
        rv = tclient_release(&b, name, 1, t1, OP_MS, &res);
        EXPECT(x, rv == BATON_ESTALE,
               "RELEASE by the holder with the previous token: %d %s", rv,
               rs(x, &res));
        rv = tclient_release(&a, name, 1, t1, OP_MS, &res);
        EXPECT(x, rv == BATON_ENOTHOLDER,
               "RELEASE by the previous holder: %d %s", rv, rs(x, &res));
        HOLDS(x, &a, name, b.session, t2, 0);
        RELEASE(x, &b, name, t2);
        tclient_close(&a);
        tclient_close(&b);
}

void sc_ttl(struct ctx *x)
{
        static const uint32_t refused[] = {1, 100, MIN_TTL_MS - 1,
                                           MAX_TTL_MS + 1, UINT32_MAX};
        struct tclient a;
        struct tclient_result res;
        unsigned i;
        int rv;

        EXPECT(x, tclient_init(&a, x->h.endpoints) == 0, "tclient_init");
        for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
                rv = tclient_session_open(&a, refused[i], NULL, OP_MS, &res);
                EXPECT(x, rv == BATON_ETTL && a.session == 0,
                       "OPEN with TTL %u ms: %d %s", refused[i], rv,
                       rs(x, &res));
        }
        /* The bounds themselves are allowed. */
        rv = tclient_session_open(&a, MIN_TTL_MS, NULL, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_OPENED,
               "OPEN with the minimum TTL %u: %d %s", MIN_TTL_MS, rv,
               rs(x, &res));
        rv = tclient_session_close(&a, OP_MS, &res);
        EXPECT(x, rv == 0, "CLOSE: %d %s", rv, rs(x, &res));
        rv = tclient_session_open(&a, MAX_TTL_MS, NULL, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_OPENED,
               "OPEN with the maximum TTL %u: %d %s", MAX_TTL_MS, rv,
               rs(x, &res));
        rv = tclient_session_close(&a, OP_MS, &res);
        EXPECT(x, rv == 0, "CLOSE: %d %s", rv, rs(x, &res));
        tclient_close(&a);
}

/* A waiter whose wait_ms runs out is answered ETIMEDOUT, is not granted
 * the lock later, and a retry of the same seq gets the same answer. */
void sc_wait_deadline(struct ctx *x)
{
        enum { WAIT_MS = 800 };
        struct tclient a, b;
        struct tclient_result res;
        struct command k;
        char name[64];
        uint64_t t1, t2, seq;
        int64_t t0, elapsed;
        int rv;

        lock_name(x, name, sizeof name, "deadline");
        OPEN(x, &a, TTL_MS);
        OPEN(x, &b, TTL_MS);
        GRANT(x, t1, &a, name);
        t0 = tclient_now_ms();
        START_WAIT(x, &b, name, WAIT_MS, &seq);
        WAITERS(x, &a, name, 1);
        rv = tclient_finish(&b, OP_MS, &res);
        elapsed = tclient_now_ms() - t0;
        EXPECT(x,
               rv == BATON_ETIMEDOUT && res.session == b.session &&
                   res.token == 0,
               "ACQUIRE with wait_ms %d of a held lock: %d %s, expected "
               "ETIMEDOUT (%d)",
               WAIT_MS, rv, rs(x, &res), BATON_ETIMEDOUT);
        /* The leader dates the wait from when it applied the ACQUIRE,
         * after we sent it (its clock has millisecond steps). */
        EXPECT(x, elapsed >= WAIT_MS - 2,
               "ETIMEDOUT after %" PRId64 " ms, before the %d ms wait", elapsed,
               WAIT_MS);
        printf("# ACQUIRE seq %" PRIu64 " with wait_ms %d: ETIMEDOUT after "
               "%" PRId64 " ms\n",
               seq, WAIT_MS, elapsed);
        HOLDS(x, &a, name, a.session, t1, 0);
        RELEASE(x, &a, name, t1);
        FREE(x, &a, name);

        /* The same seq again: the remembered outcome, not a new wait (and
         * not the free lock). */
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.owner = 1;
        k.wait_ms = WAIT_MS;
        k.name = name;
        k.name_len = (uint8_t)strlen(name);
        k.seq = seq;
        rv = tclient_command(&b, &k, OP_MS, &res);
        EXPECT(x, rv == BATON_ETIMEDOUT,
               "retried ACQUIRE seq %" PRIu64 ": %d %s, expected the "
               "remembered ETIMEDOUT",
               seq, rv, rs(x, &res));
        FREE(x, &a, name);
        GRANT(x, t2, &b, name);
        RELEASE(x, &b, name, t2);
        tclient_close(&a);
        tclient_close(&b);
}

/* LIST "<base>/a/": exactly the two locks under it, with their holders and
 * tokens, in age order; a follower answers NOT_LEADER. */
void sc_list(struct ctx *x)
{
        struct tclient a, b, raw;
        struct tclient_lock locks[8];
        char base[48], a1[64], a2[64], b1[64], prefix[64];
        uint8_t f[PROTO_HEADER_SIZE + 300];
        uint64_t t1, t2, t3;
        unsigned leader, i;
        size_t n, len;
        bool more;
        int rv;

        lock_name(x, base, sizeof base, "list");
        snprintf(a1, sizeof a1, "%s/a/1", base);
        snprintf(a2, sizeof a2, "%s/a/2", base);
        snprintf(b1, sizeof b1, "%s/b/1", base);
        snprintf(prefix, sizeof prefix, "%s/a/", base);
        OPEN(x, &a, TTL_MS);
        OPEN(x, &b, TTL_MS);
        GRANT(x, t1, &a, a1);
        GRANT(x, t2, &b, a2);
        GRANT(x, t3, &a, b1);

        rv = tclient_list(&b, prefix, 10, OP_MS, locks, 8, &n, &more);
        EXPECT(x, rv == 0 && n == 2 && !more,
               "LIST %s: %d, %zu locks, more %d (%s)", prefix, rv, n, more,
               b.errmsg);
        EXPECT(x,
               strcmp(locks[0].name, a1) == 0 && locks[0].token == t1 &&
                   locks[0].session == a.session && locks[0].owner == 1 &&
                   locks[0].count == 1 && locks[0].waiters == 0,
               "LIST entry 0: %s token %" PRIu64 " session %" PRIu64
               ", expected %s token %" PRIu64,
               locks[0].name, locks[0].token, locks[0].session, a1, t1);
        EXPECT(x,
               strcmp(locks[1].name, a2) == 0 && locks[1].token == t2 &&
                   locks[1].session == b.session,
               "LIST entry 1: %s token %" PRIu64 ", expected %s token %" PRIu64,
               locks[1].name, locks[1].token, a2, t2);

        /* The limit cuts the listing short and says so. */
        rv = tclient_list(&b, prefix, 1, OP_MS, locks, 8, &n, &more);
        EXPECT(x, rv == 0 && n == 1 && more && strcmp(locks[0].name, a1) == 0,
               "LIST %s limit 1: %d, %zu locks, more %d", prefix, rv, n, more);
        /* The whole base: all three; a released lock leaves the list. */
        rv = tclient_list(&b, base, 10, OP_MS, locks, 8, &n, &more);
        EXPECT(x,
               rv == 0 && n == 3 && strcmp(locks[2].name, b1) == 0 &&
                   locks[2].token == t3,
               "LIST %s: %d, %zu locks", base, rv, n);
        RELEASE(x, &a, a1, t1);
        rv = tclient_list(&b, prefix, 10, OP_MS, locks, 8, &n, &more);
        EXPECT(x, rv == 0 && n == 1 && strcmp(locks[0].name, a2) == 0,
               "LIST %s after a release: %d, %zu locks", prefix, rv, n);

        /* Followers redirect LIST like QUERY. */
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        for (i = 1; i <= x->n; i++) {
                const char *addr = harness_client_address(&x->h, i);
                if (i == leader || !harness_running(&x->h, i)) {
                        continue;
                }
                EXPECT(x, tclient_connect(&raw, addr, OP_MS) == 0,
                       "connect %s: %s", addr, raw.errmsg);
                len = proto_write_list(f, sizeof f, 301, 0, prefix,
                                       strlen(prefix), 10);
                if (!redirected(x, &raw, f, len, 301, leader, "LIST",
                                __LINE__)) {
                        return;
                }
        }
        tclient_close(&raw);
        RELEASE(x, &b, a2, t2);
        RELEASE(x, &a, b1, t3);
        tclient_close(&a);
        tclient_close(&b);
}
