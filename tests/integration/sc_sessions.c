/* Integration scenario on listing sessions (docs/protocol.md, SESSIONS). */
#include "sc_sessions.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/sesslist.h"
#include "sc_tls.h"
#include "tlsfiles.h"

#define N_SESSIONS 3

/* Every live session, by pages of two, checking that each page is in id
 * order after its cursor; those from `from` on (this scenario's: earlier
 * scenarios leave theirs) are kept in `out`. False (the scenario failed)
 * when a page cannot be had or is out of order. */
static bool all_pages(struct ctx *x, struct tclient *q, uint64_t from,
                      struct tclient_session *out, size_t cap, size_t *n)
{
        struct tclient_session page[2];
        uint64_t after = 0;
        size_t got;
        bool more = true;
        int rv;

        *n = 0;
        while (more) {
                rv = tclient_sessions(q, after, PROTO_SESSIONS_AFTER, 2, OP_MS,
                                      page, 2, &got, &more);
                if (rv != 0 || got > 2 || (more && got == 0)) {
                        fail_at(x, __LINE__,
                                "a page after %" PRIu64 ": %d, %zu (%s)", after,
                                rv, got, q->errmsg);
                        return false;
                }
                for (size_t i = 0; i < got; i++) {
                        if (page[i].id <= after) {
                                fail_at(x, __LINE__,
                                        "session %" PRIu64
                                        " after the cursor %" PRIu64,
                                        page[i].id, after);
                                return false;
                        }
                        after = page[i].id;
                        if (page[i].id >= from && *n < cap) {
                                out[(*n)++] = page[i];
                        }
                }
        }
        return true;
}

/* The session `id` among `s`, or NULL. */
static const struct tclient_session *find(const struct tclient_session *s,
                                          size_t n, uint64_t id)
{
        for (size_t i = 0; i < n; i++) {
                if (s[i].id == id) {
                        return &s[i];
                }
        }
        return NULL;
}

/* The leader's knowledge of a session with a lease of `ttl`: time left
 * within it, and the two adding up to it. */
static bool leased(const struct tclient_session *s, uint32_t ttl)
{
        return s->ttl_ms == ttl && s->left_ms <= ttl &&
               s->left_ms + s->idle_ms == ttl;
}

