/* An acquire call of libbaton, stepped in the client core. */
#include "acqop.h"

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/permname.h"
#include "../lib/quotaname.h"
#include "clock.h" /* CLOCK_NEVER only */
#include "core.h"

/* `t + ms`, saturating at CLOCK_NEVER, as the host's clock_after(). */
static int64_t after(int64_t t, int64_t ms)
{
        if (ms < 0 || t > CLOCK_NEVER - ms) {
                return CLOCK_NEVER;
        }
        return t + ms;
}

void acqop_init(const struct core *k, struct acqop *a, const char *name,
                uint8_t len, uint64_t owner, const struct acqop_ask *ask,
                int64_t wait_ms, int64_t timeout_ms, int64_t now)
{
        memset(a, 0, sizeof *a);
        a->phase = ACQOP_ENSURE;
        a->name = name;
        a->len = len;
        a->owner = owner;
        a->ask = *ask;
        a->wait_ms = wait_ms;
        a->start = now;
        /* The cluster ends the wait (log-ordered against grants); this
         * deadline only bounds the call when the cluster cannot answer. */
        a->deadline =
            wait_ms < 0 ? CLOCK_NEVER : after(now, wait_ms + timeout_ms);
        a->opening = after(now, timeout_ms) < a->deadline
                         ? after(now, timeout_ms)
                         : a->deadline;
        a->first = true;
        /* An OPEN that concludes from here on is the call's answer, and a
         * pass over the endpoints that fails from here on its verdict. */
        a->seen = k->session.epoch;
        a->mark = registry_mark(&k->registry);
}

/* A command of `type` on the call's name for `owner`, its other fields
 * zero, as the phase's command. */
static void command(struct acqop *a, uint8_t type, uint64_t owner)
{
        memset(&a->k, 0, sizeof a->k);
        a->k.type = type;
        a->k.owner = owner;
        a->k.name = a->name;
        a->k.name_len = a->len;
}

/* The call's ACQUIRE (or MULTI) as the phase's command. */
static void ask_command(struct acqop *a)
{
        const struct acqop_ask *q = &a->ask;

        command(a, COMMAND_ACQUIRE, a->owner);
        if (q->list != NULL) {
                a->k.type = COMMAND_MULTI;
                a->k.list = q->list;
                a->k.list_len = q->list_len;
                a->k.n_names = q->n_names;
                return;
        }
        a->k.mode = q->mode;
        a->k.permits = q->permits;
        a->k.limit = q->limit;
        a->k.value = q->value;
        a->k.value_len = q->value_len;
        a->k.hold_ms = q->hold_ms;
}

/* Move to `phase`, whose command (if any) is still to be submitted: a wait
 * for room in the window starts at the registry's pass now. */
static void enter(struct core *k, struct acqop *a, enum acqop_phase phase)
{
        a->phase = phase;
        a->r = NULL;
        a->mark = registry_mark(&k->registry);
}

/* Ask (again) at `now`, for all of the wait the first time, for what is
 * left of it after: 0, or BATON_ETIMEDOUT when nothing is left. */
static int ask(struct core *k, struct acqop *a, int64_t now)
{
        int64_t left;

        if (a->wait_ms < 0) {
                a->wait = COMMAND_WAIT_FOREVER;
        } else if (a->first || a->wait_ms == 0) {
                a->wait = (uint32_t)a->wait_ms;
        } else {
                left = a->start + a->wait_ms - now;
                if (left <= 0) {
                        return BATON_ETIMEDOUT;
                }
                a->wait = (uint32_t)left;
        }
        a->first = false;
        ask_command(a);
        a->k.wait_ms = a->wait;
        a->before = locks_count(&k->locks, k->session.id, a->name, a->len,
                                a->owner, a->ask.mode);
        enter(k, a, ACQOP_ASK);
        return 0;
}

/* The request of the phase at `now`: submitted once the window has room
 * (a QUERY needs none), then awaited. 1 while it waits; 0 with its answer
 * in a->ans (and its status in `*status`), or why it could not be made. */
