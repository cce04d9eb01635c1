/* test_ops' scenario of online backup and restore (docs/operations.md,
 * "Backup and restore"). */
#ifndef TESTS_INTEGRATION_SC_BACKUP_H
#define TESTS_INTEGRATION_SC_BACKUP_H

#include "scenario.h"

/* A cluster of its own: backup under TLS, inspect, batond --restore on
 * every node of a new cluster, and the tokens after it. */
void sc_backup_restore(struct ctx *x);

/* A cluster of its own: a majority lost with grants the survivor never
 * received, batond --recover on the survivor, members added back, and the
 * tokens after it above the lost ones. */
void sc_recover_majority(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_BACKUP_H */
