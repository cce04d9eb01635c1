/* Making raft's files durable as they read now, before raft loads them. */
#include "disksettle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../include/baton/errors.h"

static ssize_t libc_pwrite(void *ctx, int fd, const void *p, size_t n,
                           off_t off)
{
        (void)ctx;
        return pwrite(fd, p, n, off);
}

static int libc_fdatasync(void *ctx, int fd)
{
        (void)ctx;
        return fdatasync(fd);
}

static int libc_fsync(void *ctx, int fd)
{
        (void)ctx;
        return fsync(fd);
}

static const struct disksettle_io libc_io = {libc_pwrite, libc_fdatasync,
                                             libc_fsync, NULL};

/* "PATH: CALL: errno's text" into s->errmsg: BATON_EIO. */
static int failed(struct disksettle *s, const char *path, const char *call,
                  int err)
{
        snprintf(s->errmsg, sizeof s->errmsg, "%s: %s: %s", path, call,
                 strerror(err));
        return BATON_EIO;
}

/* All `n` bytes of fd from offset 0 into `p`: 0, or errno. */
static int read_all(int fd, uint8_t *p, size_t n)
{
        size_t off = 0;
        ssize_t got;

        while (off < n) {
                got = pread(fd, p + off, n - off, (off_t)off);
                if (got < 0 && errno == EINTR) {
                        continue;
                }
                if (got <= 0) {
                        return got < 0 ? errno : EIO; /* shrank under us */
                }
                off += (size_t)got;
        }
        return 0;
}

/* `p[0..n)` back at offset 0 through io: 0, or errno. */
static int write_all(const struct disksettle_io *io, int fd, const uint8_t *p,
                     size_t n)
{
        size_t off = 0;
        ssize_t put;

        while (off < n) {
                put = io->pwrite(io->ctx, fd, p + off, n - off, (off_t)off);
                if (put < 0 && errno == EINTR) {
                        continue;
                }
                if (put <= 0) {
                        return put < 0 ? errno : EIO;
                }
                off += (size_t)put;
        }
        return 0;
}

/*
 * How much of a file to write back. metadata1/2: all of it, since libraft
 * overwrites them in place (a vote of 0, its last 8 bytes zero, can be
 * written over a durable non-zero vote). An open segment: up to its last
 * non-zero byte, not its whole preallocated 8 MiB. libraft only appends to
 * an open segment (its tail block is written again with the same prefix),
 * so a byte past the last non-zero one was either never written (zero
 * from the preallocation, on the disk too) or written as zero; and its
 * load cuts the segment after the last batch it reads anyway. Writing the
 * zeros would turn the preallocated extents into written ones: up to
 * 8 MiB of writes per segment at every start, for nothing.
 */
static size_t settle_len(const char *name, const uint8_t *p, size_t n)
{
        if (strncmp(name, "open-", 5) != 0) {
                return n;
        }
        while (n > 0 && p[n - 1] == 0) {
                n--;
        }
        return n;
}

/* Write back and fdatasync file `name` of `dir` (absent: skipped). */
static int settle_file(struct disksettle *s, const char *dir, const char *name,
                       const struct disksettle_io *io)
{
        char path[PATH_MAX + 64];
        struct stat st;
        uint8_t *p = NULL;
        size_t len;
        int fd, err = 0;
        const char *call = "open";

        snprintf(path, sizeof path, "%s/%s", dir, name);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                return errno == ENOENT ? 0 : failed(s, path, call, errno);
        }
        if (fstat(fd, &st) != 0) {
                err = errno, call = "fstat";
        } else if ((p = malloc((size_t)st.st_size + 1)) == NULL) {
                close(fd);
                return BATON_ENOMEM;
        } else if ((err = read_all(fd, p, (size_t)st.st_size)) != 0) {
                call = "read";
        }
        len = err == 0 ? settle_len(name, p, (size_t)st.st_size) : 0;
        if (len > 0 && (err = write_all(io, fd, p, len)) != 0) {
                call = "write";
        } else if (len > 0 && io->fdatasync(io->ctx, fd) != 0) {
                err = errno, call = "fdatasync";
        }
        free(p);
        if (close(fd) != 0 && err == 0 && len > 0) {
                err = errno, call = "close";
        }
        if (err != 0) {
                return failed(s, path, call, err);
        }
        if (len > 0) {
                s->n_files++;
                s->n_bytes += len;
        }
        return 0;
}

/* The open segments of `dir`, one at a time, then the metadata files. */
static int settle_files(struct disksettle *s, const char *dir,
                        const struct disksettle_io *io)
{
        struct dirent *de;
        DIR *d = opendir(dir);
        int rv = 0;

        if (d == NULL) {
                return failed(s, dir, "opendir", errno);
        }
        while (rv == 0 && (de = readdir(d)) != NULL) {
                if (strncmp(de->d_name, "open-", 5) == 0) {
                        rv = settle_file(s, dir, de->d_name, io);
                }
        }
        closedir(d);
        if (rv == 0) {
                rv = settle_file(s, dir, "metadata1", io);
        }
        if (rv == 0) {
                rv = settle_file(s, dir, "metadata2", io);
        }
        return rv;
}

int disksettle_run(struct disksettle *s, const char *dir,
                   const struct disksettle_io *io)
{
        int fd, rv;

        memset(s, 0, sizeof *s);
        if (io == NULL) {
                io = &libc_io;
        }
        rv = settle_files(s, dir, io);
        if (rv != 0) {
                return rv;
        }
        /* The names too: libraft made open-N and the metadata files, and a
         * failed sync of the directory can leave a name readable and lost. */
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                return failed(s, dir, "open", errno);
        }
        if (io->fsync(io->ctx, fd) != 0) {
                rv = failed(s, dir, "fsync", errno);
        }
        close(fd);
        return rv;
}
