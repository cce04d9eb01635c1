/* Unit tests for the turns of followers whose leader's connection closed
 * (leaderloss.c): each voter but the lost leader gets a turn of its own,
 * ordered by id, non-voters none; the second round follows the last turn
 * of the first; and a turn stands only for a follower still following the
 * lost leader with nothing heard since, or a candidate after round one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include <raft.h>

#include "../../src/server/raft/leaderloss.h"

/* Five members: ids 5, 2, 9, 4 vote, 7 is a standby. */
static void five(struct raft_configuration *conf)
{
        static const uint64_t ids[] = {5, 2, 9, 7, 4};
        static char addr[] = "x";
        static struct raft_server servers[5];
        unsigned i;

        for (i = 0; i < 5; i++) {
                servers[i].id = ids[i];
                servers[i].address = addr;
                servers[i].role = ids[i] == 7 ? RAFT_STANDBY : RAFT_VOTER;
        }
        conf->servers = servers;
        conf->n = 5;
}

static void turns_by_id_without_the_leader(void **state)
{
        struct raft_configuration conf;
        unsigned rank, voters;

        (void)state;
        five(&conf);
        /* Leader 5 lost: 2, 4, 9 are left, in that order. */
        assert_true(leaderloss_rank(&conf, 2, 5, &rank, &voters));
        assert_int_equal(rank, 0);
        assert_int_equal(voters, 3);
        assert_true(leaderloss_rank(&conf, 4, 5, &rank, &voters));
        assert_int_equal(rank, 1);
        assert_true(leaderloss_rank(&conf, 9, 5, &rank, &voters));
        assert_int_equal(rank, 2);
        /* A standby stands for nothing. */
        assert_false(leaderloss_rank(&conf, 7, 5, &rank, &voters));
}

static void second_round_after_the_last_turn(void **state)
{
        struct leaderloss l;

        (void)state;
        memset(&l, 0, sizeof l);
        l.voters = 2;
        l.rank = 0;
        assert_int_equal(leaderloss_due(&l, 0, 25), 0);
        assert_int_equal(leaderloss_due(&l, 1, 25), 50);
        l.rank = 1;
        assert_int_equal(leaderloss_due(&l, 0, 25), 25);
        assert_int_equal(leaderloss_due(&l, 1, 25), 75);
}

static void stands_only_while_the_leader_is_silent(void **state)
{
        struct raft r;
        struct heard h;
        struct leaderloss l;
        char addr[] = "x";

        (void)state;
        memset(&r, 0, sizeof r);
        memset(&h, 0, sizeof h);
        memset(&l, 0, sizeof l);
        l.leader = 1;
        l.appends = 7;
        h.appends = 7;
        r.state = RAFT_FOLLOWER;
        r.follower_state.current_leader.id = 1;
        r.follower_state.current_leader.address = addr;
        assert_true(leaderloss_stands(&l, &r, &h, 0));
        /* The leader spoke since the close: only a reset connection. */
        h.appends = 8;
        assert_false(leaderloss_stands(&l, &r, &h, 0));
        h.appends = 7;
        /* Another leader, or none yet (this node just voted). */
        r.follower_state.current_leader.id = 2;
        assert_false(leaderloss_stands(&l, &r, &h, 0));
        r.follower_state.current_leader.id = 0;
        assert_false(leaderloss_stands(&l, &r, &h, 0));
        /* A candidate: only in the second round. */
        r.follower_state.current_leader.id = 0;
        r.follower_state.current_leader.address = NULL;
        r.state = RAFT_CANDIDATE;
        assert_false(leaderloss_stands(&l, &r, &h, 0));
        assert_true(leaderloss_stands(&l, &r, &h, 1));
        r.state = RAFT_LEADER;
        assert_false(leaderloss_stands(&l, &r, &h, 1));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(turns_by_id_without_the_leader),
            cmocka_unit_test(second_round_after_the_last_turn),
            cmocka_unit_test(stands_only_while_the_leader_is_silent),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
