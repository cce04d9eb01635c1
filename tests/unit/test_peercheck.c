/* Unit tests for the check of the peers' data directories (peercheck.c):
 * what is refused and learned on either end of a raft connection, what is
 * written before raft sees the connection, and when a node refused at
 * start gives up. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/server/raft/peercheck.h"

#define OURS   UINT64_C(0xc1)
#define THEIRS UINT64_C(0xc2)

/* One node's checks, with what they did. */
struct fix {
        struct config cfg;
        struct dirid id;
        struct peercheck pc;
        unsigned saves;
        unsigned gave_up;
        bool voters[8];  /* by id */
        bool members[8]; /* by id: in the configuration in any role */
        bool leading;
        unsigned drops[8]; /* by id: connections dropped */
};

static void on_drop(void *data, uint64_t id)
{
        if (id < 8) {
                ((struct fix *)data)->drops[id]++;
        }
}

static void on_save(void *data)
{
        ((struct fix *)data)->saves++;
}

static void on_refused(void *data)
{
        ((struct fix *)data)->gave_up++;
}

static bool is_voter(void *data, uint64_t id)
{
        return id < 8 && ((struct fix *)data)->voters[id];
}

static bool is_member(void *data, uint64_t id)
{
        return id < 8 && ((struct fix *)data)->members[id];
}

static bool is_leading(void *data)
{
        return ((struct fix *)data)->leading;
}

/* Node 3 of `n` members, all voters, in cluster `cluster` (0: unknown). */
static void setup(struct fix *f, unsigned n, uint64_t cluster)
{
        unsigned i;

        memset(f, 0, sizeof *f);
        f->cfg.id = 3;
        f->cfg.n_members = n;
        f->cfg.election_timeout_ms = 300;
        f->id.cluster = cluster;
        f->id.node = 3;
        f->id.incarnation = 0x33;
        for (i = 1; i <= n; i++) {
                f->voters[i] = true;
                f->members[i] = true;
        }
        peercheck_init(&f->pc, &f->id, "/data/n3", &f->cfg);
        f->pc.save = on_save;
        f->pc.save_data = f;
        f->pc.refused = on_refused;
        f->pc.refused_data = f;
        f->pc.voter = is_voter;
        f->pc.member = is_member;
        f->pc.leading = is_leading;
        f->pc.voter_data = f;
}

/* A hello from `peer` with the addition; whether it was accepted. */
static bool hello(struct fix *f, uint64_t peer, uint64_t cluster,
                  uint64_t incarnation, uint64_t now,
                  struct rafthello_verdict *v)
{
        struct rafthello_ext e = {cluster, incarnation};
        struct rafthello_verdict spare;

        return peercheck_incoming(&f->pc, peer, "127.0.0.1", &e, true, now,
                                  v != NULL ? v : &spare);
}

static bool verdict(struct fix *f, uint64_t peer, uint8_t code,
                    uint64_t cluster, uint64_t incarnation, uint64_t known,
                    uint64_t now)
{
        struct rafthello_verdict v = {code, cluster, incarnation, known};

        return peercheck_verdict(&f->pc, peer, &v, now);
}

static void learns_before_raft(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 3, 0); /* join = true: no cluster yet */
        assert_true(hello(&f, 1, OURS, 0x11, 100, &v));
        assert_int_equal(v.code, RAFTHELLO_OK);
        assert_int_equal(v.incarnation, 0x33);
        assert_int_equal(v.cluster, OURS);
        assert_int_equal(f.id.cluster, OURS);
        assert_int_equal(dirid_peer(&f.id, 1), 0x11);
        assert_int_equal(f.saves, 1);
        /* Nothing new: nothing written. */
        assert_true(hello(&f, 1, OURS, 0x11, 200, NULL));
        assert_int_equal(f.saves, 1);
        /* The dialling side learns from the answer the same way. */
        assert_true(verdict(&f, 2, RAFTHELLO_OK, OURS, 0x22, 0x33, 300));
        assert_int_equal(dirid_peer(&f.id, 2), 0x22);
        assert_int_equal(f.saves, 2);
}

static void older_batond_unchecked(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        assert_true(
            peercheck_incoming(&f.pc, 1, "127.0.0.1", NULL, false, 1, &v));
        assert_int_equal(f.saves, 0);
        assert_int_equal(f.id.n_peers, 0);
        assert_false(f.pc.accepted);
}

static void wiped_voter_refused(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        assert_true(hello(&f, 2, OURS, 0x22, 1, NULL));
        assert_false(hello(&f, 2, OURS, 0x99, 2, &v));
        assert_int_equal(v.code, RAFTHELLO_INCARNATION);
        assert_int_equal(v.known, 0x22);
        assert_int_equal(dirid_peer(&f.id, 2), 0x22); /* kept */
        /* Answering our dial with another directory: closed too. */
        assert_false(verdict(&f, 2, RAFTHELLO_OK, OURS, 0x99, 0x33, 3));
        assert_int_equal(f.gave_up, 0); /* it is the other node's problem */
        /* Removed (no longer a voter), it may come back with a new one. */
        f.voters[2] = false;
        assert_true(hello(&f, 2, OURS, 0x99, 4, NULL));
        assert_int_equal(dirid_peer(&f.id, 2), 0x99);
}

