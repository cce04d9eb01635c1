/* forgetfs: a FUSE pass-through file system that forgets what was not
 * synced, as a disk does when its power is cut, and fails writes and syncs
 * on command (docs/chaos.md, "Forgotten writes and failed syncs").
 *
 *   forgetfs BACKING MOUNTPOINT [FUSE options]
 *
 * Every file lives in BACKING, but what is written to it stays in this
 * process's own cache (the kernel keeps none: direct_io, no attribute
 * cache; but see O_TMPFILE below) until the file is synced: fsync(2),
 * fdatasync(2), or a write with O_DSYNC/O_SYNC/RWF_DSYNC, which the kernel
 * passes on in the write's flags (raft_uv writes its log segments so). Only
 * then is it written to the backing file and synced there. Closing a file syncs
 * nothing.
 *
 * Commands, one a line (or separated by ';'), written to MOUNTPOINT/.forgetfs
 * (the write returns once the command is done; reading the file gives the
 * counters): drop               forget every unsynced byte (a power cut) torn
 * on|off        on drop, keep a random prefix of each file's unsynced writes
 * (in write order) instead seed N             the random prefixes' seed
 *   fail-fsync MS [WHAT]  for MS ms every sync of WHAT fails with EIO; what
 *                      it was to sync stays readable but is never written
 *                      (Linux marks such pages clean: the next sync succeeds
 *                      without them). WHAT: all (the default: every file and
 *                      directory), metadata (raft's metadata1 and metadata2),
 *                      snapshot (a snapshot's two files: libraft syncs each
 *                      as an O_TMPFILE file before it links it; batond never
 *                      syncs its image scratch files, the only other ones),
 *                      snapshot-dir (a sync of a directory in which a
 *                      snapshot-* name was linked since its last sync: the
 *                      one that makes a written snapshot's names durable),
 *                      snapshot-lie (as snapshot, but each such sync reports
 *                      success: a disk that loses what it said it stored,
 *                      the negative control of the tests of a failed
 *                      snapshot sync; counted as failed syncs too)
 *   fail-write MS      for MS ms every write fails with EIO, storing nothing
 *   short-write MS     for MS ms every write stores only half of its bytes
 *                      (at least one) and returns that count
 *   heal               ends every failure window
 *   sync               writes every unsynced byte (for tests)
 *
 * Limits: creating, renaming, linking and removing files and directories,
 * truncating and allocating are done on BACKING at once, as if the
 * directory were always synced (a truncate first syncs the file); raft_uv
 * syncs the directory after each of those anyway.
 *
 * O_TMPFILE: libraft 0.22.1 writes each snapshot file as open(dir,
 * O_TMPFILE), fallocate, write, fsync, then linkat of /proc/self/fd/N to
 * its name. The kernel passes that open on as FUSE_TMPFILE, which libfuse
 * 3.14 answers ENOSYS (the open fails with EOPNOTSUPP), so forgetfs runs
 * its own request loop (fusetmpfile.c), which turns each FUSE_TMPFILE into a
 * FUSE_CREATE of a hidden name, TMP_PREFIX and a number, in the same directory.
 * The file's writes are cached and forgotten as any other's; linking gives it
 * its real name at once (as a create would); its last close removes the hidden
 * name, and with it the file if it was never linked. Hidden names are not
 * listed, and those left by an earlier forgetfs are removed at start, as a
 * crash removes unlinked files. An O_TMPFILE file is opened without direct_io,
 * so that it can be mapped (batond maps its snapshot images, made in such
 * files): its writes still reach forgetfs one by one (FUSE without writeback
 * cache writes through), but its reads may come from the kernel's page cache,
 * which a drop does not empty.
 */
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fusetmpfile.h"

#define CTL_NAME   "/.forgetfs"
#define TMP_PREFIX FUSETMPFILE_PREFIX

/* One write not yet synced; `doomed` once a sync of it failed. */
struct extent {
        off_t off;
        size_t len;
        char *data;
        bool doomed;
        struct extent *next;
};

