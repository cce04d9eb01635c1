/* test_ops' scenario of online backup and restore (docs/operations.md,
 * "Backup and restore"). */
#ifndef TESTS_INTEGRATION_SC_BACKUP_H
#define TESTS_INTEGRATION_SC_BACKUP_H

#include "scenario.h"

/* A cluster of its own: backup under TLS, inspect, batond --restore on
 * every node of a new cluster, and the tokens after it. */
void sc_backup_restore(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_BACKUP_H */
