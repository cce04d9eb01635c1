/* Integration scenarios on the cluster's members. */
#include "sc_membership.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "rawframe.h"
#include "../../src/proto/query.h"
#include "../../src/proto/member.h"
#include "../../src/proto/keepalive.h"

void sc_not_leader(struct ctx *x)
{
        struct tclient raw, via;
        struct tclient_result res;
        struct baton_status st;
        uint8_t f[PROTO_HEADER_SIZE + COMMAND_MAX_SIZE + 16];
        char name[64];
        unsigned leader, i, checked = 0;
        size_t len;
        int rv;

        lock_name(x, name, sizeof name, "redirect");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        for (i = 1; i <= x->n; i++) {
                const char *addr = harness_client_address(&x->h, i);
                if (i == leader || !harness_running(&x->h, i)) {
                        continue;
                }
                EXPECT(x, tclient_connect(&raw, addr, OP_MS) == 0,
                       "connect %s: %s", addr, raw.errmsg);
                len = raw_acquire(f, sizeof f, 201, 1, 1, name, strlen(name));
                if (!redirected(x, &raw, f, len, 201, leader, "ACQUIRE",
                                __LINE__)) {
                        return;
                }
                len = raw_read(f, sizeof f, 202, false, name, strlen(name));
                if (!redirected(x, &raw, f, len, 202, leader, "QUERY",
                                __LINE__)) {
                        return;
                }
                len = proto_write_keepalive(f, sizeof f, 203, 0, 1);
                if (!redirected(x, &raw, f, len, 203, leader, "KEEPALIVE",
                                __LINE__)) {
                        return;
                }
                /* STATUS is answered by any node. */
                rv = tclient_status_of(addr, OP_MS, &st);
                EXPECT(x,
                       rv == 0 && st.id == i && st.role != BATON_ROLE_LEADER &&
                           st.leader_id == leader && st.n_members == x->n,
                       "STATUS of follower %u: %d id %" PRIu64
                       " role %u leader %" PRIu64 " members %u",
                       i, rv, st.id, st.role, st.leader_id, st.n_members);
                /* A client given only this follower finds the leader. */
                EXPECT(x, tclient_init(&via, addr) == 0, "tclient_init");
                rv = tclient_query(&via, name, OP_MS, &res);
                EXPECT(x,
                       rv == 0 && res.kind == PROTO_KIND_FREE &&
                           via.redirects >= 1 &&
                           strcmp(via.peer,
                                  harness_client_address(&x->h, leader)) == 0,
                       "QUERY through follower %u: %d %s, %lu redirects, "
                       "served by %s",
                       i, rv, rs(x, &res), via.redirects, via.peer);
                tclient_close(&via);
                checked++;
        }
        tclient_close(&raw);
        EXPECT(x, checked == x->n - 1, "checked %u followers of %u", checked,
               x->n - 1);
}

static const struct baton_member *member_of(const struct baton_status *st,
                                            uint64_t id)
{
        unsigned i;

        for (i = 0; i < st->n_members; i++) {
                if (st->members[i].id == id) {
                        return &st->members[i];
                }
        }
        return NULL;
}

/*
 * Whether node `id`'s STATUS lists exactly `want` members, `absent` (0:
 * none) not among them, each a voter with the addresses the harness gave
 * it, and follows `leader`. Says why not in `why`.
 */
static bool members_ok(struct ctx *x, unsigned id, unsigned want,
                       unsigned absent, unsigned leader, char *why, size_t cap)
{
        struct baton_status st;
        unsigned i;
        int rv =
            tclient_status_of(harness_client_address(&x->h, id), OP_MS, &st);

        if (rv != 0) {
                snprintf(why, cap, "STATUS of node %u: %d", id, rv);
                return false;
        }
        if (st.n_members != want || st.leader_id != leader) {
                snprintf(why, cap,
                         "node %u lists %u members (expected %u), leader "
                         "%" PRIu64 " (expected %u)",
                         id, st.n_members, want, st.leader_id, leader);
                return false;
        }
        if (absent != 0 && member_of(&st, absent) != NULL) {
                snprintf(why, cap, "node %u still lists node %u", id, absent);
                return false;
        }
        for (i = 0; i < st.n_members; i++) {
                const struct baton_member *m = &st.members[i];
                const struct harness_node *nd;
                if (m->id < 1 || m->id > x->h.n) {
                        snprintf(why, cap,
                                 "node %u lists unknown member %" PRIu64, id,
                                 m->id);
                        return false;
                }
                nd = &x->h.nodes[m->id - 1];
                /* The client addresses of members added later are in the
                 * replicated directory only: the bootstrap members' config
                 * does not name them. */
                if (m->role != BATON_MEMBER_VOTER ||
                    strcmp(m->raft_address, nd->raft_address) != 0 ||
                    strcmp(m->client_address, nd->client_address) != 0) {
                        snprintf(why, cap,
                                 "node %u lists member %" PRIu64
                                 " as role %u, raft %s, client %s; expected "
                                 "voter (%d), %s, %s",
                                 id, m->id, m->role, m->raft_address,
                                 m->client_address, BATON_MEMBER_VOTER,
                                 nd->raft_address, nd->client_address);
                        return false;
                }
        }
        return true;
}

/* Poll every running node until members_ok() holds on each. */
static bool await_members(struct ctx *x, unsigned want, unsigned absent,
                          unsigned leader, int line)
{
        int64_t deadline = tclient_now_ms() + HEALTHY_MS;
        char why[512] = "";
        unsigned i;
        bool ok;

        do {
                ok = true;
                for (i = 1; i <= x->h.n && ok; i++) {
                        if (harness_running(&x->h, i)) {
                                ok = members_ok(x, i, want, absent, leader, why,
                                                sizeof why);
                        }
                }
                if (ok) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < deadline);
        fail_at(x, line, "membership: %s", why);
        return false;
}

