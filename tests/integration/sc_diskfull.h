/* A full disk, against real batond processes: followers whose data
 * directories are on small file systems that fill up, what their logs,
 * GET /ready and metrics say, and what the leader says once a majority
 * cannot store its entries; then space freed, and nothing lost. */
#ifndef TESTS_INTEGRATION_SC_DISKFULL_H
#define TESTS_INTEGRATION_SC_DISKFULL_H

#include <stdbool.h>

#include "scenario.h"

/* Starts a 3-node cluster of its own (x->h must be free) and closes it at
 * the end. Mounting needs root and a mount namespace of the test's own:
 * without them it sets `*skipped` with the reason in x->why. */
void sc_disk_full(struct ctx *x, bool *skipped);

/* The same conditions, with both followers restarted onto full disks at
 * once: the cluster commits again once space is freed. */
void sc_disk_full_restart(struct ctx *x, bool *skipped);

#endif /* TESTS_INTEGRATION_SC_DISKFULL_H */
