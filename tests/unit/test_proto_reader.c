/* Cases of test_proto on the incremental frame reader. */
#include "test_proto_reader.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/keepalive.h"
#include "../lib/failalloc.h"
#include "protofix.h"

/* --- Reader ---------------------------------------------------------------
 */

/*
 * Feeds `s` to the reader in chunks (1 byte, random sizes up to
 * `max_chunk`, or all at once when max_chunk is 0) and checks each frame it
 * yields against the corpus in order, wrapping around. Returns the number of
 * frames.
 */
static size_t feed_checked(struct proto_reader *r, const uint8_t *s, size_t len,
                           uint64_t *rng, size_t max_chunk,
                           const struct frame *corpus)
{
        size_t off = 0, frames = 0;

        while (off < len) {
                size_t chunk =
                    max_chunk == 0 ? len - off : 1 + rand_below(rng, max_chunk);
                size_t end;

                if (chunk > len - off) {
                        chunk = len - off;
                }
                end = off + chunk;
                while (off < end) {
                        long n = proto_reader_feed(r, s + off, end - off);

                        assert_true(n > 0);
                        assert_true((size_t)n <= end - off);
                        off += (size_t)n;
                        if (r->ready) {
                                const struct frame *f =
                                    &corpus[frames % N_CORPUS];

                                assert_int_equal(r->body_len, r->h.length);
                                assert_int_equal(
                                    PROTO_HEADER_SIZE + r->h.length, f->len);
                                assert_memory_equal(r->head, f->b,
                                                    PROTO_HEADER_SIZE);
                                assert_true(r->h.id == (frames % N_CORPUS) + 1);
                                if (r->h.length > 0) {
                                        assert_memory_equal(
                                            r->body, f->b + PROTO_HEADER_SIZE,
                                            r->h.length);
                                }
                                assert_int_equal(
                                    read_body(r->h.type, r->body, r->body_len),
                                    0);
                                frames++;
                        } else {
                                /* Only a frame's end stops a feed short. */
                                assert_int_equal(off, end);
                        }
                }
        }
        return frames;
}

/* The whole corpus, `copies` times over, in one buffer. */
static uint8_t *corpus_stream(const struct frame *corpus, int copies,
                              size_t *len)
{
        size_t total = 0, off = 0;
        uint8_t *s;
        int c, i;

        for (i = 0; i < N_CORPUS; i++) {
                total += corpus[i].len;
        }
        total *= (size_t)copies;
        s = malloc(total);
        assert_non_null(s);
        for (c = 0; c < copies; c++) {
                for (i = 0; i < N_CORPUS; i++) {
                        memcpy(s + off, corpus[i].b, corpus[i].len);
                        off += corpus[i].len;
                }
        }
        *len = total;
        return s;
}

void reader_byte_by_byte(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        struct failalloc fa;
        uint64_t rng = 1;
        uint8_t *s;
        size_t len;

        (void)state;
        failalloc_init(&fa);
        s = corpus_stream(corpus, 2, &len);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(feed_checked(&r, s, len, &rng, 1, corpus),
                         2 * N_CORPUS);
        assert_int_equal(r.err, 0);
        assert_true(fa.live <= 1);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
        free(s);
        free(corpus);
}

void reader_random_splits(void **state)
{
        static const size_t max_chunks[] = {2, 7, 16, 17, 33, 300, 5000};
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        uint64_t rng = 0x9e3779b97f4a7c15ULL;
        uint8_t *s;
        size_t len, i;
        int round;

        (void)state;
        s = corpus_stream(corpus, 3, &len);
        for (i = 0; i < sizeof max_chunks / sizeof max_chunks[0]; i++) {
                for (round = 0; round < 20; round++) {
                        proto_reader_init(&r, PROTO_MAX_BODY, NULL);
                        assert_int_equal(feed_checked(&r, s, len, &rng,
                                                      max_chunks[i], corpus),
                                         3 * N_CORPUS);
                        proto_reader_close(&r);
                }
        }
        free(s);
        free(corpus);
}

