/* A client core with what it borrows, for unit tests. */
#include "clientfix.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../src/client/outcome.h"

static const char eps[1][LINK_ADDR_MAX] = {"127.0.0.1:1"};

/* No watch is made here: the registry's hook has nothing to queue. */
static void no_watch(void *data, struct request *r,
                     const struct proto_watch_event *e, void **shared)
{
        (void)data;
        (void)r;
        (void)e;
        (void)shared;
}

static uint64_t seeded_random(void *data)
{
        struct clientfix *f = data;
        uint64_t v;

        do {
                v = rng_next(&f->rng);
        } while (v == 0);
        f->draws++;
        return v;
}

static int seeded_secret(void *data, uint8_t *buf, size_t n)
{
        struct clientfix *f = data;
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++) {
                if (i % 8 == 0) {
                        v = rng_next(&f->rng);
                }
                buf[i] = (uint8_t)(v >> (8 * (i % 8)));
        }
        return 0;
}

struct clientfix *clientfix_new(uint32_t ttl_ms, uint64_t seed)
{
        struct clientfix *f = calloc(1, sizeof *f);
        struct registry_owner owner;

        assert_non_null(f);
        f->rng.s = seed;
        f->env.data = f;
        f->env.random = seeded_random;
        f->env.secret = seeded_secret;
        assert_int_equal(link_init(&f->link, eps, 1, &f->env), 0);
        owner.data = &f->s;
        owner.final = outcome_final;
        owner.withdraw = outcome_withdraw;
        owner.watch_event = no_watch;
        registry_init(&f->reg, &f->link, &f->env, ttl_ms, &owner);
        locks_init(&f->locks);
        notify_init(&f->notify);
        session_init(&f->s, ttl_ms, &f->env, &f->reg, &f->locks, &f->notify,
                     "unit");
        return f;
}

void clientfix_free(struct clientfix *f)
{
        registry_close(&f->reg);
        locks_close(&f->locks);
        notify_close(&f->notify);
        link_close(&f->link);
        free(f);
}

void clientfix_sent(struct clientfix *f, struct request *r, int64_t t)
{
        r->id = ++f->link.next_id;
        r->gen = f->link.gen;
        if (r->sends++ == 0) {
                r->first_sent_ms = t;
        }
        r->sent_ms = t;
}
