/* The replicated cluster directory: every member's raft and client address. */
#include "directory.h"

#include <stdbool.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../lib/cursor.h"

void directory_init(struct directory *d)
{
        memset(d, 0, sizeof *d);
}

static unsigned position(const struct directory *d, uint64_t id)
{
        unsigned i = 0;

        while (i < d->n && d->members[i].id < id) {
                i++;
        }
        return i;
}

const struct directory_member *directory_find(const struct directory *d,
                                              uint64_t id)
{
        unsigned i = position(d, id);

        return i < d->n && d->members[i].id == id ? &d->members[i] : NULL;
}

static void set_member(struct directory_member *m, uint64_t id,
                       const char *raft, size_t raft_len, const char *client,
                       size_t client_len)
{
        memset(m, 0, sizeof *m);
        m->id = id;
        memcpy(m->raft_address, raft, raft_len);
        memcpy(m->client_address, client, client_len);
}

int directory_apply(struct directory *d, const struct command *c)
{
        unsigned i = position(d, c->target);
        bool found = i < d->n && d->members[i].id == c->target;

        if (c->mode == COMMAND_MEMBER_REMOVE) {
                if (!found) {
                        return BATON_ENOTFOUND;
                }
                memmove(&d->members[i], &d->members[i + 1],
                        (d->n - i - 1) * sizeof d->members[0]);
                d->n--;
                return 0;
        }
        if (!found) {
                if (d->n == DIRECTORY_MAX) {
                        return BATON_EINVAL;
                }
                memmove(&d->members[i + 1], &d->members[i],
                        (d->n - i) * sizeof d->members[0]);
                d->n++;
        }
        set_member(&d->members[i], c->target, c->name, c->name_len, c->address,
                   c->address_len);
        return 0;
}

size_t directory_encode(const struct directory *d, uint8_t *buf, size_t cap)
{
        struct wcursor w;
        unsigned i;

        wcursor_init(&w, buf, cap);
        wcursor_u8(&w, (uint8_t)d->n);
        for (i = 0; i < d->n; i++) {
                const struct directory_member *m = &d->members[i];
                size_t rl = strlen(m->raft_address);
                size_t cl = strlen(m->client_address);
                wcursor_u64(&w, m->id);
                wcursor_u8(&w, (uint8_t)rl);
                wcursor_bytes(&w, m->raft_address, rl);
                wcursor_u8(&w, (uint8_t)cl);
                wcursor_bytes(&w, m->client_address, cl);
        }
        return w.len;
}

int directory_decode(struct directory *d, const uint8_t *buf, size_t len)
{
        struct directory fresh;
        struct rcursor r;
        unsigned i, n;

        directory_init(&fresh);
        rcursor_init(&r, buf, len);
        n = rcursor_u8(&r);
        if (r.bad || n > DIRECTORY_MAX) {
                return BATON_ECORRUPT;
        }
        for (i = 0; i < n; i++) {
                struct command c;
                memset(&c, 0, sizeof c);
                c.type = COMMAND_MEMBER;
                c.mode = COMMAND_MEMBER_SET;
                c.target = rcursor_u64(&r);
                c.name_len = rcursor_u8(&r);
                c.name = (const char *)rcursor_bytes(&r, c.name_len);
                c.address_len = rcursor_u8(&r);
                c.address = (const char *)rcursor_bytes(&r, c.address_len);
                /* Ascending ids, valid addresses: what apply would build. */
                if (r.bad || command_validate(&c) != 0 ||
                    (fresh.n > 0 &&
                     fresh.members[fresh.n - 1].id >= c.target) ||
                    directory_apply(&fresh, &c) != 0) {
                        return BATON_ECORRUPT;
                }
        }
        if (r.left != 0) {
                return BATON_ECORRUPT;
        }
        *d = fresh;
        return 0;
}
