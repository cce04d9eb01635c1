/* The nodes' apply logs of a chaos run (src/server/host/applylog.c writes
 * them), parsed per node and merged into one log by Raft index. */
#ifndef CHAOS_CHECK_APPLYLOG_H
#define CHAOS_CHECK_APPLYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* "event": the same numbers as enum lockfsm_event_type, then the apply
 * log's own ENTRY line (src/server/host/applylog.h). */
enum applylog_event_type {
        APPLYLOG_UNKNOWN = 0,
        APPLYLOG_RESULT = 1,
        APPLYLOG_OPEN,
        APPLYLOG_END,
        APPLYLOG_GRANT,
        APPLYLOG_RELEASE,
        APPLYLOG_QUEUE,
        APPLYLOG_UNQUEUE,
        APPLYLOG_BLOCK,    /* a lock-delay began (none by default) */
        APPLYLOG_UNBLOCK,  /* and ended */
        APPLYLOG_PROCLAIM, /* an election's leader's new value */
        APPLYLOG_ENTRY,    /* the end of an entry's events */
        APPLYLOG_EXTEND,   /* a grant's hold time restarted: token, hold_ms
                              (the server's number differs: names are
                              what the log carries) */
};

/* "cause": the same numbers as enum command_type; 0 for anything else. */
enum applylog_cause {
        APPLYLOG_C_OPEN = 1,
        APPLYLOG_C_CLOSE,
        APPLYLOG_C_EXPIRE,
        APPLYLOG_C_ACQUIRE,
        APPLYLOG_C_RELEASE,
        APPLYLOG_C_CANCEL,
        APPLYLOG_C_TIMEOUT,
        APPLYLOG_C_QUERY,
        APPLYLOG_C_CHECK,
        APPLYLOG_C_MEMBER,
        APPLYLOG_C_BATCH,       /* a grant an entry's start made (lockfsm.h) */
        APPLYLOG_C_REVOKE,      /* an operator's; the workloads send none */
        APPLYLOG_C_UNBLOCK,     /* the end of a lock-delay (none by default) */
        APPLYLOG_C_MULTI,       /* a multi-lock's acquire (the transfers
                                   workload): a GRANT or QUEUE per name */
        APPLYLOG_C_REVOKE_LOCK, /* an operator's, of one grant; none sent */
        APPLYLOG_C_CLOCK,       /* the leader's clock: no event but RESULT */
        APPLYLOG_C_PROCLAIM,    /* an election's leader's new value */
        APPLYLOG_C_ACL,         /* an ACL change: no lock event */
        APPLYLOG_C_DIGEST,      /* a state digest: no lock event */
        APPLYLOG_C_SET_VALUE,   /* a holder's new value (PROCLAIM event) */
        APPLYLOG_C_EXTEND,      /* a holder restarted its hold time */
        APPLYLOG_C_EXPIRE_HOLD, /* the leader ended a grant whose hold time
                                   ran out (the hold workload's) */
};

/* "mode" of GRANT, RELEASE, QUEUE and UNQUEUE (src/proto/command.h,
 * COMMAND_MODE_*); APPLYLOG_MODE_NONE when the line has none (an apply
 * log older than the field). */
#define APPLYLOG_MODE_NONE      (-1)
#define APPLYLOG_MODE_EXCLUSIVE 0
#define APPLYLOG_MODE_SHARED    1
#define APPLYLOG_MODE_SEMAPHORE 2 /* a semaphore's permits ("permits") */
/* An election's leadership (the election workload's campaigns): a
 * writer's grant, exclusive, as the checkers take it; its GRANT, QUEUE
 * and PROCLAIM carry the candidate's or leader's "value". */
#define APPLYLOG_MODE_LEADER 3

/* The owner tag of the rwlock workload's readers (tests/chaos/ops.h,
 * OPS_OWNER_READER): what tells a reader's grant in an apply log that has
 * no "mode". */
#define APPLYLOG_OWNER_READER 3

/* One JSON line. */
struct applylog_event {
        uint64_t index;
        uint64_t term;
        uint64_t session;
        uint64_t seq;
        uint64_t owner;
        uint64_t token;
        int type;         /* enum applylog_event_type */
        int cause;        /* enum applylog_cause */
        int status;       /* 0 or a negative BATON_E* code */
        int mode;         /* APPLYLOG_MODE_*, or another COMMAND_MODE_* */
        uint32_t permits; /* a semaphore's GRANT, RELEASE, QUEUE, UNQUEUE */
        uint32_t hold_ms; /* GRANT, EXTEND: the grant's hold time (0: none) */
        int lock;         /* the lock name's id in the run's names; -1 if "" */
        int value;        /* "value" (an election's): its id in the apply
                             log's values; -1 when the line has none */
        int64_t mono_ns;
        const char *text; /* the line without its mono_ns, for messages */
};

/* The events one node logged for one Raft entry. Every entry ends with a
 * RESULT (docs/fsm.md, "Events"), so an entry without one was cut short. */
struct applylog_entry {
        uint64_t index;
        size_t first, n; /* range of struct applylog_node.events */
        int64_t mono_ns; /* when the node applied it */
        bool complete;   /* ends with a RESULT */
};

