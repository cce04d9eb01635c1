/* A node's data directory: its lock and its identity file (datadir.h). */
#include "datadir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "../../../include/baton.h"
#include "../base/log.h"

/* How long a lock held by a process that no longer runs is waited for: a
 * child of a batond killed a moment ago (the snapshot image's) can hold a
 * duplicate of the descriptor until the kernel has reaped it. */
#define DEAD_HOLDER_WAIT_MS 1000
#define TEMP_SUFFIX         ".tmp"

static int fail(struct datadir *d, int rv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct datadir *d, int rv, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(d->errmsg, sizeof d->errmsg, fmt, ap);
        va_end(ap);
        return rv;
}

static void file_path(const struct datadir *d, char *buf, size_t cap,
                      const char *name)
{
        snprintf(buf, cap, "%s/%s", d->path, name);
}

uint64_t datadir_random(void)
{
        uint64_t v = 0;
        struct timespec ts;

        while (v == 0) {
                if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
                        /* No kernel randomness: the clock and the pid, which
                         * differ between any two directories made. */
                        clock_gettime(CLOCK_REALTIME, &ts);
                        v = ((uint64_t)ts.tv_sec * 1000000000u +
                             (uint64_t)ts.tv_nsec) ^
                            ((uint64_t)getpid() << 40);
                }
        }
        return v;
}

/* The pid in the lock file, or 0. */
static long holder(int fd)
{
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        long pid;

        if (n <= 0) {
                return 0;
        }
        buf[n] = '\0';
        if (sscanf(buf, "%ld", &pid) != 1 || pid <= 0) {
                return 0;
        }
        return pid;
}

static bool running(long pid)
{
        return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* The lock is taken: say by whom. */
static int busy(struct datadir *d, long pid)
{
        char what[96];

        if (pid == 0) {
                snprintf(what, sizeof what, "pid unknown");
        } else if (running(pid)) {
                snprintf(what, sizeof what, "pid %ld", pid);
        } else {
                snprintf(what, sizeof what,
                         "pid %ld recorded, not running on this host", pid);
        }
        return fail(d, BATON_EINVAL,
                    "data directory %s is in use by another process (%s, "
                    "holding %s/%s): a data directory belongs to one "
                    "process; stop that one first, or give this node a "
                    "directory of its own",
                    d->path, what, d->path, DATADIR_LOCK);
}

/* flock() the open lock file, waiting a little for a holder that has
 * died. 0, or a refusal. */
static int take(struct datadir *d, int fd)
{
        int waited = 0;
        long pid;

        while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
                if (errno == EINTR) {
                        continue;
                }
                if (errno != EWOULDBLOCK) {
                        return fail(d, BATON_EIO,
                                    "data directory %s: cannot "
                                    "lock %s: %s",
                                    d->path, DATADIR_LOCK, strerror(errno));
                }
                pid = holder(fd);
                if (running(pid) || waited >= DEAD_HOLDER_WAIT_MS) {
                        return busy(d, pid);
                }
                usleep(50 * 1000);
                waited += 50;
        }
        return 0;
}

/* Open and lock the lock file; with `create`, make it if missing. 0 with
 * the lock held or, without `create`, no file; else a refusal. */
static int lock(struct datadir *d, bool create)
{
        char path[PATH_MAX + 32];
        int fd, rv;

        file_path(d, path, sizeof path, DATADIR_LOCK);
        fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0640);
        if (fd < 0) {
                if (errno == ENOENT && !create) {
                        return 0;
                }
                return fail(d, BATON_EIO,
                            "data directory %s: cannot open "
                            "%s: %s",
                            d->path, path, strerror(errno));
        }
        rv = take(d, fd);
        if (rv != 0) {
                close(fd);
                return rv;
        }
        d->lock_fd = fd;
        return 0;
}

/* Files of ours, or a temporary one of ours, that do not make a directory
 * hold data. */
