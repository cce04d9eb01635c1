/* `batond --recover`: after a majority of the cluster is lost for good,
 * this node's data as a new one-node cluster, which members are then added
 * back to (docs/operations.md, "Recovering from the loss of a majority").
 * Offline: run it on a stopped node. */
#ifndef SERVER_RECOVER_H
#define SERVER_RECOVER_H

#include <stddef.h>

#include "../config/config.h"
#include "seed.h"

/* Where the data dir is moved before it is seeded again. */
#define RECOVER_SUFFIX ".before-recover"

/*
 * Load cfg->data_dir as this node would start from it (its last snapshot,
 * then every entry of its log, committed or not, as raft_recover() would
 * take them), move it to cfg->data_dir RECOVER_SUFFIX, and write the state
 * into a new cfg->data_dir as the snapshot at restore_start() of its last
 * index, with this node its only voter. The jump keeps the fencing rule:
 * the lost majority may have committed entries this node never received,
 * whose tokens are above its last index; every token after the recovery
 * is above those too (restore-margin). raft_recover() itself continues the
 * log at the node's own last index, which could hand out a token again.
 * 0 with `out` filled, or a BATON_E* code with `errmsg` (the data dir is
 * left as it was unless the new one failed while being written; the old
 * one is then under RECOVER_SUFFIX). The caller holds cfg->data_dir's lock
 * (datadir.h); the new directory is held while it is written, and records
 * a new cluster, drawn at random: the lost majority's directories are
 * another cluster's from then on.
 */
int recover_node(const struct config *cfg, struct seed_report *out,
                 char *errmsg, size_t size);

#endif /* SERVER_RECOVER_H */
