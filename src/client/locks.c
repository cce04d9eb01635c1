/* The locks held through one handle, mirrored from the cluster's answers. */
#include "locks.h"

#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

void locks_init(struct locks *l)
{
        queue_init(&l->held);
        queue_init(&l->lost);
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

static struct locks_hold *find(const struct locks *l, uint64_t session,
                               const char *name, uint8_t name_len,
                               uint64_t owner)
{
        struct queue *q;

        QUEUE_FOREACH(q, &l->held)
        {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                if (h->session == session && h->owner == owner &&
                    same_name(h, name, name_len)) {
                        return h;
                }
        }
        return NULL;
}

uint32_t locks_count(const struct locks *l, uint64_t session, const char *name,
                     uint8_t name_len, uint64_t owner)
{
        const struct locks_hold *h = find(l, session, name, name_len, owner);

        return h != NULL ? h->count : 0;
}

int locks_set(struct locks *l, uint64_t session, const char *name,
              uint8_t name_len, uint64_t owner, uint64_t token, uint32_t count)
{
        struct locks_hold *h = find(l, session, name, name_len, owner);

        if (count == 0) {
                if (h != NULL) {
                        queue_remove(&h->link);
                        free(h);
                }
                return 0;
        }
        if (h == NULL) {
                h = calloc(1, sizeof *h);
                if (h == NULL) {
                        return BATON_ENOMEM;
                }
                h->session = session;
                h->owner = owner;
                h->name_len = name_len;
                memcpy(h->name, name, name_len);
                queue_push_tail(&l->held, &h->link);
        }
        h->token = token;
        h->count = count;
        return 0;
}

void locks_end_session(struct locks *l, uint64_t session, struct notify *n)
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
        }
}

void locks_forget_session(struct locks *l, uint64_t session)
{
        struct queue *q, *next;

        for (q = queue_head(&l->held); q != &l->held; q = next) {
                struct locks_hold *h = QUEUE_DATA(q, struct locks_hold, link);
                next = q->next;
                if (h->session == session) {
                        queue_remove(q);
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
