/* baton_backup_save(): an online backup pulled from the leader over a
 * connection of its own, written to a file atomically (docs/operations.md,
 * "Backup and restore"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../proto/backupfile.h"
#include "client.h"
#include "clock.h"
#include "drive.h"
#include "errmsg.h"
#include "link.h"
#include "linkio.h"
#include "../proto/reply.h"
#include "../proto/backup.h"

/* How long to wait between asks while the leader makes a snapshot image
 * or serves other backups (BATON_ENOTREADY). */
#define BACKUP_RETRY_MS 200

/* One backup being pulled: the link, the file being written, and where
 * the transfer is. */
struct puller {
        struct link link;
        struct linkio io;
        int fd;          /* the temporary file */
        const char *tmp; /* its name, for errors */
        struct backupfile_digest *digest;
        struct baton_backup_info info;
        uint64_t id;      /* the pin on the leader; 0 before the first chunk */
        uint64_t offset;  /* bytes written */
        int64_t retry_at; /* ask for a new backup then; 0: now */
        bool asked;       /* a BACKUP is out on this connection */
        int rv;           /* 1 while running */
};

static void ask(struct puller *p)
{
        uint8_t frame[PROTO_HEADER_SIZE + 16];
        struct proto_backup b = {p->id, p->offset};
        size_t n = proto_write_backup(frame, sizeof frame, 0, &b);

        p->asked = link_put(&p->link, frame, n) != 0;
        if (!p->asked) {
                p->rv = BATON_ENOMEM;
        }
}

/* Start again from nothing: a new pin, an empty file. */
static void restart(struct puller *p, int64_t at)
{
        p->id = 0;
        p->offset = 0;
        p->retry_at = at;
        p->asked = false;
        backupfile_digest_free(p->digest);
        p->digest = NULL;
        if (ftruncate(p->fd, 0) != 0 ||
            lseek(p->fd, BACKUPFILE_HEADER, SEEK_SET) < 0) {
                p->rv = errmsg_set(BATON_EIO, "cannot truncate %s: %s", p->tmp,
                                   strerror(errno));
        }
}

static void on_connected(void *data, int64_t now)
{
        struct puller *p = data;

        /* A pin belongs to the connection that made it. */
        restart(p, 0);
        (void)now;
        ask(p);
}

/* A file operation on `path` failed with errno: BATON_ENOSPC or
 * BATON_EIO, saying which and why. */
static int file_error(const char *what, const char *path)
{
        int err = errno;

        return errmsg_set(err == ENOSPC ? BATON_ENOSPC : BATON_EIO,
                          "cannot %s %s: %s", what, path, strerror(err));
}

static int write_all(int fd, const char *path, const uint8_t *b, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, b, n);
                if (w < 0 && errno == EINTR) {
                        continue;
                }
                if (w < 0) {
                        return file_error("write", path);
                }
                b += w;
                n -= (size_t)w;
        }
        return 0;
}

/* A chunk: it must continue the backup at the offset asked for. */
static void take_chunk(struct puller *p, const struct proto_backup_chunk *k)
{
        int rv;

        if ((p->id != 0 && k->backup != p->id) || k->offset != p->offset) {
                p->rv = BATON_EMALFORMED;
                return;
        }
        if (p->id == 0) {
                p->id = k->backup;
                p->info = (struct baton_backup_info){
                    k->index,    k->term,  k->made_ms, k->size,
                    k->sessions, k->locks, k->grants,  k->waiters};
                p->digest = backupfile_digest_new(&p->info);
                if (p->digest == NULL) {
                        p->rv = BATON_ENOMEM;
                        return;
                }
        }
        rv = write_all(p->fd, p->tmp, k->data, k->len);
        if (rv == 0) {
                rv = backupfile_digest_add(p->digest, k->data, k->len);
        }
        if (rv != 0) {
                p->rv = rv;
                return;
        }
        p->offset += k->len;
        if (p->offset == p->info.size) {
                p->rv = 0;
        } else if (k->len == 0) {
                p->rv = BATON_EMALFORMED; /* no progress */
        } else {
                ask(p);
        }
}

static void on_frame(void *data, const struct proto_header *h,
                     const uint8_t *body, int64_t now)
{
        struct puller *p = data;
        struct proto_backup_chunk k;
        struct proto_result res;

        p->asked = false;
        if (h->type == PROTO_RESULT &&
            proto_read_result(body, h->length, 0, &res) == 0 &&
            res.status == BATON_ENOTREADY && p->id == 0) {
                p->retry_at = now + BACKUP_RETRY_MS;
        } else if (h->type == PROTO_RESULT &&
                   proto_read_result(body, h->length, 0, &res) == 0) {
                p->rv = res.status < 0 ? res.status : BATON_EMALFORMED;
        } else if (h->type == PROTO_ERROR) {
                struct proto_string msg;
                int status = BATON_EMALFORMED;
                proto_read_error(body, h->length, &status, &msg);
                p->rv = status < 0 ? status : BATON_EMALFORMED;
        } else if (h->type != PROTO_BACKUP_CHUNK ||
                   proto_read_backup_chunk(body, h->length, &k) != 0) {
                p->rv = BATON_EMALFORMED;
        } else {
                take_chunk(p, &k);
        }
}

