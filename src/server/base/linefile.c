/* A file of lines, each appended with one write(2), that logrotate may
 * rename away: the apply log's and the audit trail's. */
#include "linefile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../../include/baton/errors.h"

/* Open `path` to append, and whether its last line was cut: -1 (errno
 * set) when it cannot be opened. */
static int open_file(const char *path, bool *torn)
{
        int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        off_t end;
        char last;

        *torn = false;
        if (fd < 0) {
                return -1;
        }
        end = lseek(fd, 0, SEEK_END);
        if (end > 0 && pread(fd, &last, 1, end - 1) == 1) {
                *torn = last != '\n';
        }
        return fd;
}

int linefile_open(struct linefile *f, const char *path)
{
        f->fd = -1;
        f->torn = false;
        if (path == NULL || path[0] == '\0') {
                return 0;
        }
        f->fd = open_file(path, &f->torn);
        return f->fd < 0 ? BATON_EIO : 0;
}

int linefile_reopen(struct linefile *f, const char *path)
{
        bool torn;
        int fd;

        if (f->fd < 0) {
                return 0;
        }
        /* The new file first: a path that cannot be opened leaves the
         * lines going where they went. */
        fd = open_file(path, &torn);
        if (fd < 0) {
                return BATON_EIO;
        }
        close(f->fd);
        f->fd = fd;
        f->torn = torn;
        return 0;
}

void linefile_close(struct linefile *f)
{
        if (f->fd >= 0) {
                close(f->fd);
                f->fd = -1;
        }
}

bool linefile_on(const struct linefile *f)
{
        return f->fd >= 0;
}

int linefile_put(struct linefile *f, const char *line, size_t n)
{
        struct iovec iov[2] = {{(void *)"\n", 1}, {(void *)line, n}};
        int first = f->torn ? 0 : 1;
        size_t want = n + (f->torn ? 1 : 0);
        ssize_t rv;

        if (f->fd < 0 || n == 0) {
                return 0;
        }
        /* One writev(2), so the newline that ends a cut line and the line
         * after it go out together. */
        rv = writev(f->fd, &iov[first], 2 - first);
        if (rv < 0) {
                return errno;
        }
        f->torn = (size_t)rv < want;
        return f->torn ? ENOSPC : 0;
}
