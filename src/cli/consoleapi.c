/* What `batonctl console`'s page asks of the cluster, as JSON. */
#include "consoleapi.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/rolename.h"
#include "print.h"

/* A member this many entries behind the leader's commit index is shown
 * as lagging (batond's ready-max-lag default). */
#define LAGGING_ENTRIES 1000

json_t *consoleapi_error(int rv, int *status)
{
        switch (rv) {
        case BATON_EPERM:
                *status = 403;
                break;
        case BATON_ENOTHOLDER:
        case BATON_ENOSESSION:
        case BATON_EEXPIRED:
        case BATON_ECLOSED:
        case BATON_ENOMEMBER:
                *status = 404;
                break;
        case BATON_EINVAL:
        case BATON_ENAME:
        case BATON_EISLEADER:
        case BATON_ENOTVOTER:
                *status = 400;
                break;
        case BATON_ECANTCHANGE:
                *status = 409;
                break;
        case BATON_ENOANSWER:
        case BATON_EUNAVAILABLE:
        case BATON_ENOTLEADER:
        case BATON_ECONNECT:
        case BATON_EUNREACHABLE:
                *status = 503;
                break;
        default:
                *status = 502;
                break;
        }
        return json_pack("{s:s, s:i, s:s}", "error", baton_errname(rv), "code",
                         rv, "message", baton_errmsg(rv));
}

/* `v`, or the error object for `rv` when it is not 0. */
static json_t *answer(int rv, json_t *v, int *status)
{
        if (rv != 0) {
                json_decref(v);
                return consoleapi_error(rv, status);
        }
        *status = 200;
        return v;
}

json_t *consoleapi_whoami(baton_client *c, const char *endpoints, int *status)
{
        struct baton_acl acl;
        int rv = baton_acl_list(c, &acl);

        if (rv == 0) {
                baton_acl_free(&acl);
        } else if (rv != BATON_EPERM) {
                return consoleapi_error(rv, status);
        }
        *status = 200;
        return json_pack("{s:b, s:s}", "admin", rv == 0, "endpoints",
                         endpoints);
}

/* One member as it answers for itself; `commit` is the leader's commit
 * index, against which its lag is counted. */
static json_t *member(baton_client *c, const struct baton_member *m,
                      uint64_t commit)
{
        struct baton_status st;
        struct baton_node_version v;
        struct baton_node_alarms a;
        const char *state = "ok";
        json_t *more;
        uint64_t lag;
        json_t *o = json_pack("{s:I, s:b, s:s}", "id", (json_int_t)m->id,
                              "voter", m->role == BATON_MEMBER_VOTER, "address",
                              m->client_address);
        int rv = baton_status_alarms(c, m->client_address, &st, &v, &a);

        if (o == NULL || rv != 0) {
                json_object_set_new(o, "state", json_string("unreachable"));
                json_object_set_new(o, "error", json_string(baton_errname(rv)));
                return o;
        }
        lag = commit > st.applied_index ? commit - st.applied_index : 0;
        if (a.known && (a.alarms & BATON_ALARM_DIVERGED)) {
                state = "diverged";
        } else if (st.leader_id == 0) {
                state = "no leader";
        } else if (lag > LAGGING_ENTRIES) {
                state = "lagging";
        }
        more = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "role",
                         role_name(st.role), "term", (json_int_t)st.term,
                         "leader", (json_int_t)st.leader_id, "commit",
                         (json_int_t)st.commit_index, "applied",
                         (json_int_t)st.applied_index, "lag", (json_int_t)lag,
                         "state", state, "release", v.release);
        json_object_update(o, more);
        json_decref(more);
        return o;
}

json_t *consoleapi_members(baton_client *c, int *status)
{
        struct baton_status st;
        json_t *list, *o;
        unsigned i;
        int rv = baton_status(c, NULL, &st);

        if (rv != 0) {
                return consoleapi_error(rv, status);
        }
        list = json_array();
        for (i = 0; i < st.n_members && list != NULL; i++) {
                json_array_append_new(
                    list, member(c, &st.members[i], st.commit_index));
        }
        o = json_pack("{s:I, s:o*}", "leader", (json_int_t)st.leader_id,
                      "members", list);
        return answer(0, o, status);
}

static const char *mode_name(int mode)
{
        switch (mode) {
        case BATON_MODE_SHARED:
                return "shared";
        case BATON_MODE_PERMITS:
                return "semaphore";
        case BATON_MODE_LEADER:
                return "election";
        default:
                return "lock";
        }
}

static json_t *grant(const struct baton_grant *g)
{
        return json_pack("{s:I, s:I, s:i, s:s, s:i, s:i, s:s, s:I}", "session",
                         (json_int_t)g->session, "token", (json_int_t)g->token,
                         "count", (int)g->count, "mode", mode_name(g->mode),
                         "permits", (int)g->permits, "limit", (int)g->limit,
                         "client_name", g->client_name, "since",
                         (json_int_t)g->granted_s);
}

/* One held name with its grants (and, for an election, its leader's
 * value); NULL when it was freed meanwhile. */