static void on_closed(void *data, uint64_t gen, int64_t now)
{
        struct puller *p = data;

        (void)gen;
        (void)now;
        p->asked = false; /* the next connection starts again */
}

/* drive_link()'s turn: after BATON_ENOTREADY, ask again once it is time
 * (on a connection that is up; a new one asks as it comes up). */
static int64_t retry(void *data, int64_t now)
{
        struct puller *p = data;

        if (p->retry_at == 0) {
                return CLOCK_NEVER;
        }
        if (now < p->retry_at) {
                return p->retry_at;
        }
        if (!p->asked && link_up(&p->link)) {
                p->retry_at = 0;
                ask(p);
        }
        return CLOCK_NEVER;
}

/* Make a rename in `path`'s directory durable. */
static int sync_dir(const char *path)
{
        char dir[4096];
        char *slash;
        int fd, rv;

        snprintf(dir, sizeof dir, "%s", path);
        slash = strrchr(dir, '/');
        if (slash == NULL) {
                snprintf(dir, sizeof dir, ".");
        } else if (slash == dir) {
                dir[1] = '\0';
        } else {
                *slash = '\0';
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                return file_error("open the directory", dir);
        }
        rv = fsync(fd) == 0 ? 0 : file_error("sync the directory", dir);
        close(fd);
        return rv;
}

/* Put the header in front, make the file durable and give it its name. */
static int finish_file(struct puller *p, const char *tmp, const char *path)
{
        uint8_t header[BACKUPFILE_HEADER];
        int rv = backupfile_digest_finish(p->digest, &p->info, header);

        p->digest = NULL;
        if (rv != 0) {
                return rv;
        }
        if (pwrite(p->fd, header, sizeof header, 0) != (ssize_t)sizeof header) {
                return file_error("write", tmp);
        }
        if (fsync(p->fd) != 0) {
                return file_error("sync", tmp);
        }
        if (rename(tmp, path) != 0) {
                int err = errno;
                return errmsg_set(BATON_EIO, "cannot rename %s to %s: %s", tmp,
                                  path, strerror(err));
        }
        return sync_dir(path);
}

int baton_backup_save(baton_client *c, const char *path, uint32_t timeout_ms,
                      struct baton_backup_info *out)
{
        static const struct link_cb cb0 = {NULL, on_connected, on_frame,
                                           on_closed, NULL};
        struct link_cb cb = cb0;
        struct puller p;
        char tmp[4096];
        int rv;

        if (c == NULL || path == NULL ||
            snprintf(tmp, sizeof tmp, "%s.part", path) >= (int)sizeof tmp) {
                return BATON_EINVAL;
        }
        memset(&p, 0, sizeof p);
        p.rv = 1;
        p.tmp = tmp;
        p.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (p.fd < 0) {
                return file_error("create", tmp);
        }
        rv = link_init(&p.link, (const char(*)[LINK_ADDR_MAX])c->endpoints,
                       c->n_endpoints, clock_env());
        if (rv == 0) {
                rv = linkio_init(&p.io, &p.link, c->tls);
                if (rv != 0) {
                        link_close(&p.link);
                }
        }
        if (rv == 0) {
                cb.data = &p;
                link_listen(&p.link, &cb);
                restart(&p, 0);
                drive_link(&p.io, &p.rv,
                           clock_after(clock_now_ms(),
                                       timeout_ms != 0 ? timeout_ms : 600000),
                           retry, &p, NULL);
                linkio_close(&p.io);
                link_close(&p.link);
                rv = p.rv;
        }
        if (rv == 0) {
                rv = finish_file(&p, tmp, path);
        }
        backupfile_digest_free(p.digest);
        close(p.fd);
        if (rv != 0) {
                unlink(tmp);
        } else if (out != NULL) {
                *out = p.info;
        }
        return rv;
}

int baton_backup_inspect(const char *path, struct baton_backup_info *out)
{
        const uint8_t *snapshot;
        uint8_t *buf = NULL;
        size_t len = 0;
        int rv;

        if (path == NULL || out == NULL) {
                return BATON_EINVAL;
        }
        rv = backupfile_read(path, &buf, &len);
        if (rv == BATON_EIO) {
                return file_error("read", path);
        }
        if (rv == 0) {
                rv = backupfile_check(buf, len, out, &snapshot);
        }
        free(buf);
        if (rv == BATON_ECORRUPT) {
                return errmsg_set(rv,
                                  "%s: not a whole backup (truncated, or "
                                  "changed since it was written: its digest "
                                  "does not match)",
                                  path);
        }
        if (rv == BATON_EVERSION) {
                return errmsg_set(rv,
                                  "%s: a backup format this build does not "
                                  "read",
                                  path);
        }
        return rv;
}
