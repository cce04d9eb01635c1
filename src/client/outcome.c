/* What the final answer of a request means for the handle: the lock table,
 * the end of the session, and finishing what orphaned and internal requests
 * started. */
#include "outcome.h"

#include <string.h>

#include "../proto/proto.h"
#include "client.h"
#include "request.h"

static bool session_over(int status)
{
        return status == BATON_EEXPIRED || status == BATON_ECLOSED ||
               status == BATON_ENOSESSION;
}

/* A command of the library's own for the live session; it pins the ack
 * until answered. Not held back by the window: it finishes what a caller
 * started, and a rare BATON_EINFLIGHT is retried. */
static void internal_command(struct baton_client *c, struct command *k,
                             struct request *target)
{
        struct request *r;
        int rv;

        k->session = c->session.id;
        k->seq = c->session.next_seq;
        k->ack = session_ack(c);
        r = request_command(k, &rv);
        if (r == NULL) {
                return;
        }
        c->session.next_seq++;
        r->internal = true;
        r->pins_ack = true;
        if (target != NULL) {
                r->target = target;
                target->cancel = r;
        }
        link_submit(c, r);
}

static void release_internal(struct baton_client *c, const struct request *r,
                             uint64_t token)
{
        struct command k;

        if (r->session != c->session.id || !session_usable(c)) {
                return; /* the session's end released it */
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_RELEASE;
        k.owner = r->owner;
        k.token = token;
        k.name = r->name;
        k.name_len = r->name_len;
        internal_command(c, &k, NULL);
}

void outcome_withdraw(struct baton_client *c, struct request *acquire)
{
        struct command k;

        if (acquire->session != c->session.id || !session_usable(c)) {
                return;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_CANCEL;
        k.target = acquire->seq;
        k.name = acquire->name;
        k.name_len = acquire->name_len;
        internal_command(c, &k, acquire);
}

/* An orphaned ACQUIRE whose answer was forgotten (BATON_ESEQ): ask who
 * holds the lock, and release it if this ACQUIRE turned out granted. */
static void check_internal(struct baton_client *c, const struct request *acq)
{
        struct request *r =
            request_read(PROTO_QUERY, acq->name, acq->name_len, 0);

        if (r == NULL) {
                return;
        }
        r->internal = true;
        r->follow = FOLLOW_RELEASE_IF_HELD;
        r->session = acq->session; /* also: failed if the session ends */
        r->owner = acq->owner;
        r->before = acq->before;
        link_submit(c, r);
}

/* Finish what an internal or orphaned request started. */
static void follow_up(struct baton_client *c, struct request *r)
{
        if (r->type == PROTO_COMMAND && r->cmd == COMMAND_ACQUIRE) {
                if (r->status == 0) {
                        /* Granted after its caller gave up. */
                        release_internal(c, r, r->res.token);
                } else if (r->status == BATON_ESEQ) {
                        check_internal(c, r);
                }
        } else if (r->type == PROTO_COMMAND && r->cmd == COMMAND_CANCEL) {
                /* CANCELLED: that waiter is gone and can never be granted,
                 * whether or not its own answer ever arrives. */
                if (r->status == 0 && r->target != NULL && !r->target->done) {
                        client_discard(c, r->target);
                }
        } else if (r->follow == FOLLOW_RELEASE_IF_HELD && r->status == 0 &&
                   r->res.kind == PROTO_KIND_HOLDER &&
                   r->res.session == r->session && r->res.owner == r->owner &&
                   r->res.count > r->before) {
                release_internal(c, r, r->res.token);
        }
}

void outcome_answered(struct baton_client *c, struct request *r)
{
        int st = r->status;

        r->done = true;
        if (r == c->session.opening || r == c->session.keepalive) {
                session_answered(c, r);
                pthread_cond_broadcast(&c->cv);
                return;
        }
        if (r->type == PROTO_COMMAND && r->session != 0 && !r->foreign) {
                if (r->cmd == COMMAND_CLOSE && (st == 0 || session_over(st))) {
                        session_ended(c, r->session, BATON_ECLOSED);
                } else if (session_over(st)) {
                        session_ended(c, r->session, st);
                } else if (st == 0 && (r->cmd == COMMAND_ACQUIRE ||
                                       (r->cmd == COMMAND_RELEASE &&
                                        r->res.kind == PROTO_KIND_RELEASED))) {
                        /* A failed copy only costs a lost-lock callback. */
                        (void)locks_set(&c->locks, r->session, r->name,
                                        r->name_len, r->owner, r->res.token,
                                        r->res.count);
                }
        }
        if (r->internal || r->orphan) {
                follow_up(c, r);
                client_discard(c, r);
        }
        pthread_cond_broadcast(&c->cv);
}

void outcome_fail(struct baton_client *c, struct request *r, int status)
{
        r->done = true;
        r->status = status;
        memset(&r->res, 0, sizeof r->res);
        r->res.status = status;
        if (r == c->session.opening) {
                session_answered(c, r);
        } else if (r->internal || r->orphan) {
                client_discard(c, r);
        }
        pthread_cond_broadcast(&c->cv);
}