static bool ours(const char *name)
{
        return strcmp(name, DATADIR_LOCK) == 0 ||
               strcmp(name, DATADIR_IDENTITY) == 0 ||
               strcmp(name, DATADIR_IDENTITY TEMP_SUFFIX) == 0 ||
               strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* Whether the directory holds anything but our files. */
static int holds_data(struct datadir *d, bool *data)
{
        struct dirent *e;
        DIR *dir = opendir(d->path);

        *data = false;
        if (dir == NULL) {
                return fail(d, BATON_EIO, "data directory %s: %s", d->path,
                            strerror(errno));
        }
        while (!*data && (e = readdir(dir)) != NULL) {
                *data = !ours(e->d_name);
        }
        closedir(dir);
        return 0;
}

/* The identity file's text into `buf`: its length, 0 when there is no
 * file, -1 on error (d->errmsg set). */
static long read_identity(struct datadir *d, char *buf, size_t cap)
{
        char path[PATH_MAX + 32];
        ssize_t n;
        size_t len = 0;
        int fd;

        file_path(d, path, sizeof path, DATADIR_IDENTITY);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                fail(d, BATON_EIO, "data directory %s: cannot read %s: %s",
                     d->path, path, strerror(errno));
                return -1;
        }
        while (len < cap && (n = read(fd, buf + len, cap - len)) != 0) {
                if (n < 0 && errno == EINTR) {
                        continue;
                }
                if (n < 0) {
                        fail(d, BATON_EIO, "data directory %s: reading %s: %s",
                             d->path, path, strerror(errno));
                        close(fd);
                        return -1;
                }
                len += (size_t)n;
        }
        close(fd);
        if (len == 0 || len == cap) {
                fail(d, BATON_EINVAL, "data directory %s: %s is %s", d->path,
                     path, len == 0 ? "empty" : "too long");
                return -1;
        }
        return (long)len;
}

/* Read the identity, if any, and classify the directory. */
static int look(struct datadir *d, uint64_t node)
{
        char text[DIRID_TEXT_MAX], why[128];
        long len = read_identity(d, text, sizeof text);
        bool data;

        if (len < 0) {
                return BATON_EINVAL;
        }
        if (len == 0) {
                if (holds_data(d, &data) != 0) {
                        return BATON_EIO;
                }
                d->state = data ? DATADIR_LEGACY : DATADIR_EMPTY;
                return 0;
        }
        if (dirid_parse(&d->id, text, (size_t)len, why, sizeof why) != 0) {
                return fail(d, BATON_EINVAL,
                            "data directory %s: %s/%s does not read (%s): it "
                            "says which node of which cluster the directory "
                            "belongs to; put back the one batond wrote",
                            d->path, d->path, DATADIR_IDENTITY, why);
        }
        if (d->id.node != node) {
                return fail(d, BATON_EINVAL,
                            "data directory %s belongs to node %" PRIu64
                            " (%s/%s), not to node %" PRIu64
                            ": a data directory belongs to one node; start "
                            "node %" PRIu64 " on a directory of its own",
                            d->path, d->id.node, d->path, DATADIR_IDENTITY,
                            node, node);
        }
        d->state = DATADIR_KNOWN;
        return 0;
}

