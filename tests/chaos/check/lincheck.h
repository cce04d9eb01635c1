/* Linearizability of one lock's history against an owner-aware fenced mutex. */
#ifndef CHAOS_CHECK_LINCHECK_H
#define CHAOS_CHECK_LINCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Checker S7 of the chaos suite (docs/chaos.md, checker S7).
 * The caller gives every operation on one lock name; the checker decides
 * whether some sequential order of them, consistent with real time, is legal
 * for this model:
 *
 *   state = (owner session or none, owner's token, highest token granted,
 *            sessions known dead)
 *   ACQUIRE by s     legal iff free, s not dead and token > highest;
 *                    then owner = s, owner's token = highest = token
 *   BUSY by s        legal iff held by a session other than s
 *   RELEASE(s, t)    legal iff owner is s with token t; then free
 *   HOLDER(h, t)     legal iff h = 0 and free, or owner is h with token t
 *   CLOSE/EXPIRE(s)  always legal: s is dead, and if s owns the lock it is
 *                    free
 *
 * Known ops take effect once between their invoke and complete times (equal
 * times count as overlapping); info ops (known = false) take effect at most
 * once, at any time after their invoke. A token of 0 means "not observed":
 * an acquire granting token 0 grants some token above the highest, and a
 * release or holder query with token 0 matches the owner's token whatever it
 * is. A holder of 0 means the lock was free. Session 0 in `session` is a
 * session like any other (one that no holder query can name). An info
 * HOLDER or BUSY says nothing and is ignored; so is `complete_ns` of any
 * info op.
 *
 * The module is pure: no I/O, no globals, safe to call from several threads
 * on different inputs.
 */

enum lincheck_kind {
        LINCHECK_ACQUIRE, /* granted: token = the grant's token */
        LINCHECK_BUSY,    /* a try refused because another session held it */
        LINCHECK_RELEASE, /* release of `token` by `session` (acknowledged: it
                             happened) */
        LINCHECK_HOLDER,  /* holder query: observed `holder` session (0 = free)
                             and `token` */
        LINCHECK_CLOSE,   /* session closed: its holds released, the session
                             dead */
        LINCHECK_EXPIRE,  /* synthetic: the cluster expired the session (same
                             effect as CLOSE) */
};

struct lincheck_op {
        int kind;
        uint64_t process;    /* Jepsen process: its ops never overlap in time */
        uint64_t session;    /* the session the op acts for */
        int64_t invoke_ns;   /* CLOCK_MONOTONIC ns */
        int64_t complete_ns; /* INT64_MAX when the outcome is unknown */
        bool known;      /* false: "info" - may or may not have taken effect, at
                            any time after invoke */
        uint64_t token;  /* ACQUIRE: granted token (0 if unknown, i.e. an info
                            acquire); RELEASE: its token; HOLDER: observed
                            token */
        uint64_t holder; /* HOLDER: observed holder session, 0 = free */
        uint64_t index;  /* the Raft index the op took effect at, 0 if not
                            known (used by the fast path only) */
};

enum lincheck_verdict {
        LINCHECK_VALID = 0,
        LINCHECK_INVALID = 1,
        LINCHECK_UNKNOWN = 2
};

struct lincheck_result {
        int verdict;
        bool fast;         /* decided by the fast path */
        uint64_t explored; /* search states visited */
        char detail[512];  /* for INVALID: a readable reason naming the op(s)
                              that cannot be placed; for UNKNOWN: which budget
                              ran out */
};

/* The default of `budget`, in search states. */
#define LINCHECK_DEFAULT_BUDGET 2000000u

/* The search cache never grows past this many bytes; running out of it is
 * reported as UNKNOWN, like running out of states. */
#define LINCHECK_MEMORY_BUDGET ((size_t)512 << 20)

/**
 * Checks one lock's operations (any order in `ops`; not modified). `budget`
 * bounds the search states (0 = a default such as 2,000,000). Returns 0, or a
 * negative number on allocation failure.
 *
 * First the fast path: when every known op has a Raft index, the ops with an
 * index are ordered by it (a holder query after the write at its read index;
 * ties by invoke time) and, if that order respects real time and replays
 * through the model, the verdict is VALID with `fast` set. Otherwise Wing &
 * Gong's search with Lowe's cache of (linearized ops, model state) decides:
 * VALID, INVALID (with the op the deepest partial linearization could not
 * place in `detail`), or UNKNOWN when `budget` states or
 * LINCHECK_MEMORY_BUDGET bytes were spent; never VALID without a
 * linearization. A malformed op (an unknown kind, or a known op completing
 * before its invoke) makes the verdict UNKNOWN, naming the op.
 *
 * `ops` is borrowed for the call; `out` is filled in whenever 0 is returned.
 * On failure (-ENOMEM) `out` holds UNKNOWN and nothing is leaked.
 */
int lincheck_run(const struct lincheck_op *ops, size_t n, uint64_t budget,
                 struct lincheck_result *out);

/* The lower-case name of an enum lincheck_kind ("acquire"), "?" for others. */
const char *lincheck_kind_name(int kind);

#endif /* CHAOS_CHECK_LINCHECK_H */