/* A file with writes not yet synced, or open. */
struct ffile {
        char *path;    /* relative to BACKING, no leading '/' */
        char *tmpname; /* an O_TMPFILE file's hidden name, until its last
                          close; `path` too until it is linked */
        int fd;        /* BACKING's file, O_RDWR */
        int opens;
        struct extent *head, *tail;
        off_t end; /* the end of the furthest pending write */
        struct ffile *next;
};

struct counters {
        uint64_t writes, synced_writes, fsyncs, failed_fsyncs, failed_writes,
            short_writes, dropped_bytes, kept_torn_bytes, drops;
};

/* Which syncs a fail-fsync window fails. */
enum target { T_ALL, T_METADATA, T_SNAPSHOT, T_SNAPSHOT_DIR, T_SNAPSHOT_LIE };

/* The whole file system's state; FUSE runs single-threaded (-s). */
struct forgetfs {
        int back; /* BACKING, a directory fd */
        struct ffile *files;
        bool torn;
        uint64_t rng;
        uint64_t fail_fsync_until, fail_write_until, short_write_until;
        enum target fail_fsync_what;
        bool snapshot_linked; /* a snapshot-* name linked since the last
                                 directory sync (one directory: raft's) */
        struct counters c;
};

static struct forgetfs *fs(void)
{
        return fuse_get_context()->private_data;
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t rnd(struct forgetfs *f)
{
        f->rng ^= f->rng << 13;
        f->rng ^= f->rng >> 7;
        f->rng ^= f->rng << 17;
        return f->rng;
}

/* "/a/b" -> "a/b"; "/" -> ".". */
static const char *rel(const char *path)
{
        while (*path == '/') {
                path++;
        }
        return *path == '\0' ? "." : path;
}

static bool is_ctl(const char *path)
{
        return strcmp(path, CTL_NAME) == 0;
}

/* Whether the last component of `path` is a hidden O_TMPFILE name. */
static bool is_tmpname(const char *path)
{
        const char *base = strrchr(path, '/');

        base = base != NULL ? base + 1 : path;
        return strncmp(base, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0;
}

static const char *base_of(const char *path)
{
        const char *base = strrchr(path, '/');

        return base != NULL ? base + 1 : path;
}

/* Whether a sync of file `p` falls in the fail-fsync window. */
static bool sync_fails(const struct forgetfs *f, const struct ffile *p)
{
        const char *base = base_of(p->path);

        if (now_ms() >= f->fail_fsync_until) {
                return false;
        }
        switch (f->fail_fsync_what) {
        case T_ALL:
                return true;
        case T_METADATA:
                return strcmp(base, "metadata1") == 0 ||
                       strcmp(base, "metadata2") == 0;
        case T_SNAPSHOT:
        case T_SNAPSHOT_LIE:
                return p->tmpname != NULL || strncmp(base, "snapshot-", 9) == 0;
        case T_SNAPSHOT_DIR:
                return false;
        }
        return false;
}

/* Whether a sync of a directory falls in the fail-fsync window. */
static bool dirsync_fails(const struct forgetfs *f)
{
        if (now_ms() >= f->fail_fsync_until) {
                return false;
        }
        return f->fail_fsync_what == T_ALL ||
               (f->fail_fsync_what == T_SNAPSHOT_DIR && f->snapshot_linked);
}

static struct ffile *find(struct forgetfs *f, const char *path)
{
        struct ffile *p;

        for (p = f->files; p != NULL; p = p->next) {
                if (strcmp(p->path, rel(path)) == 0 ||
                    (p->tmpname != NULL &&
                     strcmp(p->tmpname, rel(path)) == 0)) {
                        return p;
                }
        }
        return NULL;
}

static void free_extents(struct ffile *p)
{
        struct extent *e = p->head, *n;

        while (e != NULL) {
                n = e->next;
                free(e->data);
                free(e);
                e = n;
        }
        p->head = p->tail = NULL;
        p->end = 0;
}

/* Free `p` if it is neither open nor holds unsynced writes. */
static void maybe_forget(struct forgetfs *f, struct ffile *p)
{
        struct ffile **pp;

        if (p->opens > 0 || p->head != NULL) {
                return;
        }
        for (pp = &f->files; *pp != p; pp = &(*pp)->next) {
        }
        *pp = p->next;
        close(p->fd);
        free(p->path);
        free(p->tmpname);
        free(p);
}

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
        while (len > 0) {
                ssize_t n = pwrite(fd, buf, len, off);

                if (n < 0) {
                        return -errno;
                }
                buf += n;
                len -= (size_t)n;
                off += n;
        }
        return 0;
}

/* Write the first `keep` bytes of `p`'s writes that are not doomed to the
 * backing file and sync it; forget every write. */
static int write_back(struct forgetfs *f, struct ffile *p, uint64_t keep)
{
        struct extent *e;
        int rv = 0;

        for (e = p->head; e != NULL && keep > 0 && rv == 0; e = e->next) {
                size_t n = e->len < keep ? e->len : (size_t)keep;

                if (e->doomed) {
                        continue;
                }
                rv = pwrite_all(p->fd, e->data, n, e->off);
                if (keep != UINT64_MAX) {
                        keep -= n;
                        f->c.kept_torn_bytes += n;
                }
        }
        if (rv == 0 && fdatasync(p->fd) != 0) {
                rv = -errno;
        }
        free_extents(p);
        return rv;
}

static uint64_t pending_bytes(const struct ffile *p, bool doomed_too)
{
        const struct extent *e;
        uint64_t n = 0;

        for (e = p->head; e != NULL; e = e->next) {
                if (doomed_too || !e->doomed) {
                        n += e->len;
                }
        }
        return n;
}

/* A sync of `p`: EIO in a fail-fsync window (its writes are doomed), else
 * its writes go to the backing file. */
static int sync_file(struct forgetfs *f, struct ffile *p)
{
        struct extent *e;

        f->c.fsyncs++;
        if (sync_fails(f, p)) {
                f->c.failed_fsyncs++;
                for (e = p->head; e != NULL; e = e->next) {
                        e->doomed = true;
                }
                return f->fail_fsync_what == T_SNAPSHOT_LIE ? 0 : -EIO;
        }
        if (p->head == NULL) {
                return 0;
        }
        /* Doomed writes stay readable until a drop (page cache). */
        {
                struct extent *keep = NULL, **kp = &keep, *n;
                int rv = 0;

                for (e = p->head; e != NULL; e = n) {
                        n = e->next;
                        if (e->doomed) {
                                *kp = e;
                                kp = &e->next;
                                continue;
                        }
                        if (rv == 0) {
                                rv = pwrite_all(p->fd, e->data, e->len, e->off);
                        }
                        free(e->data);
                        free(e);
                }
                *kp = NULL;
                p->head = keep;
                for (p->tail = keep; p->tail != NULL && p->tail->next != NULL;
                     p->tail = p->tail->next) {
                }
                if (rv == 0 && fdatasync(p->fd) != 0) {
                        rv = -errno;
                }
                return rv;
        }
}

/* A power cut: every file keeps only what was synced (or, torn, a random
 * prefix of its unsynced writes). */
static void drop_all(struct forgetfs *f)
{
        struct ffile *p, *n;

        f->c.drops++;
        for (p = f->files; p != NULL; p = n) {
                uint64_t total = pending_bytes(p, false), keep = 0;

                n = p->next;
                if (f->torn && total > 0) {
                        keep = rnd(f) % (total + 1);
                }
                f->c.dropped_bytes += pending_bytes(p, true) - keep;
                if (keep > 0) {
                        write_back(f, p, keep);
                } else {
                        free_extents(p);
                }
                maybe_forget(f, p);
        }
}

static void sync_all(struct forgetfs *f)
{
        struct ffile *p, *n;

        for (p = f->files; p != NULL; p = n) {
                n = p->next;
                write_back(f, p, UINT64_MAX);
                maybe_forget(f, p);
        }
}

/* fail-fsync's WHAT; -1 for a word that names none. */
static int target_of(const char *word)
{
        static const char *const names[] = {"all", "metadata", "snapshot",
                                            "snapshot-dir", "snapshot-lie"};
        unsigned i;

        for (i = 0; i < sizeof names / sizeof names[0]; i++) {
                if (strcmp(word, names[i]) == 0) {
                        return (int)i;
                }
        }
        return -1;
}

/* One command line; 0 or -EINVAL. */
static int command(struct forgetfs *f, const char *line)
{
        char word[32], what[32] = "all";
        long long arg = 0;
        int n = sscanf(line, "%31s %lld %31s", word, &arg, what);
        uint64_t until = now_ms() + (arg > 0 ? (uint64_t)arg : 0);

        if (n < 1) {
                return 0;
        }
        if (strcmp(word, "drop") == 0) {
                drop_all(f);
        } else if (strcmp(word, "sync") == 0) {
                sync_all(f);
        } else if (strcmp(word, "torn") == 0) {
                f->torn = strstr(line, "on") != NULL;
        } else if (strcmp(word, "seed") == 0 && n == 2) {
                f->rng = (uint64_t)arg * 2654435761u + 88172645463325252ull;
        } else if (strcmp(word, "fail-fsync") == 0 && n >= 2 &&
                   target_of(what) >= 0) {
                f->fail_fsync_until = until;
                f->fail_fsync_what = (enum target)target_of(what);
        } else if (strcmp(word, "fail-write") == 0 && n == 2) {
                f->fail_write_until = until;
        } else if (strcmp(word, "short-write") == 0 && n == 2) {
                f->short_write_until = until;
        } else if (strcmp(word, "heal") == 0) {
                f->fail_fsync_until = 0;
                f->fail_write_until = 0;
                f->short_write_until = 0;
        } else {
                return -EINVAL;
        }
        return 0;
}

static int ctl_write(struct forgetfs *f, const char *buf, size_t size)
{
        char line[128];
        size_t i = 0, j;
        int rv;

        while (i < size) {
                for (j = 0; i < size && buf[i] != '\n' && buf[i] != ';' &&
                            j < sizeof line - 1;
                     i++) {
                        line[j++] = buf[i];
                }
                line[j] = '\0';
                i++;
                rv = command(f, line);
                if (rv != 0) {
                        return rv;
                }
        }
        return (int)size;
}

static int ctl_read(struct forgetfs *f, char *buf, size_t size, off_t off)
{
        char text[512];
        uint64_t pending = 0;
        struct ffile *p;
        int len;

        for (p = f->files; p != NULL; p = p->next) {
                pending += pending_bytes(p, true);
        }
        len =
            snprintf(text, sizeof text,
                     "pending_bytes=%" PRIu64 " writes=%" PRIu64
                     " synced_writes=%" PRIu64 " fsyncs=%" PRIu64
                     " failed_fsyncs=%" PRIu64 " failed_writes=%" PRIu64
                     " short_writes=%" PRIu64 " drops=%" PRIu64
                     " dropped_bytes=%" PRIu64 " kept_torn_bytes=%" PRIu64 "\n",
                     pending, f->c.writes, f->c.synced_writes, f->c.fsyncs,
                     f->c.failed_fsyncs, f->c.failed_writes, f->c.short_writes,
                     f->c.drops, f->c.dropped_bytes, f->c.kept_torn_bytes);
        if (off >= len) {
                return 0;
        }
        if (size > (size_t)(len - off)) {
                size = (size_t)(len - off);
        }
        memcpy(buf, text + off, size);
        return (int)size;
}

/* --- FUSE operations -------------------------------------------------- */

static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        /* direct_io is set per open (open_file): cfg->direct_io would force
         * it on every file. */
        cfg->kernel_cache = 0;
        cfg->attr_timeout = 0;
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
        cfg->use_ino = 1;
        /* Every request in memory, for serve() to read FUSE_TMPFILE's. */
        conn->want &= ~FUSE_CAP_SPLICE_READ;
        return fuse_get_context()->private_data;
}

