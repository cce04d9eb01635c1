/* test_ops' scenarios of online backup and restore (docs/operations.md,
 * "Backup and restore"). */
#ifndef TESTS_INTEGRATION_SC_BACKUP_H
#define TESTS_INTEGRATION_SC_BACKUP_H

#include "scenario.h"

/* A cluster of its own: backup under TLS, inspect, batond --restore on
 * every node of a new cluster, and the tokens after it. */
void sc_backup_restore(struct ctx *x);
void sc_backup_metric(struct ctx *x);

/* A backup of a state larger than one BACKUP_CHUNK, taken in several
 * pulls (BACKUP frames after the first), whole when inspected. */
void sc_backup_chunks(struct ctx *x);

/* A cluster of its own: a majority lost with grants the survivor never
 * received, batond --recover on the survivor, members added back, and the
 * tokens after it above the lost ones. */
void sc_recover_majority(struct ctx *x);

#endif /* TESTS_INTEGRATION_SC_BACKUP_H */
