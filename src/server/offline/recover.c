/* `batond --recover`: a stopped node's data as a new one-node cluster. */
#include "recover.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../include/baton.h"
#include "../disk/datadir.h"
#include "restore.h"

/* Free what raft_io's load gave: entries share batches, each freed once. */
static void free_loaded(struct raft_snapshot *snap, struct raft_entry *e,
                        size_t n)
{
        void *batch = NULL;
        size_t i;

        for (i = 0; i < n; i++) {
                if (e[i].batch != batch) {
                        batch = e[i].batch;
                        raft_free(batch);
                }
        }
        raft_free(e);
        if (snap != NULL) {
                raft_configuration_close(&snap->configuration);
                for (i = 0; i < snap->n_bufs; i++) {
                        raft_free(snap->bufs[i].base);
                }
                raft_free(snap->bufs);
                raft_free(snap);
        }
}

/* The snapshot (taken over by the state machine on success), then every
 * command entry after it. The last index into *last. */
static int replay(struct raftfsm *rf, struct raft_snapshot *snap,
                  raft_index start, struct raft_entry *e, size_t n,
                  uint64_t *last, char *errmsg, size_t size)
{
        uint64_t from = 0;
        size_t i;
        int rv;

        if (snap != NULL) {
                if (snap->n_bufs != 1) {
                        return seed_fail(errmsg, size, BATON_ECORRUPT,
                                         "snapshot in %u buffers",
                                         snap->n_bufs);
                }
                rv = rf->fsm.restore(&rf->fsm, &snap->bufs[0]);
                if (rv != 0) {
                        return seed_fail(errmsg, size, BATON_ECORRUPT,
                                         "its last snapshot does not load: %s",
                                         raftfsm_errmsg(rf));
                }
                snap->bufs[0].base = NULL; /* the state machine has it */
                from = snap->index;
        }
        *last = from;
        for (i = 0; i < n; i++) {
                uint64_t index = start + i;
                if (index <= from) {
                        continue; /* kept behind the snapshot */
                }
                *last = index;
                if (e[i].type == RAFT_COMMAND &&
                    raftfsm_replay(rf, index, e[i].buf.base, e[i].buf.len) !=
                        0) {
                        return seed_fail(errmsg, size, BATON_ENOMEM,
                                         "entry %llu: out of memory",
                                         (unsigned long long)index);
                }
        }
        return 0;
}

/* This node's state as it would start from its data dir. */
static int load(const struct config *cfg, struct raftfsm *rf, uint64_t *last,
                char *errmsg, size_t size)
{
        struct raft_snapshot *snap = NULL;
        struct raft_entry *e = NULL;
        struct seed_io s;
        raft_index start = 0;
        raft_term term;
        raft_id vote;
        size_t n = 0;
        int rv;

        rv = seed_open(&s, cfg, cfg->data_dir, errmsg, size);
        if (rv != 0) {
                return rv;
        }
        rv = s.io.load(&s.io, &term, &vote, &snap, &start, &e, &n);
        if (rv != 0) {
                rv = seed_fail(errmsg, size, BATON_ECORRUPT,
                               "raft cannot load %s: %s", cfg->data_dir,
                               s.io.errmsg);
        } else if (snap == NULL && n == 0) {
                rv = seed_fail(errmsg, size, BATON_EINVAL,
                               "%s holds no log: nothing to recover",
                               cfg->data_dir);
        } else {
                rv = replay(rf, snap, start, e, n, last, errmsg, size);
        }
        free_loaded(snap, e, n);
        seed_close(&s);
        return rv;
}

/* The new directory, held as the old one is (the caller holds that), with
 * the identity of a new cluster: its id is drawn at random, since this node
 * is its only member and the members added back learn it (join = true). */
static int claim_new(const struct config *cfg, struct datadir *dir,
                     char *errmsg, size_t size)
{
        if (datadir_check(dir, cfg->data_dir, cfg->id) != 0 ||
            datadir_claim(dir, cfg->id, datadir_random(), true) != 0) {
                return seed_fail(errmsg, size, BATON_EIO, "%s", dir->errmsg);
        }
        return 0;
}

int recover_node(const struct config *cfg, struct seed_report *out,
                 char *errmsg, size_t size)
{
        const struct config_member *self = settings_member(cfg, cfg->id);
        char old[PATH_MAX + sizeof RECOVER_SUFFIX];
        struct datadir dir = {.lock_fd = -1};
        struct raftfsm rf;
        struct stat st;
        int rv;

        memset(out, 0, sizeof *out);
        snprintf(old, sizeof old, "%s%s", cfg->data_dir, RECOVER_SUFFIX);
        if (stat(old, &st) == 0) {
                return seed_fail(errmsg, size, BATON_EINVAL,
                                 "%s exists: a recovery was run before; move "
                                 "it away first",
                                 old);
        }
        if (seed_fsm(&rf, cfg) != 0) {
                return seed_fail(errmsg, size, BATON_ENOMEM, "out of memory");
        }
        rv = load(cfg, &rf, &out->from_index, errmsg, size);
        if (rv == 0) {
                out->start_index = restore_start(cfg, out->from_index);
                if (out->start_index == 0) {
                        rv = seed_fail(errmsg, size, BATON_EINVAL,
                                       "restore-margin puts the new log "
                                       "beyond 2^63");
                } else if (rename(cfg->data_dir, old) != 0) {
                        rv = seed_fail(errmsg, size, BATON_EIO,
                                       "moving %s to %s: %s", cfg->data_dir,
                                       old, strerror(errno));
                }
        }
        if (rv == 0) {
                rv = seed_empty_dir(cfg->data_dir, errmsg, size);
        }
        if (rv == 0) {
                rv = claim_new(cfg, &dir, errmsg, size);
        }
        if (rv == 0) {
                rv = seed_write(&rf, cfg, out->start_index, self, 1, out,
                                errmsg, size);
        }
        datadir_close(&dir);
        raftfsm_close(&rf);
        return rv;
}