static int ff_getattr(const char *path, struct stat *st,
                      struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();
        struct ffile *p;

        (void)fi;
        if (is_ctl(path)) {
                memset(st, 0, sizeof *st);
                st->st_mode = S_IFREG | 0600;
                st->st_nlink = 1;
                return 0;
        }
        if (fstatat(f->back, rel(path), st, AT_SYMLINK_NOFOLLOW) != 0) {
                return -errno;
        }
        p = find(f, path);
        if (p != NULL && p->end > st->st_size) {
                st->st_size = p->end;
        }
        return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
                      off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags)
{
        int fd;
        DIR *d;
        struct dirent *de;

        (void)off;
        (void)fi;
        (void)flags;
        fd = openat(fs()->back, rel(path), O_RDONLY | O_DIRECTORY);
        if (fd < 0) {
                return -errno;
        }
        d = fdopendir(fd);
        if (d == NULL) {
                close(fd);
                return -errno;
        }
        while ((de = readdir(d)) != NULL) {
                if (!is_tmpname(de->d_name)) {
                        fill(buf, de->d_name, NULL, 0, 0);
                }
        }
        closedir(d);
        return 0;
}

/* Open (or create) `path` as one shared ffile. */
static int open_file(const char *path, int flags, mode_t mode,
                     struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();
        struct ffile *p = find(f, path);
        int fd;

        /* An O_TMPFILE file goes through the kernel's page cache, as FUSE
         * allows no shared mmap(2) of a direct_io file and batond maps its
         * snapshot images (src/server/snap/snapimage.c). Without FUSE's
         * writeback cache each write still reaches forgetfs at once. */
        fi->direct_io = !is_tmpname(path);
        if (is_ctl(path)) {
                fi->fh = 0;
                return 0;
        }
        fd = openat(f->back, rel(path),
                    (flags & (O_CREAT | O_EXCL)) | O_RDWR | O_CLOEXEC, mode);
        if (fd < 0) {
                return -errno;
        }
        if (p == NULL) {
                p = calloc(1, sizeof *p);
                if (p == NULL || (p->path = strdup(rel(path))) == NULL) {
                        free(p);
                        close(fd);
                        return -ENOMEM;
                }
                p->fd = fd;
                p->next = f->files;
                f->files = p;
        } else {
                close(fd);
        }
        if (flags & O_TRUNC) {
                free_extents(p);
                if (ftruncate(p->fd, 0) != 0) {
                        return -errno;
                }
        }
        p->opens++;
        fi->fh = (uint64_t)(uintptr_t)p;
        return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi)
{
        return open_file(path, fi->flags, 0, fi);
}

