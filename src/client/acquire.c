/* libbaton's acquire calls (include/baton.h): the exclusive and shared
 * lock and a semaphore's permits, each waiting as long as asked, and
 * recovering an ACQUIRE whose outcome the cluster forgot. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "await.h"
#include "client.h"
#include "clock.h"
#include "errmsg.h"
#include "request.h"

_Static_assert(BATON_MULTI_MAX == COMMAND_MULTI_MAX,
               "baton.h and the protocol agree on a multi-lock's names");

/* What an ACQUIRE asks for: a mode, and a semaphore's permits of limit,
 * or an election candidate's value; or a MULTI's names (`list`, as
 * command.h has it; its first name is the one the calls below are
 * given). */
struct ask {
        uint8_t mode;
        uint32_t permits;
        uint32_t limit;
        const uint8_t *list;
        uint16_t list_len;
        uint8_t n_names;
        const char *value;
        uint8_t value_len;
};

/* An ACQUIRE of `name` for `owner` asking for `a`, or its MULTI. */
static void ask_command(struct command *k, const char *name, uint8_t len,
                        uint64_t owner, const struct ask *a)
{
        client_command(k, COMMAND_ACQUIRE, name, len, owner);
        if (a->list != NULL) {
                k->type = COMMAND_MULTI;
                k->list = a->list;
                k->list_len = a->list_len;
                k->n_names = a->n_names;
                return;
        }
        k->mode = a->mode;
        k->permits = a->permits;
        k->limit = a->limit;
        k->value = a->value;
        k->value_len = a->value_len;
}

/* Record a grant of `a` with `token`: each name of a MULTI, or `name`. */
static void record(struct baton_client *c, const char *name, uint8_t len,
                   uint64_t owner, const struct ask *a,
                   const struct proto_result *r)
{
        struct command k;

        if (a->list != NULL) {
                ask_command(&k, name, len, owner, a);
                (void)locks_set_list(&c->core.locks, c->core.session.id, &k,
                                     r->token);
                return;
        }
        (void)locks_set(&c->core.locks, c->core.session.id, name, len, owner,
                        a->mode, r->token, r->count);
}

/*
 * recover() for a reader or a semaphore's holder, whom QUERY may not name
 * among many: a try-acquire of the same says. GRANTED: it was not granted
 * before and is now, as the caller asked. REENTERED (a reader): the count
 * says whether the forgotten ACQUIRE was granted too, and then the try's
 * hold goes back. EHELD (a semaphore): the forgotten ACQUIRE was granted;
 * the answer carries its token (a MULTI: of all its names). BUSY: ask
 * again.
 */
static int recover_try(struct baton_client *c, const char *name, uint8_t len,
                       uint64_t owner, const struct ask *a, uint32_t before,
                       int64_t deadline, struct proto_result *res)
{
        struct proto_result r, rel;
        struct command k;
        int rv;

        ask_command(&k, name, len, owner, a);
        k.wait_ms = COMMAND_WAIT_TRY;
        rv = client_run(c, &k, deadline, &r);
        if (rv == BATON_EBUSY) {
                return 1;
        }
        if (rv == BATON_EHELD) {
                record(c, name, len, owner, a, &r);
                r.status = 0;
                r.kind = PROTO_KIND_GRANTED;
                rv = 0;
        }
        if (rv != 0) {
                return rv;
        }
        if (r.kind == PROTO_KIND_REENTERED && r.count > before + 1) {
                client_command(&k, COMMAND_RELEASE, name, len, owner);
                k.token = r.token;
                rv = client_run(c, &k, deadline, &rel);
                if (rv != 0) {
                        return rv;
                }
                r.count = rel.count;
        }
        *res = r;
        return 0;
}

/*
 * The blocking ACQUIRE of `seq` was answered BATON_ESEQ: the cluster
 * forgot its outcome while it waited (the ack passed it) and the answer
 * was lost with a connection. Withdraw the wait if it is still queued,
 * else see whether it was granted. 0 (granted: `*res` says how), 1 (not
 * granted and not waiting: ask again), or an error.
 */
