/* Snapshot images made in a forked child (snapimage.h). */
#include "snapimage.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "../../lib/monotonic.h"
#include "../base/crashpoint.h"

/* Exit codes of the child, for the parent's message. */
enum { CHILD_OK = 0, CHILD_ORPHAN = 70, CHILD_ENCODE = 71, CHILD_WRITE = 72 };

void snapimage_init(struct snapimage *s, enum snapimage_mode mode)
{
        memset(s, 0, sizeof *s);
        s->mode = mode;
        s->fd = -1;
        s->dir_fd = -1;
}

void snapimage_close(struct snapimage *s)
{
        if (s->dir_fd >= 0) {
                close(s->dir_fd);
                s->dir_fd = -1;
        }
}

int snapimage_set_dir(struct snapimage *s, const char *dir)
{
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "snapshot images: open %s: %s", dir, strerror(errno));
                return BATON_EIO;
        }
        snapimage_close(s);
        s->dir_fd = fd;
        return 0;
}

/* A file of directory `dir_fd` with no name, so that nothing is left
 * behind by a crash: -1 with errno set where there is none. */
static int unnamed_file(int dir_fd)
{
        return openat(dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

/* A file for the child to write: unnamed in the image directory, or a
 * memfd. */
static int image_file(const struct snapimage *s, bool *on_disk)
{
        int fd = s->dir_fd >= 0 ? unnamed_file(s->dir_fd) : -1;

        *on_disk = fd >= 0;
        return fd >= 0 ? fd : memfd_create("baton-snapshot", MFD_CLOEXEC);
}

static int write_all(int fd, const void *p, size_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR) {
                        continue;
                }
                if (w <= 0) {
                        return -1;
                }
                p = (const char *)p + w;
                n -= (size_t)w;
        }
        return 0;
}

/*
 * The child: it holds a copy of every descriptor of batond (client and
 * peer sockets, listeners, the data directory's files), which would keep
 * a closed connection open, or a port bound after batond died, for as long
 * as it runs. So it closes all but its image file first, dies with its parent,
 * and leaves the parent's signal handlers behind.
 */
static void child(int fd, pid_t parent, snapimage_encode_fn fn, void *data)
{
        sigset_t all;
        void *buf = NULL;
        size_t len = 0;

        syscall(SYS_close_range, 3u, (unsigned)fd - 1, 0u);
        syscall(SYS_close_range, (unsigned)fd + 1, ~0u, 0u);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigfillset(&all);
        sigprocmask(SIG_UNBLOCK, &all, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
                _exit(CHILD_ORPHAN);
        }
        /* Background work: where the loops keep the cores busy (three
         * nodes on one machine), the child runs in the time they leave
         * rather than taking theirs; alone on a core it runs as fast. */
        (void)nice(SNAPIMAGE_NICE);
        if (fn(data, &buf, &len) != 0) {
                _exit(CHILD_ENCODE);
        }
        CRASHPOINT("image-child"); /* encoded, nothing written yet */
        _exit(write_all(fd, buf, len) == 0 ? CHILD_OK : CHILD_WRITE);
}

/* The image's bytes are there, in the caller's memory or a mapping. */
static void ready(struct snapimage *s, void *base, size_t len, bool mapped)
{
        s->bytes.base = base;
        s->bytes.len = len;
        s->bytes.mapped = mapped;
        s->bytes.on_disk = mapped && s->on_disk;
        s->state = SNAPIMAGE_READY;
        s->n_made++;
}

static int start_inline(struct snapimage *s, snapimage_encode_fn fn, void *data)
{
        void *base;
        size_t len;
        int rv = fn(data, &base, &len);

        if (rv != 0) {
                snprintf(s->errmsg, sizeof s->errmsg, "snapshot image: %s",
                         baton_strerror(rv));
                s->n_failed++;
                return rv;
        }
        ready(s, base, len, false);
        return 0;
}

int snapimage_start(struct snapimage *s, uint64_t index, snapimage_encode_fn fn,
                    void *data)
{
        pid_t parent = getpid();
        uint64_t t0;
        int fd;

        s->index = index;
        if (s->mode == SNAPIMAGE_INLINE) {
                return start_inline(s, fn, data);
        }
        fd = image_file(s, &s->on_disk);
        if (fd < 0) {
                s->n_inline++;
                return start_inline(s, fn, data);
        }
        t0 = monotonic_us();
        s->pid = fork();
        if (s->pid == 0) {
                child(fd, parent, fn, data);
        }
        s->started_us = monotonic_us();
        s->fork_us_last = s->started_us - t0;
        if (s->fork_us_last > s->fork_us_max) {
                s->fork_us_max = s->fork_us_last;
        }
        if (s->pid < 0) {
                close(fd);
                s->n_inline++;
                return start_inline(s, fn, data);
        }
        s->fd = fd;
        s->state = SNAPIMAGE_MAKING;
        return 0;
}