/* Several frames in one buffer: each feed stops at a frame's end, and
 * calling again with the rest yields the next. */
void reader_several_frames_per_buffer(void **state)
{
        struct frame *corpus = make_corpus();
        struct proto_reader r;
        uint8_t *s;
        size_t len, off = 0, frames = 0;
        long n;

        (void)state;
        s = corpus_stream(corpus, 1, &len);
        proto_reader_init(&r, PROTO_MAX_BODY, NULL);
        while (off < len) {
                n = proto_reader_feed(&r, s + off, len - off);
                assert_int_equal(n, corpus[frames].len);
                assert_true(r.ready);
                assert_int_equal(r.h.type, corpus[frames].b[1]);
                off += (size_t)n;
                frames++;
        }
        assert_int_equal(frames, N_CORPUS);
        /* The last frame stays readable until the next call, which drops
         * it even when it brings no bytes. */
        assert_true(r.ready);
        assert_int_equal(r.h.type, PROTO_ERROR);
        assert_int_equal(proto_reader_feed(&r, s, 0), 0);
        assert_false(r.ready);
        proto_reader_close(&r);
        free(s);
        free(corpus);
}

/* A frame announcing more than max_body is refused from its header alone,
 * before anything is allocated, and the reader stays failed. */
void reader_too_big_before_allocating(void **state)
{
        struct proto_header h = {PROTO_VERSION, PROTO_COMMAND, 0, 101, 1};
        uint8_t head[PROTO_HEADER_SIZE];
        uint8_t ok[PROTO_HEADER_SIZE];
        struct proto_reader r;
        struct failalloc fa;

        (void)state;
        failalloc_init(&fa);
        proto_header_encode(&h, head);
        proto_reader_init(&r, 100, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, 8), 8);
        assert_int_equal(proto_reader_feed(&r, head + 8, 8), BATON_ETOOBIG);
        assert_int_equal(fa.calls, 0);
        assert_int_equal(fa.live, 0);
        assert_false(r.ready);
        assert_int_equal(proto_write_empty(ok, sizeof ok, 2, PROTO_PING),
                         PROTO_HEADER_SIZE);
        assert_int_equal(proto_reader_feed(&r, ok, sizeof ok), BATON_ETOOBIG);
        proto_reader_close(&r);

        /* The largest length a header can carry. */
        h.length = UINT32_MAX;
        proto_header_encode(&h, head);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, sizeof head),
                         BATON_ETOOBIG);
        assert_int_equal(fa.calls, 0);
        proto_reader_close(&r);

        /* Exactly max_body is fine. */
        h.length = 100;
        proto_header_encode(&h, head);
        proto_reader_init(&r, 100, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, head, sizeof head),
                         PROTO_HEADER_SIZE);
        assert_int_equal(r.err, 0);
        assert_int_equal(fa.calls, 1);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
}

/* Every header error fails the reader, and it stays failed. */
void reader_errors_are_sticky(void **state)
{
        static const struct {
                struct proto_header h;
                int err;
        } cases[] = {
            {{0, PROTO_PING, 0, 0, 1}, BATON_EVERSION},
            {{1, PROTO_PING, 0, 0, 1}, BATON_EVERSION},
            {{3, PROTO_PING, 0, 0, 1}, BATON_EVERSION},
            {{PROTO_VERSION, PROTO_PING, 1, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 0, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 17, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, 255, 0, 0, 1}, BATON_EMALFORMED},
            {{PROTO_VERSION, PROTO_COMMAND, 0, PROTO_MAX_BODY + 1, 1},
             BATON_ETOOBIG},
        };
        uint8_t buf[2 * PROTO_HEADER_SIZE];
        struct proto_reader r;
        struct failalloc fa;
        size_t i;

        (void)state;
        failalloc_init(&fa);
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                /* A good frame, then the bad header. */
                assert_int_equal(
                    proto_write_empty(buf, sizeof buf, 1, PROTO_PING),
                    PROTO_HEADER_SIZE);
                proto_header_encode(&cases[i].h, buf + PROTO_HEADER_SIZE);
                proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
                assert_int_equal(proto_reader_feed(&r, buf, sizeof buf),
                                 PROTO_HEADER_SIZE);
                assert_true(r.ready);
                assert_int_equal(proto_reader_feed(&r, buf + PROTO_HEADER_SIZE,
                                                   PROTO_HEADER_SIZE),
                                 cases[i].err);
                assert_false(r.ready);
                assert_int_equal(r.err, cases[i].err);
                /* Good bytes, no bytes: the same error, nothing consumed. */
                assert_int_equal(proto_reader_feed(&r, buf, PROTO_HEADER_SIZE),
                                 cases[i].err);
                assert_int_equal(proto_reader_feed(&r, buf, 0), cases[i].err);
                assert_false(r.ready);
                proto_reader_close(&r);
        }
        assert_int_equal(fa.calls, 0);
        assert_int_equal(fa.live, 0);
}

