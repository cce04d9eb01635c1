/* A chaos run directory loaded into memory: the plan, the histories, the
 * apply logs, the register logs, the nemesis log and the exits. */
#ifndef CHAOS_CHECK_RUN_H
#define CHAOS_CHECK_RUN_H

#include <stddef.h>

#include "applylog.h"
#include "history.h"
#include "nemlog.h"
#include "reglog.h"
#include "unflog.h"
#include "util.h"

/* Everything the checkers read. Lock and register key names share one
 * table, so a lock and the register key of the same name have one id. */
struct run {
        char *dir;
        struct util_strtab names;
        struct history history;
        struct applylog applylog;
        struct reglog reglog;
        struct unflog unflog; /* the supervise workload's unfenced register */
        struct nemlog nemlog;
};

/*
 * Load the run directory `dir` (docs/chaos.md, "Run directory"). Missing
 * parts are empty (their checkers then have nothing to check). Returns 0,
 * or -1 with a message in `errmsg` when `dir` is not a directory or a file
 * cannot be read; `r` is then already freed.
 */
int run_load(struct run *r, const char *dir, char *errmsg, size_t cap);

/* Free a loaded run (accepts a zeroed struct). */
void run_free(struct run *r);

/* The name of an id in `names`, "" for -1. */
const char *run_name(const struct run *r, int id);

/* Whether the plan says clock_fault=1. */
bool run_clock_fault(const struct run *r);

/* The prefix of the locks `scripts/chaos --state` fills the cluster with
 * before the workers start: held by long sessions for the whole run, by
 * design. */
#define RUN_STATE_PREFIX "chaos-state/"

/* Whether lock `id` is one of those, in a run whose plan has a state. */
bool run_state_lock(const struct run *r, int id);

#endif /* CHAOS_CHECK_RUN_H */
