/* A new cluster's first snapshot, written into an empty data dir through
 * raft's own I/O: what `batond --restore` (restore.h) and `batond
 * --recover` (recover.h) end with. Offline: nothing is served. */
#ifndef SERVER_SEED_H
#define SERVER_SEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "../config/config.h"
#include "../raft/raftfsm.h"

/* What a seeded state holds, for the operator. */
struct seed_report {
        uint64_t from_index;  /* the last entry of the state taken */
        uint64_t start_index; /* the new log's first index, less one */
        uint64_t max_token;   /* the highest token its holders hold */
        uint64_t sessions, locks, grants, waiters;
};

/* raft's I/O on one data dir, outside any raft instance. */
struct seed_io {
        uv_loop_t loop;
        struct raft_uv_transport transport;
        struct raft_io io;
        struct raft_io_snapshot_put put;
        int status; /* 1 while a snapshot is being written */
        bool closed;
};

/* vsnprintf into `errmsg`; returns `rv`. */
int seed_fail(char *errmsg, size_t size, int rv, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Open raft's I/O on `dir` as node `cfg->id`. 0, or BATON_EIO with
 * `errmsg` (nothing to close). */
int seed_open(struct seed_io *s, const struct config *cfg, const char *dir,
              char *errmsg, size_t size);
void seed_close(struct seed_io *s);

/* A state machine with the config's limits, restoring inline. 0 or
 * BATON_ENOMEM. */
int seed_fsm(struct raftfsm *rf, const struct config *cfg);

/* The data dir exists (made if missing) and holds nothing but the lock
 * and identity files (datadir.h): 0, or BATON_EINVAL / BATON_EIO with
 * `errmsg`. */
int seed_empty_dir(const char *path, char *errmsg, size_t size);

/*
 * Write `rf`'s state, without its member directory (the new cluster's
 * members are in its config), as the snapshot at `start` (term 1) into the
 * empty cfg->data_dir, with `members` as the voters. Fills `out`'s counts
 * and max_token. 0 or a BATON_E* code with `errmsg`; the dir may then
 * hold part of raft's files.
 */
int seed_write(struct raftfsm *rf, const struct config *cfg, uint64_t start,
               const struct config_member *members, unsigned n_members,
               struct seed_report *out, char *errmsg, size_t size);

#endif /* SERVER_SEED_H */
