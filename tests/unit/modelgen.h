/* The command generator of test_model: random commands and entries aimed
 * at the interesting cases, each applied to the reference model as it is
 * made, so that the client learns from the model's answers. */
#ifndef TESTS_UNIT_MODELGEN_H
#define TESTS_UNIT_MODELGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/rng.h"
#include "model.h"
#include "modelcmd.h"

/* ------------------------------------------------------------------------ */
/* Seeded randomness: splitmix64, so a seed names one sequence forever. */

static inline bool chance(struct rng *r, unsigned pct)
{
        return rng_below(r, 100) < pct;
}

/* The lock names commands use most. */
/* Names of locks; the last NSEM_NAMES are mostly taken as semaphores of
 * sem_limit(name) permits, and now and then as locks (BATON_EKIND); the
 * one before them, ELECTION_NAME, mostly as an election. */
extern const char *const lock_names[7];
#define ELECTION_NAME "chief"
#define NSEM_NAMES    2
#define NLOCK_NAMES   (sizeof lock_names / sizeof lock_names[0])

/* A MULTI's list of names: at most LIM_NAMES + 1 of them (one too many
 * now and then), the long name at most once. */
#define GEN_LIST_MAX ((LIM_NAMES + 1) * 8 + COMMAND_NAME_MAX)

/* A past request; it owns its name and a MULTI's list, since the model's
 * locks move and the generator's buffers are reused. */
struct ghist {
        struct command c;
        char name[COMMAND_NAME_MAX];
        uint8_t list[GEN_LIST_MAX];
};

/* What a client remembers about a session it opened. */
struct gsess {
        uint64_t id;
        uint64_t nonce;
        uint64_t next_seq;
        uint64_t ack;
        struct ghist hist[CAP_HIST]; /* recent requests, for retries */
        unsigned nhist;
        unsigned hpos;
};

struct gen {
        struct rng rng;
        char long_name[COMMAND_NAME_MAX];
        char long_value[COMMAND_VALUE_MAX];
        char name[COMMAND_NAME_MAX]; /* the current command's lock name */
        uint8_t list[GEN_LIST_MAX];  /* the current MULTI's names */
        char client[COMMAND_CLIENT_NAME_MAX];
        uint8_t hash[COMMAND_HASH_SIZE];        /* the current OPEN's */
        uint8_t quota[COMMAND_ACL_QUOTA_TABLE]; /* the current QUOTA_SET's */
        struct gsess s[CAP_KNOWN];
        unsigned ns;
        uint64_t clock_ms;           /* the last CLOCK's */
        uint64_t tokens[CAP_TOKENS]; /* recent grant tokens, to go stale */
        unsigned ntokens;
        unsigned tpos;
};

/* A generator whose commands follow from `seed` alone. */
void gen_init(struct gen *g, uint64_t seed);
/* (gen_init starts the clock at a fixed date.) */

/* The bytes of the next entry into `buf` (`cap` bytes): an encoded command,
 * or now and then random bytes or an encoding with one byte flipped, or a
 * quota change of the access list; returns its length. The model has not
 * applied it (see m_entry()). */
size_t gen_entry(struct gen *g, struct model *m, uint64_t index, uint8_t *buf,
                 size_t cap);

/* The model's answer to a whole entry, parsed the way lockfsm_apply
 * parses it: a batch's commands in order, or one command. */
struct lockfsm_result m_entry(struct model *m, struct gen *g, uint64_t index,
                              const uint8_t *buf, size_t len,
                              struct evlog *log);

/* A batch of up to 8 commands in `buf` (`cap` bytes), each generated from
 * and applied to the model after the ones before it, or now and then made
 * up front, damaged and then applied whole; the events go to `log`, the
 * answer to `*want`. Returns its length. */
size_t gen_batch(struct gen *g, struct model *m, uint64_t index, uint8_t *buf,
                 size_t cap, struct evlog *log, struct lockfsm_result *want);

#endif /* TESTS_UNIT_MODELGEN_H */
