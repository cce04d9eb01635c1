/* Digests of the replicated state at agreed indexes, compared through the
 * log, so that a replica whose state diverged from the leader's says so. */
#ifndef SERVER_FSMDIGEST_H
#define SERVER_FSMDIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../snap/snapimage.h"

struct raftfsm;

/*
 * How it works (docs/fsm.md, "Digests"; docs/operations.md):
 *
 * - After applying every entry whose index is a multiple of `every`
 *   (digest-interval), each node starts a digest of its state at that
 *   index: FNV-1a 64 over the member directory's encoding, the access
 *   list's (once seeded) and the lock state machine's snapshot, which are
 *   the same bytes on every replica that applied the same log. It is made
 *   in a forked child (snapimage.h), never on the loop.
 * - The leader proposes each digest it made as a DIGEST entry (index,
 *   digest). Every node applying that entry compares it with its own
 *   digest of that index: equal, fine; not known (older than the ring,
 *   after a snapshot was installed, a digest missed while the previous
 *   child ran, or another digest-interval), skipped; different: this
 *   node's state is not the leader's. It logs one error line, counts it,
 *   and stays diverged (GET /ready: "diverged") until it restarts; later
 *   mismatches are counted, not logged again.
 */

/* Digests remembered, newest first replacing the oldest. */
#define FSMDIGEST_RING 8

struct fsmdigest_slot {
        uint64_t index;  /* the entry the digest was taken after; 0: empty */
        uint64_t digest; /* when `made` */
        bool made;
        /* A DIGEST entry arrived while the child was still making it: the
         * leader's digest, compared when it is made. */
        bool awaited;
        uint64_t expected;
        uint64_t expected_at; /* that DIGEST entry's index */
};

struct fsmdigest {
        uint32_t every; /* digest-interval; 0: no digests made */
        struct snapimage image;
        struct raftfsm *rf; /* borrowed: the state digested */
        struct fsmdigest_slot ring[FSMDIGEST_RING];
        uint64_t latest;     /* the newest index with a digest made */
        uint64_t proposed;   /* the newest one handed to the leader */
        uint64_t n_made;     /* digests made */
        uint64_t n_checked;  /* DIGEST entries compared with our own */
        uint64_t n_mismatch; /* of those, different */
        uint64_t n_unknown;  /* DIGEST entries of an index not in the ring */
        uint64_t n_missed;   /* indexes skipped: the last child still ran */
        uint64_t n_failed;   /* children that failed */
        /* The first mismatch: the index, our digest, the leader's, and
         * the DIGEST entry that carried it. Sticky until restart. */
        bool diverged;
        uint64_t diverged_index;
        uint64_t diverged_own;
        uint64_t diverged_leader;
        uint64_t diverged_at;
        /* The deliberately broken batond-diverge has altered its state
         * (BATON_CHAOS_BUG_DIVERGE); always false in batond. */
        bool chaos_done;
};

/* Digests of `rf`'s state every `every` entries (0: none made, DIGEST
 * entries still counted), made in `mode` (SNAPIMAGE_FORK in batond,
 * SNAPIMAGE_INLINE in tests: at once, in the caller). */
void fsmdigest_init(struct fsmdigest *d, struct raftfsm *rf,
                    enum snapimage_mode mode, uint32_t every);
/* Kill a child still running. */
void fsmdigest_close(struct fsmdigest *d);

/* After entry `index` (`buf`, `len`) was applied to rf's state: compare a
 * DIGEST entry, start a digest at a multiple of `every`. For
 * raftfsm_set_applied_cb(); `data` is the struct fsmdigest. */
void fsmdigest_applied(void *data, uint64_t index, const void *buf, size_t len);

/* Take a digest the child finished (never blocks): on the loop, each
 * turn. */
void fsmdigest_poll(struct fsmdigest *d);

/* The newest digest made and not yet handed out here, for the leader to
 * propose: true with its index and digest, once per digest. */
bool fsmdigest_to_propose(struct fsmdigest *d, uint64_t *index,
                          uint64_t *digest);

/* The digest of rf's state as it is now, computed in the caller (what the
 * child computes): 0 or BATON_ENOMEM. */
int fsmdigest_compute(const struct raftfsm *rf, uint64_t *digest);

#endif /* SERVER_FSMDIGEST_H */