/* A create of a hidden name is serve()'s FUSE_TMPFILE: the file is
 * marked so that its last close removes that name. */
static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
        int rv = open_file(path, fi->flags | O_CREAT, mode, fi);
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;

        if (rv == 0 && p != NULL && p->tmpname == NULL && is_tmpname(path)) {
                p->tmpname = strdup(p->path);
        }
        return rv;
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;

        (void)path;
        if (p == NULL) {
                return 0;
        }
        p->opens--;
        if (p->opens == 0 && p->tmpname != NULL) {
                /* Closed for good: an O_TMPFILE file never linked is gone,
                 * unsynced writes and all. */
                unlinkat(f->back, p->tmpname, 0);
                if (strcmp(p->path, p->tmpname) == 0) {
                        free_extents(p);
                }
                free(p->tmpname);
                p->tmpname = NULL;
        }
        maybe_forget(f, p);
        return 0;
}

static int ff_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;
        struct extent *e;
        struct stat st;
        ssize_t n;
        off_t end;

        if (is_ctl(path)) {
                return ctl_read(fs(), buf, size, off);
        }
        if (fstat(p->fd, &st) != 0) {
                return -errno;
        }
        end = st.st_size > p->end ? st.st_size : p->end;
        if (off >= end) {
                return 0;
        }
        if ((off_t)size > end - off) {
                size = (size_t)(end - off);
        }
        memset(buf, 0, size);
        n = pread(p->fd, buf, size, off);
        if (n < 0) {
                return -errno;
        }
        for (e = p->head; e != NULL; e = e->next) {
                off_t a = e->off > off ? e->off : off;
                off_t b = e->off + (off_t)e->len;

                if (b > off + (off_t)size) {
                        b = off + (off_t)size;
                }
                if (a < b) {
                        memcpy(buf + (a - off), e->data + (a - e->off),
                               (size_t)(b - a));
                }
        }
        return (int)size;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;
        struct extent *e;
        uint64_t now = now_ms();
        int rv;

        if (is_ctl(path)) {
                return ctl_write(f, buf, size);
        }
        f->c.writes++;
        if (now < f->fail_write_until) {
                f->c.failed_writes++;
                return -EIO;
        }
        if (now < f->short_write_until && size > 1) {
                f->c.short_writes++;
                size /= 2;
        }
        e = calloc(1, sizeof *e);
        if (e == NULL || (e->data = malloc(size ? size : 1)) == NULL) {
                free(e);
                return -ENOMEM;
        }
        memcpy(e->data, buf, size);
        e->off = off;
        e->len = size;
        if (p->tail != NULL) {
                p->tail->next = e;
        } else {
                p->head = e;
        }
        p->tail = e;
        if (off + (off_t)size > p->end) {
                p->end = off + (off_t)size;
        }
        if (fi->flags & (O_DSYNC | O_SYNC)) {
                f->c.synced_writes++;
                rv = sync_file(f, p);
                if (rv != 0) {
                        return rv;
                }
        }
        return (int)size;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;

        (void)datasync;
        if (is_ctl(path) || p == NULL) {
                return 0;
        }
        return sync_file(fs(), p);
}

