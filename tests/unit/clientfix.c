/* A client core with what it borrows, for unit tests. */
#include "clientfix.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

/* The environment draws from the fixture's seed, and counts them. */
static uint64_t seeded_random(void *data)
{
        struct clientfix *f = data;

        f->draws++;
        return rng_nonzero(&f->rng);
}

static int seeded_secret(void *data, uint8_t *buf, size_t n)
{
        rng_fill(&((struct clientfix *)data)->rng, buf, n);
        return 0;
}

struct clientfix *clientfix_new(uint32_t ttl_ms, uint64_t seed)
{
        struct clientfix *f = calloc(1, sizeof *f);
        assert_non_null(f);
        f->rng.s = seed;
        f->env.data = f;
        f->env.random = seeded_random;
        f->env.secret = seeded_secret;
        assert_int_equal(core_init(&f->core,
                                   &(struct core_config){ttl_ms, 0, "unit", eps,
                                                         1, no_watch},
                                   &f->env),
                         0);
        return f;
}

void clientfix_free(struct clientfix *f)
{
        core_close(&f->core);
        free(f);
}

void clientfix_sent(struct clientfix *f, struct request *r, int64_t t)
{
        r->id = ++f->core.link.next_id;
        r->gen = f->core.link.gen;
        if (r->sends++ == 0) {
                r->first_sent_ms = t;
        }
        r->sent_ms = t;
}

void clientfix_answer(struct clientfix *f, struct request *r, int status,
                      int64_t now)
{
        r->status = status;
        r->state = REQUEST_ENDED;
        session_answered(&f->core.session, r, REGISTRY_ANSWERED, now);
        registry_drop(&f->core.registry, r);
}

size_t clientfix_take(struct clientfix *f, struct clientfix_frame *out,
                      size_t max, bool decode)
{
        const uint8_t *p;
        size_t n = link_output(&f->core.link, &p), off = 0, k = 0;

        while (off < n) {
                assert_true(k < max);
                assert_int_equal(
                    proto_header_decode(&out[k].h, p + off, PROTO_MAX_BODY), 0);
                assert_true(out[k].h.length <= sizeof out[k].body);
                memcpy(out[k].body, p + off + PROTO_HEADER_SIZE,
                       out[k].h.length);
                memset(&out[k].k, 0, sizeof out[k].k);
                if (decode && out[k].h.type == PROTO_COMMAND) {
                        assert_int_equal(command_decode(&out[k].k, out[k].body,
                                                        out[k].h.length),
                                         0);
                }
                off += PROTO_HEADER_SIZE + out[k].h.length;
                k++;
        }
        link_output_taken(&f->core.link, n);
        return k;
}
