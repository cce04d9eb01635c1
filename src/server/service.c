/* batond under a service manager (see service.h). */
#include "service.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "../../include/baton.h"
#include "log.h"

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

/* Send `text` (sd_notify's newline-separated assignments). */
static void notify(const char *text)
{
        int rv = sd_notify(0, text);

        if (rv < 0) {
                log_warn("sd_notify to NOTIFY_SOCKET failed: %s; the "
                         "service manager does not hear from batond",
                         strerror(-rv));
                return;
        }
        log_debug("sd_notify: %s", text);
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
static void update_status(struct service *s)
{
        char line[sizeof s->last + 16];

        if (!s->stopping && describe_now(s)) {
                snprintf(line, sizeof line, "STATUS=%s", s->last);
                notify(line);
        }
}

static void on_status(uv_timer_t *t)
{
        update_status(t->data);
}

/* From the loop: a loop stuck on one task misses its pings. */
static void on_ping(uv_timer_t *t)
{
        (void)t;
        if (sd_notify(0, "WATCHDOG=1") < 0) {
                log_warn("sd_notify WATCHDOG=1 failed");
        }
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
        char line[sizeof s->last + 32];
        uint64_t ms = 0;

        memset(s, 0, sizeof *s);
        s->loop = loop;
        s->node = node;
        s->notify = getenv("NOTIFY_SOCKET") != NULL;
        if (!s->notify) {
                return;
        }
        s->watchdog = watchdog_period(s, &ms);
        uv_timer_init(loop, &s->status);
        uv_timer_init(loop, &s->ping);
        s->status.data = s;
        s->ping.data = s;
        s->timers = true;
        describe_now(s);
        snprintf(line, sizeof line, "READY=1\nSTATUS=%s", s->last);
        notify(line);
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
        char line[sizeof s->last + 32];

        if (!s->notify || s->stopping) {
                return;
        }
        s->stopping = true;
        snprintf(line, sizeof line, "STOPPING=1\nSTATUS=%s", why);
        notify(line);
}

void service_close(struct service *s)
{
        if (!s->timers) {
                return;
        }
        s->timers = false;
        uv_close((uv_handle_t *)&s->status, NULL);
        uv_close((uv_handle_t *)&s->ping, NULL);
}