static int ff_fsyncdir(const char *path, int datasync,
                       struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();

        (void)path;
        (void)datasync;
        (void)fi;
        f->c.fsyncs++;
        if (dirsync_fails(f)) {
                f->c.failed_fsyncs++;
                return -EIO;
        }
        f->snapshot_linked = false;
        return 0;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        struct forgetfs *f = fs();
        struct ffile *p = find(f, path);
        int fd, rv;

        (void)fi;
        if (is_ctl(path)) {
                return 0;
        }
        if (p != NULL) {
                write_back(f, p, UINT64_MAX);
        }
        if (p != NULL) {
                return ftruncate(p->fd, size) != 0 ? -errno : 0;
        }
        fd = openat(f->back, rel(path), O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                return -errno;
        }
        rv = ftruncate(fd, size) != 0 ? -errno : 0;
        close(fd);
        return rv;
}

static int ff_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi)
{
        struct ffile *p = (struct ffile *)(uintptr_t)fi->fh;

        (void)path;
        if (p == NULL || mode != 0) {
                return -EOPNOTSUPP;
        }
        return -posix_fallocate(p->fd, off, len);
}

static int ff_unlink(const char *path)
{
        struct forgetfs *f = fs();
        struct ffile *p = find(f, path);

        if (unlinkat(f->back, rel(path), 0) != 0) {
                return -errno;
        }
        if (p != NULL) {
                free_extents(p);
                maybe_forget(f, p);
        }
        return 0;
}

