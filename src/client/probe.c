/* A one-shot STATUS of one node over a short connection of its own. */
#include "probe.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../proto/proto.h"
#include "clock.h"
#include "resolve.h"

/* Wait for `events` on fd until `deadline`: 0, or BATON_ENOANSWER. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd pfd = {fd, events, 0};

        for (;;) {
                int64_t left = deadline - clock_now_ms();
                int rv;
                if (left <= 0) {
                        return BATON_ENOANSWER;
                }
                rv = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
                if (rv > 0) {
                        return 0;
                }
                if (rv < 0 && errno != EINTR) {
                        return BATON_EIO;
                }
        }
}

/* Send the STATUS frame and read frames until its reply. */
static int exchange(int fd, const char *endpoint, int64_t deadline,
                    struct baton_status *out)
{
        uint8_t frame[PROTO_HEADER_SIZE], buf[4096];
        struct proto_reader reader;
        struct proto_status ps;
        size_t len = proto_write_empty(frame, sizeof frame, 1, PROTO_STATUS);
        size_t off = 0;
        int rv = 0;

        while (off < len) {
                ssize_t n = send(fd, frame + off, len - off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0) {
                        off += (size_t)n;
                } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        rv = wait_fd(fd, POLLOUT, deadline);
                        if (rv != 0) {
                                return rv;
                        }
                } else {
                        return BATON_EIO;
                }
        }
        proto_reader_init(&reader, PROTO_MAX_BODY, &mem_libc);
        for (;;) {
                ssize_t n;
                rv = wait_fd(fd, POLLIN, deadline);
                if (rv != 0) {
                        break;
                }
                n = read(fd, buf, sizeof buf);
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                        continue;
                }
                if (n <= 0) {
                        rv = BATON_EIO;
                        break;
                }
                for (off = 0; off < (size_t)n && rv == 0;) {
                        long used = proto_reader_feed(&reader, buf + off,
                                                      (size_t)n - off);
                        if (used < 0) {
                                rv = BATON_EMALFORMED;
                                break;
                        }
                        off += (size_t)used;
                        if (!reader.ready || reader.h.id != 1) {
                                continue;
                        }
                        if (reader.h.type != PROTO_STATUS_REPLY ||
                            proto_read_status(reader.body, reader.h.length,
                                              &ps) != 0) {
                                rv = BATON_EMALFORMED;
                                break;
                        }
                        proto_status_export(out, endpoint, &ps);
                        proto_reader_close(&reader);
                        return 0;
                }
                if (rv != 0) {
                        break;
                }
        }
        proto_reader_close(&reader);
        return rv;
}

/* Connect `fd` to `ai`, waiting until `deadline`: 0 or a BATON_E* code. */
static int connect_one(int fd, const struct addrinfo *ai, int64_t deadline)
{
        socklen_t len = sizeof(int);
        int err = 0;
        int rv;

        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                return 0;
        }
        if (errno != EINPROGRESS) {
                return BATON_EIO;
        }
        rv = wait_fd(fd, POLLOUT, deadline);
        if (rv != 0) {
                return rv;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
                return BATON_EIO;
        }
        return 0;
}

int probe_status(const char *endpoint, int64_t deadline,
                 struct baton_status *out)
{
        struct addrinfo *addrs;
        struct addrinfo *ai;
        int fd = -1;
        int rv;

        rv = resolve_endpoint(endpoint, &addrs);
        if (rv != 0) {
                return rv;
        }
        rv = BATON_EIO;
        for (ai = addrs; ai != NULL && rv != BATON_ENOANSWER;
             ai = ai->ai_next) {
                fd = socket(ai->ai_family,
                            SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0) {
                        continue;
                }
                rv = connect_one(fd, ai, deadline);
                if (rv == 0) {
                        break;
                }
                close(fd);
                fd = -1;
        }
        freeaddrinfo(addrs);
        if (fd < 0) {
                return rv;
        }
        rv = exchange(fd, endpoint, deadline, out);
        close(fd);
        return rv;
}