static int run(struct core *k, struct acqop *a, int64_t now, int *status)
{
        struct request *r = NULL;
        int rv;

        if (a->r == NULL && a->phase == ACQOP_QUERY) {
                r = request_read(PROTO_QUERY, a->name, a->len, 0);
                if (r == NULL) {
                        return BATON_ENOMEM;
                }
                registry_submit(&k->registry, r, now);
                a->r = r;
        } else if (a->r == NULL) {
                rv = session_submit_step(&k->session, &a->k, now, &r);
                if (rv != 0) {
                        return rv;
                }
                if (a->phase == ACQOP_ASK) {
                        r->before = a->before;
                }
                a->r = r;
        }
        if (a->r->state != REQUEST_DONE) {
                return 1;
        }
        *status = a->r->status;
        a->ans = a->r->res;
        a->ans.client_name.p = NULL; /* it goes with the request */
        a->ans.client_name.len = 0;
        a->seq = a->r->seq;
        registry_drop(&k->registry, a->r);
        a->r = NULL;
        return 0;
}

/* Ask again, for what is left of the wait: 1 (step on), or
 * BATON_ETIMEDOUT. */
static int again(struct core *k, struct acqop *a, int64_t now)
{
        int rv = ask(k, a, now);

        return rv != 0 ? rv : 1;
}

/* The call is granted, as `res` says. */
static int granted(struct acqop *a, const struct proto_result *res)
{
        a->res = *res;
        a->res.status = 0;
        return 0;
}

/* Record a grant of the call with `token` and `count` holds, learnt at
 * `now`: each name of a MULTI, or the name. */
static void record(struct core *k, struct acqop *a, uint64_t token,
                   uint32_t count, int64_t now)
{
        if (a->ask.list != NULL) {
                ask_command(a);
                (void)locks_set_list_at(&k->locks, k->session.id, &a->k, token,
                                        now);
                return;
        }
        (void)locks_set_at(&k->locks, k->session.id, a->name, a->len, a->owner,
                           a->ask.mode, token, count, now);
}

/* The ACQUIRE's answer `status`: the call's, or BATON_ESEQ for a wait the
 * cluster forgot, which a CANCEL of its seq recovers (1: step on). */
static int asked(struct core *k, struct acqop *a, int status)
{
        if (status != BATON_ESEQ || a->wait == 0) {
                return status == 0 ? granted(a, &a->ans) : status;
        }
        a->session = k->session.id;
        command(a, COMMAND_CANCEL, 0);
        a->k.target = a->seq;
        enter(k, a, ACQOP_CANCEL);
        return 1;
}

/* The CANCEL's answer: the wait was still queued (ask again), or it was
 * not, and a QUERY or a TRY says whether it was granted. */
static int cancelled(struct core *k, struct acqop *a, int status, int64_t now)
{
        if (status == 0) {
                return again(k, a, now);
        }
        if (status != BATON_ENOTWAITING) {
                return status;
        }
        if (a->ask.mode != COMMAND_MODE_EXCLUSIVE || a->ask.list != NULL) {
                ask_command(a);
                a->k.wait_ms = COMMAND_WAIT_TRY;
                enter(k, a, ACQOP_TRY);
        } else {
                enter(k, a, ACQOP_QUERY);
        }
        return 1;
}

/* The QUERY's answer: the forgotten ACQUIRE was granted when the lock's
 * holder is the call's session and owner with more holds than before;
 * else it was not, and the call asks again. */
static int queried(struct core *k, struct acqop *a, int status, int64_t now)
{
        const struct proto_result *r = &a->ans;

        if (status != 0) {
                return status;
        }
        if (r->kind == PROTO_KIND_HOLDER && r->session == a->session &&
            r->owner == a->owner && r->count > a->before) {
                (void)locks_set_at(&k->locks, a->session, a->name, a->len,
                                   a->owner, a->ask.mode, r->token, r->count,
                                   now);
                return granted(a, r);
        }
        return again(k, a, now);
}

/*
 * The TRY's answer. GRANTED: it was not granted before and is now, as the
 * caller asked. REENTERED (a reader): the count says whether the forgotten
 * ACQUIRE was granted too, and then the try's hold goes back. EHELD (a
 * semaphore): the forgotten ACQUIRE was granted; the answer carries its
 * token (a MULTI: of all its names). BUSY: ask again.
 */
