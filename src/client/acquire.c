/* libbaton's acquire calls (include/baton.h): the exclusive and shared
 * lock and a semaphore's permits, each waiting as long as asked, and
 * recovering an ACQUIRE whose outcome the cluster forgot. */
#include <stdint.h>
#include <string.h>

#include "../../include/baton.h"
#include "acqop.h"
#include "await.h"
#include "client.h"
#include "clock.h"
#include "errmsg.h"

_Static_assert(BATON_MULTI_MAX == COMMAND_MULTI_MAX,
               "baton.h and the protocol agree on a multi-lock's names");

/* Drive the stepped operation `a` to its end, waiting between its steps
 * (the mutex held, released while waiting): 0 when granted, or the call's
 * code with its detail recorded for the calling thread. */
static int drive(struct baton_client *c, struct acqop *a)
{
        char why[ERRMSG_MAX];
        int rv;

        for (;;) {
                rv = acqop_step(&c->core, a, clock_now_ms(), why, sizeof why);
                if (rv != 1) {
                        return rv < 0 && why[0] != '\0'
                                   ? errmsg_set(rv, "%s", why)
                                   : rv;
                }
                rv = acqop_verdict(&c->core, a, false, clock_now_ms(), why,
                                   sizeof why);
                if (rv != 0) {
                        return errmsg_set(rv, "%s", why);
                }
                if (!await_until(c, acqop_deadline(a))) {
                        rv = acqop_verdict(&c->core, a, true, clock_now_ms(),
                                           why, sizeof why);
                        return errmsg_set(rv, "%s", why);
                }
        }
}

/* One call: an ACQUIRE whose outcome the cluster forgot (BATON_ESEQ) is
 * recovered and asked again for what is left of the wait (acqop.h).
 * `name` (`len` bytes) is checked. */
static int acquire(baton_client *c, const char *name, uint8_t len,
                   uint64_t owner, const struct acqop_ask *ask, int64_t wait_ms,
                   uint64_t *token)
{
        int64_t start = clock_now_ms();
        struct acqop a;
        int rv;

        if (c == NULL || wait_ms < BATON_WAIT_FOREVER ||
            wait_ms >= (int64_t)COMMAND_WAIT_FOREVER) {
                return BATON_EINVAL;
        }
        owner = client_owner(owner);
        client_lock(c);
        acqop_init(&c->core, &a, name, len, owner, ask, wait_ms,
                   c->opts.request_timeout_ms, start);
        rv = drive(c, &a);
        client_unlock(c);
        if (rv == 0 && token != NULL) {
                *token = a.res.token;
        }
        return client_user_status(rv);
}

/* acquire() of one name, checked first. */
static int acquire_one(baton_client *c, const char *name, uint64_t owner,
                       const struct acqop_ask *a, int64_t wait_ms,
                       uint64_t *token)
{
        uint8_t len;
        int rv = client_check_name(name, &len);

        return rv != 0 ? rv : acquire(c, name, len, owner, a, wait_ms, token);
}

int baton_acquire(baton_client *c, const char *name, uint64_t owner,
                  int64_t wait_ms, uint64_t *token)
{
        static const struct acqop_ask a = {.mode = COMMAND_MODE_EXCLUSIVE};

        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_acquire_shared(baton_client *c, const char *name, uint64_t owner,
                         int64_t wait_ms, uint64_t *token)
{
        static const struct acqop_ask a = {.mode = COMMAND_MODE_SHARED};

        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_sem_acquire(baton_client *c, const char *name, uint32_t limit,
                      uint32_t permits, uint64_t owner, int64_t wait_ms,
                      uint64_t *token)
{
        struct acqop_ask a = {
            .mode = COMMAND_MODE_SEMAPHORE, .permits = permits, .limit = limit};

        if (permits == 0 || permits > limit) {
                return BATON_EINVAL;
        }
        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_acquire_with(baton_client *c, const char *name, uint64_t owner,
                       int64_t wait_ms,
                       const struct baton_acquire_options *opts,
                       uint64_t *token)
{
        static const struct baton_acquire_options none;
        struct acqop_ask a = {0};
        size_t len;

        if (opts == NULL) {
                opts = &none;
        }
        len = opts->value != NULL ? strlen(opts->value) : 0;
        if (len > BATON_VALUE_MAX) {
                return errmsg_set(BATON_EINVAL,
                                  "a value of %zu bytes: at most %d", len,
                                  BATON_VALUE_MAX);
        }
        if (opts->reserved32 != 0 ||
            memcmp(opts->reserved, none.reserved, sizeof none.reserved) != 0) {
                return errmsg_set(BATON_EINVAL,
                                  "struct baton_acquire_options: a reserved "
                                  "field is not zero");
        }
        switch (opts->mode) {
        case BATON_MODE_EXCLUSIVE:
        case BATON_MODE_SHARED:
                break;
        case BATON_MODE_PERMITS:
                if (opts->permits == 0 || opts->permits > opts->limit) {
                        return BATON_EINVAL;
                }
                a.permits = opts->permits;
                a.limit = opts->limit;
                break;
        default:
                return errmsg_set(BATON_EINVAL,
                                  "mode %d: a lock, a read lock or permits "
                                  "(BATON_MODE_EXCLUSIVE, _SHARED, _PERMITS)",
                                  opts->mode);
        }
        a.mode = (uint8_t)opts->mode;
        a.value = len > 0 ? opts->value : NULL;
        a.value_len = (uint8_t)len;
        a.hold_ms = opts->hold_ms;
        return acquire_one(c, name, owner, &a, wait_ms, token);
}

int baton_campaign(baton_client *c, const char *name, const char *value,
                   uint64_t owner, int64_t wait_ms, uint64_t *token)
{
        struct acqop_ask a = {.mode = COMMAND_MODE_ELECTION, .value = value};
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
        struct acqop_ask a = {.list = list, .n_names = (uint8_t)n};
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
