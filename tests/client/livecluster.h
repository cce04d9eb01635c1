/* The live 3-node cluster a cmocka group of libbaton tests shares: the
 * group's setup and teardown, and the case fixture that brings every node
 * back after a case that killed or paused some. */
#ifndef TESTS_CLIENT_LIVECLUSTER_H
#define TESTS_CLIENT_LIVECLUSTER_H

#include "../integration/harness.h"

#define LIVECLUSTER_HEALTHY_MS 20000 /* a cluster (re)converging */

/*
 * Make `h` the cluster of the fixtures below, started from `argv0`'s
 * neighbourhood with a watchdog of `watchdog_s` seconds: called once in
 * main(), before cmocka runs the group (cmocka gives a group's fixtures
 * no argument of the program's own). `h` and `argv0` are borrowed for
 * the rest of the program.
 */
void livecluster_use(struct harness *h, const char *argv0, unsigned watchdog_s);

/* The client endpoints of the cluster livecluster_use() was given. */
const char *livecluster_endpoints(void);

/* Group setup: harness_open_healthy() of 3 nodes; -1 (after saying why)
 * fails the group. */
int livecluster_up(void **state);

/* Group teardown: the cluster closed. */
int livecluster_down(void **state);

/* Case setup or teardown, even after a case that failed: every node
 * running again, unpaused, and following one leader; -1 (after saying
 * why, the cluster's directory then kept) when it does not recover. */
int livecluster_restore(void **state);

#endif /* TESTS_CLIENT_LIVECLUSTER_H */
