/* The fixtures of test_proto: a corpus of frames of every type (several at
 * their largest), the body reader each type calls for, and a seeded
 * generator. */
#ifndef TESTS_UNIT_PROTOFIX_H
#define TESTS_UNIT_PROTOFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/status.h"

#define CANARY    0xA5
#define FRAME_MAX (PROTO_HEADER_SIZE + 2400)
#define N_CORPUS  19

/* xorshift64: a tiny, seeded generator so every run sees the same inputs. */
uint64_t next_rand(uint64_t *s);

/* A number below `n` (0 when `n` is 0). */
size_t rand_below(uint64_t *s, size_t n);

/* The lock name of the corpus's requests. */
extern const char lock_name[11];

/* A status reply at its largest: every member, every address at its
 * maximum. The strings live in `addr`, which must outlive its use. */
struct big_status {
        struct proto_status st;
        char addr[2][PROTO_MAX_MEMBERS][PROTO_ADDRESS_MAX];
};

/* Fills `b` with a status reply at its largest. */
void fill_big_status(struct big_status *b);

/* A RESULT with every field set. */
extern const struct proto_result full_result;

/* An encoded ACQUIRE with every field set. */
size_t acquire_command(uint8_t *buf, size_t cap);

/*
 * Writes frame number `i` of a corpus that holds every frame type (several
 * of them at their largest) into `out`; returns what the writer returned.
 * The frame's id is i + 1.
 */
size_t write_nth(int i, uint8_t *out, size_t cap);

struct frame {
        size_t len;
        uint8_t b[FRAME_MAX];
};

/* The N_CORPUS frames of write_nth(), in order (free() them). */
struct frame *make_corpus(void);

/* Reads a body with the reader its frame type calls for; empty bodies
 * (STATUS, PING, PONG) have no reader, so their rule is spelled out. */
int read_body(uint8_t type, const uint8_t *body, size_t len);

/* Decodes the header of a whole frame and checks it against the buffer;
 * returns the body and its length. */
const uint8_t *check_frame(const uint8_t *buf, size_t n, uint8_t type,
                           uint64_t id, size_t *body_len);

/* Whether `s` holds exactly `want`. */
bool string_is(struct proto_string s, const char *want);

#endif /* TESTS_UNIT_PROTOFIX_H */
