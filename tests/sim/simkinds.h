/* What test_simclient's clients ask for, kind by kind: the names and
 * their kinds, each client's seeded mix of exclusive and shared locks,
 * semaphore permits, multi-locks and elections, the acquire each call
 * makes, the commands that end its hold, and the check that every grant
 * a client was told of is in the log. */
#ifndef TESTS_SIM_SIMKINDS_H
#define TESTS_SIM_SIMKINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/client/acqop.h"
#include "../../src/proto/command.h"
#include "../lib/rng.h"
#include "../lib/simcluster.h"

/*
 * The names (kinds_names[]): "alpha", "beta", "gamma" are only ever taken
 * exclusively (hostcheck_log() reads them as plain locks); "rw0" and "rw1"
 * exclusively and shared; a multi-lock names 2 or 3 of those five, each
 * exclusive or shared as the name allows; "sem0" and "sem1" are
 * semaphores of KINDS_SEM_LIMIT0 and KINDS_SEM_LIMIT1 permits; "vote0"
 * and "vote1" elections.
 */
#define KINDS_NAMES     9
#define KINDS_PLAIN     3 /* alpha, beta, gamma */
#define KINDS_LOCKS     5 /* and rw0, rw1 */
#define KINDS_SEM       5 /* the first semaphore's index */
#define KINDS_SEMS      2
#define KINDS_ELECT     7 /* the first election's index */
#define KINDS_ELECTS    2
#define KINDS_MULTI_MAX 3
#define KINDS_LIST_MAX  (KINDS_MULTI_MAX * (2 + 8))
#define KINDS_ACKS_MAX  4096
#define KINDS_CLIENTS   32

extern const char *const kinds_names[KINDS_NAMES];

/* What a call asks for (a multi-lock's names may be in either mode). */
enum kind {
        KIND_EXCLUSIVE,
        KIND_SHARED,
        KIND_SEMAPHORE,
        KIND_MULTI,
        KIND_ELECTION,
        N_KINDS
};

extern const char *const kinds_kind_names[N_KINDS];

/* A client's mix, drawn once from the seed: how often it asks for each
 * kind, and how many permits it takes of each semaphore. */
struct kprofile {
        unsigned weight[N_KINDS];
        uint32_t permits[KINDS_SEMS];
};

/* One call of a client, from its acquire to the end of its hold. */
struct kcall {
        enum kind kind;
        unsigned n;                      /* names: 1, or a MULTI's 2..3 */
        unsigned names[KINDS_MULTI_MAX]; /* into kinds_names[] */
        uint8_t modes[KINDS_MULTI_MAX];  /* COMMAND_MODE_* of each */
        struct acqop_ask ask;            /* its pointers into this */
        uint8_t list[KINDS_LIST_MAX];    /* a MULTI's */
        char value[24];                  /* a candidate's or leader's */
        uint64_t token, session;         /* once granted */
        unsigned proclaims;              /* PROCLAIMs left to make */
        unsigned next;                   /* the next name to release */
};

/* A grant a client was told of: one GRANT event per name to its
 * session and seq at index == token. */
struct kack {
        uint64_t session, seq, token;
        uint8_t n;
        uint8_t names[KINDS_MULTI_MAX];
};

/* What the clients were granted, kind by kind, for the checks and the
 * TAP line. */
struct kinds_run {
        unsigned grants[N_KINDS];
        unsigned proclaimed;
        struct kack acks[KINDS_ACKS_MAX];
        unsigned n_acks, acks_over;
};

/* Draw a client's mix from `rng`. */
void kinds_profile(struct kprofile *p, struct rng *rng);

/* Draw the next call of a client of mix `p` into `c` (its ask ready for
 * acqop_init() with kinds_names[c->names[0]]). */
void kinds_draw(const struct kprofile *p, struct rng *rng, struct kcall *c);

/* The call was granted with `res` in `session` at seq `seq` (0: not the
 * ACQUIRE's own, as a recovery's): counted, recorded for the ack check,
 * and its hold planned (`rng` draws an election's PROCLAIMs). */
void kinds_granted(struct kinds_run *kr, struct kcall *c, struct rng *rng,
                   uint64_t session, uint64_t seq, uint64_t token);

/* The next command that ends (or, a PROCLAIM, goes on with) the hold of
 * `c`, into `k` (borrowing `c`): false once every name was released. A
 * PROCLAIM is followed by more hold; `*proclaim` says which it is. */
bool kinds_next_command(struct kcall *c, struct rng *rng, struct command *k,
                        bool *proclaim);

/* The index into kinds_names[] of `name` (`len` bytes), or -1. */
int kinds_index(const char *name, size_t len);

/* The semaphore's number of permits, for index `i` of kinds_names[]. */
uint32_t kinds_sem_limit(unsigned i);

/* Every grant recorded in `kr` is a GRANT event of each of its names in
 * `n`'s log, to its session and seq, at index == token. 0, or -1 with
 * the failure in `reason`. */
int kinds_check_acks(const struct kinds_run *kr, const struct simnode *n,
                     char *reason, size_t cap);

/* The negative control of kinds_check_acks(): the first multi-lock's
 * grant recorded names, as its last, a lock it did not take. */
void kinds_break_ack(struct kinds_run *kr);

#endif /* TESTS_SIM_SIMKINDS_H */