#ifdef BATON_CHAOS_TRUST_IMAGE
/* batond-trustimage takes an empty file as an empty image: bytes of length
 * 0 that its consumers can hold, hand to raft and free (mmap() maps no
 * 0-byte file). */
static bool trust_empty(struct snapimage *s)
{
        void *p = raft_malloc(1);

        if (p == NULL) {
                return false;
        }
        close(s->fd);
        s->fd = -1;
        ready(s, p, 0, false);
        return true;
}
#endif

/*
 * The child is done with `status`: map what it wrote. batond-trustimage
 * (BATON_CHAOS_TRUST_IMAGE, the negative control of the crash-point
 * nemesis, docs/chaos.md) takes whatever the child left in its file,
 * whatever the child's fate: a child killed before it wrote leaves an
 * empty image, which becomes the node's snapshot.
 */
static void finished(struct snapimage *s, int status)
{
        struct stat st;
        void *p;

        s->make_us_last = monotonic_us() - s->started_us;
#ifdef BATON_CHAOS_TRUST_IMAGE
        (void)status;
        if (fstat(s->fd, &st) == 0 && st.st_size == 0 && trust_empty(s)) {
                return;
        }
#else
        if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_OK) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "snapshot image at %llu: the child %s %d",
                         (unsigned long long)s->index,
                         WIFEXITED(status) ? "exited with" : "died of signal",
                         WIFEXITED(status) ? WEXITSTATUS(status)
                                           : WTERMSIG(status));
                goto fail;
        }
#endif
        if (fstat(s->fd, &st) != 0 || st.st_size <= 0) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "snapshot image at %llu: empty",
                         (unsigned long long)s->index);
                goto fail;
        }
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, s->fd, 0);
        if (p == MAP_FAILED) {
                snprintf(s->errmsg, sizeof s->errmsg,
                         "snapshot image at %llu: mmap: %s",
                         (unsigned long long)s->index, strerror(errno));
                goto fail;
        }
        close(s->fd); /* the mapping keeps the memory */
        s->fd = -1;
        ready(s, p, (size_t)st.st_size, true);
        return;
fail:
        close(s->fd);
        s->fd = -1;
        s->n_failed++;
        s->state = SNAPIMAGE_NONE;
}

enum snapimage_state snapimage_poll(struct snapimage *s)
{
        int status;
        pid_t w;

        if (s->state != SNAPIMAGE_MAKING) {
                return s->state;
        }
        do {
                w = waitpid(s->pid, &status, WNOHANG);
        } while (w < 0 && errno == EINTR);
        if (w == 0) {
                return s->state;
        }
        s->pid = 0;
        if (w < 0) {
                status = 0xff00; /* reaped elsewhere: treat as failed */
        }
        finished(s, status);
        return s->state;
}

struct snapimage_bytes snapimage_take(struct snapimage *s)
{
        struct snapimage_bytes b = s->bytes;

        memset(&s->bytes, 0, sizeof s->bytes);
        s->state = SNAPIMAGE_NONE;
        return b;
}

void snapimage_bytes_free(struct snapimage_bytes *b)
{
        if (b->base == NULL) {
                return;
        }
        if (b->mapped) {
                munmap(b->base, b->len);
        } else {
                raft_free(b->base);
        }
        memset(b, 0, sizeof *b);
}

int snapimage_bytes_write(int dir_fd, const void *p, size_t len,
                          struct snapimage_bytes *out)
{
        int fd = unnamed_file(dir_fd);
        int err = 0;
        void *m = MAP_FAILED;

        memset(out, 0, sizeof *out);
        if (fd < 0) {
                return errno;
        }
        errno = 0;
        if (write_all(fd, p, len) == 0) {
                m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        }
        if (m == MAP_FAILED) {
                /* write(2) returning 0 sets no errno: say it was short. */
                err = errno != 0 ? errno : EIO;
        }
        close(fd); /* the mapping keeps the file */
        if (err != 0) {
                return err;
        }
        out->base = m;
        out->len = len;
        out->mapped = true;
        out->on_disk = true;
        return 0;
}

void snapimage_bytes_evict(const struct snapimage_bytes *b)
{
        if (b->on_disk) {
                (void)madvise(b->base, b->len, MADV_DONTNEED);
        }
}

void snapimage_cancel(struct snapimage *s)
{
        if (s->state == SNAPIMAGE_MAKING) {
                s->n_cancelled++;
                kill(s->pid, SIGKILL);
                while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
                }
                close(s->fd);
                s->fd = -1;
                s->pid = 0;
        }
        snapimage_bytes_free(&s->bytes);
        s->state = SNAPIMAGE_NONE;
}