/*
 * One node's apply log. A restarted node applies again the entries after its
 * snapshot and appends them to the same file: `entries` keeps one entry per
 * index (the first complete application); a later application that differs
 * is noted in `mismatch` (S9).
 */
struct applylog_node {
        char *name;   /* "n1" */
        bool present; /* has an apply.log */
        char *buf;    /* the file; event texts point into it */
        struct applylog_event *events;
        size_t n_events, cap_events;
        struct applylog_entry *entries; /* by index */
        size_t n_entries, cap_entries;
        size_t n_bad;      /* malformed lines skipped */
        size_t n_torn;     /* unterminated last line skipped */
        size_t n_replayed; /* entries applied again after a restart */
        char mismatch[400];
};

/* One index of the merged log: the entry as `node` logged it. */
struct applylog_ref {
        uint64_t index;
        int node;
        size_t entry;    /* index into that node's entries */
        int64_t mono_ns; /* the earliest apply of this index on any node */
};

/* A fact of the merged log, for lookups by lock, session or token. */
struct applylog_fact {
        int lock;
        int type;  /* GRANT, RELEASE, END, or RESULT (of a RELEASE command) */
        int cause; /* the command that made it */
        uint64_t session;
        uint64_t token; /* GRANT, RELEASE, RESULT: the grant's token */
        uint64_t index;
        int64_t mono_ns; /* the entry's earliest apply */
};

/*
 * Every node's log and their union by index. For each index the merged log
 * takes the entry from a node that logged it completely, preferring the
 * node with the most entries; S9 checks that the nodes agree, so the choice
 * only matters when S9 fails.
 */
struct applylog {
        struct applylog_node *nodes;
        size_t n_nodes;
        struct applylog_ref *merged; /* by index */
        size_t n_merged;
        struct applylog_fact *grants; /* by lock, session, index */
        size_t n_grants;
        struct applylog_fact *releases; /* by lock, token, index */
        size_t n_releases;
        struct applylog_fact *ends; /* by session, index */
        size_t n_ends;
        struct applylog_fact *busies; /* try-acquires refused BATON_EBUSY:
                                         by lock, session, index */
        size_t n_busies;
        struct util_strtab values; /* the elections' values, by id */
};

/*
 * Load every RUN/nodes/<name>/apply.log below `nodes_dir`, interning lock
 * names into `locks`. A missing directory gives no nodes. Returns 0, or -1
 * with a message in `errmsg`.
 */
int applylog_load(struct applylog *a, const char *nodes_dir,
                  struct util_strtab *locks, char *errmsg, size_t cap);

/* Free what applylog_load() allocated (accepts a zeroed struct). */
void applylog_free(struct applylog *a);

/* The merged entry at `index`, or NULL if no node logged it. */
const struct applylog_ref *applylog_find(const struct applylog *a,
                                         uint64_t index);

/* The events of a merged entry, and their count in `*n`. */
const struct applylog_event *applylog_events(const struct applylog *a,
                                             const struct applylog_ref *r,
                                             size_t *n);

/* The GRANTs of `lock` to `session`, by index; their count in `*n`. */
const struct applylog_fact *applylog_grants(const struct applylog *a, int lock,
                                            uint64_t session, size_t *n);

/* The RESULTs refusing an ACQUIRE of `lock` by `session` with BATON_EBUSY,
 * by index; their count in `*n`. */
const struct applylog_fact *applylog_busies(const struct applylog *a, int lock,
                                            uint64_t session, size_t *n);

/* The ends of the grant `token` of `lock`, by index: RELEASE events (any
 * cause) and the successful RESULTs of RELEASE commands (a reentrant hold's
 * release is only a RESULT); their count in `*n`. */
const struct applylog_fact *applylog_releases(const struct applylog *a,
                                              int lock, uint64_t token,
                                              size_t *n);

/* The first END of `session`, or NULL. */
const struct applylog_fact *applylog_end(const struct applylog *a,
                                         uint64_t session);

/* Whether `ev` (a GRANT) is a reader's: its mode says shared, or, in a
 * log without modes, its owner is APPLYLOG_OWNER_READER. */
bool applylog_shared(const struct applylog_event *ev);

/* The value of `ev` ("" when it has none). */
const char *applylog_value(const struct applylog *a,
                           const struct applylog_event *ev);

/* Whether `ev` (a GRANT) is of a semaphore's permits (mode 2). */
bool applylog_semaphore(const struct applylog_event *ev);

/* The permits a semaphore's GRANT `ev` took: its "permits", at least 1. */
uint32_t applylog_permits(const struct applylog_event *ev);

/* Whether two events are the same transition: every field but mono_ns is
 * equal (an election's value too), and the terms are, unless one is 0 (an
 * entry that is no batch names no term: src/fsm/entry.h). */
bool applylog_same_event(const struct applylog_event *x,
                         const struct applylog_event *y);

/* "GRANT", "CLOSE": names as the apply log spells them. */
const char *applylog_event_name(int type);
const char *applylog_cause_name(int cause);

#endif /* CHAOS_CHECK_APPLYLOG_H */
