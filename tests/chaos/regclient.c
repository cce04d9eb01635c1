/* A chaos worker's connection to the fenced register: blocking I/O bounded
 * by poll() deadlines. */
#include "regclient.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void regclient_init(struct regclient *rc, const char *path, int worker,
                    int timeout_ms)
{
        memset(rc, 0, sizeof *rc);
        rc->path = path;
        rc->worker = worker;
        rc->timeout_ms = timeout_ms;
        rc->fd = -1;
}

void regclient_close(struct regclient *rc)
{
        if (rc->fd >= 0) {
                close(rc->fd);
                rc->fd = -1;
        }
        rc->in_len = 0;
}

/* Write all of `buf` before `deadline`: 0 or -1. */
static int send_all(struct regclient *rc, const char *buf, size_t len,
                    int64_t deadline)
{
        while (len > 0) {
                struct pollfd p = {.fd = rc->fd, .events = POLLOUT};
                int64_t left = deadline - now_ms();
                ssize_t n;

                if (left <= 0) {
                        return -1;
                }
                if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
                        return -1;
                }
                n = send(rc->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) {
                                continue;
                        }
                        return -1;
                }
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Read one line before `deadline` into `reply`: 0 or -1. */
static int recv_line(struct regclient *rc, char *reply, size_t cap,
                     int64_t deadline)
{
        for (;;) {
                char *nl = memchr(rc->in, '\n', rc->in_len);
                struct pollfd p = {.fd = rc->fd, .events = POLLIN};
                int64_t left;
                ssize_t n;

                if (nl != NULL) {
                        size_t len = (size_t)(nl - rc->in);
                        if (len >= cap) {
                                return -1;
                        }
                        memcpy(reply, rc->in, len);
                        reply[len] = '\0';
                        rc->in_len -= len + 1;
                        memmove(rc->in, nl + 1, rc->in_len);
                        return 0;
                }
                if (rc->in_len >= REGCLIENT_LINE_MAX) {
                        return -1; /* an answer longer than any we expect */
                }
                left = deadline - now_ms();
                if (left <= 0) {
                        return -1;
                }
                if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
                        return -1;
                }
                n = recv(rc->fd, rc->in + rc->in_len,
                         REGCLIENT_LINE_MAX - rc->in_len, MSG_DONTWAIT);
                if (n == 0) {
                        return -1;
                }
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR) {
                                continue;
                        }
                        return -1;
                }
                rc->in_len += (size_t)n;
        }
}

/* Connect and say HELLO: 0 or -1 (nothing open). */
static int connect_register(struct regclient *rc, int64_t deadline)
{
        struct sockaddr_un sa;
        char line[64], reply[REGCLIENT_LINE_MAX + 1];
        int n;

        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        if (strlen(rc->path) >= sizeof sa.sun_path) {
                return -1;
        }
        strcpy(sa.sun_path, rc->path);
        rc->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (rc->fd < 0) {
                return -1;
        }
        if (connect(rc->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                regclient_close(rc);
                return -1;
        }
        rc->in_len = 0;
        n = snprintf(line, sizeof line, "HELLO %d\n", rc->worker);
        if (send_all(rc, line, (size_t)n, deadline) != 0 ||
            recv_line(rc, reply, sizeof reply, deadline) != 0 ||
            strcmp(reply, "OK") != 0) {
                regclient_close(rc);
                return -1;
        }
        return 0;
}

int regclient_request(struct regclient *rc, const char *line, char *reply,
                      size_t cap)
{
        int64_t deadline = now_ms() + rc->timeout_ms;
        char buf[REGCLIENT_LINE_MAX + 2];
        int n;

        n = snprintf(buf, sizeof buf, "%s\n", line);
        if (n < 0 || (size_t)n >= sizeof buf) {
                return REGCLIENT_NOT_SENT;
        }
        if (rc->fd < 0 && connect_register(rc, deadline) != 0) {
                return REGCLIENT_NOT_SENT;
        }
        if (send_all(rc, buf, (size_t)n, deadline) != 0 ||
            recv_line(rc, reply, cap, deadline) != 0) {
                regclient_close(rc);
                return REGCLIENT_LOST;
        }
        return REGCLIENT_ANSWERED;
}
