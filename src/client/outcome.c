/* What the final answer of a request means for the handle. */
#include "outcome.h"

#include <string.h>

#include "../proto/proto.h"
#include "session.h"

static bool session_over(int status)
{
        return status == BATON_EEXPIRED || status == BATON_ECLOSED ||
               status == BATON_ENOSESSION;
}

/* A command of the library's own for the live session, submitted at
 * `now`; it pins the ack until answered. Not held back by the window: it
 * finishes what a caller started, and a rare BATON_EINFLIGHT is retried. */
static void internal_command(struct session *s, struct command *k, uint8_t kind,
                             struct request *target, int64_t now)
{
        struct request *r;
        int rv;

        r = session_command(s, k, kind, &rv);
        if (r == NULL) {
                return;
        }
        if (target != NULL) {
                r->target = target;
                target->cancel = r;
        }
        registry_submit(s->reg, r, now);
}

static void release_name(struct session *s, const struct request *r,
                         const char *name, uint8_t len, uint64_t token,
                         int64_t now)
{
        struct command k;

        if (r->session != s->id || !session_usable(s)) {
                return; /* the session's end released it */
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.owner = r->owner;
        k.token = token;
        k.name = name;
        k.name_len = len;
        internal_command(s, &k, REQUEST_RELEASE, NULL, now);
}

/* Give back the grant of `token` that `r`, an ACQUIRE or a MULTI, was
 * answered with: every name of a MULTI. */
static void release_internal(struct session *s, const struct request *r,
                             uint64_t token, int64_t now)
{
        struct command k;
        const char *name;
        uint8_t mode, len;
        size_t at = 0;

        if (r->cmd != COMMAND_MULTI || request_command_of(r, &k) != 0) {
                release_name(s, r, r->name, r->name_len, token, now);
                return;
        }
        while (command_list_next(&k, &at, &mode, &name, &len)) {
                release_name(s, r, name, len, token, now);
        }
}

void outcome_withdraw(void *data, struct request *r, int64_t now)
{
        struct session *s = data;
        struct command k;

        if (r->session != s->id || !session_usable(s)) {
                return;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_CANCEL;
        k.target = r->seq;
        k.name = r->name;
        k.name_len = r->name_len;
        internal_command(s, &k, REQUEST_WITHDRAW, r, now);
}

/* An orphaned ACQUIRE whose answer was forgotten (BATON_ESEQ): find
 * out whether it was granted, and release it if so. A writer is the one
 * holder QUERY names; a reader or a semaphore's holder may be one of many,
 * so a try-acquire of the same asks instead: a reader's count says how
 * many holds to give back, a semaphore's or a MULTI's BATON_EHELD that
 * the forgotten one was granted (follow_up()). */
static void recheck(struct session *s, const struct request *acq, int64_t now)
{
        struct request *r;
        struct command k;
        int rv;

        if (acq->mode != COMMAND_MODE_EXCLUSIVE || acq->cmd == COMMAND_MULTI) {
                if (acq->session != s->id || !session_usable(s)) {
                        return; /* the session's end released it */
                }
                /* A MULTI's names and a candidate's value are in the
                 * frame. */
                if ((acq->cmd != COMMAND_MULTI &&
                     acq->mode != COMMAND_MODE_ELECTION) ||
                    request_command_of(acq, &k) != 0) {
                        memset(&k, 0, sizeof k);
                        k.type = COMMAND_ACQUIRE;
                        k.mode = acq->mode;
                        k.permits = acq->permits;
                        k.limit = acq->limit;
                        k.owner = acq->owner;
                        k.name = acq->name;
                        k.name_len = acq->name_len;
                }
                k.wait_ms = COMMAND_WAIT_TRY;
                r = session_command(s, &k, REQUEST_RECHECK, &rv);
                if (r != NULL) {
                        r->before = acq->before;
                        registry_submit(s->reg, r, now);
                }
                return;
        }
        r = request_read(PROTO_QUERY, acq->name, acq->name_len, 0);
        if (r == NULL) {
                return;
        }
        r->kind = REQUEST_RECHECK;
        r->session = acq->session; /* also: failed if the session ends */
        r->owner = acq->owner;
        r->before = acq->before;
        registry_submit(s->reg, r, now);
}

/* What a recheck found: give back the holds the caller never learnt of. */
static void recheck_done(struct session *s, const struct request *r,
                         int64_t now)
{
        if (r->status == BATON_EHELD) {
                /* The forgotten ACQUIRE of a semaphore, or MULTI, was
                 * granted. */
                release_internal(s, r, r->res.token, now);
                return;
        }
        if (r->status == 0 && r->cmd == COMMAND_MULTI) {
                release_internal(s, r, r->res.token, now); /* the try's */
                return;
        }
        if (r->status != 0) {
                return; /* not held (BUSY), or the session ended */
        }
        if (r->type == PROTO_COMMAND) {
                /* The try's hold, and the forgotten ACQUIRE's if it was
                 * granted: back to what the owner held before. */
                for (uint32_t n = r->res.count; n > r->before; n--) {
                        release_internal(s, r, r->res.token, now);
                }
        } else if (r->res.kind == PROTO_KIND_HOLDER &&
                   r->res.session == r->session && r->res.owner == r->owner &&
                   r->res.count > r->before) {
                release_internal(s, r, r->res.token, now);
        }
}

/* A MULTI granted (learnt at `now`): each of its names is held. */
static void record_multi(struct session *s, const struct request *r,
                         int64_t now)
{
        struct command k;

        if (request_command_of(r, &k) == 0) {
                (void)locks_set_list_at(s->locks, r->session, &k, r->res.token,
                                        now);
        }
}

/* Holders a verification reads: more than a lock that has them all says
 * nothing about a hold not among them (it is kept). */
#define VERIFY_HOLDERS 64

/* A verification's walk over the holds: the session, and the time its
 * questions are submitted at. */
struct verify_walk {
        struct session *s;
        int64_t now;
};

static void verify_one(void *data, const struct locks_hold *h)
{
        const struct verify_walk *w = data;
        struct request *r =
            request_holders(h->name, h->name_len, VERIFY_HOLDERS, false);

        if (r == NULL) {
                return; /* kept: the next revoke looks again */
        }
        r->kind = REQUEST_VERIFY;
        r->session = h->session; /* also: failed if the session ends */
        r->owner = h->owner;
        r->verify_token = h->token;
        registry_submit(w->s->reg, r, w->now);
}

void outcome_verify(struct session *s, int64_t now)
{
        struct verify_walk w = {s, now};

        locks_foreach(s->locks, s->id, verify_one, &w);
}

/* What a verification found (at `now`): a hold no longer among its lock's
 * holders was revoked. */
static void verify_done(struct session *s, const struct request *r, int64_t now)
{
        if (r->status != 0 || r->list_more || r->session != s->id) {
                return;
        }
        for (uint32_t i = 0; i < r->list_n; i++) {
                const struct baton_grant *g = &r->grants[i];
                if (g->session == r->session && g->owner == r->owner &&
                    g->token == r->verify_token) {
                        return; /* still held */
                }
        }
        locks_lose(s->locks, r->session, r->name, r->name_len, r->owner,
                   r->verify_token, s->notify, now);
}

/* Finish what an ENDED request started. */
static void follow_up(struct session *s, struct request *r, int64_t now)
{
        if (r->kind == REQUEST_RECHECK) {
                recheck_done(s, r, now);
        } else if (r->kind == REQUEST_VERIFY) {
                verify_done(s, r, now);
        } else if (r->type == PROTO_COMMAND &&
                   (r->cmd == COMMAND_ACQUIRE || r->cmd == COMMAND_MULTI)) {
                if (r->status == 0) {
                        /* Granted after its caller gave up. */
                        release_internal(s, r, r->res.token, now);
                } else if (r->status == BATON_ESEQ) {
                        recheck(s, r, now);
                }
        } else if (r->kind == REQUEST_WITHDRAW) {
                /* CANCELLED: that waiter is gone and can never be granted,
                 * whether or not its own answer ever arrives. */
                if (r->status == 0 && r->target != NULL &&
                    request_pending(r->target)) {
                        registry_drop(s->reg, r->target);
                }
        }
}

void outcome_final(void *data, struct request *r, int how, int64_t now)
{
        struct session *s = data;
        int st = r->status;

        if (r->kind == REQUEST_OPEN || r->kind == REQUEST_KEEPALIVE) {
                session_answered(s, r, how, now);
                return;
        }
        if (how != REGISTRY_ANSWERED) {
                return; /* a failure given here decides nothing */
        }
        if (r->type == PROTO_COMMAND && r->session != 0 &&
            r->kind != REQUEST_FOREIGN) {
                if (r->cmd == COMMAND_CLOSE && (st == 0 || session_over(st))) {
                        session_ended(s, r->session, BATON_ECLOSED, now);
                } else if (session_over(st)) {
                        session_ended(s, r->session, st, now);
                } else if (st == 0 && r->cmd == COMMAND_ACQUIRE) {
                        /* A failed copy only costs a lost-lock callback. */
                        (void)locks_set_at(s->locks, r->session, r->name,
                                           r->name_len, r->owner, r->mode,
                                           r->res.token, r->res.count, now);
                } else if (st == 0 && r->cmd == COMMAND_MULTI) {
                        record_multi(s, r, now);
                } else if (st == 0 && r->cmd == COMMAND_RELEASE &&
                           r->res.kind == PROTO_KIND_RELEASED) {
                        locks_released(s->locks, r->session, r->name,
                                       r->name_len, r->owner, r->res.token,
                                       r->res.count, now);
                }
        }
        if (r->state == REQUEST_ENDED) {
                follow_up(s, r, now);
        }
}
