/* The handle's session: open, keepalives, local lease, seqs and the ack. */
#include "session.h"

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../proto/attach.h"
#include "clock.h"
#include "../lib/quotaname.h"
#include "outcome.h"
#include "request.h"

void session_init(struct session *s, uint32_t ttl_ms,
                  const struct core_env *env, struct registry *reg,
                  struct locks *locks, struct notify *notify,
                  const char *client_name)
{
        memset(s, 0, sizeof *s);
        s->env = env;
        s->reg = reg;
        s->locks = locks;
        s->notify = notify;
        s->client_name = client_name;
        s->state = BATON_SESSION_NONE;
        s->ttl_ms = ttl_ms;
        s->margin_ms = ttl_ms / 10 > SESSION_MARGIN_MIN_MS
                           ? ttl_ms / 10
                           : SESSION_MARGIN_MIN_MS;
        s->next_seq = 1;
}

bool session_usable(const struct session *s)
{
        return s->id != 0 && !s->validating &&
               (s->state == BATON_SESSION_LIVE ||
                s->state == BATON_SESSION_JEOPARDY);
}

/* Report `state` of the latest session at `now`: to the user's callback
 * and, if there is one, to the core's tracer. */
static void set_state(struct session *s, int state, int64_t now)
{
        const struct core_tracer *t;

        if (s->state != state) {
                s->state = state;
                notify_state(s->notify, state);
                registry_need_loop(s->reg); /* to deliver the callback */
                t = s->env->tracer;
                if (t != NULL) {
                        t->lease(t->data, s->last_id, state, now);
                }
        }
}

/* An open attempt is over: wake whoever waits for it. */
static void conclude(struct session *s, int status)
{
        s->open_status = status;
        s->epoch++;
        registry_changed(s->reg);
}

/* Our session is over for good: report it, lose its locks, fail its
 * requests. It is never used again. */
static void expire(struct session *s, int status, int64_t now)
{
        uint64_t id = s->id;

        if (id == 0) {
                return;
        }
        if (s->validating) {
                s->validating = false;
                conclude(s, BATON_EEXPIRED);
        }
        s->id = 0;
        s->ka_now = false;
        set_state(s, BATON_SESSION_EXPIRED, now);
        locks_end_session(s->locks, id, s->notify, now);
        registry_fail_session(
            s->reg, id,
            status == BATON_ECLOSED ? BATON_ECLOSED : BATON_EEXPIRED, now);
        registry_changed(s->reg);
}

void session_ended(struct session *s, uint64_t session, int status, int64_t now)
{
        if (session != 0 && session == s->id) {
                expire(s, status, now);
        }
}

int64_t session_jeopardy_at(const struct session *s)
{
        return s->acked_sent + s->ttl_ms / 2 + 1;
}

int64_t session_expires_at(const struct session *s)
{
        return s->acked_sent + s->ttl_ms - s->margin_ms;
}

int session_lease_at(const struct session *s, int64_t now)
{
        if (s->id == 0 || s->validating) {
                return s->state;
        }
        if (now >= session_expires_at(s)) {
                return BATON_SESSION_EXPIRED;
        }
        if (now >= session_jeopardy_at(s)) {
                return BATON_SESSION_JEOPARDY;
        }
        return BATON_SESSION_LIVE;
}

/* Lease states as of `now`. */
static void check_lease(struct session *s, int64_t now)
{
        int state;

        if (s->id == 0 || s->validating) {
                return;
        }
        state = session_lease_at(s, now);
        if (state == BATON_SESSION_EXPIRED) {
                expire(s, BATON_EEXPIRED, now);
        } else {
                set_state(s, state, now);
        }
}

void session_tick(struct session *s, int64_t now)
{
        struct request *r;

        check_lease(s, now);
        if (s->id == 0 || s->keepalive != NULL) {
                return;
        }
        if (!s->ka_now && now - s->ka_sent < s->ttl_ms / 3) {
                return;
        }
        r = s->ka_plain ? request_u64(PROTO_KEEPALIVE, s->id)
                        : request_keepalive(s->id);
        if (r == NULL) {
                return; /* the next tick tries again */
        }
        r->kind = REQUEST_KEEPALIVE;
        s->keepalive = r;
        s->ka_now = false;
        registry_submit(s->reg, r, now);
}

