/* `batond --restore FILE`: a backup written as a new node's first
 * snapshot. */
#include "restore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../include/baton/cluster.h"
#include "../../../include/baton/errors.h"
#include "../../proto/backupfile.h"

uint64_t restore_start(const struct config *cfg, uint64_t backup_index)
{
        const uint64_t limit = UINT64_C(1) << 63;

        if (backup_index >= limit ||
            cfg->restore_margin > limit - backup_index) {
                return 0;
        }
        return backup_index + cfg->restore_margin;
}

/* Load the backup's snapshot as a node would into `rf`. */
static int load(struct raftfsm *rf, const uint8_t *snap, size_t len,
                char *errmsg, size_t size)
{
        struct raft_buffer buf;
        int rv;

        buf.len = len;
        buf.base = raft_malloc(len > 0 ? len : 1);
        if (buf.base == NULL) {
                return seed_fail(errmsg, size, BATON_ENOMEM, "out of memory");
        }
        memcpy(buf.base, snap, len);
        rv = rf->fsm.restore(&rf->fsm, &buf);
        if (rv != 0) {
                raft_free(buf.base);
                return seed_fail(
                    errmsg, size,
                    rv == RAFT_NOMEM ? BATON_ENOMEM : BATON_ECORRUPT,
                    "the backup's state does not load: %s", raftfsm_errmsg(rf));
        }
        return 0;
}

int restore_check_state(const struct baton_backup_info *info,
                        struct raftfsm *rf, char *errmsg, size_t size)
{
        uint64_t last = lockfsm_last_index(raftfsm_lockfsm(rf));

        /* The digest says the file is as written, not that its header and
         * state agree: a state past the header's index would have the new
         * log start (restore_start()) below entries and tokens it holds,
         * and the first entry applied there break the state machine's
         * rule that indexes only grow. */
        if (last > info->index) {
                return seed_fail(errmsg, size, BATON_ECORRUPT,
                                 "the backup's state is at index %" PRIu64
                                 ", past the index %" PRIu64 " its header says",
                                 last, info->index);
        }
        return 0;
}

/* Nothing is written before every check passed: the directory is looked
 * at here, and made and held only once the backup has loaded. */
static int empty_or_missing(const struct config *cfg, char *errmsg, size_t size)
{
        struct stat st;

        if (stat(cfg->data_dir, &st) != 0 && errno == ENOENT) {
                return 0;
        }
        return seed_empty_dir(cfg->data_dir, errmsg, size);
}

/* Make and hold the directory, look again under the lock, and write the
 * new cluster's identity before raft writes there: a cluster id of the
 * backup and the member lines. */
static int claim(const struct config *cfg, struct datadir *dir,
                 const struct baton_backup_info *info, char *errmsg,
                 size_t size)
{
        char salt[96];
        int rv;

        if (datadir_claim(dir, cfg->id, 0, false) != 0) {
                return seed_fail(errmsg, size, BATON_EIO, "%s", dir->errmsg);
        }
        rv = seed_empty_dir(cfg->data_dir, errmsg, size);
        if (rv != 0) {
                return rv;
        }

        snprintf(salt, sizeof salt, "restore %" PRIu64 " %" PRIu64 " %" PRIu64,
                 info->index, info->term, info->made_ms);
        memset(&dir->id, 0, sizeof dir->id);
        dir->id.cluster = dirid_cluster_of(cfg->members, cfg->n_members,
                                           cfg->cluster_name, salt);
        dir->id.node = cfg->id;
        dir->id.incarnation = datadir_random();
        if (datadir_save(dir) != 0) {
                return seed_fail(errmsg, size, BATON_EIO, "%s", dir->errmsg);
        }
        return 0;
}

int restore_backup(const struct config *cfg, struct datadir *dir,
                   const char *path, struct seed_report *out, char *errmsg,
                   size_t size)
{
        struct baton_backup_info info;
        struct raftfsm rf;
        const uint8_t *snap;
        uint8_t *file = NULL;
        size_t file_len = 0;
        int rv;

        memset(out, 0, sizeof *out);
        rv = backupfile_read(path, &file, &file_len);
        if (rv != 0) {
                return seed_fail(errmsg, size, rv, "%s: %s", path,
                                 strerror(errno));
        }
        rv = backupfile_check(file, file_len, &info, &snap);
        if (rv != 0) {
                free(file);
                return seed_fail(errmsg, size, rv, "%s: %s", path,
                                 baton_strerror(rv));
        }
        out->from_index = info.index;
        out->start_index = restore_start(cfg, info.index);
        rv = out->start_index == 0
                 ? seed_fail(errmsg, size, BATON_EINVAL,
                             "restore-margin puts the new log beyond 2^63")
                 : empty_or_missing(cfg, errmsg, size);
        if (rv == 0 && seed_fsm(&rf, cfg) != 0) {
                rv = seed_fail(errmsg, size, BATON_ENOMEM, "out of memory");
        } else if (rv == 0) {
                rv = load(&rf, snap, (size_t)info.size, errmsg, size);
                if (rv == 0) {
                        rv = restore_check_state(&info, &rf, errmsg, size);
                }
                if (rv == 0) {
                        rv = claim(cfg, dir, &info, errmsg, size);
                }
                if (rv == 0) {
                        rv =
                            seed_write(&rf, cfg, out->start_index, cfg->members,
                                       cfg->n_members, out, errmsg, size);
                }
                raftfsm_close(&rf);
        }
        free(file);
        return rv;
}
