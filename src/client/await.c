/* The waits of a handle's calling threads. */
#include "await.h"

#include "client.h"
#include "clock.h"
#include "errmsg.h"

bool await_until(struct baton_client *c, int64_t deadline)
{
        struct timespec ts;

        /* What this thread did is told before it sleeps: its own request
         * may be what the background thread is to send. */
        client_effects(c);
        if (clock_now_ms() >= deadline) {
                return false;
        }
        ts = clock_timespec(deadline);
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        return true;
}

int await_unreachable(struct baton_client *c, uint64_t mark,
                      const struct request *r)
{
        char why[ERRMSG_MAX];
        int rv =
            registry_unreachable(&c->core.registry, mark, r, why, sizeof why);

        return rv != 0 ? errmsg_set(rv, "%s", why) : 0;
}

int await_no_answer(struct baton_client *c, uint64_t mark,
                    const struct request *r)
{
        char why[ERRMSG_MAX];
        int rv =
            registry_no_answer(&c->core.registry, mark, r, why, sizeof why);

        return errmsg_set(rv, "%s", why);
}

int await_request(struct baton_client *c, struct request *r, int64_t deadline)
{
        int rv;

        while (r->state != REQUEST_DONE) {
                rv = await_unreachable(c, r->mark, r);
                if (rv != 0) {
                        return rv;
                }
                if (!await_until(c, deadline)) {
                        return await_no_answer(c, r->mark, r);
                }
        }
        return 0;
}

int await_session(struct baton_client *c, int64_t deadline)
{
        struct session *s = &c->core.session;
        uint64_t seen = s->epoch, mark = registry_mark(&c->core.registry);
        char why[ERRMSG_MAX];
        int rv;

        for (;;) {
                rv = session_ensure_step(s, &seen, clock_now_ms(), why,
                                         sizeof why);
                if (rv < 0 && why[0] != '\0') {
                        return errmsg_set(rv, "%s", why);
                }
                if (rv != 1) {
                        return rv;
                }
                /* The OPEN is the session's: an OPEN that never went out
                 * lets the call give up when no node can be reached (the
                 * OPEN itself goes on in the background). */
                rv = await_unreachable(c, mark, s->opening);
                if (rv != 0) {
                        return rv;
                }
                if (!await_until(c, deadline)) {
                        return await_no_answer(c, mark, s->opening);
                }
        }
}

int await_submit(struct baton_client *c, struct command *k, int64_t deadline,
                 struct request **out)
{
        uint64_t mark = registry_mark(&c->core.registry);
        int rv;

        for (;;) {
                rv = session_submit_step(&c->core.session, k, clock_now_ms(),
                                         out);
                if (rv != 1) {
                        return rv;
                }
                /* Waiting for room: the command is not made yet. */
                rv = await_unreachable(c, mark, NULL);
                if (rv != 0) {
                        return rv;
                }
                if (!await_until(c, deadline)) {
                        return await_no_answer(c, mark, NULL);
                }
        }
}
