/* `batond --restore FILE`: a backup written as a new node's first
 * snapshot. */
#include "restore.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <raft.h>
#include <raft/uv.h>
#include <uv.h>

#include "../../include/baton.h"
#include "../proto/backupfile.h"
#include "node.h"
#include "raftfsm.h"

static int fail(char *errmsg, size_t size, int rv, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(errmsg, size, fmt, ap);
        va_end(ap);
        return rv;
}

uint64_t restore_start(const struct config *cfg, uint64_t backup_index)
{
        const uint64_t limit = UINT64_C(1) << 63;

        if (backup_index >= limit ||
            cfg->restore_margin > limit - backup_index) {
                return 0;
        }
        return backup_index + cfg->restore_margin;
}

/* The data dir exists (made if missing) and holds nothing. */
static int empty_dir(const char *path, char *errmsg, size_t size)
{
        struct dirent *e;
        DIR *d;
        int rv = 0;

        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                return fail(errmsg, size, BATON_EIO, "data dir %s: %s", path,
                            strerror(errno));
        }
        d = opendir(path);
        if (d == NULL) {
                return fail(errmsg, size, BATON_EIO, "data dir %s: %s", path,
                            strerror(errno));
        }
        while (rv == 0 && (e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") != 0 &&
                    strcmp(e->d_name, "..") != 0) {
                        rv = fail(errmsg, size, BATON_EINVAL,
                                  "data dir %s is not empty (%s): a restore "
                                  "seeds a new node; move the old data away",
                                  path, e->d_name);
                }
        }
        closedir(d);
        return rv;
}

static bool max_holder(void *data, const struct lockfsm_holder *h)
{
        uint64_t *max = data;

        *max = h->token > *max ? h->token : *max;
        return true;
}

static bool max_lock(void *data, const char *name, size_t name_len,
                     const struct lockfsm_result *holder)
{
        struct {
                const struct lockfsm *f;
                uint64_t max;
        } *m = data;

        (void)holder;
        lockfsm_foreach_holder(m->f, name, name_len, max_holder, &m->max);
        return true;
}

/* Decode the backup's snapshot as a node would, then encode the state
 * again without the old cluster's directory (the new one's members are in
 * its config) into `image`. */
static int decode(const struct config *cfg, const uint8_t *snap, size_t len,
                  struct restore_report *out, void **image, size_t *image_len,
                  char *errmsg, size_t size)
{
        struct lockfsm_limits limits;
        struct lockfsm_stats st;
        struct raftfsm rf;
        struct raft_buffer buf;
        struct {
                const struct lockfsm *f;
                uint64_t max;
        } m = {NULL, 0};
        int rv;

        node_fsm_limits(cfg, &limits);
        if (raftfsm_init(&rf, &limits) != 0) {
                return fail(errmsg, size, BATON_ENOMEM, "out of memory");
        }
        raftfsm_set_compression(&rf, cfg->snapshot_compression);
        buf.len = len;
        buf.base = raft_malloc(len > 0 ? len : 1);
        rv = buf.base == NULL ? RAFT_NOMEM : 0;
        if (rv == 0) {
                memcpy(buf.base, snap, len);
                rv = rf.fsm.restore(&rf.fsm, &buf);
        }
        if (rv != 0) {
                fail(errmsg, size, 0, "the backup's state does not load: %s",
                     raftfsm_errmsg(&rf));
                raft_free(buf.base);
                raftfsm_close(&rf);
                return rv == RAFT_NOMEM ? BATON_ENOMEM : BATON_ECORRUPT;
        }
        m.f = raftfsm_lockfsm(&rf);
        lockfsm_foreach_lock(m.f, "", 0, max_lock, &m);
        lockfsm_stats(m.f, &st);
        out->max_token = m.max;
        out->sessions = st.sessions;
        out->locks = st.locks;
        out->grants = st.grants;
        out->waiters = st.waiters;
        directory_init(&rf.dir);
        rv = raftfsm_encode(&rf, image, image_len);
        raftfsm_close(&rf);
        return rv == 0
                   ? 0
                   : fail(errmsg, size, rv, "encoding: %s", baton_strerror(rv));
}

/* raft's own I/O on the data dir, long enough to write one snapshot. */
struct seed {
        uv_loop_t loop;
        struct raft_uv_transport transport;
        struct raft_io io;
        struct raft_io_snapshot_put put;
        int status; /* 1 while the snapshot is being written */
        bool closed;
};

static void on_put(struct raft_io_snapshot_put *req, int status)
{
        struct seed *s = req->data;

        s->status = status;
}

static void on_closed(struct raft_io *io)
{
        struct seed *s = io->data;

        s->closed = true;
}

/* Load the (empty) data dir through raft and put the snapshot in it, with
 * term 1 and the config's members as voters. */