int64_t session_next_event(const struct session *s)
{
        int64_t t = CLOCK_NEVER, ka;

        if (s->id == 0) {
                return t;
        }
        if (!s->validating) {
                t = session_expires_at(s);
                if (s->state == BATON_SESSION_LIVE) {
                        ka = session_jeopardy_at(s);
                        t = ka < t ? ka : t;
                }
        }
        if (s->keepalive == NULL) {
                ka = s->ka_now ? 0 : s->ka_sent + s->ttl_ms / 3;
                t = ka < t ? ka : t;
        }
        return t;
}

static void opened(struct session *s, struct request *r, int64_t now)
{
        s->opening = NULL;
        if (r->status != 0) {
                s->ttl_min = r->res.count;
                s->ttl_max = r->res.waiters;
                s->quota_kind = r->res.waiters; /* the same fields */
                s->quota_limit = r->res.count;
                conclude(s, r->status);
                return;
        }
        s->id = r->res.session;
        s->last_id = s->id;
        s->next_seq = 1;
        s->revoked_seen = 0;
        s->ka_plain = false;
        /* Every later connection attaches before acting in it. */
        registry_own(s->reg, s->id, s->secret);
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
        set_state(s, BATON_SESSION_LIVE, now);
        conclude(s, 0);
}

static void kept_alive(struct session *s, struct request *r, int64_t now)
{
        /* A lease that ran out before this answer was read stays out: the
         * answer cannot bring an expired session back. */
        check_lease(s, now);
        if (r->session != s->id) {
                return;
        }
        if (r->status == BATON_EEXPIRED || r->status == BATON_ECLOSED ||
            r->status == BATON_ENOSESSION) {
                expire(s, r->status, now);
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
                conclude(s, 0);
        }
        check_lease(s, now);
        if (r->revoked != s->revoked_seen) {
                /* An administrator took a grant away: find which. */
                s->revoked_seen = r->revoked;
                outcome_verify(s, now);
        }
}

void session_answered(struct session *s, struct request *r, int how,
                      int64_t now)
{
        if (r == s->opening) {
                opened(s, r, now);
        } else if (r == s->keepalive) {
                s->keepalive = NULL;
                if (how == REGISTRY_ANSWERED) {
                        kept_alive(s, r, now);
                } else if (how == REGISTRY_LOST) {
                        s->ka_now = true;
                } else if (r->status == BATON_EMALFORMED && !s->ka_plain) {
                        /* A server of an earlier version does not know the
                         * flag: ask again without it, and learn revokes
                         * only from refused releases until the next
                         * session. */
                        s->ka_plain = true;
                        s->ka_now = true;
                }
        }
}

int session_new_secret(const struct core_env *env, uint8_t *secret,
                       uint8_t *hash)
{
        if (env->secret(env->data, secret, ATTACH_SECRET_SIZE) != 0 ||
            attach_hash(secret, hash) != 0) {
                return BATON_EIO;
        }
        return 0;
}

