/* The watch of the node's certificate's end of validity (see certwatch.h). */
#include "certwatch.h"

#include <stdio.h>
#include <time.h>

#include "../base/log.h"
#include "../config/certcheck.h"

#define DAY_S 86400

bool certwatch_warning(const char *path, int64_t not_after, int64_t now,
                       uint32_t days, char *out, size_t size)
{
        char when[64];

        if (days == 0 || not_after - now >= (int64_t)days * DAY_S) {
                return false;
        }
        certcheck_date(not_after, when, sizeof when);
        if (now >= not_after) {
                snprintf(out, size,
                         "tls-cert %s expired on %s: clients and peers "
                         "refuse it; make it again (scripts/certs) and send "
                         "SIGHUP",
                         path, when);
        } else {
                snprintf(out, size,
                         "tls-cert %s expires in %lld days, on %s (within "
                         "tls-expiry-warn-days = %u): make it again "
                         "(scripts/certs) and send SIGHUP",
                         path, (long long)((not_after - now) / DAY_S), when,
                         days);
        }
        return true;
}

static void warn_when_due(const struct certwatch *w)
{
        char msg[PATH_MAX + 256];

        if (w->not_after != 0 &&
            certwatch_warning(w->cfg->tls_cert, w->not_after,
                              (int64_t)time(NULL), w->cfg->tls_expiry_warn_days,
                              msg, sizeof msg)) {
                log_warn("%s", msg);
        }
}

static void on_tick(uv_timer_t *t)
{
        warn_when_due(t->data);
}

void certwatch_start(struct certwatch *w, uv_loop_t *loop,
                     const struct config *cfg, int64_t not_after)
{
        w->cfg = cfg;
        w->not_after = not_after;
        w->active = false;
        if (not_after == 0) {
                return;
        }
        warn_when_due(w);
        uv_timer_init(loop, &w->timer);
        w->timer.data = w;
        uv_timer_start(&w->timer, on_tick, CERTWATCH_PERIOD_MS,
                       CERTWATCH_PERIOD_MS);
        uv_unref((uv_handle_t *)&w->timer);
        w->active = true;
}

void certwatch_reread(struct certwatch *w)
{
        char err[CERTCHECK_ERRMSG_MAX];
        int64_t t;

        if (!w->active) {
                return;
        }
        if (certcheck_not_after(w->cfg->tls_cert, &t, err, sizeof err) != 0) {
                log_warn("%s", err);
                return;
        }
        w->not_after = t;
        warn_when_due(w);
}

int64_t certwatch_left(const struct certwatch *w, int64_t now)
{
        return w->not_after == 0 ? 0 : w->not_after - now;
}

void certwatch_close(struct certwatch *w)
{
        if (w->active) {
                uv_timer_stop(&w->timer);
                uv_close((uv_handle_t *)&w->timer, NULL);
                w->active = false;
        }
}
