/* batond under a service manager (see service.h). */
#include "service.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "../../../include/baton.h"
#include "../base/log.h"

void service_describe(char *buf, size_t cap, uint8_t role, uint64_t self,
                      uint64_t leader, uint64_t term, bool serving)
{
        if (role == BATON_ROLE_LEADER) {
                snprintf(buf, cap,
                         serving ? "leader of term %" PRIu64 ", serving clients"
                                 : "leader of term %" PRIu64
                                   ", catching up before serving",
                         term);
        } else if (role == BATON_ROLE_UNAVAILABLE) {
                snprintf(buf, cap, "raft not running");
        } else if (leader != 0 && leader != self) {
                snprintf(buf, cap,
                         "follower of node %" PRIu64 " in term %" PRIu64
                         ", redirecting clients to it",
                         leader, term);
        } else {
                snprintf(buf, cap,
                         "no leader known in term %" PRIu64
                         ", election under way",
                         term);
        }
}

/*
 * The manager's socket, from NOTIFY_SOCKET: a path, or an abstract name
 * written with a leading '@'. sd_notify(3) blocks while the manager's
 * queue is full (net.unix.max_dgram_qlen datagrams, 10 by default), which
 * would freeze the event loop whenever the manager is slow to read; this
 * socket never blocks. Another kind of address (vsock:) is left to
 * sd_notify. False if there is none of ours.
 */
static bool open_socket(struct service *s, const char *env)
{
        size_t len = strlen(env);

        if ((env[0] != '/' && env[0] != '@') || len < 2 ||
            len >= sizeof s->addr.sun_path) {
                return false;
        }
        memset(&s->addr, 0, sizeof s->addr);
        s->addr.sun_family = AF_UNIX;
        memcpy(s->addr.sun_path, env, len);
        if (env[0] == '@') {
                s->addr.sun_path[0] = '\0'; /* abstract: no NUL at the end */
                s->addr_len =
                    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
        } else {
                s->addr_len = (socklen_t)sizeof s->addr;
        }
        s->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        return s->fd >= 0;
}

/* Send `text` (sd_notify's newline-separated assignments) without
 * blocking: 0, -EAGAIN while the manager's queue is full, or -errno. */
static int send_text(struct service *s, const char *text)
{
        if (s->fd < 0) {
                return sd_notify(0, text) < 0 ? -EIO : 0;
        }
        if (sendto(s->fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT,
                   (const struct sockaddr *)&s->addr, s->addr_len) < 0) {
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        }
        return 0;
}

/* Say what is owed (READY=1, STOPPING=1, the STATUS= text in s->last),
 * in one message; kept owed while the manager's queue is full, and sent
 * again from the next timer tick. */
static void flush(struct service *s)
{
        char line[sizeof s->last + 48];
        int rv;

        if (!s->owe_ready && !s->owe_stopping && !s->owe_status) {
                return;
        }
        snprintf(line, sizeof line, "%s%sSTATUS=%s",
                 s->owe_ready ? "READY=1\n" : "",
                 s->owe_stopping ? "STOPPING=1\n" : "", s->last);
        rv = send_text(s, line);
        if (rv == -EAGAIN) {
                return;
        }
        if (rv < 0) {
                log_warn("sending to NOTIFY_SOCKET failed: %s; the service "
                         "manager does not hear from batond",
                         strerror(-rv));
        } else {
                log_debug("told the service manager: %s", line);
        }
        s->owe_ready = s->owe_stopping = s->owe_status = false;
}

/* Describe what the node does now into s->last; whether that changed. */
static bool describe_now(struct service *s)
{
        struct proto_status st;
        char text[sizeof s->last];

        node_status(s->node, &st);
        service_describe(text, sizeof text, st.role, s->node->cfg->id,
                         st.leader_id, st.term, node_serving(s->node));
        if (strcmp(text, s->last) == 0) {
                return false;
        }
        memcpy(s->last, text, sizeof s->last);
        return true;
}

/* STATUS= when what the node does changed since the last one. */
static void on_status(uv_timer_t *t)
{
        struct service *s = t->data;

        if (!s->stopping && describe_now(s)) {
                s->owe_status = true;
        }
        flush(s);
}

/* From the loop: a loop stuck on one task misses its pings. A ping the
 * manager's full queue cannot take is dropped (the next comes in half its
 * period); it is said once, not at every ping. */
static void on_ping(uv_timer_t *t)
{
        struct service *s = t->data;
        int rv = send_text(s, "WATCHDOG=1");

        if (rv == -EAGAIN) {
                s->pings_dropped++;
                if (s->pings_dropped == 1) {
                        log_warn("the service manager's notify queue is "
                                 "full: WATCHDOG=1 dropped (it is not "
                                 "reading; batond goes on serving)");
                }
        } else if (rv < 0) {
                log_warn("WATCHDOG=1 to NOTIFY_SOCKET failed: %s",
                         strerror(-rv));
        }
        flush(s);
}

/* Whether the manager asked for pings, and every how many ms to send
 * them (half its period, as sd_watchdog_enabled(3) advises). */
static bool watchdog_period(struct service *s, uint64_t *ms)
{
        uint64_t usec = 0;
        int rv = sd_watchdog_enabled(0, &usec);

        if (rv < 0) {
                log_warn("WATCHDOG_USEC or WATCHDOG_PID is malformed (%s): "
                         "no watchdog pings",
                         strerror(-rv));
                return false;
        }
        if (rv == 0 || usec == 0) {
                return false;
        }
        s->watchdog_usec = usec;
        *ms = usec / 2000 > 0 ? usec / 2000 : 1;
        return true;
}

void service_ready(struct service *s, uv_loop_t *loop, struct node *node)
{
        const char *env = getenv("NOTIFY_SOCKET");
        uint64_t ms = 0;

        memset(s, 0, sizeof *s);
        s->fd = -1;
        s->loop = loop;
        s->node = node;
        s->notify = env != NULL;
        if (!s->notify) {
                return;
        }
        if (!open_socket(s, env) && env[0] != '/' && env[0] != '@') {
                log_info("NOTIFY_SOCKET %s: sent with sd_notify, which "
                         "blocks while the manager's queue is full",
                         env);
        }
        s->watchdog = watchdog_period(s, &ms);
        uv_timer_init(loop, &s->status);
        uv_timer_init(loop, &s->ping);
        s->status.data = s;
        s->ping.data = s;
        s->timers = true;
        describe_now(s);
        s->owe_ready = true;
        flush(s);
        uv_timer_start(&s->status, on_status, SERVICE_STATUS_PERIOD_MS,
                       SERVICE_STATUS_PERIOD_MS);
        if (s->watchdog) {
                log_info("systemd watchdog: WATCHDOG=1 every %llu ms",
                         (unsigned long long)ms);
                uv_timer_start(&s->ping, on_ping, ms, ms);
        }
}

void service_stopping(struct service *s, const char *why)
{
        if (!s->notify || s->stopping) {
                return;
        }
        s->stopping = true;
        snprintf(s->last, sizeof s->last, "%s", why);
        s->owe_stopping = s->owe_status = true;
        flush(s);
}

void service_close(struct service *s)
{
        if (s->fd >= 0) {
                flush(s); /* a last try */
                close(s->fd);
                s->fd = -1;
        }
        if (!s->timers) {
                return;
        }
        s->timers = false;
        uv_close((uv_handle_t *)&s->status, NULL);
        uv_close((uv_handle_t *)&s->ping, NULL);
}
