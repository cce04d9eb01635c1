/* test_simclient's client-view check, kind by kind: whenever a leader
 * applies a GRANT, what the other clients' cores believe they hold at
 * that moment, in their own clocks, must leave room for it. */
#ifndef TESTS_SIM_SIMVIEW_H
#define TESTS_SIM_SIMVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/client/locks.h"
#include "../../src/proto/command.h"
#include "simclient.h"
#include "simkinds.h"

/* The modes a GRANT event carries (COMMAND_MODE_*), and the index of
 * multi-locks in what the check caught. */
#define SIMVIEW_MODES 4
#define SIMVIEW_MULTI SIMVIEW_MODES

/* RELEASEs of one name one client may have out at once: one per grant
 * (at most two, a writer's and a reader's), with room to spare. */
#define SIMVIEW_RELEASES 4

/*
 * At each GRANT of a name (a multi-lock's names each have their own),
 * every client other than the grantee's session whose core_belief() says
 * LIVE or JEOPARDY contributes the holds core_holds() lists on that name,
 * but for a hold whose RELEASE it sent (from then the cluster may apply
 * it; of a writer's and a reader's grant with one token, as a downgrade
 * or upgrade by the granting entry makes, one RELEASE of the token ends
 * the writer's first, docs/fsm.md "Read/write locks"). Then:
 *
 * - an exclusive grant, or an election's (its leadership): no such hold
 *   in any mode (no two clients believe they lead one election);
 * - a shared grant: no such hold in exclusive mode;
 * - a semaphore's: the permits of those holds (each client takes its
 *   profile's permits of a semaphore) plus those the entry granted so
 *   far, this one included, less those of its grants the entry ended
 *   again (an EXPIRE of several sessions), are at most the semaphore's
 *   size.
 */
struct simview {
        const struct kprofile *profiles; /* by client id - 1; borrowed */
        unsigned n_clients;
        /* The RELEASEs each client sent of each name, until the hold
         * leaves its table: a downgrade or upgrade gives a client two
         * grants of one name, and it may be releasing both at once. */
        struct simview_release {
                uint64_t seq, token; /* seq 0: a free slot */
        } released[KINDS_CLIENTS][KINDS_NAMES][SIMVIEW_RELEASES];
        unsigned beside; /* RELEASEs sent while another of the name was out */
        uint64_t multi[KINDS_CLIENTS]; /* the token of its last multi-lock */
        uint64_t checked; /* the last index whose GRANTs were checked */
        unsigned checked_node;
        uint64_t sem_index[KINDS_SEMS]; /* the entry granting permits */
        uint32_t sem_granted[KINDS_SEMS];
        unsigned checks[SIMVIEW_MODES]; /* GRANTs checked, by mode */
        /* GRANTs found believed taken, by mode, and those of a
         * multi-lock's names (the GRANT's or the believed hold's) at
         * SIMVIEW_MULTI; the first of each, and the first of all. */
        unsigned caught[SIMVIEW_MODES + 1];
        char first[SIMVIEW_MODES + 1][400];
        char clash[400];
};

/* Follow `n` clients (at most KINDS_CLIENTS) of mixes `profiles`. */
void simview_init(struct simview *v, const struct kprofile *profiles,
                  unsigned n);

/* Client `id` wrote command `k` to the network. */
void simview_sent(struct simview *v, unsigned id, const struct command *k);

/* Client `id` was granted a multi-lock with `token`. */
void simview_multi(struct simview *v, unsigned id, uint64_t token);

/* Client `id`'s core changed hold `h` to `count` holds. */
void simview_hold(struct simview *v, unsigned id, const struct locks_hold *h,
                  uint32_t count);

/* Node `node`, leading, applied `ev` at virtual time `now`: check a GRANT
 * against every client of `sc` (a later leader applying it again is not
 * checked twice). */
void simview_event(struct simview *v, struct simclients *sc, unsigned node,
                   const struct simevent *ev, uint64_t now);

/* What a run's clients were granted, by kind, and what the check
 * looked at, by mode, into `buf` for a TAP line: "exclusive N, ...;
 * checked exclusive N, ...". */
void simview_format(const struct simview *v, const struct kinds_run *kr,
                    char *buf, size_t cap);

/* How many GRANTs of each mode (and of multi-locks) the check found
 * believed taken, in `caught`, into `buf`. */
void simview_caught(const unsigned caught[SIMVIEW_MODES + 1], char *buf,
                    size_t cap);

/* Over a set of runs: grants by kind and GRANTs checked by mode. */
struct simview_totals {
        unsigned grants[N_KINDS];
        unsigned checks[SIMVIEW_MODES];
};

/* Add a run's counts to `t`. */
void simview_add(struct simview_totals *t, const struct simview *v,
                 const struct kinds_run *kr);

/* Whether every kind was granted and every mode checked at least once
 * in `t`; `buf` names what never was, or holds the counts. */
bool simview_covered(const struct simview_totals *t, char *buf, size_t cap);

#endif /* TESTS_SIM_SIMVIEW_H */
