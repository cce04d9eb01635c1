/* libbaton's deciding code draws its randomness from its environment
 * (src/client/coreenv.h) and nowhere else: the jitter's range, and with
 * the same seed the same OPEN frame, secret, retry time and leaderless
 * poll, run after run; with another seed, others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "clientfix.h"

#define T0 100000 /* an arbitrary start: nothing reads the clock */

/* An environment answering from a script of numbers, counting draws. */
struct script {
        const uint64_t *v;
        unsigned n, at;
};

static uint64_t scripted(void *data)
{
        struct script *s = data;

        assert_true(s->at < s->n);
        return s->v[s->at++];
}

/* [ms/2, 3ms/2): the draw modulo `ms`, on top of half of it; nothing is
 * drawn for no delay at all. */
static void jitter_spans_half_to_one_and_a_half(void **state)
{
        static const uint64_t v[] = {0, 99, 100, 250, UINT64_MAX};
        struct script s = {v, 5, 0};
        struct core_env env = {&s, scripted, NULL, NULL};

        (void)state;
        assert_int_equal(coreenv_jitter(&env, 100), 50);
        assert_int_equal(coreenv_jitter(&env, 100), 149);
        assert_int_equal(coreenv_jitter(&env, 100), 50);
        assert_int_equal(coreenv_jitter(&env, 100), 100);
        assert_int_equal(coreenv_jitter(&env, 1000), 500 + 615);
        assert_int_equal(s.at, 5);
        assert_int_equal(coreenv_jitter(&env, 0), 0);
        assert_int_equal(coreenv_jitter(&env, -5), 0);
        assert_int_equal(s.at, 5);
}

/* What one run of the OPEN leaves: its frame and the session's secret. */
struct open_run {
        uint8_t frame[512];
        size_t len;
        uint8_t secret[ATTACH_SECRET_SIZE];
        unsigned draws;
};

/* The first step of a call that wants a session makes the OPEN and
 * queues it on the link that never connects. */
static void open_run(uint64_t seed, struct open_run *out)
{
        struct clientfix *f = clientfix_new(10000, seed);
        uint64_t seen = f->core.session.epoch;
        char why[256];

        assert_int_equal(session_ensure_step(&f->core.session, &seen, 100000,
                                             why, sizeof why),
                         1);
        assert_non_null(f->core.session.opening);
        assert_true(f->core.session.opening->len <= sizeof out->frame);
        memcpy(out->frame, f->core.session.opening->frame,
               f->core.session.opening->len);
        out->len = f->core.session.opening->len;
        memcpy(out->secret, f->core.session.secret, sizeof out->secret);
        out->draws = f->draws;
        clientfix_free(f);
}

/* The OPEN's secret is the environment's bytes and its nonce the one
 * random number drawn, so the same seed gives the same frame. */
static void open_repeats_with_the_seed(void **state)
{
        struct open_run a, b, c;
        uint8_t want[ATTACH_SECRET_SIZE];
        struct rng rng = {7};
        uint64_t v = 0;

        (void)state;
        open_run(7, &a);
        open_run(7, &b);
        open_run(8, &c);
        for (size_t i = 0; i < sizeof want; i++) {
                if (i % 8 == 0) {
                        v = rng_next(&rng);
                }
                want[i] = (uint8_t)(v >> (8 * (i % 8)));
        }
        assert_memory_equal(a.secret, want, sizeof want);
        assert_int_equal(a.draws, 1);
        assert_int_equal(a.len, b.len);
        assert_memory_equal(a.frame, b.frame, a.len);
        assert_int_equal(a.len, c.len);
        assert_memory_not_equal(a.frame, c.frame, a.len);
}

/* When a QUERY sent at T0 is answered BATON_EUNKNOWN at `now`: when it may
 * go out again. */
static int64_t retry_run(uint64_t seed, int64_t now)
{
        struct clientfix *f = clientfix_new(10000, seed);
        struct proto_result res = {.status = BATON_EUNKNOWN};
        uint8_t frame[256];
        struct proto_header h;
        struct request *r = request_read(PROTO_QUERY, "L", 1, 0);
        int64_t t;
        size_t n;

        assert_non_null(r);
        r->kind = REQUEST_CALL;
        registry_submit(&f->core.registry, r, T0);
        clientfix_sent(f, r, T0);
        n = proto_write_result(frame, sizeof frame, r->id, 0, &res);
        assert_true(n > 0);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        f->core.link.cb.frame(f->core.link.cb.data, &h,
                              frame + PROTO_HEADER_SIZE, now);
        assert_int_equal(r->gen, 0); /* to be sent again, byte for byte */
        assert_int_equal(f->draws, 1);
        t = r->not_before;
        clientfix_free(f);
        return t;
}

/* The retry after BATON_EUNKNOWN waits 25..75 ms, as the seed says. */
static void retry_repeats_with_the_seed(void **state)
{
        int64_t a = retry_run(7, T0 + 10), b = retry_run(7, T0 + 10);
        int64_t c = retry_run(8, T0 + 10);

        (void)state;
        assert_in_range(a, T0 + 10 + 25, T0 + 10 + 74);
        assert_int_equal(a, b);
        assert_in_range(c, T0 + 10 + 25, T0 + 10 + 74);
        assert_int_not_equal(a, c);
}

/* Three "no leader" answers 100 ms apart: when the link asks again each
 * time (20..60 ms later, while an election may be running). */
static void poll_run(uint64_t seed, int64_t out[3])
{
        struct clientfix *f = clientfix_new(10000, seed);

        for (int i = 0; i < 3; i++) {
                link_no_leader(&f->core.link, T0 + 100 * i);
                out[i] = f->core.link.retry_at - (T0 + 100 * i);
                assert_in_range(out[i], 20, 59);
        }
        assert_int_equal(f->draws, 3);
        clientfix_free(f);
}

static void leaderless_poll_repeats_with_the_seed(void **state)
{
        int64_t a[3], b[3], c[3];

        (void)state;
        poll_run(7, a);
        poll_run(7, b);
        poll_run(8, c);
        assert_memory_equal(a, b, sizeof a);
        assert_memory_not_equal(a, c, sizeof a);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(jitter_spans_half_to_one_and_a_half),
            cmocka_unit_test(open_repeats_with_the_seed),
            cmocka_unit_test(retry_repeats_with_the_seed),
            cmocka_unit_test(leaderless_poll_repeats_with_the_seed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
