/* Unit tests for a data directory's identity record (dirid.c): its text
 * both ways, what a bad file is told apart by, the derived cluster id, and
 * the peers' incarnations remembered and forgotten. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../src/server/disk/dirid.h"

static struct dirid sample(void)
{
        struct dirid d;

        memset(&d, 0, sizeof d);
        d.cluster = UINT64_C(0x3f2a9c0e5b7d6411);
        d.node = 3;
        d.incarnation = UINT64_C(0x9e41c2d07a5b3f18);
        dirid_remember(&d, 1, UINT64_C(0x0c5d2e8f1a3b4c67));
        dirid_remember(&d, 2, 7);
        return d;
}

static void parse_ok(struct dirid *d, const char *text)
{
        char why[128] = "";

        if (dirid_parse(d, text, strlen(text), why, sizeof why) != 0) {
                fail_msg("%s", why);
        }
}

static void parse_fails(const char *text, const char *want)
{
        struct dirid d;
        char why[128] = "";

        assert_int_not_equal(
            dirid_parse(&d, text, strlen(text), why, sizeof why), 0);
        if (strstr(why, want) == NULL) {
                fail_msg("'%s' does not say '%s'", why, want);
        }
}

static void round_trip(void **state)
{
        struct dirid d = sample(), e;
        char text[DIRID_TEXT_MAX];
        size_t n = dirid_format(&d, text, sizeof text);

        (void)state;
        assert_true(n < sizeof text);
        assert_int_equal(strlen(text), n);
        assert_non_null(strstr(text, "\ncluster 3f2a9c0e5b7d6411\n"));
        assert_non_null(strstr(text, "\npeer 2 0000000000000007\n"));
        parse_ok(&e, text);
        assert_memory_equal(&d, &e, sizeof d);
        /* Too small a buffer: the length needed, nothing half-written. */
        assert_int_equal(dirid_format(&d, text, 10), n);
        assert_string_equal(text, "");
}

static void unknown_cluster(void **state)
{
        struct dirid d = sample(), e;
        char text[DIRID_TEXT_MAX];

        (void)state;
        d.cluster = 0;
        d.n_peers = 0;
        memset(d.peers, 0, sizeof d.peers);
        dirid_format(&d, text, sizeof text);
        assert_non_null(strstr(text, "\ncluster unknown\n"));
        parse_ok(&e, text);
        assert_memory_equal(&d, &e, sizeof d);
}

static void every_peer_fits(void **state)
{
        struct dirid d = sample(), e;
        char text[DIRID_TEXT_MAX];
        uint64_t i;

        (void)state;
        for (i = 1; i <= DIRID_MAX_PEERS; i++) {
                dirid_remember(&d, UINT64_MAX - i, UINT64_MAX - i);
        }
        assert_int_equal(d.n_peers, DIRID_MAX_PEERS);
        assert_false(dirid_remember(&d, 99, 99)); /* full */
        assert_true(dirid_format(&d, text, sizeof text) < sizeof text);
        parse_ok(&e, text);
        assert_memory_equal(&d, &e, sizeof d);
}

static void later_keys_and_comments(void **state)
{
        struct dirid d;

        (void)state;
        parse_ok(&d, "# made by hand\n\nformat 1\r\nnode 4\n"
                     "incarnation 00000000000000ab\nshiny 1 2\n"
                     "cluster unknown");
        assert_int_equal(d.node, 4);
        assert_int_equal(d.incarnation, 0xab);
        assert_int_equal(d.cluster, 0);
}

static void bad_files(void **state)
{
        (void)state;
        parse_fails("node 1\nincarnation 1\n", "format missing");
        parse_fails("format 2\nnode 1\nincarnation 1\n", "newer batond");
        parse_fails("format 1\nincarnation 1\n", "node missing");
        parse_fails("format 1\nnode 1\n", "incarnation missing");
        parse_fails("format 1\nnode 0\nincarnation 1\n", "line 2: node");
        parse_fails("format 1\nnode -1\nincarnation 1\n", "line 2: node");
        parse_fails("format 1\nnode 1\nincarnation 1x\n", "line 3");
        parse_fails("format 1\nnode 1\nincarnation 0\n", "line 3");
        parse_fails("format 1\nnode 1\nincarnation 1\ncluster 0\n", "line 4");
        parse_fails("format 1\nnode 1\nincarnation 1\npeer 2\n", "line 4");
        parse_fails("format 1\nnode 1\nincarnation 1\npeer 2 0\n", "line 4");
        parse_fails("format 1\nnode 1 2\nincarnation 1\n", "line 2");
}

static void cluster_ids(void **state)
{
        struct config_member m[3] = {
            {1, "10.0.0.1:7001", "10.0.0.1:7101"},
            {2, "10.0.0.2:7001", "10.0.0.2:7101"},
            {3, "10.0.0.3:7001", "10.0.0.3:7101"},
        };
        struct config_member r[3] = {m[2], m[0], m[1]};
        uint64_t id = dirid_cluster_of(m, 3, "", "");

        (void)state;
        assert_int_not_equal(id, 0);
        /* Every node computes it alike, whatever its lines' order and its
         * view of the client addresses. */
        assert_int_equal(dirid_cluster_of(r, 3, "", ""), id);
        snprintf(r[0].client_address, sizeof r[0].client_address,
                 "node3.example:7101");
        assert_int_equal(dirid_cluster_of(r, 3, "", ""), id);
        /* Anything raft's bootstrap sees, the name or the salt tells
         * clusters apart. */
        assert_int_not_equal(dirid_cluster_of(m, 2, "", ""), id);
        assert_int_not_equal(dirid_cluster_of(m, 3, "b", ""), id);
        assert_int_not_equal(dirid_cluster_of(m, 3, "", "restore 1 2 3"), id);
        assert_int_not_equal(dirid_cluster_of(m, 3, "b", ""),
                             dirid_cluster_of(m, 3, "", "b"));
        snprintf(r[0].raft_address, sizeof r[0].raft_address, "10.0.0.9:7001");
        assert_int_not_equal(dirid_cluster_of(r, 3, "", ""), id);
        /* Written in data directories and sent between nodes: fixed. */
        assert_int_equal(id, dirid_cluster_of(m, 3, "", ""));
}

static void remember_and_forget(void **state)
{
        struct dirid d = sample();
        uint64_t voters[] = {2, 5};

        (void)state;
        assert_int_equal(dirid_peer(&d, 1), 0x0c5d2e8f1a3b4c67);
        assert_int_equal(dirid_peer(&d, 9), 0);
        assert_false(dirid_remember(&d, 2, 7));
        assert_true(dirid_remember(&d, 2, 8));
        assert_int_equal(dirid_peer(&d, 2), 8);
        assert_true(dirid_forget_others(&d, voters, 2));
        assert_int_equal(d.n_peers, 1);
        assert_int_equal(dirid_peer(&d, 1), 0);
        assert_int_equal(dirid_peer(&d, 2), 8);
        assert_false(dirid_forget_others(&d, voters, 2));
        assert_true(dirid_forget_others(&d, NULL, 0));
        assert_int_equal(d.n_peers, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trip),
            cmocka_unit_test(unknown_cluster),
            cmocka_unit_test(every_peer_fits),
            cmocka_unit_test(later_keys_and_comments),
            cmocka_unit_test(bad_files),
            cmocka_unit_test(cluster_ids),
            cmocka_unit_test(remember_and_forget),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
