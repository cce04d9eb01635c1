/* `batond --restore FILE`: seed a new cluster's node from an online backup
 * (docs/operations.md, "Backup and restore"). Offline: nothing is served. */
#ifndef SERVER_RESTORE_H
#define SERVER_RESTORE_H

#include <stddef.h>
#include <stdint.h>

#include "../../../include/baton/cluster.h"
#include "../config/config.h"
#include "../disk/datadir.h"
#include "seed.h"

/*
 * The log index a restored cluster starts above: the backup's index plus
 * cfg->restore_margin, so that every token handed out after the restore is
 * above every token the old cluster handed out before the backup and in
 * its next restore_margin entries after it. The same on every node
 * restored from the same file. 0 when it would not fit below 2^63.
 */
uint64_t restore_start(const struct config *cfg, uint64_t backup_index);

/* A backup's state, loaded into `rf`, against its header `info`: 0, or
 * BATON_ECORRUPT with `errmsg` when the state is past the header's index
 * (the new log would start below it). Part of restore_backup(). */
int restore_check_state(const struct baton_backup_info *info,
                        struct raftfsm *rf, char *errmsg, size_t size);

/*
 * Check the backup at `path` whole (digest, then every record of the
 * state, as a node restoring it would), and write it as the snapshot at
 * restore_start() into cfg->data_dir, which must hold no data (datadir.h's
 * own files aside), with the config's members as the new cluster's voters.
 * `dir` is that directory, checked by the caller (datadir_check()): it is
 * claimed (made, held) only once the backup has loaded, and its identity
 * written before raft writes, for a new cluster whose id every node
 * restoring the same file with the same member lines and cluster-name
 * computes alike, and which differs from the old cluster's. Sessions come back
 * whole; the new leader gives each a full TTL from when it takes over. 0 with
 * `out` filled, or a BATON_E* code with `errmsg` set: a data dir that was not
 * empty is left alone; one that failed while being written may hold part
 * of raft's files (empty it before trying again).
 */
int restore_backup(const struct config *cfg, struct datadir *dir,
                   const char *path, struct seed_report *out, char *errmsg,
                   size_t size);

#endif /* SERVER_RESTORE_H */
