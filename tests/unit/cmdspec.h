/* What the command codec's tests check against: which fields each command
 * type carries and a reference encoder, both written from the layout table
 * of src/proto/command.h rather than taken from the implementation, and
 * sample commands. */
#ifndef TESTS_UNIT_CMDSPEC_H
#define TESTS_UNIT_CMDSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/proto/command.h"

#define CANARY  0xA5
#define N_TYPES 17

/* Room for anything the reference encoder writes, including a MEMBER with
 * two 255-byte strings that the real encoder refuses. */
#define SPEC_MAX 1024

/* Which fields each type carries, written down from the header's table
 * rather than taken from the implementation. */
enum {
        T_SESSION = 1 << 0,
        T_SEQ = 1 << 1,
        T_ACK = 1 << 2,
        T_OWNER = 1 << 3,
        T_WAIT = 1 << 4,
        T_MODE = 1 << 5,
        T_TOKEN = 1 << 6,
        T_TARGET = 1 << 7,
        T_NAME = 1 << 8, /* the first string, in name/name_len: the lock
                          * name, OPEN's client name, MEMBER's raft address */
        T_NONCE = 1 << 9,
        T_TTL = 1 << 10,
        T_ADDRESS = 1 << 11, /* MEMBER's client address */
        T_DELAY = 1 << 12,   /* EXPIRE (version 3) and REVOKE: delay_ms */
        T_VALUE = 1 << 13,   /* PROCLAIM's and SET_VALUE's value (an
                                ACQUIRE may carry one too:
                                carries_value()) */
        T_HOLD = 1 << 14,    /* EXTEND's hold_ms (an ACQUIRE may carry
                                one too: carries_hold()) */
};

/* Whether `c` carries a value: a PROCLAIM, a SET_VALUE, an election's
 * ACQUIRE, and (version 4) any other ACQUIRE with a value. */
bool carries_value(const struct command *c);

/* Whether `c` carries a hold time: an EXTEND, and any version 4 ACQUIRE
 * (a lock's, a reader's or permits' with a value or a hold time). */
bool carries_hold(const struct command *c);

/* Every command type. */
extern const int all_types[N_TYPES];

/* The T_* fields that commands of `type` carry. */
unsigned carried(int type);

/* Types whose first string is a lock name (not a client name or address). */
bool has_lock_name(int type);

/* The shortest and longest valid first string of `type` (for MEMBER, of a
 * set: a removal has both addresses empty). 0 and 0 without a string. */
unsigned name_min(int type);
unsigned name_max(int type);

/* Where the reference encoder put things. */
struct spec_layout {
        size_t len;        /* everything, padding included */
        size_t body;       /* up to the end of the last field */
        size_t name_at;    /* the first string's length byte; 0 if none */
        size_t address_at; /* MEMBER: the client address's length byte */
        size_t value_at;   /* carries_value(): the value's length byte */
        size_t hold_at;    /* carries_hold(): hold_ms */
};

/* The version the header says `c` is written in: 3 for a semaphore
 * ACQUIRE (which then carries permits and limit), else 2. */
uint8_t spec_version(const struct command *c);

/*
 * Encodes `c` exactly as the header's table describes, with no validation,
 * so tests can also craft inputs the real encoder refuses: the fields, then
 * zero bytes up to the next multiple of 8. `out` must hold SPEC_MAX bytes.
 */
struct spec_layout spec_layout(const struct command *c, uint8_t *out);

/* The length of spec_layout()'s encoding of `c` into `out`. */
size_t spec_encode(const struct command *c, uint8_t *out);

/* The reference layout of `c`, without keeping the bytes. */
struct spec_layout layout_of(const struct command *c);

/* A command of `type` with every field of the struct set, carried or not,
 * to a distinct value whose bytes all differ. A MEMBER is a set. */
struct command full(int type);

/* The fields `type` does not carry, cleared. */
struct command only_carried(struct command c);

/* A MEMBER removal: both addresses empty. */
struct command member_removal(void);

/* Field-by-field equality; strings compare by content. */
void assert_same(const struct command *a, const struct command *b);

/* Decodes `len` bytes from an exactly sized heap copy, so that any read past
 * the end is caught by the sanitizer. `c` borrows from the copy: pass `copy`
 * to keep it (the caller frees it) whenever `c` is looked at afterwards; with
 * NULL it is freed at once and only the return code is meaningful. */
int decode_exact(struct command *c, const uint8_t *bytes, size_t len,
                 uint8_t **copy);

/* command_decode()'s verdict on `len` bytes, decoded as decode_exact()
 * does. */
int decode_bytes(const uint8_t *bytes, size_t len);

/* The encoded size the header's table gives for `c`. */
size_t expected_size(const struct command *c);

#define MAX_SAMPLES 192

/*
 * Fills `out` with valid commands: every type; first strings of lengths 0..9
 * (those valid for the type), so that between them they need every amount of
 * padding from 0 to 7 bytes, and the longest of each kind; MEMBER client
 * addresses of the same lengths (the last field); and a MEMBER removal.
 * `text` holds COMMAND_NAME_MAX bytes without a NUL. Returns the count.
 */
size_t samples(struct command *out, const char *text);

#endif /* TESTS_UNIT_CMDSPEC_H */
