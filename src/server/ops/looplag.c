/* Event-loop lag: how late a periodic timer fires, so that a loop busy
 * with one long task (a snapshot, a log to drop) shows in the metrics. */
#include "looplag.h"

#include "../base/log.h"

#define PERIOD_NS ((uint64_t)LOOPLAG_PERIOD_MS * 1000000)

static void on_tick(uv_timer_t *t)
{
        struct looplag *l = t->data;
        uint64_t now = uv_hrtime();
        uint64_t lag = now > l->due_ns ? now - l->due_ns : 0;

        histogram_add(&l->lag, lag);
        if (lag >= (uint64_t)LOOPLAG_WARN_MS * 1000000) {
                log_warn("event loop stalled %llu ms",
                         (unsigned long long)(lag / 1000000));
        }
        l->due_ns = now + PERIOD_NS;
}

void looplag_start(struct looplag *l, uv_loop_t *loop)
{
        uv_timer_init(loop, &l->timer);
        l->timer.data = l;
        l->due_ns = uv_hrtime() + PERIOD_NS;
        uv_timer_start(&l->timer, on_tick, LOOPLAG_PERIOD_MS,
                       LOOPLAG_PERIOD_MS);
        uv_unref((uv_handle_t *)&l->timer);
}

void looplag_close(struct looplag *l)
{
        uv_timer_stop(&l->timer);
        uv_close((uv_handle_t *)&l->timer, NULL);
}
