/* The locks held through one handle, mirrored from the cluster's answers. */
#include "locks.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

void locks_init(struct locks *l, const struct core_env *env)
{
        queue_init(&l->held);
        queue_init(&l->lost);
        l->env = env;
}

/* Tell the tracer, if any, that `h` now has `count` holds (`change`). */
static void trace(const struct locks *l, const struct locks_hold *h, int change,
                  uint32_t count, int64_t now)
{
        const struct core_tracer *t = l->env->tracer;

        if (t != NULL) {
                t->hold(t->data, h, change, count, now);
        }
}

static void free_all(struct queue *list)
{
        while (!queue_empty(list)) {
                struct queue *q = queue_head(list);
                queue_remove(q);
                free(QUEUE_DATA(q, struct locks_hold, link));
        }
}

void locks_close(struct locks *l)
{
        free_all(&l->held);
        free_all(&l->lost);
}

static bool same_name(const struct locks_hold *h, const char *name,
                      uint8_t name_len)
{
        return h->name_len == name_len && memcmp(h->name, name, name_len) == 0;
}

static bool same_holder(const struct locks_hold *h, uint64_t session,
                        const char *name, uint8_t name_len, uint64_t owner)
{
        return h->session == session && h->owner == owner &&
               same_name(h, name, name_len);
}

static struct locks_hold *find(const struct locks *l, uint64_t session,
                               const char *name, uint8_t name_len,
                               uint64_t owner, uint8_t mode)
{
        struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                if (same_holder(h, session, name, name_len, owner) &&
                    h->mode == mode) {
                        return h;
                }
        }
        return NULL;
}

uint32_t locks_count(const struct locks *l, uint64_t session, const char *name,
                     uint8_t name_len, uint64_t owner, int mode)
{
        uint32_t n = 0;
        struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                const struct locks_hold *h =
                    QUEUE_DATA(q, struct locks_hold, link);
                if (same_holder(h, session, name, name_len, owner) &&
                    (mode == LOCKS_ANY_MODE || h->mode == mode)) {
                        n += h->count;
                }
        }
        return n;
}

/* `h` now has `count` holds of `token` (`change`, at `now`); with none it
 * leaves the table. */
static void set_count(struct locks *l, struct locks_hold *h, uint64_t token,
                      uint32_t count, int change, int64_t now)
{
        if (count == 0) {
                queue_remove(&h->link);
                trace(l, h, change, 0, now);
                free(h);
                return;
        }
        h->token = token;
        h->count = count;
        trace(l, h, change, count, now);
}

void locks_released(struct locks *l, uint64_t session, const char *name,
                    uint8_t name_len, uint64_t owner, uint64_t token,
                    uint32_t count, int64_t now)
{
        struct locks_hold *found = NULL;
        struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                if (same_holder(h, session, name, name_len, owner) &&
                    h->token == token &&
                    (found == NULL || h->mode == COMMAND_MODE_EXCLUSIVE)) {
                        found = h;
                }
        }
        if (found != NULL) {
                set_count(l, found, token, count, CORE_HOLD_RELEASED, now);
        }
}

int locks_set_at(struct locks *l, uint64_t session, const char *name,
                 uint8_t name_len, uint64_t owner, uint8_t mode, uint64_t token,
                 uint32_t count, int64_t now)
{
        struct locks_hold *h = find(l, session, name, name_len, owner, mode);

        if (count == 0) {
                if (h != NULL) {
                        set_count(l, h, token, 0, CORE_HOLD_SET, now);
                }
                return 0;
        }
        if (h != NULL && h->token == token && h->count == count) {
                return 0; /* the same answer again: no change to trace */
        }
        if (h == NULL) {
                h = calloc(1, sizeof *h);
                if (h == NULL) {
                        return BATON_ENOMEM;
                }
                h->session = session;
                h->owner = owner;
                h->mode = mode;
                h->name_len = name_len;
                memcpy(h->name, name, name_len);
                queue_push_tail(&l->held, &h->link);
        }
        set_count(l, h, token, count, CORE_HOLD_SET, now);
        return 0;
}

int locks_set_list_at(struct locks *l, uint64_t session,
                      const struct command *k, uint64_t token, int64_t now)
{
        const char *name;
        uint8_t mode, len;
        size_t at = 0;
        int first = 0;

        while (command_list_next(k, &at, &mode, &name, &len)) {
                int rv = locks_set_at(l, session, name, len, k->owner, mode,
                                      token, 1, now);
                first = first != 0 ? first : rv;
        }
        return first;
}

void locks_end_session(struct locks *l, uint64_t session, struct notify *n,
                       int64_t now)
{
        struct queue *q, *next;

        free_all(&l->lost);
        for (q = queue_head(&l->held); q != &l->held; q = next) {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                next = q->next;
                if (h->session != session) {
                        continue;
                }
                queue_remove(q);
                queue_push_tail(&l->lost, q);
                notify_lost(n, h->name, h->name_len, h->token);
                trace(l, h, CORE_HOLD_ENDED, 0, now);
        }
}

void locks_lose(struct locks *l, uint64_t session, const char *name,
                uint8_t name_len, uint64_t owner, uint64_t token,
                struct notify *n, int64_t now)
{
        struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                if (h->session == session && h->owner == owner &&
                    h->token == token && h->name_len == name_len &&
                    memcmp(h->name, name, name_len) == 0) {
                        queue_remove(q);
                        notify_lost(n, h->name, h->name_len, h->token);
                        trace(l, h, CORE_HOLD_REVOKED, 0, now);
                        free(h);
                        return;
                }
        }
}

void locks_foreach(const struct locks *l, uint64_t session,
                   void (*cb)(void *data, const struct locks_hold *h),
                   void *data)
{
        const struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                const struct locks_hold *h =
                    QUEUE_DATA(q, struct locks_hold, link);
                if (h->session == session) {
                        cb(data, h);
                }
        }
}

void locks_forget_session(struct locks *l, uint64_t session, int64_t now)
{
        struct queue *q, *next;

        for (q = queue_head(&l->held); q != &l->held; q = next) {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                next = q->next;
                if (h->session == session) {
                        queue_remove(q);
                        trace(l, h, CORE_HOLD_FORGOTTEN, 0, now);
                        free(h);
                }
        }
}

bool locks_take_lost(struct locks *l, const char *name, uint8_t name_len,
                     uint64_t owner, uint64_t token)
{
        struct queue *q;

        QUEUE_FOREACH(q, &l->lost)
        {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                if (h->owner == owner && h->token == token &&
                    same_name(h, name, name_len)) {
                        queue_remove(q);
                        free(h);
                        return true;
                }
        }
        return false;
}
