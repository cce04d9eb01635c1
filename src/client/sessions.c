/* libbaton's listing of sessions (include/baton/sessions.h): a SESSIONS
 * request sent to the leader over a connection of its own, as the access
 * list's is, its SESSIONS_REPLY copied into records the caller frees. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../proto/proto.h"
#include "../proto/sesslist.h"
#include "client.h"
#include "errmsg.h"
#include "members.h"

_Static_assert(BATON_SESSIONS_MAX == PROTO_SESSIONS_MAX,
               "the library asks for no more than the server sends");
_Static_assert(BATON_SESSION_HOLDS_MAX == PROTO_SESSION_HOLDS_MAX,
               "the header says how many holds are listed");

/* Where a SESSIONS_REPLY goes: the caller's records, allocated here. */
struct taken {
        size_t limit;
        struct baton_session *s;
        size_t n;
        bool more;
};

static void text(char *dst, const struct proto_string *src)
{
        memcpy(dst, src->p, src->len);
        dst[src->len] = '\0';
}

/* The leader's u32 time, or -1 when it does not know it. */
static int64_t ms(uint32_t v)
{
        return v == PROTO_SESSION_UNKNOWN ? -1 : (int64_t)v;
}

static int copy_session(struct baton_session *o, const struct proto_session *s)
{
        uint16_t k;

        o->id = s->id;
        text(o->client_name, &s->client_name);
        text(o->identity, &s->identity);
        text(o->address, &s->address);
        o->ttl_ms = s->ttl_ms;
        o->lock_delay_ms = s->lock_delay_ms;
        o->left_ms = ms(s->left_ms);
        o->idle_ms = ms(s->idle_ms);
        o->revoked = s->revoked;
        o->n_grants = s->n_grants;
        o->n_waits = s->n_waits;
        if (s->n_holds == 0) {
                return 0;
        }
        o->holds = calloc(s->n_holds, sizeof *o->holds);
        if (o->holds == NULL) {
                return BATON_ENOMEM;
        }
        o->n_holds = s->n_holds;
        for (k = 0; k < s->n_holds; k++) {
                const struct proto_session_hold *h = &s->holds[k];
                struct baton_session_hold *d = &o->holds[k];

                text(d->name, &h->name);
                d->waiting = h->waiting;
                d->mode = h->mode;
                d->owner = h->owner;
                d->token = h->token;
                d->count = h->count;
                d->permits = h->permits;
                d->wait_ms = h->wait_ms;
        }
        return 0;
}

/* Copy a SESSIONS_REPLY into `data` (a struct taken). */
static int take(void *data, const uint8_t *body, size_t len)
{
        struct taken *t = data;
        size_t holds_cap = len / PROTO_SESSION_HOLD_MIN + 1;
        struct proto_session *s = calloc(t->limit, sizeof *s);
        struct proto_session_hold *h = calloc(holds_cap, sizeof *h);
        uint32_t n = 0, i;
        int rv = BATON_ENOMEM;

        if (s != NULL && h != NULL) {
                rv = proto_read_sessions_reply(body, len, s, t->limit, h,
                                               holds_cap, &n, &t->more);
        }
        if (rv == 0 && n > 0 && (t->s = calloc(n, sizeof *t->s)) == NULL) {
                rv = BATON_ENOMEM;
        }
        for (i = 0; rv == 0 && i < n; i++) {
                rv = copy_session(&t->s[i], &s[i]);
                t->n = i + 1;
        }
        free(s);
        free(h);
        return rv;
}

/* Send SESSIONS (`id`, `mode`, `limit`) and take its answer into `t`. */
static int ask(baton_client *c, uint64_t id, uint8_t mode, uint32_t limit,
               struct taken *t)
{
        struct members_reply reply = {PROTO_SESSIONS_REPLY, take, t};
        uint8_t frame[MEMBERS_FRAME_MAX];
        struct proto_result res;
        bool unknown = false;
        int rv;

        t->limit = limit;
        /* A read: safe to send again after an unknown outcome. */
        rv = members_ask(
            c, frame,
            proto_write_sessions(frame, sizeof frame, 0, id, mode, limit), true,
            &reply, &res, &unknown);
        if (rv == 0 && t->s == NULL && res.status != 0) {
                rv = res.status; /* a RESULT: refused, or no such session */
        }
        if (rv != 0) {
                baton_sessions_free(t->s, t->n);
                t->s = NULL;
                t->n = 0;
        }
        return rv;
}

/* The detail of a refusal, for baton_errmsg(). */
static int refused(int rv, uint64_t id)
{
        switch (rv) {
        case BATON_EPERM:
                return errmsg_set(rv, "permission denied: listing sessions "
                                      "needs the read role");
        case BATON_EMALFORMED:
                return errmsg_set(rv, "the leader does not know SESSIONS "
                                      "requests: it runs a release without "
                                      "session listings (batonctl status "
                                      "shows each node's version)");
        case BATON_ENOSESSION:
                return errmsg_set(rv, "no session %" PRIu64, id);
        case BATON_EEXPIRED:
                return errmsg_set(rv, "session %" PRIu64 " has expired", id);
        case BATON_ECLOSED:
                return errmsg_set(rv, "session %" PRIu64 " was closed", id);
        default:
                return rv;
        }
}

int baton_sessions(baton_client *c, uint64_t after, size_t limit,
                   struct baton_session **out, size_t *n, uint64_t *next)
{
        struct taken t = {0};
        int rv;

        if (out != NULL) {
                *out = NULL;
        }
        if (n != NULL) {
                *n = 0;
        }
        if (next != NULL) {
                *next = 0;
        }
        if (c == NULL || out == NULL || n == NULL || limit == 0 ||
            limit > BATON_SESSIONS_MAX) {
                return BATON_EINVAL;
        }
        rv = ask(c, after, PROTO_SESSIONS_AFTER, (uint32_t)limit, &t);
        if (rv != 0) {
                return refused(rv, 0);
        }
        *out = t.s;
        *n = t.n;
        if (next != NULL && t.more && t.n > 0) {
                *next = t.s[t.n - 1].id;
        }
        return 0;
}

int baton_session_info(baton_client *c, uint64_t id, struct baton_session **out)
{
        struct taken t = {0};
        int rv;

        if (out != NULL) {
                *out = NULL;
        }
        if (c == NULL || out == NULL || id == 0) {
                return BATON_EINVAL;
        }
        rv = ask(c, id, PROTO_SESSIONS_ONE, 1, &t);
        if (rv == 0 && (t.n != 1 || t.s[0].id != id)) {
                baton_sessions_free(t.s, t.n);
                return BATON_EMALFORMED;
        }
        if (rv != 0) {
                return refused(rv, id);
        }
        *out = t.s;
        return 0;
}

void baton_sessions_free(struct baton_session *s, size_t n)
{
        size_t i;

        if (s == NULL) {
                return;
        }
        for (i = 0; i < n; i++) {
                free(s[i].holds);
        }
        free(s);
}
