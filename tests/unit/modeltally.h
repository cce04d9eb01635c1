/* How often each outcome came up in test_model's runs, so that a change to
 * the generator that stops reaching some rule shows (BATON_MODEL_STATS=1
 * prints it). */
#ifndef TESTS_UNIT_MODELTALLY_H
#define TESTS_UNIT_MODELTALLY_H

#include <stdbool.h>

#include "model.h"

/* Room for every error code's count, by -code. */
#define N_STATUS 64

struct tally {
        unsigned long steps;
        unsigned long undecodable;
        unsigned long status[N_STATUS]; /* by -status */
        unsigned long kind[16];         /* successes by kind */
        unsigned long duplicates;
        unsigned long handovers;    /* GRANT events to a waiter */
        unsigned long multi_grants; /* entries with two or more GRANTs */
        unsigned long ties;         /* ends that ordered grants by age */
        unsigned long batches;      /* entries of several commands */
        unsigned long blocked;      /* entries after which a lock was in
                                       its lock-delay */
        unsigned long deferred;     /* entries that left a lock between
                                       holders for the next one */
        unsigned long begun;        /* entries that began with a grant */
        unsigned long shared;       /* entries after which a lock had two
                                       or more holders */
        unsigned long multi_now;    /* multi-locks granted by their MULTI */
        unsigned long multi_later;  /* multi-locks granted after waiting */
        unsigned long successions;  /* an election's leader after waiting */
        unsigned long proclaims;    /* PROCLAIM events */
        /* Commands refused BATON_EQUOTA, by the quota's kind (sessions,
         * locks, waiters), batches' too; their retries answered from the
         * exactly-once memory; the QUOTA_SETs and QUOTA_REMOVEs. */
        unsigned long quota[ACL_QUOTA_COUNTED];
        unsigned long quota_retries;
        unsigned long quota_changes;
};

/* Counts one entry: the model's answer `want` and events `mev`, the
 * model's state after it `m`, whether the entry did not decode, was a
 * batch, and how many events its start had (`began`). */
void modeltally_count(struct tally *t, const struct model *m,
                      const struct evlog *mev,
                      const struct lockfsm_result *want, bool undecodable,
                      bool batch, unsigned began);

/* Prints the counts as TAP comments. */
void modeltally_print(const struct tally *t);

#endif /* TESTS_UNIT_MODELTALLY_H */