static void forgets_who_stops_voting(void **state)
{
        uint64_t voters[] = {1, 3};
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        assert_true(hello(&f, 1, OURS, 0x11, 1, NULL));
        assert_true(hello(&f, 2, OURS, 0x22, 1, NULL));
        f.saves = 0;
        peercheck_voters(&f.pc, voters, 2);
        assert_int_equal(dirid_peer(&f.id, 2), 0);
        assert_int_equal(dirid_peer(&f.id, 1), 0x11);
        assert_int_equal(f.saves, 1);
        peercheck_voters(&f.pc, voters, 2);
        assert_int_equal(f.saves, 1);
}

static void told_it_was_wiped_gives_up(void **state)
{
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        /* Even after another peer accepted it: its votes are not what
         * they were. */
        assert_true(verdict(&f, 1, RAFTHELLO_OK, OURS, 0x11, 0x33, 1));
        assert_false(
            verdict(&f, 2, RAFTHELLO_INCARNATION, OURS, 0x22, 0x30, 2));
        assert_int_equal(f.gave_up, 1);
        assert_false(
            verdict(&f, 2, RAFTHELLO_INCARNATION, OURS, 0x22, 0x30, 3));
        assert_int_equal(f.gave_up, 1);
}

static void other_cluster_by_majority(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 3, THEIRS);
        assert_false(hello(&f, 1, OURS, 0x11, 1, &v));
        assert_int_equal(v.code, RAFTHELLO_CLUSTER);
        assert_int_equal(f.gave_up, 0);
        assert_int_equal(f.id.n_peers, 0); /* nothing learned from it */
        /* The same peer again does not count twice. */
        assert_false(verdict(&f, 1, RAFTHELLO_CLUSTER, OURS, 0x11, 0, 2));
        assert_int_equal(f.gave_up, 0);
        assert_false(verdict(&f, 2, RAFTHELLO_CLUSTER, OURS, 0x22, 0, 3));
        assert_int_equal(f.gave_up, 1);
}

static void one_peer_after_a_while(void **state)
{
        struct fix f;
        uint64_t grace = 3 * 300;

        (void)state;
        setup(&f, 5, THEIRS); /* a majority would be 3 */
        assert_false(hello(&f, 1, OURS, 0x11, 1000, NULL));
        assert_false(hello(&f, 1, OURS, 0x11, 1000 + grace - 1, NULL));
        assert_int_equal(f.gave_up, 0);
        assert_false(hello(&f, 1, OURS, 0x11, 1000 + grace, NULL));
        assert_int_equal(f.gave_up, 1);
}

static void accepted_once_stays(void **state)
{
        struct fix f;

        (void)state;
        /* A healthy node that a foreign one and nobody else talks to
         * first, then its own cluster accepts: it stays. */
        setup(&f, 3, OURS);
        assert_false(hello(&f, 1, THEIRS, 0x11, 1, NULL));
        assert_true(hello(&f, 2, OURS, 0x22, 2, NULL));
        assert_false(verdict(&f, 1, RAFTHELLO_CLUSTER, THEIRS, 0x11, 0, 3));
        assert_false(hello(&f, 1, THEIRS, 0x11, 10000, NULL));
        assert_int_equal(f.gave_up, 0);
}

/* The leader refuses a node of its cluster that is in no role of its
 * configuration, saying it was removed; a follower (whose configuration
 * may lag), a node not yet told its cluster (an empty directory, as a
 * replacement has) and a member are not. */
static void removed_member_told(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 4, OURS);
        f.voters[4] = f.members[4] = false;           /* member remove 4 */
        assert_true(hello(&f, 4, OURS, 0x44, 1, &v)); /* not leading */
        assert_int_equal(v.code, RAFTHELLO_OK);
        f.leading = true;
        assert_false(hello(&f, 4, OURS, 0x44, 2, &v));
        assert_int_equal(v.code, RAFTHELLO_REMOVED);
        assert_true(hello(&f, 4, 0, 0x45, 3, &v)); /* a new directory */
        assert_int_equal(v.code, RAFTHELLO_OK);
        f.members[4] = true; /* added again, not yet a voter */
        assert_true(hello(&f, 4, OURS, 0x44, 4, &v));
        assert_int_equal(v.code, RAFTHELLO_OK);
        assert_int_equal(f.gave_up, 0);
}

/* A wiped voter is refused for its incarnation, as before: it is a
 * member, so never taken for a removed one. */
static void wiped_voter_not_removed(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        f.leading = true;
        assert_true(hello(&f, 2, OURS, 0x22, 1, NULL));
        assert_false(hello(&f, 2, OURS, 0x99, 2, &v));
        assert_int_equal(v.code, RAFTHELLO_INCARNATION);
}