static int tried(struct core *k, struct acqop *a, int status, int64_t now)
{
        if (status == BATON_EBUSY) {
                return again(k, a, now);
        }
        if (status == BATON_EHELD) {
                record(k, a, a->ans.token, a->ans.count, now);
                a->ans.status = 0;
                a->ans.kind = PROTO_KIND_GRANTED;
                status = 0;
        }
        if (status != 0) {
                return status;
        }
        (void)granted(a, &a->ans);
        if (a->ans.kind == PROTO_KIND_REENTERED &&
            a->ans.count > a->before + 1) {
                command(a, COMMAND_RELEASE, a->owner);
                a->k.token = a->ans.token;
                enter(k, a, ACQOP_GIVE_BACK);
                return 1;
        }
        return 0;
}

/* The RELEASE of the try's own hold: the call returns the try's grant,
 * with the holds the RELEASE left. */
static int given_back(struct acqop *a, int status)
{
        if (status != 0) {
                return status;
        }
        a->res.count = a->ans.count;
        return 0;
}

/* What the answer `status` of the phase's request means: 0 (granted), 1
 * (step on: the next phase's request is to go out) or the call's code. */
static int answered(struct core *k, struct acqop *a, int status, int64_t now)
{
        switch (a->phase) {
        case ACQOP_ASK:
                return asked(k, a, status);
        case ACQOP_CANCEL:
                return cancelled(k, a, status, now);
        case ACQOP_QUERY:
                return queried(k, a, status, now);
        case ACQOP_TRY:
                return tried(k, a, status, now);
        case ACQOP_GIVE_BACK:
                return given_back(a, status);
        default:
                return BATON_EINVAL; /* no request in ENSURE or DONE */
        }
}

int acqop_step(struct core *k, struct acqop *a, int64_t now, char *why,
               size_t size)
{
        int rv, status = 0;

        why[0] = '\0';
        if (a->phase == ACQOP_DONE) {
                return BATON_EINVAL;
        }
        if (a->phase == ACQOP_ENSURE) {
                rv = session_ensure_step(&k->session, &a->seen, now, why, size);
                if (rv == 1) {
                        return 1;
                }
                if (rv == 0) {
                        why[0] = '\0'; /* the detail is a refusal's only */
                        rv = again(k, a, now);
                }
        } else {
                rv = 1;
        }
        while (rv == 1) {
                rv = run(k, a, now, &status);
                if (rv == 1) {
                        return 1; /* wait for the answer, or for room */
                }
                if (rv == 0) {
                        rv = answered(k, a, status, now);
                }
        }
        if (rv == BATON_EQUOTA && why[0] == '\0') {
                /* The answer's refusal; an OPEN's is said already. */
                quotaname_refused(why, size, a->ans.waiters, a->ans.count);
        } else if (rv == BATON_EPERM && why[0] == '\0' && a->ans.count != 0) {
                permname_refused(why, size, (int)a->ans.count,
                                 a->ask.n_names > 1 ? NULL : a->name, a->len,
                                 false);
        }
        a->phase = ACQOP_DONE;
        return rv;
}

int acqop_verdict(struct core *k, struct acqop *a, bool expired, int64_t now,
                  char *why, size_t size)
{
        const struct request *on = a->r;
        uint64_t mark = a->r != NULL ? a->r->mark : a->mark;
        int rv;

        why[0] = '\0';
        if (a->phase == ACQOP_ENSURE) {
                /* The OPEN is the session's: one that never went out lets
                 * the call give up when no node can be reached (it goes on
                 * in the background). */
                on = k->session.opening;
        }
        rv = core_verdict(k, mark, on, expired, why, size);
        if (rv == 0) {
                return 0;
        }
        if (a->r != NULL) {
                registry_abandon(&k->registry, a->r, now);
                a->r = NULL;
                /* Never sent (no node could be reached): say so. Else the
                 * deadline came: a wait ran out. */
                if (a->phase == ACQOP_ASK && rv == BATON_ENOANSWER &&
                    a->wait_ms != 0) {
                        rv = BATON_ETIMEDOUT;
                        if (why[0] == '\0') {
                                snprintf(why, size, "%s",
                                         baton_strerror(BATON_ENOANSWER));
                        }
                }
        }
        a->phase = ACQOP_DONE;
        return rv;
}

int64_t acqop_deadline(const struct acqop *a)
{
        return a->phase == ACQOP_ENSURE ? a->opening : a->deadline;
}