static int put_snapshot(struct seed *s, const struct config *cfg,
                        uint64_t start, void *image, size_t image_len,
                        char *errmsg, size_t size)
{
        struct raft_snapshot *loaded = NULL, snap;
        struct raft_entry *entries = NULL;
        struct raft_buffer buf = {image, image_len};
        raft_index start_index;
        raft_term term;
        raft_id vote;
        size_t n = 0, i;
        int rv;

        rv = s->io.load(&s->io, &term, &vote, &loaded, &start_index, &entries,
                        &n);
        if (rv != 0 || loaded != NULL || n != 0 || term != 0) {
                return fail(errmsg, size, BATON_EINVAL,
                            "data dir %s: raft found a log there (%s)",
                            cfg->data_dir,
                            rv != 0 ? s->io.errmsg : "not empty");
        }
        memset(&snap, 0, sizeof snap);
        raft_configuration_init(&snap.configuration);
        for (i = 0; i < cfg->n_members && rv == 0; i++) {
                rv = raft_configuration_add(
                    &snap.configuration, cfg->members[i].id,
                    cfg->members[i].raft_address, RAFT_VOTER);
        }
        snap.index = start;
        snap.term = 1;
        snap.configuration_index = start;
        snap.bufs = &buf;
        snap.n_bufs = 1;
        s->put.data = s;
        s->status = 1;
        if (rv == 0) {
                rv = s->io.set_term(&s->io, 1);
        }
        if (rv == 0) {
                rv = s->io.snapshot_put(&s->io, 0, &s->put, &snap, on_put);
        }
        while (rv == 0 && s->status == 1) {
                uv_run(&s->loop, UV_RUN_ONCE);
        }
        raft_configuration_close(&snap.configuration);
        if (rv != 0 || s->status != 0) {
                return fail(errmsg, size, BATON_EIO,
                            "writing the snapshot into %s: %s", cfg->data_dir,
                            s->io.errmsg);
        }
        return 0;
}

static int seed_dir(const struct config *cfg, uint64_t start, void *image,
                    size_t image_len, char *errmsg, size_t size)
{
        const struct config_member *self = config_member(cfg, cfg->id);
        struct seed s;
        int rv;

        memset(&s, 0, sizeof s);
        uv_loop_init(&s.loop);
        s.transport.version = 1;
        rv = raft_uv_tcp_init(&s.transport, &s.loop);
        if (rv == 0) {
                rv = raft_uv_init(&s.io, &s.loop, cfg->data_dir, &s.transport);
                if (rv != 0) {
                        raft_uv_tcp_close(&s.transport);
                }
        }
        if (rv != 0) {
                uv_loop_close(&s.loop);
                return fail(errmsg, size, BATON_EIO, "raft io on %s: %s",
                            cfg->data_dir, raft_strerror(rv));
        }
        s.io.data = &s;
        rv = s.io.init(&s.io, cfg->id, self->raft_address);
        if (rv != 0) {
                rv = fail(errmsg, size, BATON_EIO, "raft io on %s: %s",
                          cfg->data_dir, s.io.errmsg);
        } else {
                rv = put_snapshot(&s, cfg, start, image, image_len, errmsg,
                                  size);
        }
        s.io.close(&s.io, on_closed);
        while (!s.closed) {
                uv_run(&s.loop, UV_RUN_ONCE);
        }
        raft_uv_close(&s.io);
        raft_uv_tcp_close(&s.transport);
        uv_run(&s.loop, UV_RUN_DEFAULT);
        uv_loop_close(&s.loop);
        return rv;
}

int restore_backup(const struct config *cfg, const char *path,
                   struct restore_report *out, char *errmsg, size_t size)
{
        struct backupfile_info info;
        const uint8_t *snap;
        uint8_t *file = NULL;
        void *image = NULL;
        size_t file_len = 0, image_len = 0;
        int rv;

        memset(out, 0, sizeof *out);
        rv = backupfile_read(path, &file, &file_len);
        if (rv != 0) {
                return fail(errmsg, size, rv, "%s: %s", path, strerror(errno));
        }
        rv = backupfile_check(file, file_len, &info, &snap);
        if (rv != 0) {
                free(file);
                return fail(errmsg, size, rv, "%s: %s", path,
                            baton_strerror(rv));
        }
        out->backup_index = info.index;
        out->start_index = restore_start(cfg, info.index);
        if (out->start_index == 0) {
                free(file);
                return fail(errmsg, size, BATON_EINVAL,
                            "restore-margin puts the new log beyond 2^63");
        }
        rv = empty_dir(cfg->data_dir, errmsg, size);
        if (rv == 0) {
                rv = decode(cfg, snap, (size_t)info.size, out, &image,
                            &image_len, errmsg, size);
        }
        free(file);
        if (rv == 0) {
                rv = seed_dir(cfg, out->start_index, image, image_len, errmsg,
                              size);
        }
        raft_free(image);
        return rv;
}
