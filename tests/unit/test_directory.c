/* Unit tests of the replicated member directory and the MEMBER command. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/directory.h"

static struct command member(uint64_t id, const char *raft, const char *client)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = COMMAND_MEMBER;
        c.target = id;
        c.mode = raft == NULL ? COMMAND_MEMBER_REMOVE : COMMAND_MEMBER_SET;
        c.name = raft;
        c.name_len = raft == NULL ? 0 : (uint8_t)strlen(raft);
        c.address = client;
        c.address_len = client == NULL ? 0 : (uint8_t)strlen(client);
        return c;
}

static void test_set_replace_remove(void **state)
{
        struct directory d;
        struct command c;

        (void)state;
        directory_init(&d);
        c = member(3, "127.0.0.1:7003", "127.0.0.1:7103");
        assert_int_equal(directory_apply(&d, &c), 0);
        c = member(1, "127.0.0.1:7001", "127.0.0.1:7101");
        assert_int_equal(directory_apply(&d, &c), 0);
        assert_int_equal(d.n, 2);
        assert_int_equal(d.members[0].id, 1); /* kept in id order */
        assert_string_equal(directory_find(&d, 3)->client_address,
                            "127.0.0.1:7103");
        c = member(3, "127.0.0.1:8003", "127.0.0.1:8103");
        assert_int_equal(directory_apply(&d, &c), 0);
        assert_int_equal(d.n, 2);
        assert_string_equal(directory_find(&d, 3)->raft_address,
                            "127.0.0.1:8003");
        c = member(3, NULL, NULL);
        assert_int_equal(directory_apply(&d, &c), 0);
        assert_null(directory_find(&d, 3));
        assert_int_equal(directory_apply(&d, &c), BATON_ENOTFOUND);
        assert_int_equal(d.n, 1);
}

static void test_full_directory_refuses(void **state)
{
        struct directory d;
        struct command c;
        uint64_t id;

        (void)state;
        directory_init(&d);
        for (id = 1; id <= DIRECTORY_MAX; id++) {
                c = member(id, "127.0.0.1:1", "127.0.0.1:2");
                assert_int_equal(directory_apply(&d, &c), 0);
        }
        c = member(99, "127.0.0.1:1", "127.0.0.1:2");
        assert_int_equal(directory_apply(&d, &c), BATON_EINVAL);
        assert_null(directory_find(&d, 99));
        /* Replacing an existing member still works when full. */
        c = member(5, "127.0.0.1:9", "127.0.0.1:10");
        assert_int_equal(directory_apply(&d, &c), 0);
}

static void test_encode_decode(void **state)
{
        struct directory d, e;
        struct command c;
        uint8_t buf[2048], again[2048];
        size_t n, i;

        (void)state;
        directory_init(&d);
        c = member(2, "10.0.0.2:7002", "10.0.0.2:7102");
        directory_apply(&d, &c);
        c = member(7, "10.0.0.7:7002", "10.0.0.7:7102");
        directory_apply(&d, &c);
        n = directory_encode(&d, buf, sizeof buf);
        assert_int_equal(n, directory_encode(&d, NULL, 0));
        directory_init(&e);
        assert_int_equal(directory_decode(&e, buf, n), 0);
        assert_int_equal(directory_encode(&e, again, sizeof again), n);
        assert_memory_equal(buf, again, n);
        /* Every truncation, and a trailing byte, is refused unchanged. */
        for (i = 0; i < n; i++) {
                assert_int_equal(directory_decode(&e, buf, i), BATON_ECORRUPT);
                assert_int_equal(e.n, 2);
        }
        buf[n] = 0;
        assert_int_equal(directory_decode(&e, buf, n + 1), BATON_ECORRUPT);
        /* Out of order ids are refused. */
        buf[1] = 9;
        assert_int_equal(directory_decode(&e, buf, n), BATON_ECORRUPT);
        assert_string_equal(directory_find(&e, 2)->raft_address,
                            "10.0.0.2:7002");
}

static void test_member_command_codec(void **state)
{
        struct command c = member(4, "127.0.0.1:7004", "127.0.0.1:7104");
        struct command d;
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t n;
        char long_address[COMMAND_ADDRESS_MAX + 2];

        (void)state;
        n = command_encode(&c, buf, sizeof buf);
        assert_true(n > 0);
        assert_int_equal(command_decode(&d, buf, n), 0);
        assert_int_equal(d.type, COMMAND_MEMBER);
        assert_int_equal(d.target, 4);
        assert_int_equal(d.address_len, c.address_len);
        assert_memory_equal(d.address, "127.0.0.1:7104", d.address_len);
        assert_string_equal(command_type_name(COMMAND_MEMBER), "MEMBER");
        /* id 0, an empty address to set, an address to remove, too long,
         * an unknown mode: all malformed. */
        c.target = 0;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c = member(4, "", "127.0.0.1:1");
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c = member(4, NULL, NULL);
        assert_int_equal(command_validate(&c), 0);
        c.name = "x";
        c.name_len = 1;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        memset(long_address, '1', sizeof long_address - 1);
        long_address[sizeof long_address - 1] = '\0';
        c = member(4, long_address, "127.0.0.1:1");
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
        c = member(4, "127.0.0.1:1", "127.0.0.1:2");
        c.mode = 2;
        assert_int_equal(command_validate(&c), BATON_EMALFORMED);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_set_replace_remove),
            cmocka_unit_test(test_full_directory_refuses),
            cmocka_unit_test(test_encode_decode),
            cmocka_unit_test(test_member_command_codec),
        };
        return cmocka_run_group_tests_name("directory", tests, NULL, NULL);
}