static int start_open(struct session *s, int64_t now)
{
        uint8_t hash[ATTACH_HASH_SIZE];
        struct command k;
        struct request *r;
        int rv;

        rv = session_new_secret(s->env, s->secret, hash);
        if (rv != 0) {
                return rv;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_OPEN;
        k.hash = hash;
        k.nonce = s->env->random(s->env->data);
        k.ttl_ms = s->ttl_ms;
        k.delay_ms = s->lock_delay_ms;
        k.name = s->client_name;
        k.name_len = (uint8_t)strlen(s->client_name);
        r = request_command(&k, &rv);
        if (r == NULL) {
                return rv;
        }
        r->kind = REQUEST_OPEN;
        s->opening = r;
        registry_submit(s->reg, r, now);
        return 0;
}

/* The cluster's refusal of our OPEN, with what it said of its limits in
 * `why`. */
static int refused(const struct session *s, char *why, size_t size)
{
        if (s->open_status == BATON_EQUOTA) {
                quotaname_refused(why, size, s->quota_kind, s->quota_limit);
                return BATON_EQUOTA;
        }
        if (s->open_status != BATON_ETTL) {
                return s->open_status;
        }
        if (s->ttl_max == 0) {
                snprintf(why, size,
                         "session TTL %u ms out of range (the cluster does "
                         "not say its limits: see its min-ttl-ms and "
                         "max-ttl-ms)",
                         (unsigned)s->ttl_ms);
        } else {
                snprintf(why, size,
                         "session TTL %u ms out of range: the cluster "
                         "accepts %u..%u ms",
                         (unsigned)s->ttl_ms, (unsigned)s->ttl_min,
                         (unsigned)s->ttl_max);
        }
        return BATON_ETTL;
}

int session_ensure_step(struct session *s, uint64_t *seen, int64_t now,
                        char *why, size_t size)
{
        int rv;

        if (size > 0) {
                why[0] = '\0';
        }
        session_tick(s, now);
        if (session_usable(s)) {
                return 0;
        }
        if (s->epoch != *seen) {
                *seen = s->epoch;
                /* An expiry while validating is worth a new session; a
                 * refusal is the caller's answer. */
                if (s->open_status != 0 && s->open_status != BATON_EEXPIRED) {
                        return refused(s, why, size);
                }
        }
        if (s->opening == NULL && !s->validating) {
                rv = start_open(s, now);
                if (rv != 0) {
                        return rv;
                }
        }
        return 1;
}

/* The ack the next command carries: the lowest seq of a request that
 * pins it, or the next seq when none does. */
static uint64_t ack(const struct session *s)
{
        return registry_lowest_seq(s->reg, s->id, s->next_seq);
}

/* Whether a new seq fits in the window of unacknowledged seqs. */
static bool window_open(const struct session *s)
{
        return s->next_seq - ack(s) < SESSION_WINDOW;
}

struct request *session_command(struct session *s, struct command *k,
                                uint8_t kind, int *rv)
{
        struct request *r;

        k->session = s->id;
        k->seq = s->next_seq;
        k->ack = ack(s);
        r = request_command(k, rv);
        if (r != NULL) {
                s->next_seq++;
                r->kind = kind;
        }
        return r;
}

int session_submit_step(struct session *s, struct command *k, int64_t now,
                        struct request **out)
{
        struct request *r;
        int rv;

        session_tick(s, now);
        if (!session_usable(s)) {
                return BATON_EEXPIRED;
        }
        if (!window_open(s)) {
                return 1; /* waiting for room: the command is not made yet */
        }
        r = session_command(s, k,
                            k->type == COMMAND_ACQUIRE && k->wait_ms != 0
                                ? REQUEST_WAIT
                                : REQUEST_COMMAND,
                            &rv);
        if (r == NULL) {
                return rv;
        }
        registry_submit(s->reg, r, now);
        *out = r;
        return 0;
}

uint64_t session_detach(struct session *s, uint8_t *secret, int64_t now)
{
        uint64_t id = s->id;

        if (!session_usable(s)) {
                return 0;
        }
        if (secret != NULL) {
                memcpy(secret, s->secret, ATTACH_SECRET_SIZE);
        }
        registry_disown(s->reg, id);
        registry_drop(s->reg, s->keepalive);
        s->keepalive = NULL;
        s->id = 0;
        s->ka_now = false;
        locks_forget_session(s->locks, id, now);
        set_state(s, BATON_SESSION_NONE, now);
        registry_changed(s->reg);
        return id;
}

int64_t session_remaining(const struct session *s, int64_t now)
{
        int64_t left;

        if (!session_usable(s)) {
                return 0;
        }
        left = session_expires_at(s) - now;
        return left > 0 ? left : 0;
}