static json_t *held(baton_client *c, const char *name, int *rv)
{
        struct baton_grant g[64];
        struct baton_leader l;
        json_t *holders, *o;
        size_t n = 0, i;
        int more = 0;

        *rv = baton_holders(c, name, g, 64, &n, &more);
        if (*rv != 0 || n == 0) {
                return NULL;
        }
        holders = json_array();
        for (i = 0; i < n; i++) {
                json_array_append_new(holders, grant(&g[i]));
        }
        o = json_pack("{s:s, s:s, s:i, s:b, s:o*}", "name", name, "kind",
                      mode_name(g[0].mode), "waiters", (int)g[0].waiters,
                      "more_holders", more != 0, "holders", holders);
        if (o != NULL && g[0].mode == BATON_MODE_LEADER &&
            baton_leader(c, name, &l) == 0 && l.held) {
                json_object_set_new(o, "value", json_string(l.value));
        }
        return o;
}

json_t *consoleapi_locks(baton_client *c, const char *prefix, int *status)
{
        struct baton_lock_info *info;
        json_t *list, *o;
        size_t n = 0, i;
        int more = 0, rv;

        info = calloc(CONSOLEAPI_MAX_LOCKS, sizeof *info);
        if (info == NULL) {
                return consoleapi_error(BATON_ENOMEM, status);
        }
        rv = baton_list(c, prefix, info, CONSOLEAPI_MAX_LOCKS, &n, &more);
        list = json_array();
        for (i = 0; rv == 0 && i < n; i++) {
                o = held(c, info[i].name, &rv);
                if (o != NULL) {
                        json_array_append_new(list, o);
                }
        }
        free(info);
        o = json_pack("{s:o*, s:b}", "locks", list, "more", more != 0);
        return answer(rv, o, status);
}

/* One session's holds: the names it holds, with their tokens. */
static json_t *session_locks(const struct baton_session *s)
{
        json_t *list = json_array();
        size_t i;

        for (i = 0; i < s->n_holds && list != NULL; i++) {
                const struct baton_session_hold *h = &s->holds[i];

                if (!h->waiting) {
                        json_array_append_new(
                            list, json_pack("{s:s, s:I, s:s}", "name", h->name,
                                            "token", (json_int_t)h->token,
                                            "mode", mode_name(h->mode)));
                }
        }
        return list;
}

static json_t *session(const struct baton_session *s)
{
        json_t *o =
            json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:o*}", "id",
                      (json_int_t)s->id, "client_name", s->client_name,
                      "identity", s->identity, "address", s->address, "ttl_ms",
                      (json_int_t)s->ttl_ms, "lock_delay_ms",
                      (json_int_t)s->lock_delay_ms, "waiting", (int)s->n_waits,
                      "revoked", (int)s->revoked, "locks", session_locks(s));

        /* The leader keeps no lease for it: no time left to show. */
        if (o != NULL && s->left_ms >= 0) {
                json_object_set_new(o, "time_left_ms",
                                    json_integer(s->left_ms));
                json_object_set_new(o, "since_keepalive_ms",
                                    json_integer(s->idle_ms));
        }
        return o;
}

json_t *consoleapi_sessions(baton_client *c, int *status)
{
        struct baton_session *page = NULL;
        json_t *list = json_array();
        uint64_t after = 0, next = 0;
        size_t n = 0, i, pages = 0;
        int rv;

        do {
                rv = baton_sessions(c, after, BATON_SESSIONS_MAX, &page, &n,
                                    &next);
                for (i = 0; rv == 0 && i < n; i++) {
                        json_array_append_new(list, session(&page[i]));
                }
                if (rv == 0) {
                        baton_sessions_free(page, n);
                }
                after = next;
        } while (rv == 0 && next != 0 && ++pages < CONSOLEAPI_SESSION_PAGES);
        return answer(rv,
                      json_pack("{s:o*, s:b}", "sessions", list, "more",
                                rv == 0 && next != 0),
                      status);
}

json_t *consoleapi_revoke(baton_client *c, const char *name, uint64_t session,
                          uint64_t token, int *status)
{
        int rv = baton_revoke(c, name, session, token);

        return answer(rv, json_pack("{s:s}", "done", "revoked"), status);
}

json_t *consoleapi_close_session(baton_client *c, uint64_t session, int *status)
{
        int rv = baton_session_revoke(c, session);

        return answer(rv, json_pack("{s:s}", "done", "closed"), status);
}

json_t *consoleapi_transfer(baton_client *c, uint64_t to, int *status)
{
        uint64_t from = 0, now = 0;
        int rv = baton_transfer_to(c, to, &from, &now);

        return answer(rv,
                      json_pack("{s:s, s:I, s:I}", "done", "transferred",
                                "from", (json_int_t)from, "to",
                                (json_int_t)now),
                      status);
}

static const char *event_kind(int kind)
{
        switch (kind) {
        case BATON_EVENT_GRANTED:
                return "granted";
        case BATON_EVENT_RELEASED:
                return "released";
        default:
                return "proclaimed";
        }
}

json_t *consoleapi_event(const struct baton_event *ev)
{
        json_t *o = json_pack(
            "{s:s, s:s, s:I, s:i, s:s, s:I, s:I, s:s, s:i}", "kind",
            event_kind(ev->kind), "cause", print_cause_name(ev->cause), "index",
            (json_int_t)ev->index, "ord", (int)ev->ord, "name", ev->name,
            "session", (json_int_t)ev->session, "token", (json_int_t)ev->token,
            "mode", mode_name(ev->mode), "permits", (int)ev->permits);

        if (o != NULL && ev->value[0] != '\0') {
                json_object_set_new(o, "value", json_string(ev->value));
        }
        return o;
}
