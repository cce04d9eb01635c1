/* baton_health_check() and baton_session_close(). */
#include "health.h"

#include <string.h>

#include "../proto/command.h"
#include "../proto/reply.h"
#include "client.h"
#include "clock.h"

/* The shortest interval: a check every few ms is a busy loop. */
#define HEALTH_MIN_INTERVAL_MS 10

int health_close(struct baton_client *c, uint64_t id)
{
        struct session *s = &c->core.session;
        struct proto_result res;
        struct command k;
        int64_t now = clock_now_ms();
        int rv;

        session_tick(s, now);
        if (!session_usable(s) || (id != 0 && s->id != id)) {
                return BATON_ENOSESSION;
        }
        id = s->id;
        memset(&k, 0, sizeof k);
        k.type = COMMAND_CLOSE;
        rv = client_run(c, &k, clock_after(now, c->opts.request_timeout_ms),
                        &res);
        if (rv == 0 || rv == BATON_ECLOSED) {
                return 0; /* the answer ended the session (outcome.c) */
        }
        /* Not told, or told something else: give the session up here.
         * No keepalive goes out for it again, so the cluster frees its
         * locks when its TTL runs out; its locks are reported lost now. */
        session_ended(s, id, BATON_EEXPIRED, clock_now_ms());
        return client_user_status(rv) == BATON_EEXPIRED ? 0 : rv;
}

int baton_session_close(baton_client *c)
{
        int rv;

        if (c == NULL) {
                return BATON_EINVAL;
        }
        client_lock(c);
        rv = health_close(c, 0);
        client_unlock(c);
        return rv;
}

/* The thread: every interval, the check of the live session, and the
 * session closed when it fails. `mu` is held but while waiting and while
 * the check runs. */
static void *run(void *arg)
{
        struct baton_client *c = arg;
        struct health *h = &c->health;
        int64_t due;

        client_lock(c);
        due = clock_after(clock_now_ms(), h->interval_ms);
        while (!h->stop) {
                baton_health_fn fn = h->fn;
                void *data = h->data;
                struct timespec ts;
                uint64_t id;
                int bad;

                if (clock_now_ms() < due) {
                        ts = clock_timespec(due);
                        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
                        continue;
                }
                due = clock_after(clock_now_ms(), h->interval_ms);
                session_tick(&c->core.session, clock_now_ms());
                if (!session_usable(&c->core.session)) {
                        continue; /* nothing to end */
                }
                id = c->core.session.id;
                client_unlock(c);
                bad = fn(c, data);
                client_lock(c);
                if (bad != 0 && !h->stop) {
                        (void)health_close(c, id);
                }
        }
        client_unlock(c);
        return NULL;
}

void health_stop(struct baton_client *c)
{
        struct health *h = &c->health;
        bool join;

        pthread_mutex_lock(&c->mu);
        join = h->running;
        h->stop = true;
        h->running = false;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (join) {
                pthread_join(h->thread, NULL);
        }
}

int baton_health_check(baton_client *c, baton_health_fn check,
                       uint32_t interval_ms, void *data)
{
        struct health *h;
        int rv;

        if (c == NULL ||
            (check != NULL && interval_ms < HEALTH_MIN_INTERVAL_MS)) {
                return BATON_EINVAL;
        }
        h = &c->health;
        health_stop(c);
        if (check == NULL) {
                return 0;
        }
        pthread_mutex_lock(&c->mu);
        h->fn = check;
        h->data = data;
        h->interval_ms = interval_ms;
        h->stop = false;
        rv = pthread_create(&h->thread, NULL, run, c);
        h->running = rv == 0;
        pthread_mutex_unlock(&c->mu);
        return rv == 0 ? 0 : BATON_ENOMEM;
}
