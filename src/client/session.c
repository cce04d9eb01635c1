/* The handle's session: open, keepalives, local lease, seqs and the ack. */
#include "session.h"

#include <string.h>

#include "../proto/proto.h"
#include "client.h"
#include "clock.h"
#include "outcome.h"
#include "request.h"

void session_init(struct session *s, uint32_t ttl_ms)
{
        memset(s, 0, sizeof *s);
        s->state = BATON_SESSION_NONE;
        s->ttl_ms = ttl_ms;
        s->margin_ms = ttl_ms / 10 > SESSION_MARGIN_MIN_MS
                           ? ttl_ms / 10
                           : SESSION_MARGIN_MIN_MS;
        s->next_seq = 1;
}

bool session_usable(const struct baton_client *c)
{
        const struct session *s = &c->session;

        return s->id != 0 && !s->validating &&
               (s->state == BATON_SESSION_LIVE ||
                s->state == BATON_SESSION_JEOPARDY);
}

static void set_state(struct baton_client *c, int state)
{
        if (c->session.state != state) {
                c->session.state = state;
                notify_state(&c->notify, state);
                link_wake(&c->link);
        }
}

/* An open attempt is over: wake whoever waits for it. */
static void conclude(struct baton_client *c, int status)
{
        c->session.open_status = status;
        c->session.epoch++;
        pthread_cond_broadcast(&c->cv);
}

/* The first request of the ended session that has no final answer yet. */
static struct request *first_pending(struct baton_client *c, uint64_t id)
{
        struct queue *q;

        QUEUE_FOREACH(q, &c->requests)
        {
                struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->session == id && !r->done) {
                        return r;
                }
        }
        return NULL;
}

/* Our session is over for good: report it, lose its locks, fail its
 * requests. It is never used again. */
static void expire(struct baton_client *c, int status)
{
        struct session *s = &c->session;
        uint64_t id = s->id;
        struct request *r;

        if (id == 0) {
                return;
        }
        if (s->validating) {
                s->validating = false;
                conclude(c, BATON_EEXPIRED);
        }
        s->id = 0;
        s->ka_now = false;
        set_state(c, BATON_SESSION_EXPIRED);
        locks_end_session(&c->locks, id, &c->notify);
        /* Restart the walk after each failure: failing one request may
         * free another (the CANCEL of an orphaned ACQUIRE). */
        while ((r = first_pending(c, id)) != NULL) {
                outcome_fail(c, r,
                             status == BATON_ECLOSED ? BATON_ECLOSED
                                                     : BATON_EEXPIRED);
        }
        pthread_cond_broadcast(&c->cv);
}

void session_ended(struct baton_client *c, uint64_t session, int status)
{
        if (session != 0 && session == c->session.id) {
                expire(c, status);
        }
}

/* Lease states as of `now`. */
static void check_lease(struct baton_client *c, int64_t now)
{
        struct session *s = &c->session;

        if (s->id == 0 || s->validating) {
                return;
        }
        if (now >= s->acked_sent + s->ttl_ms - s->margin_ms) {
                expire(c, BATON_EEXPIRED);
        } else if (now - s->acked_sent > s->ttl_ms / 2) {
                set_state(c, BATON_SESSION_JEOPARDY);
        } else {
                set_state(c, BATON_SESSION_LIVE);
        }
}

void session_tick(struct baton_client *c, int64_t now)
{
        struct session *s = &c->session;
        struct request *r;

        check_lease(c, now);
        if (s->id == 0 || s->keepalive != NULL) {
                return;
        }
        if (!s->ka_now && now - s->ka_sent < s->ttl_ms / 3) {
                return;
        }
        r = request_u64(PROTO_KEEPALIVE, s->id);
        if (r == NULL) {
                return; /* the next tick tries again */
        }
        r->internal = true;
        s->keepalive = r;
        s->ka_now = false;
        link_submit(c, r);
}

int64_t session_next_event(const struct baton_client *c)
{
        const struct session *s = &c->session;
        int64_t t = CLOCK_NEVER, ka;

        if (s->id == 0) {
                return t;
        }
        if (!s->validating) {
                t = s->acked_sent + s->ttl_ms - s->margin_ms;
                if (s->state == BATON_SESSION_LIVE) {
                        ka = s->acked_sent + s->ttl_ms / 2 + 1;
                        t = ka < t ? ka : t;
                }
        }
        if (s->keepalive == NULL) {
                ka = s->ka_now ? 0 : s->ka_sent + s->ttl_ms / 3;
                t = ka < t ? ka : t;
        }
        return t;
}

