/* A new cluster's first snapshot. */
#include "seed.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../include/baton.h"
#include "../disk/datadir.h"
#include "../raft/node.h"

int seed_fail(char *errmsg, size_t size, int rv, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(errmsg, size, fmt, ap);
        va_end(ap);
        return rv;
}

/* The data dir exists (made if missing) and holds nothing. */
int seed_empty_dir(const char *path, char *errmsg, size_t size)
{
        struct dirent *e;
        DIR *d;
        int rv = 0;

        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                return seed_fail(errmsg, size, BATON_EIO, "data dir %s: %s",
                                 path, strerror(errno));
        }
        d = opendir(path);
        if (d == NULL) {
                return seed_fail(errmsg, size, BATON_EIO, "data dir %s: %s",
                                 path, strerror(errno));
        }
        while (rv == 0 && (e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") != 0 &&
                    strcmp(e->d_name, "..") != 0 &&
                    strcmp(e->d_name, DATADIR_LOCK) != 0 &&
                    strcmp(e->d_name, DATADIR_IDENTITY) != 0) {
                        rv = seed_fail(
                            errmsg, size, BATON_EINVAL,
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

static void on_put(struct raft_io_snapshot_put *req, int status)
{
        struct seed_io *s = req->data;

        s->status = status;
}

static void on_closed(struct raft_io *io)
{
        struct seed_io *s = io->data;

        s->closed = true;
}

/* Load the (empty) data dir through raft and put the snapshot in it, with
 * term 1 and the config's members as voters. */
static int put_snapshot(struct seed_io *s, const struct config *cfg,
                        const struct config_member *members, unsigned n_members,
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
                return seed_fail(errmsg, size, BATON_EINVAL,
                                 "data dir %s: raft found a log there (%s)",
                                 cfg->data_dir,
                                 rv != 0 ? s->io.errmsg : "not empty");
        }
        memset(&snap, 0, sizeof snap);
        raft_configuration_init(&snap.configuration);
        for (i = 0; i < n_members && rv == 0; i++) {
                rv =
                    raft_configuration_add(&snap.configuration, members[i].id,
                                           members[i].raft_address, RAFT_VOTER);
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
                return seed_fail(errmsg, size, BATON_EIO,
                                 "writing the snapshot into %s: %s",
                                 cfg->data_dir, s->io.errmsg);
        }
        return 0;
}

int seed_open(struct seed_io *s, const struct config *cfg, const char *dir,
              char *errmsg, size_t size)
{
        const struct config_member *self = settings_member(cfg, cfg->id);
        int rv;

        memset(s, 0, sizeof *s);
        uv_loop_init(&s->loop);
        s->transport.version = 1;
        rv = raft_uv_tcp_init(&s->transport, &s->loop);
        if (rv == 0) {
                rv = raft_uv_init(&s->io, &s->loop, dir, &s->transport);
                if (rv != 0) {
                        raft_uv_tcp_close(&s->transport);
                }
        }
        if (rv != 0) {
                uv_loop_close(&s->loop);
                return seed_fail(errmsg, size, BATON_EIO, "raft io on %s: %s",
                                 dir, raft_strerror(rv));
        }
        s->io.data = s;
        rv = s->io.init(&s->io, cfg->id, self->raft_address);
        if (rv != 0) {
                seed_fail(errmsg, size, BATON_EIO, "raft io on %s: %s", dir,
                          s->io.errmsg);
                seed_close(s);
                return BATON_EIO;
        }
        return 0;
}

void seed_close(struct seed_io *s)
{
        s->io.close(&s->io, on_closed);
        while (!s->closed) {
                uv_run(&s->loop, UV_RUN_ONCE);
        }
        raft_uv_close(&s->io);
        raft_uv_tcp_close(&s->transport);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        uv_loop_close(&s->loop);
}

int seed_fsm(struct raftfsm *rf, const struct config *cfg)
{
        struct lockfsm_limits limits;

        config_fsm_limits(cfg, &limits);
        if (raftfsm_init(rf, &limits) != 0) {
                return BATON_ENOMEM;
        }
        raftfsm_set_compression(rf, cfg->snapshot_compression);
        return 0;
}

int seed_write(struct raftfsm *rf, const struct config *cfg, uint64_t start,
               const struct config_member *members, unsigned n_members,
               struct seed_report *out, char *errmsg, size_t size)
{
        struct lockfsm_stats st;
        struct {
                const struct lockfsm *f;
                uint64_t max;
        } m = {raftfsm_lockfsm(rf), 0};
        struct seed_io s;
        void *image = NULL;
        size_t image_len = 0;
        int rv;

        lockfsm_foreach_lock(m.f, "", 0, max_lock, &m);
        lockfsm_stats(m.f, &st);
        out->max_token = m.max;
        out->sessions = st.sessions;
        out->locks = st.locks;
        out->grants = st.grants;
        out->waiters = st.waiters;
        directory_init(&rf->dir);
        rv = raftfsm_encode(rf, &image, &image_len);
        if (rv != 0) {
                return seed_fail(errmsg, size, rv, "encoding: %s",
                                 baton_strerror(rv));
        }
        rv = seed_open(&s, cfg, cfg->data_dir, errmsg, size);
        if (rv == 0) {
                rv = put_snapshot(&s, cfg, members, n_members, start, image,
                                  image_len, errmsg, size);
                seed_close(&s);
        }
        raft_free(image);
        return rv;
}