int datadir_check(struct datadir *d, const char *path, uint64_t node)
{
        struct stat st;
        int rv;

        memset(d, 0, sizeof *d);
        d->lock_fd = -1;
        snprintf(d->path, sizeof d->path, "%s", path);
        if (stat(path, &st) != 0) {
                if (errno == ENOENT) {
                        d->state = DATADIR_MISSING;
                        return 0;
                }
                return fail(d, BATON_EIO, "data directory %s: %s", path,
                            strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
                return fail(d, BATON_EINVAL,
                            "data directory %s is not a directory", path);
        }
        rv = lock(d, false);
        return rv != 0 ? rv : look(d, node);
}

/* mkdir -p, mode 0750 for what it makes. */
static int make_dirs(struct datadir *d)
{
        char buf[PATH_MAX];
        size_t i, len = strlen(d->path);

        memcpy(buf, d->path, len + 1);
        for (i = 1; i <= len; i++) {
                if (buf[i] == '/' || buf[i] == '\0') {
                        char c = buf[i];
                        buf[i] = '\0';
                        if (mkdir(buf, 0750) != 0 && errno != EEXIST) {
                                return fail(d, BATON_EIO,
                                            "cannot create data directory "
                                            "%s: %s: %s",
                                            d->path, buf, strerror(errno));
                        }
                        buf[i] = c;
                }
        }
        return 0;
}

/* The pid, written over the last holder's in place: the same 20 bytes
 * each time, so that a full disk, which a node must still start on, needs
 * no new block for it. Only the refusals of others read it, so a failure
 * is said and ignored. */
static void write_pid(struct datadir *d)
{
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%-19ld\n", (long)getpid());

        if (pwrite(d->lock_fd, buf, (size_t)n, 0) != n) {
                log_warn("data directory %s: cannot write this process's pid "
                         "into %s (%s): a second process on it will be told "
                         "an older one",
                         d->path, DATADIR_LOCK, strerror(errno));
        }
}

int datadir_claim(struct datadir *d, uint64_t node, uint64_t cluster,
                  bool write_identity)
{
        int rv;

        if (make_dirs(d) != 0) {
                return BATON_EIO;
        }
        if (d->lock_fd < 0 && (rv = lock(d, true)) != 0) {
                return rv;
        }
        /* Another process may have made or changed it before we held it. */
        rv = look(d, node);
        if (rv == 0) {
                write_pid(d);
        }
        if (rv != 0 || !write_identity || d->state == DATADIR_KNOWN) {
                return rv;
        }
        memset(&d->id, 0, sizeof d->id);
        d->id.cluster = d->state == DATADIR_EMPTY ? cluster : 0;
        d->id.node = node;
        d->id.incarnation = datadir_random();
        rv = datadir_save(d);
        if (rv == 0) {
                d->made = true;
                d->adopted = d->state == DATADIR_LEGACY;
                d->state = DATADIR_KNOWN;
        }
        return rv;
}

/* write() all of it. */
static int write_all(int fd, const char *p, size_t n)
{
        ssize_t w;

        while (n > 0) {
                w = write(fd, p, n);
                if (w < 0 && errno == EINTR) {
                        continue;
                }
                if (w < 0) {
                        return -1;
                }
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

int datadir_save(struct datadir *d)
{
        char text[DIRID_TEXT_MAX], tmp[PATH_MAX + 32], path[PATH_MAX + 32];
        size_t len = dirid_format(&d->id, text, sizeof text);
        int fd, dfd, rv = 0;

        file_path(d, path, sizeof path, DATADIR_IDENTITY);
        file_path(d, tmp, sizeof tmp, DATADIR_IDENTITY TEMP_SUFFIX);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
        if (fd < 0) {
                return fail(d, BATON_EIO,
                            "data directory %s: cannot write "
                            "%s: %s",
                            d->path, tmp, strerror(errno));
        }
        if (len >= sizeof text || write_all(fd, text, len) != 0 ||
            fsync(fd) != 0) {
                rv = fail(d, BATON_EIO, "data directory %s: writing %s: %s",
                          d->path, tmp, strerror(errno));
        }
        close(fd);
        if (rv == 0 && rename(tmp, path) != 0) {
                rv = fail(d, BATON_EIO, "data directory %s: renaming %s: %s",
                          d->path, tmp, strerror(errno));
        }
        if (rv != 0) {
                unlink(tmp);
                return rv;
        }
        /* The rename itself must reach the disk before raft writes. */
        dfd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) != 0) {
                rv = fail(d, BATON_EIO, "data directory %s: fsync: %s", d->path,
                          strerror(errno));
        }
        if (dfd >= 0) {
                close(dfd);
        }
        return rv;
}

void datadir_close(struct datadir *d)
{
        if (d->lock_fd >= 0) {
                close(d->lock_fd);
                d->lock_fd = -1;
        }
}