void reader_out_of_memory(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_reader r;
        struct failalloc fa;
        size_t n;

        (void)state;
        failalloc_init(&fa);
        n = proto_write_keepalive(buf, sizeof buf, 1, 0, 42);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        failalloc_arm(&fa, 0, false);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(fa.live, 0);
        assert_false(r.ready);
        /* Sticky, even though memory is back. */
        failalloc_disarm(&fa);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(fa.calls, 1);
        proto_reader_close(&r);

        /* Failing to grow: the old buffer is gone, nothing leaks. */
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(fa.live, 1);
        n = proto_write_result(buf, sizeof buf, 2, 0, &full_result);
        failalloc_arm(&fa, 0, false);
        assert_int_equal(proto_reader_feed(&r, buf, n), BATON_ENOMEM);
        assert_int_equal(r.err, BATON_ENOMEM);
        proto_reader_close(&r);
        proto_reader_close(&r); /* twice is harmless */
        assert_int_equal(fa.live, 0);
}

/* The body buffer grows to the largest frame seen and is then reused:
 * frames of equal or smaller size allocate nothing, empty ones never. */
void reader_reuses_body_buffer(void **state)
{
        uint8_t buf[FRAME_MAX];
        struct proto_reader r;
        struct failalloc fa;
        struct proto_string s;
        size_t n;
        char name[200];

        (void)state;
        failalloc_init(&fa);
        proto_reader_init(&r, PROTO_MAX_BODY, &fa.mem);

        n = proto_write_empty(buf, sizeof buf, 1, PROTO_PING);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(fa.calls, 0);

        memset(name, 'q', sizeof name);
        n = proto_write_query(buf, sizeof buf, 2, 0, name, 100);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(r.body_cap, 101);
        /* Equal, then smaller, then empty: no allocation. */
        n = proto_write_query(buf, sizeof buf, 3, 0, name, 100);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(proto_read_query(r.body, r.body_len, &s), 0);
        assert_int_equal(s.len, 100);
        n = proto_write_query(buf, sizeof buf, 4, 0, "a", 1);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_true(r.ready);
        assert_int_equal(proto_read_query(r.body, r.body_len, &s), 0);
        assert_true(string_is(s, "a"));
        n = proto_write_keepalive(buf, sizeof buf, 5, 0, 1);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        n = proto_write_empty(buf, sizeof buf, 6, PROTO_PONG);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(r.body_len, 0);
        assert_int_equal(fa.calls, 1);
        assert_int_equal(fa.live, 1);
        /* Larger: one more allocation, the old buffer freed. */
        n = proto_write_query(buf, sizeof buf, 7, 0, name, 200);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 2);
        assert_int_equal(fa.live, 1);
        assert_int_equal(r.body_cap, 201);
        n = proto_write_query(buf, sizeof buf, 8, 0, name, 150);
        assert_int_equal(proto_reader_feed(&r, buf, n), (long)n);
        assert_int_equal(fa.calls, 2);
        proto_reader_close(&r);
        assert_int_equal(fa.live, 0);
}