static int recover(struct baton_client *c, const char *name, uint8_t len,
                   uint64_t owner, const struct ask *a, uint64_t seq,
                   uint32_t before, int64_t deadline, struct proto_result *res)
{
        uint64_t session = c->core.session.id;
        struct proto_result r;
        struct command k;
        int rv;

        client_command(&k, COMMAND_CANCEL, name, len, 0);
        k.target = seq;
        rv = client_run(c, &k, deadline, &r);
        if (rv == 0) {
                return 1; /* it still waited: ask again */
        }
        if (rv != BATON_ENOTWAITING) {
                return rv;
        }
        if (a->mode != COMMAND_MODE_EXCLUSIVE || a->list != NULL) {
                return recover_try(c, name, len, owner, a, before, deadline,
                                   res);
        }
        rv = client_query(c, name, len, deadline, &r, NULL);
        if (rv != 0) {
                return rv;
        }
        if (r.kind == PROTO_KIND_HOLDER && r.session == session &&
            r.owner == owner && r.count > before) {
                (void)locks_set(&c->core.locks, session, name, len, owner,
                                a->mode, r.token, r.count);
                *res = r;
                res->status = 0;
                return 0;
        }
        return 1;
}

/* The wait of the next ACQUIRE of a call that began at `start`: all of
 * `wait_ms` the first time, what is left of it when asked again. 0 or
 * BATON_ETIMEDOUT. */
static int next_wait(int64_t start, int64_t wait_ms, bool first, uint32_t *wait)
{
        int64_t left;

        if (wait_ms < 0) {
                *wait = COMMAND_WAIT_FOREVER;
        } else if (first || wait_ms == 0) {
                *wait = (uint32_t)wait_ms;
        } else {
                left = start + wait_ms - clock_now_ms();
                if (left <= 0) {
                        return BATON_ETIMEDOUT;
                }
                *wait = (uint32_t)left;
        }
        return 0;
}

/* A wait whose answer did not come by its deadline: BATON_ETIMEDOUT, with
 * what the deadline's BATON_ENOANSWER said of the nodes. */
static int timed_out(void)
{
        char why[ERRMSG_MAX];

        /* Copied first: the detail lives in the record errmsg_set()
         * writes. */
        snprintf(why, sizeof why, "%s", baton_errmsg(BATON_ENOANSWER));
        return errmsg_set(BATON_ETIMEDOUT, "%s", why);
}

/* One loop: an ACQUIRE whose outcome the cluster forgot (BATON_ESEQ) is
 * recovered and asked again for what is left of the wait. `name` (`len`
 * bytes) is checked. */
static int acquire(baton_client *c, const char *name, uint8_t len,
                   uint64_t owner, const struct ask *a, int64_t wait_ms,
                   uint64_t *token)
{
        int64_t start = clock_now_ms(), deadline, timeout;
        struct proto_result res;
        struct request *r;
        struct command k;
        bool first = true;
        int rv;

        if (c == NULL || wait_ms < BATON_WAIT_FOREVER ||
            wait_ms >= (int64_t)COMMAND_WAIT_FOREVER) {
                return BATON_EINVAL;
        }
        owner = client_owner(owner);
        timeout = c->opts.request_timeout_ms;
        /* The cluster ends the wait (log-ordered against grants); this
         * deadline only bounds the call when the cluster cannot answer. */
        deadline =
            wait_ms < 0 ? CLOCK_NEVER : clock_after(start, wait_ms + timeout);
        memset(&res, 0, sizeof res);
        client_lock(c);
        rv = await_session(c, clock_after(start, timeout) < deadline
                                  ? clock_after(start, timeout)
                                  : deadline);
        while (rv == 0) {
                uint32_t wait;
                uint64_t seq;
                uint32_t before;
                rv = next_wait(start, wait_ms, first, &wait);
                if (rv != 0) {
                        break;
                }
                first = false;
                ask_command(&k, name, len, owner, a);
                k.wait_ms = wait;
                before = locks_count(&c->core.locks, c->core.session.id, name,
                                     len, owner, a->mode);
                rv = await_submit(c, &k, deadline, &r);
                if (rv != 0) {
                        break;
                }
                r->before = before;
                rv = await_request(c, r, deadline);
                if (rv != 0) {
                        registry_abandon(&c->core.registry, r, clock_now_ms());
                        /* Never sent (no node could be reached): say so.
                         * Else the deadline came: a wait ran out. */
                        if (rv == BATON_ENOANSWER && wait_ms != 0) {
                                rv = timed_out();
                        }
                        break;
                }
                rv = r->status;
                res = r->res;
                seq = r->seq;
                registry_drop(&c->core.registry, r);
                if (rv != BATON_ESEQ || wait == 0) {
                        break;
                }
                rv = recover(c, name, len, owner, a, seq, before, deadline,
                             &res);
                if (rv != 1) {
                        break;
                }
                rv = 0; /* ask again, for what is left of the wait */
        }
        client_unlock(c);
        if (rv == 0 && token != NULL) {
                *token = res.token;
        }
        return client_user_status(rv);
}

