/* A one-shot STATUS of one node over a short connection of its own. */
#include "probe.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/address.h"
#include "../proto/proto.h"
#include "clock.h"

/* Wait for `events` on fd until `deadline`: 0, or BATON_ETIMEOUT. */
static int wait_fd(int fd, short events, int64_t deadline)
{
        struct pollfd pfd = {fd, events, 0};

        for (;;) {
                int64_t left = deadline - clock_now_ms();
                int rv;
                if (left <= 0) {
                        return BATON_ETIMEOUT;
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

static void copy_string(char *dst, size_t cap, const struct proto_string *s)
{
        size_t n = s->len < cap - 1 ? s->len : cap - 1;

        if (n > 0) {
                memcpy(dst, s->p, n);
        }
        dst[n] = '\0';
}

void probe_fill_status(struct baton_status *out, const char *endpoint,
                       const struct proto_status *ps)
{
        unsigned i;

        memset(out, 0, sizeof *out);
        snprintf(out->endpoint, sizeof out->endpoint, "%s", endpoint);
        out->id = ps->id;
        out->role = ps->role;
        out->term = ps->term;
        out->leader_id = ps->leader_id;
        out->commit_index = ps->commit_index;
        out->applied_index = ps->applied_index;
        out->last_index = ps->last_index;
        out->sessions = ps->sessions;
        out->locks = ps->locks;
        out->waiters = ps->waiters;
        out->n_members = ps->n_members;
        for (i = 0; i < ps->n_members; i++) {
                out->members[i].id = ps->members[i].id;
                out->members[i].role = ps->members[i].role;
                copy_string(out->members[i].raft_address,
                            sizeof out->members[i].raft_address,
                            &ps->members[i].raft_address);
                copy_string(out->members[i].client_address,
                            sizeof out->members[i].client_address,
                            &ps->members[i].client_address);
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
                        probe_fill_status(out, endpoint, &ps);
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

int probe_status(const char *endpoint, int64_t deadline,
                 struct baton_status *out)
{
        struct sockaddr_in sa;
        socklen_t len = sizeof(int);
        int fd, err = 0, rv;

        if (address_parse(endpoint, &sa) != 0) {
                return BATON_EINVAL;
        }
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                return BATON_EIO;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
                if (errno != EINPROGRESS) {
                        close(fd);
                        return BATON_EIO;
                }
                rv = wait_fd(fd, POLLOUT, deadline);
                if (rv != 0) {
                        close(fd);
                        return rv;
                }
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
                    err != 0) {
                        close(fd);
                        return BATON_EIO;
                }
        }
        rv = exchange(fd, endpoint, deadline, out);
        close(fd);
        return rv;
}