#define MEMBERS(x, want, absent, leader)                                       \
        do {                                                                   \
                if (!await_members(x, want, absent, leader, __LINE__)) {       \
                        return;                                                \
                }                                                              \
        } while (0)

/* A node joins the running cluster, learns the member directory from the
 * log, sends clients to the leader, and leaves again. */
void sc_membership(struct ctx *x)
{
        struct tclient a, raw, via, adm;
        struct tclient_result res;
        struct baton_status st;
        const struct harness_node *nd;
        uint8_t f[PROTO_HEADER_SIZE + 256];
        char name[64];
        uint64_t t1;
        unsigned leader, follower, nid;
        int64_t t0;
        size_t len;
        int rv, status;

        lock_name(x, name, sizeof name, "member");
        OPEN(x, &a, TTL_MS);
        GRANT(x, t1, &a, name);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        follower = a_follower(x, leader);

        /* Only the leader changes the membership. */
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        EXPECT(x,
               tclient_connect(&raw, harness_client_address(&x->h, follower),
                               OP_MS) == 0,
               "connect to follower %u: %s", follower, raw.errmsg);
        len = proto_write_member_add(f, sizeof f, 301, x->h.n + 1,
                                     "127.0.0.1:1", "127.0.0.1:2");
        if (!redirected(x, &raw, f, len, 301, leader, "MEMBER_ADD", __LINE__)) {
                return;
        }
        len = proto_write_id(f, sizeof f, 302, PROTO_MEMBER_REMOVE, follower);
        if (!redirected(x, &raw, f, len, 302, leader, "MEMBER_REMOVE",
                        __LINE__)) {
                return;
        }
        tclient_close(&raw);

        EXPECT(x, harness_add_node(&x->h, &nid) == 0, "start a node: %s",
               x->h.errmsg);
        nd = &x->h.nodes[nid - 1];
        printf("# node %u started with --join true: raft %s, clients %s\n", nid,
               nd->raft_address, nd->client_address);
        /* As an operator would: add it once it is up. */
        t0 = tclient_now_ms();
        do {
                rv = tclient_status_of(nd->client_address, OP_MS, &st);
                if (rv != 0) {
                        poll_pause();
                }
        } while (rv != 0 && tclient_now_ms() < t0 + HEALTHY_MS);
        EXPECT(x, rv == 0 && st.id == nid && st.leader_id == 0,
               "the joining node %u: STATUS %d, id %" PRIu64
               ", leader %" PRIu64,
               nid, rv, st.id, st.leader_id);
        EXPECT(x, tclient_init(&adm, x->h.endpoints) == 0, "tclient_init");
        t0 = tclient_now_ms();
        rv = tclient_member_add(&adm, nid, nd->raft_address, nd->client_address,
                                HEALTHY_MS);
        EXPECT(x, rv == 0, "MEMBER_ADD of node %u: %d (%s)", nid, rv,
               adm.errmsg);
        printf("# MEMBER_ADD of node %u answered by %s in %" PRId64 " ms\n",
               nid, adm.peer, tclient_now_ms() - t0);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "after MEMBER_ADD: %s", x->h.errmsg);
        MEMBERS(x, x->n + 1, 0, leader);

        /* The new node sends clients to the leader's client address (its
         * directory, replicated from the log, and its --member lines
         * agree; the old members know the new one's from the directory
         * alone, as MEMBERS checked)... */
        EXPECT(x, tclient_init(&raw, nd->client_address) == 0, "tclient_init");
        EXPECT(x, tclient_connect(&raw, nd->client_address, OP_MS) == 0,
               "connect to node %u: %s", nid, raw.errmsg);
        len = proto_write_query(f, sizeof f, 303, 0, name, strlen(name));
        if (!redirected(x, &raw, f, len, 303, leader, "QUERY", __LINE__)) {
                return;
        }
        tclient_close(&raw);
        /* ... and a client that knows only the new node finds the lock
         * taken before it joined. */
        EXPECT(x, tclient_init(&via, nd->client_address) == 0, "tclient_init");
        rv = tclient_query(&via, name, OP_MS, &res);
        EXPECT(x,
               rv == 0 && res.kind == PROTO_KIND_HOLDER &&
                   res.session == a.session && res.token == t1 &&
                   via.redirects >= 1 &&
                   strcmp(via.peer, harness_client_address(&x->h, leader)) == 0,
               "QUERY through node %u: %d %s, %lu redirects, served by %s", nid,
               rv, rs(x, &res), via.redirects, via.peer);
        tclient_close(&via);

        rv = tclient_member_remove(&adm, nid, HEALTHY_MS);
        EXPECT(x, rv == 0, "MEMBER_REMOVE of node %u: %d (%s)", nid, rv,
               adm.errmsg);
        tclient_close(&adm);
        EXPECT(x, harness_term(&x->h, nid, NULL) == 0, "%s", x->h.errmsg);
        EXPECT(x, harness_wait_exit(&x->h, nid, HEALTHY_MS, &status) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, status == 0, "removed node %u exited with %d on SIGTERM", nid,
               status);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0,
               "after MEMBER_REMOVE: %s", x->h.errmsg);
        MEMBERS(x, x->n, nid, leader);

        KEEPALIVE(x, &a);
        HOLDS(x, &a, name, a.session, t1, 0);
        RELEASE(x, &a, name, t1);
        tclient_close(&a);
}