/* acquire() of one name, checked first. */
static int acquire_one(baton_client *c, const char *name, uint64_t owner,
                       const struct ask *a, int64_t wait_ms, uint64_t *token)
{
        uint8_t len;
        int rv = client_check_name(name, &len);

        return rv != 0 ? rv : acquire(c, name, len, owner, a, wait_ms, token);
}

int baton_acquire(baton_client *c, const char *name, uint64_t owner,
                  int64_t wait_ms, uint64_t *token)
{
        static const struct ask a = {.mode = COMMAND_MODE_EXCLUSIVE};

        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_acquire_shared(baton_client *c, const char *name, uint64_t owner,
                         int64_t wait_ms, uint64_t *token)
{
        static const struct ask a = {.mode = COMMAND_MODE_SHARED};

        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_sem_acquire(baton_client *c, const char *name, uint32_t limit,
                      uint32_t permits, uint64_t owner, int64_t wait_ms,
                      uint64_t *token)
{
        struct ask a = {
            .mode = COMMAND_MODE_SEMAPHORE, .permits = permits, .limit = limit};

        if (permits == 0 || permits > limit) {
                return BATON_EINVAL;
        }
        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_campaign(baton_client *c, const char *name, const char *value,
                   uint64_t owner, int64_t wait_ms, uint64_t *token)
{
        struct ask a = {.mode = COMMAND_MODE_ELECTION, .value = value};
        size_t len = value != NULL ? strlen(value) : 0;

        if (len > BATON_VALUE_MAX) {
                return BATON_EINVAL;
        }
        a.value_len = (uint8_t)len;
        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_multi_acquire(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, int64_t wait_ms,
                        uint64_t *token)
{
        uint8_t list[COMMAND_MULTI_MAX_SIZE];
        struct ask a = {.list = list, .n_names = (uint8_t)n};
        size_t used = 0;
        uint8_t len;
        int rv;

        if (names == NULL || n == 0) {
                return BATON_EINVAL;
        }
        if (n > COMMAND_MULTI_MAX) {
                return BATON_ETOOMANYNAMES;
        }
        for (size_t i = 0; i < n; i++) {
                if (names[i].mode != BATON_MODE_EXCLUSIVE &&
                    names[i].mode != BATON_MODE_SHARED) {
                        return BATON_EINVAL;
                }
                rv = client_check_name(names[i].name, &len);
                for (size_t j = 0; rv == 0 && j < i; j++) {
                        if (strcmp(names[j].name, names[i].name) == 0) {
                                return errmsg_set(BATON_EINVAL,
                                                  "lock \"%s\" named twice: "
                                                  "a multi-lock takes each "
                                                  "name once",
                                                  names[i].name);
                        }
                }
                if (rv != 0 ||
                    (rv = command_list_add(list, sizeof list, &used,
                                           (uint8_t)names[i].mode,
                                           names[i].name, len)) != 0) {
                        return rv;
                }
        }
        a.list_len = (uint16_t)used;
        /* The first entry's length byte: {mode, len, name...}. */
        return acquire(c, names[0].name, list[1], owner, &a, wait_ms, token);
}

int baton_multi_release(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, uint64_t token)
{
        int first = 0;

        if (names == NULL || n == 0) {
                return BATON_EINVAL;
        }
        /* One RELEASE per name, each as baton_release(); every name is
         * released even when one fails, and the first failure is told. */
        for (size_t i = 0; i < n; i++) {
                int rv = baton_release(c, names[i].name, owner, token);
                if (rv != 0 && first == 0) {
                        first = rv;
                }
        }
        return first;
}
