/* The SESSIONS read, answered by the serving leader: the state machine
 * says who each session is and what it holds, the leader's lease table
 * how long it has left. */
#include "sessview.h"

#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/lockfsm.h"
#include "../../proto/sesslist.h"
#include "gateway.h"
#include "leader.h"
#include "names.h"
#include "pending.h"

/* Holds one reply can carry at most: each takes PROTO_SESSION_HOLD_MIN
 * bytes or more. */
#define HOLDS_ROOM (PROTO_MAX_BODY / PROTO_SESSION_HOLD_MIN)

/* A page being gathered (names borrowed from the state machine, which
 * does not change until the reply is written). */
struct page {
        struct gateway *g;
        const struct gateway_now *now;
        const struct lockfsm *f;
        struct proto_session *s;
        struct proto_session_hold *holds;
        uint32_t n;
        uint32_t limit;
        uint32_t used; /* holds taken */
        size_t size;   /* body bytes so far */
        bool more;
        /* The record being filled by add_hold(). */
        struct proto_session *cur;
        /* Where rules on names close some to the asker (names.h): its
         * connection, and the holds of `cur` left out as unreadable. */
        const struct gateway_conn *asker;
        bool filter;
        uint32_t hidden;
};

static bool add_hold(void *data, const struct lockfsm_session_hold *h)
{
        struct page *pg = data;
        struct proto_session_hold *o;
        size_t size = PROTO_SESSION_HOLD_SIZE(h->name_len);

        if (pg->filter && (names_perms(pg->g, pg->asker, h->name, h->name_len) &
                           ACL_PERM_READ) == 0) {
                pg->hidden++;
                return true;
        }
        if (pg->cur->n_holds == PROTO_SESSION_HOLDS_MAX ||
            pg->used == HOLDS_ROOM || pg->size + size > PROTO_MAX_BODY) {
                return false;
        }
        o = &pg->holds[pg->used++];
        o->waiting = h->waiting ? 1 : 0;
        o->mode = h->mode;
        o->owner = h->owner;
        o->token = h->token;
        o->count = h->count;
        o->permits = h->permits;
        o->wait_ms = h->wait_ms;
        o->name.p = h->name;
        o->name.len = h->name_len;
        pg->cur->n_holds++;
        pg->size += size;
        return true;
}

/* The newest connection attached to session `id` (the list is in the
 * order of their first frames), which is the one its client uses now: a
 * client that reconnects attaches again on the new connection. NULL when
 * none is. */
static const struct gateway_conn *attached(const struct gateway *g, uint64_t id)
{
        const struct gateway_conn *found = NULL;
        const struct queue *q;

        QUEUE_FOREACH(q, &g->conns)
        {
                const struct gateway_conn *c =
                    QUEUE_DATA(q, struct gateway_conn, core_link);
                if (gateway_conn_attached(c, id)) {
                        found = c;
                }
        }
        return found;
}

/* Who the session's client is, as its connection to this leader says. */
static void client_of(const struct page *pg, struct proto_session *s)
{
        const struct gateway_conn *c = attached(pg->g, s->id);

        if (c == NULL) {
                return;
        }
        s->identity.p = c->identity;
        s->identity.len = (uint8_t)strnlen(c->identity, PROTO_IDENTITY_MAX);
        s->address.p = c->address;
        s->address.len = (uint8_t)strnlen(c->address, PROTO_ADDRESS_MAX);
}

uint32_t sessview_left_ms(const struct gateway *g,
                          const struct gateway_now *now, uint64_t id,
                          uint32_t ttl_ms)
{
        const struct lease *l = leases_find(&g->deadlines.leases, id);
        uint64_t left;

        if (l == NULL) {
                return PROTO_SESSION_UNKNOWN; /* not serving: none kept */
        }
        left = l->at > now->ms ? l->at - now->ms : 0;
        if (leader_expiring(g, id) || left > ttl_ms) {
                left = leader_expiring(g, id) ? 0 : ttl_ms;
        }
        return (uint32_t)left;
}

/* The leader's lease of `s`: time left, and since it was last renewed. */
static void lease_of(const struct page *pg, struct proto_session *s)
{
        s->left_ms = sessview_left_ms(pg->g, pg->now, s->id, s->ttl_ms);
        s->idle_ms = s->left_ms == PROTO_SESSION_UNKNOWN
                         ? PROTO_SESSION_UNKNOWN
                         : s->ttl_ms - s->left_ms;
}