/* Told it was removed: it gives up once, as removed; told it was wiped,
 * it gives up not as removed. */
static void told_it_was_removed_gives_up(void **state)
{
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        assert_false(verdict(&f, 1, RAFTHELLO_REMOVED, OURS, 0x11, 0, 1));
        assert_false(verdict(&f, 1, RAFTHELLO_REMOVED, OURS, 0x11, 0, 2));
        assert_int_equal(f.gave_up, 1);
        assert_true(f.pc.removed);
        setup(&f, 3, OURS);
        assert_false(
            verdict(&f, 2, RAFTHELLO_INCARNATION, OURS, 0x22, 0x30, 1));
        assert_int_equal(f.gave_up, 1);
        assert_false(f.pc.removed);
}

/* Told it was removed before it was ever in a configuration (an empty
 * directory that learned the cluster's id from a peer before its `member
 * add`): it waits to be added, and gives up only once it has been in one. */
static void not_added_yet_waits(void **state)
{
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        f.members[f.pc.self] = false;
        assert_false(verdict(&f, 1, RAFTHELLO_REMOVED, OURS, 0x11, 0, 1));
        assert_false(verdict(&f, 1, RAFTHELLO_REMOVED, OURS, 0x11, 0, 2));
        assert_int_equal(f.gave_up, 0);
        assert_false(f.pc.removed);
        f.members[f.pc.self] = true;
        assert_false(verdict(&f, 1, RAFTHELLO_REMOVED, OURS, 0x11, 0, 3));
        assert_int_equal(f.gave_up, 1);
        assert_true(f.pc.removed);
}

/* A voter removed and added back (or a node that joins replaying that):
 * its incarnation, forgotten when it stopped voting, would come only with
 * the hello of a new connection, so its connections are dropped once
 * when it votes again; then a wiped directory of it is refused again. */
static void voter_again_heard_again(void **state)
{
        uint64_t with[] = {1, 2, 3}, without[] = {1, 3};
        struct fix f;

        (void)state;
        setup(&f, 3, OURS);
        f.pc.drop = on_drop;
        f.pc.drop_data = &f;
        assert_true(hello(&f, 2, OURS, 0x22, 1, NULL));
        peercheck_voters(&f.pc, with, 3);
        peercheck_voters(&f.pc, without, 2); /* member remove 2 */
        assert_int_equal(dirid_peer(&f.id, 2), 0);
        assert_int_equal(f.drops[2], 0);
        peercheck_voters(&f.pc, with, 3); /* member add 2 */
        assert_int_equal(f.drops[2], 1);
        peercheck_voters(&f.pc, with, 3);
        assert_int_equal(f.drops[2], 1);
        assert_int_equal(f.drops[1], 0);
        assert_true(hello(&f, 2, OURS, 0x2a, 2, NULL)); /* its new hello */
        assert_int_equal(dirid_peer(&f.id, 2), 0x2a);
        assert_false(hello(&f, 2, OURS, 0x99, 3, NULL)); /* wiped */
}

/* A node removed while another led, accepted by this one as a follower,
 * keeps that connection; once this node leads, its connections are
 * dropped (it dials again and hears REMOVED), and members' are not. */
static void leader_drops_removed_nodes(void **state)
{
        struct rafthello_verdict v;
        struct fix f;

        (void)state;
        setup(&f, 4, OURS);
        f.pc.drop = on_drop;
        f.pc.drop_data = &f;
        assert_true(hello(&f, 1, OURS, 0x11, 1, NULL));
        assert_true(hello(&f, 4, OURS, 0x44, 2, NULL));
        f.voters[4] = f.members[4] = false; /* member remove 4 */
        peercheck_leading(&f.pc);
        assert_int_equal(f.drops[4], 1);
        assert_int_equal(f.drops[1], 0);
        assert_int_equal(f.drops[3], 0);
        f.leading = true;
        assert_false(hello(&f, 4, OURS, 0x44, 3, &v));
        assert_int_equal(v.code, RAFTHELLO_REMOVED);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(learns_before_raft),
            cmocka_unit_test(older_batond_unchecked),
            cmocka_unit_test(wiped_voter_refused),
            cmocka_unit_test(forgets_who_stops_voting),
            cmocka_unit_test(told_it_was_wiped_gives_up),
            cmocka_unit_test(other_cluster_by_majority),
            cmocka_unit_test(one_peer_after_a_while),
            cmocka_unit_test(accepted_once_stays),
            cmocka_unit_test(removed_member_told),
            cmocka_unit_test(wiped_voter_not_removed),
            cmocka_unit_test(told_it_was_removed_gives_up),
            cmocka_unit_test(not_added_yet_waits),
            cmocka_unit_test(voter_again_heard_again),
            cmocka_unit_test(leader_drops_removed_nodes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