void sc_sessions(struct ctx *x)
{
        static const char *const names[N_SESSIONS] = {"sess-a", "sess-b",
                                                      "sess-c"};
        static const uint32_t ttls[N_SESSIONS] = {5000, 6000, 7000};
        struct tclient c[N_SESSIONS], reader;
        struct tclient_session all[64], one;
        const struct tclient_session *s;
        struct tclient_result res;
        char la[64], lb[64];
        uint64_t ta, tb, seq;
        size_t n, i;
        bool more;
        int rv;

        lock_name(x, la, sizeof la, "sessions-a");
        lock_name(x, lb, sizeof lb, "sessions-b");
        for (i = 0; i < N_SESSIONS; i++) {
                EXPECT(x, tclient_init(&c[i], x->h.endpoints) == 0,
                       "tclient_init");
                rv =
                    tclient_session_open(&c[i], ttls[i], names[i], OP_MS, &res);
                EXPECT(x, rv == 0 && res.kind == PROTO_KIND_OPENED,
                       "OPEN %s: %d (%s)", names[i], rv, c[i].errmsg);
        }
        GRANT(x, ta, &c[0], la);
        GRANT(x, tb, &c[1], lb);
        START_WAIT(x, &c[2], la, COMMAND_WAIT_FOREVER, &seq);
        WAITERS(x, &c[0], la, 1);

        EXPECT(x, all_pages(x, &c[0], c[0].session, all, 64, &n), "listing");
        for (i = 0; i < N_SESSIONS; i++) {
                s = find(all, n, c[i].session);
                EXPECT(x, s != NULL, "session %" PRIu64 " (%s) not listed",
                       c[i].session, names[i]);
                EXPECT(x,
                       strcmp(s->client_name, names[i]) == 0 &&
                           leased(s, ttls[i]) && s->lock_delay_ms == 0,
                       "session %" PRIu64 ": client '%s' ttl %u left %u "
                       "idle %u",
                       s->id, s->client_name, s->ttl_ms, s->left_ms,
                       s->idle_ms);
                EXPECT(x, s->address[0] != '\0',
                       "session %" PRIu64 ": no address", s->id);
        }

        /* One session: its lock with its token; the waiter's wait. */
        rv = tclient_sessions(&c[1], c[0].session, PROTO_SESSIONS_ONE, 1, OP_MS,
                              &one, 1, &n, &more);
        EXPECT(x, rv == 0 && n == 1 && one.id == c[0].session && !more,
               "SESSIONS of %" PRIu64 ": %d n %zu (%s)", c[0].session, rv, n,
               c[1].errmsg);
        EXPECT(x,
               one.n_grants == 1 && one.n_waits == 0 && one.n_holds == 1 &&
                   strcmp(one.holds[0].name, la) == 0 &&
                   one.holds[0].token == ta && !one.holds[0].waiting,
               "a's record: %u grants, %u waits, first %s token %" PRIu64,
               one.n_grants, one.n_waits, one.holds[0].name,
               one.holds[0].token);
        rv = tclient_sessions(&c[1], c[2].session, PROTO_SESSIONS_ONE, 1, OP_MS,
                              &one, 1, &n, &more);
        EXPECT(x,
               rv == 0 && n == 1 && one.n_waits == 1 && one.holds[0].waiting &&
                   strcmp(one.holds[0].name, la) == 0,
               "c's record: %d, %u waits", rv, one.n_waits);

        /* A closed session is gone, from pages and by id. */
        rv = tclient_session_close(&c[1], OP_MS, &res);
        EXPECT(x, rv == 0, "CLOSE: %d %s", rv, rs(x, &res));
        EXPECT(x, all_pages(x, &c[0], c[0].session, all, 64, &n), "listing");
        EXPECT(x, find(all, n, c[1].session) == NULL,
               "closed session %" PRIu64 " still listed", c[1].session);
        rv = tclient_sessions(&c[0], c[1].session, PROTO_SESSIONS_ONE, 1, OP_MS,
                              &one, 1, &n, &more);
        EXPECT(x, rv == BATON_ECLOSED, "SESSIONS of the closed one: %d", rv);
        rv = tclient_sessions(&c[0], 1, PROTO_SESSIONS_ONE, 1, OP_MS, &one, 1,
                              &n, &more);
        EXPECT(x, rv == BATON_ENOSESSION, "SESSIONS of no session: %d", rv);

        /* A client of the read role may list. */
        if (tlsfiles_on()) {
                EXPECT(x, tlsfiles_issue("reader", "reader", -1, 30, 0) == 0,
                       "cannot make the reader's certificate");
                EXPECT(x,
                       client_as(&reader, x->h.endpoints, "ca", "reader") == 0,
                       "reader: %s", reader.errmsg);
                /* From just before a's id: earlier scenarios' sessions
                 * come first in a page from the start. */
                rv = tclient_sessions(&reader, c[0].session - 1,
                                      PROTO_SESSIONS_AFTER, 10, OP_MS, all, 64,
                                      &n, &more);
                EXPECT(x, rv == 0 && find(all, n, c[0].session) != NULL,
                       "the reader's SESSIONS: %d (%s)", rv, reader.errmsg);
                s = find(all, n, c[0].session);
                EXPECT(x, strcmp(s->identity, "admin") == 0,
                       "a's identity '%s', not the tests' admin", s->identity);
                tclient_close(&reader);
        }
        RELEASE(x, &c[0], la, ta);
        rv = tclient_finish(&c[2], OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED,
               "the waiter after the release: %d %s", rv, rs(x, &res));
        for (i = 0; i < N_SESSIONS; i++) {
                tclient_close(&c[i]);
        }
        (void)tb;
}
