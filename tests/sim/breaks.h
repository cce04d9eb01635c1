/* The negative controls of test_sim's checks: what each --break
 * corrupts in a run's record, or in the run, for a check to report. */
#ifndef TESTS_SIM_BREAKS_H
#define TESTS_SIM_BREAKS_H

#include <stddef.h>

#include "sim.h"

enum brk {
        BREAK_NONE = 0,
        BREAK_DROP_GRANT,  /* drop a GRANT a client was told of, on every
                              node */
        BREAK_REAPPLY,     /* apply one entry a second time on one node */
        BREAK_BLIND,       /* the stores of all nodes but one record no
                              append: every commit lacks a majority */
        BREAK_SPLIT_MULTI, /* move one name's GRANT of a multi-lock
                              into the next entry */
        BREAK_SKIP_WATCH,  /* one node's watchers miss one event */
        BREAK_ANSWER,      /* a client is told another outcome */
        BREAK_INDEX,       /* the host checks the entry after the one
                              raft acknowledged a proposal at */
        BREAK_LEAK,        /* faults start later by the runs this
                              process did before: a run that depends on
                              more than its seed (the replay check's
                              control) */
        BREAK_ACL_NOOP,    /* a RULE_SET that changed the access list
                              recorded as changing nothing, on every
                              node (aclcheck.h) */
        N_BREAKS,
};

/* The names --break takes, by enum brk. */
extern const char *const breaks_names[N_BREAKS];

/* Corrupt the converged run's record as `brk` says (BREAK_NONE, BLIND,
 * INDEX and LEAK act on the run itself, not here). 0, or -1 with the reason in
 * `reason` when the run has nothing to corrupt that way. */
int breaks_apply(struct sim *s, enum brk brk, char *reason, size_t cap);

#endif /* TESTS_SIM_BREAKS_H */