static int ff_rename(const char *from, const char *to, unsigned int flags)
{
        struct forgetfs *f = fs();
        struct ffile *p = find(f, from), *q = find(f, to);
        char *s;

        if (flags != 0) {
                return -EINVAL;
        }
        if (renameat(f->back, rel(from), f->back, rel(to)) != 0) {
                return -errno;
        }
        if (q != NULL && q != p) {
                /* Its open descriptors now name a removed file. */
                free(q->path);
                q->path = strdup("");
                free_extents(q);
                maybe_forget(f, q);
        }
        if (p != NULL && (s = strdup(rel(to))) != NULL) {
                free(p->path);
                p->path = s;
        }
        return 0;
}

/* A hard link, on BACKING at once. An O_TMPFILE file's first link is its
 * real name: its cached writes are found under it from then on. */
static int ff_link(const char *from, const char *to)
{
        struct forgetfs *f = fs();
        struct ffile *p = find(f, from);
        char *s;

        if (is_ctl(from) || is_ctl(to)) {
                return -EPERM;
        }
        if (linkat(f->back, rel(from), f->back, rel(to), 0) != 0) {
                return -errno;
        }
        if (strncmp(base_of(to), "snapshot-", 9) == 0) {
                f->snapshot_linked = true;
        }
        if (p != NULL && p->tmpname != NULL &&
            strcmp(p->path, p->tmpname) == 0 && (s = strdup(rel(to))) != NULL) {
                free(p->path);
                p->path = s;
        }
        return 0;
}