/* Add session `info` with its holds (the first PROTO_SESSION_HOLDS_MAX,
 * or as many as fit when it is the page's first); false (the page then
 * says there is more) when it does not fit whole. */
static bool add_session(void *data, const struct lockfsm_session_info *info)
{
        struct page *pg = data;
        size_t before = pg->size;
        struct proto_session *s;
        size_t size;

        if (pg->n == pg->limit) {
                pg->more = true;
                return false;
        }
        s = &pg->s[pg->n];
        memset(s, 0, sizeof *s);
        s->id = info->id;
        client_of(pg, s);
        size =
            PROTO_SESSION_SIZE(info->name_len, s->identity.len, s->address.len);
        if (pg->size + size > PROTO_MAX_BODY) {
                pg->more = true;
                return false;
        }
        pg->n++;
        s->client_name.p = info->name;
        s->client_name.len = info->name_len;
        s->ttl_ms = info->ttl_ms;
        s->lock_delay_ms = info->lock_delay_ms;
        s->revoked = info->revoked;
        s->n_grants = info->n_grants;
        s->n_waits = info->n_waits;
        s->holds = &pg->holds[pg->used];
        lease_of(pg, s);
        pg->size += size;
        pg->cur = s;
        pg->hidden = 0;
        lockfsm_foreach_session_hold(pg->f, info->id, add_hold, pg);
        if (pg->filter && s->n_holds == 0 && pg->hidden > 0 &&
            !gateway_conn_attached(pg->asker, info->id)) {
                /* Every lock it holds or awaits is closed to the asker:
                 * the session is another team's, and not listed. */
                pg->n--;
                pg->size = before;
                return true;
        }
        if (pg->n > 1 && s->n_holds < PROTO_SESSION_HOLDS_MAX &&
            s->n_holds + pg->hidden < (size_t)info->n_grants + info->n_waits) {
                /* Cut short by the frame, not by the cap: whole on the
                 * next page instead, where it comes first. */
                pg->n--;
                pg->used -= s->n_holds;
                pg->size = before;
                pg->more = true;
                return false;
        }
        return true;
}

/* Write the page's SESSIONS_REPLY to `p`'s connection. */
static void send_page(struct page *pg, struct pending *p)
{
        struct gateway_conn *c = p->to.conn;
        size_t cap = PROTO_HEADER_SIZE + pg->size;
        uint8_t *out = c != NULL ? reply_reserve(p->g, c, cap) : NULL;

        if (out != NULL) {
                reply_frame(p->g, c, p->to.id,
                            proto_write_sessions_reply(out, cap, p->to.id,
                                                       pg->s, pg->n, pg->more));
        }
}

void sessview_answer(struct gateway *g, const struct gateway_now *now,
                     const struct lockfsm *f, struct pending *p)
{
        struct page pg = {.g = g,
                          .now = now,
                          .f = f,
                          .limit = p->limit,
                          .size = PROTO_SESSIONS_REPLY_FIXED};
        struct lockfsm_session_info one;
        int st = 0;

        if (p->key_b == PROTO_SESSIONS_ONE) {
                st = lockfsm_session_info(f, p->key_a, &one);
        }
        if (st != 0) {
                pending_settle_status(p, now, st);
                return;
        }
        if (p->to.conn != NULL && !names_open(g, p->to.conn)) {
                pg.asker = p->to.conn;
                pg.filter = true;
        }
        pg.s = calloc(p->limit, sizeof *pg.s);
        pg.holds = calloc(HOLDS_ROOM, sizeof *pg.holds);
        if (pg.s == NULL || pg.holds == NULL) {
                free(pg.s);
                free(pg.holds);
                pending_settle_status(p, now, BATON_ENOMEM);
                return;
        }
        if (p->key_b == PROTO_SESSIONS_ONE) {
                add_session(&pg, &one);
        } else {
                lockfsm_foreach_session_from(f, p->key_a, add_session, &pg);
        }
        send_page(&pg, p);
        free(pg.s);
        free(pg.holds);
        pending_free(p, now);
}