static void opened(struct baton_client *c, struct request *r, int64_t now)
{
        struct session *s = &c->session;

        s->opening = NULL;
        if (r->status != 0) {
                conclude(c, r->status);
                return;
        }
        s->id = r->res.session;
        s->last_id = s->id;
        s->next_seq = 1;
        /* The cluster started the session's clock when it applied the
         * OPEN, after our first send of it. */
        s->acked_sent = r->first_sent_ms;
        s->ka_sent = r->first_sent_ms;
        if (now - r->first_sent_ms > s->ttl_ms / 2) {
                /* The OPEN took long (retries): live once a keepalive,
                 * dated from its own send, is acknowledged. */
                s->validating = true;
                s->ka_now = true;
                return;
        }
        set_state(c, BATON_SESSION_LIVE);
        conclude(c, 0);
}

static void kept_alive(struct baton_client *c, struct request *r, int64_t now)
{
        struct session *s = &c->session;

        s->keepalive = NULL;
        /* A lease that ran out before this answer was read stays out: the
         * answer cannot bring an expired session back. */
        check_lease(c, now);
        if (r->session != s->id) {
                return;
        }
        if (r->status == BATON_EEXPIRED || r->status == BATON_ECLOSED ||
            r->status == BATON_ENOSESSION) {
                expire(c, r->status);
                return;
        }
        s->ka_sent = r->sent_ms;
        if (r->status != 0) {
                return;
        }
        if (r->sent_ms > s->acked_sent) {
                s->acked_sent = r->sent_ms;
        }
        if (s->validating) {
                s->validating = false;
                conclude(c, 0);
        }
        check_lease(c, now);
}

void session_answered(struct baton_client *c, struct request *r)
{
        int64_t now = clock_now_ms();

        if (r == c->session.opening) {
                opened(c, r, now);
        } else if (r == c->session.keepalive) {
                kept_alive(c, r, now);
        }
        client_discard(c, r);
}

void session_conn_lost(struct baton_client *c, uint64_t gen)
{
        struct session *s = &c->session;

        /* A keepalive is dated by its send: never resend it, send anew. */
        if (s->keepalive != NULL && s->keepalive->gen == gen &&
            s->keepalive->sends > 0) {
                client_discard(c, s->keepalive);
                s->ka_now = true;
        }
}

static int start_open(struct baton_client *c)
{
        struct command k;
        struct request *r;
        int rv;

        memset(&k, 0, sizeof k);
        k.type = COMMAND_OPEN;
        k.nonce = clock_random();
        k.ttl_ms = c->session.ttl_ms;
        k.name = c->client_name;
        k.name_len = (uint8_t)strlen(c->client_name);
        r = request_command(&k, &rv);
        if (r == NULL) {
                return rv;
        }
        r->internal = true;
        c->session.opening = r;
        link_submit(c, r);
        return 0;
}

/* Wait on the handle's condition variable; false once `deadline` passed. */
static bool wait_until(struct baton_client *c, int64_t deadline)
{
        struct timespec ts;

        if (clock_now_ms() >= deadline) {
                return false;
        }
        ts = clock_timespec(deadline);
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        return true;
}

int session_ensure(struct baton_client *c, int64_t deadline)
{
        struct session *s = &c->session;
        uint64_t seen = s->epoch;
        int rv;

        for (;;) {
                session_tick(c, clock_now_ms());
                if (session_usable(c)) {
                        return 0;
                }
                if (s->epoch != seen) {
                        seen = s->epoch;
                        /* An expiry while validating is worth a new
                         * session; a refusal is the caller's answer. */
                        if (s->open_status != 0 &&
                            s->open_status != BATON_EEXPIRED) {
                                return s->open_status;
                        }
                }
                if (s->opening == NULL && !s->validating) {
                        rv = start_open(c);
                        if (rv != 0) {
                                return rv;
                        }
                }
                if (!wait_until(c, deadline)) {
                        return BATON_ETIMEOUT;
                }
        }
}

uint64_t session_detach(struct baton_client *c)
{
        struct session *s = &c->session;
        uint64_t id = s->id;

        if (!session_usable(c)) {
                return 0;
        }
        if (s->keepalive != NULL) {
                client_discard(c, s->keepalive);
        }
        s->id = 0;
        s->ka_now = false;
        locks_forget_session(&c->locks, id);
        set_state(c, BATON_SESSION_NONE);
        pthread_cond_broadcast(&c->cv);
        return id;
}

uint64_t session_ack(const struct baton_client *c)
{
        const struct session *s = &c->session;
        uint64_t ack = s->next_seq;
        struct queue *q;

        QUEUE_FOREACH(q, &c->requests)
        {
                const struct request *r = QUEUE_DATA(q, struct request, link);
                if (r->pins_ack && !r->done && r->session == s->id &&
                    r->seq < ack) {
                        ack = r->seq;
                }
        }
        return ack;
}

bool session_window_open(const struct baton_client *c)
{
        return c->session.next_seq - session_ack(c) < SESSION_WINDOW;
}

int64_t session_remaining(const struct baton_client *c, int64_t now)
{
        const struct session *s = &c->session;
        int64_t left;

        if (!session_usable(c)) {
                return 0;
        }
        left = s->acked_sent + s->ttl_ms - s->margin_ms - now;
        return left > 0 ? left : 0;
}