static int ff_mkdir(const char *path, mode_t mode)
{
        return mkdirat(fs()->back, rel(path), mode) != 0 ? -errno : 0;
}

static int ff_rmdir(const char *path)
{
        return unlinkat(fs()->back, rel(path), AT_REMOVEDIR) != 0 ? -errno : 0;
}

static int ff_access(const char *path, int mask)
{
        if (is_ctl(path)) {
                return 0;
        }
        return faccessat(fs()->back, rel(path), mask, 0) != 0 ? -errno : 0;
}

static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
        (void)fi;
        return fchmodat(fs()->back, rel(path), mode, 0) != 0 ? -errno : 0;
}

static int ff_utimens(const char *path, const struct timespec tv[2],
                      struct fuse_file_info *fi)
{
        (void)fi;
        if (is_ctl(path)) {
                return 0;
        }
        return utimensat(fs()->back, rel(path), tv, AT_SYMLINK_NOFOLLOW) != 0
                   ? -errno
                   : 0;
}

static int ff_statfs(const char *path, struct statvfs *st)
{
        (void)path;
        return fstatvfs(fs()->back, st) != 0 ? -errno : 0;
}

static const struct fuse_operations ops = {
    .init = ff_init,
    .getattr = ff_getattr,
    .readdir = ff_readdir,
    .open = ff_open,
    .create = ff_create,
    .release = ff_release,
    .read = ff_read,
    .write = ff_write,
    .fsync = ff_fsync,
    .fsyncdir = ff_fsyncdir,
    .truncate = ff_truncate,
    .fallocate = ff_fallocate,
    .unlink = ff_unlink,
    .rename = ff_rename,
    .link = ff_link,
    .mkdir = ff_mkdir,
    .rmdir = ff_rmdir,
    .access = ff_access,
    .chmod = ff_chmod,
    .utimens = ff_utimens,
    .statfs = ff_statfs,
};

/* Hidden names left in BACKING by an earlier forgetfs: their files were
 * never linked or are linked elsewhere, as after a crash. */
static void sweep_tmpnames(int back)
{
        int fd = openat(back, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (d == NULL) {
                if (fd >= 0) {
                        close(fd);
                }
                return;
        }
        while ((de = readdir(d)) != NULL) {
                if (is_tmpname(de->d_name)) {
                        unlinkat(back, de->d_name, 0);
                }
        }
        closedir(d);
}

int main(int argc, char **argv)
{
        static struct forgetfs f;
        char *fargv[16];
        int fargc = 0, i;

        if (argc < 3 || argc > 12) {
                fprintf(stderr, "usage: forgetfs BACKING MOUNTPOINT "
                                "[FUSE options]\n");
                return 2;
        }
        f.back = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f.back < 0) {
                perror(argv[1]);
                return 1;
        }
        f.rng = 88172645463325252ull;
        fargv[fargc++] = argv[0];
        fargv[fargc++] = "-s"; /* one thread: no locks needed */
        for (i = 2; i < argc; i++) {
                fargv[fargc++] = argv[i];
        }
        fargv[fargc] = NULL;
        sweep_tmpnames(f.back);
        return fusetmpfile_main(fargc, fargv, &ops, &f);
}
