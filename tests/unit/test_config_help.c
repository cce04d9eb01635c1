/* Unit tests for what batond's configuration tells its users: the help's
 * table of every key, the example configs and deploy/README.md's table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/server/config/config.h"
#include "../../src/server/config/tlsconfig.h"
#include "configcase.h"

/* Capture config_print_help() in `*text`, which the caller frees. */
static void help_text(char **text)
{
        size_t len = 0;
        FILE *f;

        *text = NULL;
        f = open_memstream(text, &len);
        assert_non_null(f);
        config_print_help(f);
        assert_int_equal(fclose(f), 0);
        assert_non_null(*text);
        assert_int_equal(strlen(*text), len);
}

/* The help lists every key, one row each, after the KEY header row. */
static void help_lists_every_key(void **state)
{
        char *text;
        char *rows;
        char *line;
        char *save = NULL;
        size_t n_rows = 0;
        size_t i;
        bool *seen = calloc(configcase_n_keys, sizeof *seen);

        (void)state;
        assert_non_null(seen);
        help_text(&text);
        rows = strstr(text, "\nKEY ");
        assert_non_null(rows);
        for (line = strtok_r(rows + 1, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                if (strncmp(line, "KEY ", 4) == 0) {
                        continue;
                }
                n_rows++;
                for (i = 0; i < configcase_n_keys; i++) {
                        size_t len = strlen(configcase_keys[i]);
                        if (strncmp(line, configcase_keys[i], len) == 0 &&
                            line[len] == ' ') {
                                assert_false(seen[i]);
                                seen[i] = true;
                        }
                }
        }
        assert_int_equal(n_rows, configcase_n_keys);
        for (i = 0; i < configcase_n_keys; i++) {
                if (!seen[i]) {
                        fail_msg("help does not list '%s'", configcase_keys[i]);
                }
        }
        free(seen);
        free(text);
}

/* Read a file of the source tree (automake's test harness sets $srcdir);
 * NULL when run by hand without it. */
static char *read_source(const char *rel)
{
        const char *srcdir = getenv("srcdir");
        char path[4096];
        FILE *f;
        char *buf;
        long len;

        if (srcdir == NULL) {
                return NULL;
        }
        snprintf(path, sizeof path, "%s/%s", srcdir, rel);
        f = fopen(path, "rb");
        if (f == NULL) {
                fail_msg("cannot open %s", path);
        }
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        len = ftell(f);
        assert_true(len >= 0);
        rewind(f);
        buf = malloc((size_t)len + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
        buf[len] = '\0';
        fclose(f);
        return buf;
}

/* The example configs load and validate, list every key, and give every
 * key but the node's own its default. */
static void example_configs(void **state)
{
        static const unsigned sizes[] = {3, 5};
        struct config c;
        struct config d;
        char rel[128];
        char path[4096];
        char errmsg[CONFIG_ERRMSG_MAX];
        char want[64];
        char *text;
        unsigned s;
        unsigned node;
        size_t i;

        (void)state;
        if (getenv("srcdir") == NULL) {
                skip();
        }
        for (s = 0; s < 2; s++) {
                for (node = 1; node <= sizes[s]; node++) {
                        snprintf(rel, sizeof rel,
                                 "deploy/baton-%u.conf.d/node%u.conf", sizes[s],
                                 node);
                        text = read_source(rel);
                        for (i = 0; i < configcase_n_keys; i++) {
                                snprintf(want, sizeof want,
                                         "\n%s =", configcase_keys[i]);
                                if (strstr(text, want) == NULL) {
                                        fail_msg("%s does not set %s", rel,
                                                 configcase_keys[i]);
                                }
                        }
                        free(text);
                        snprintf(path, sizeof path, "%s/%s", getenv("srcdir"),
                                 rel);
                        config_defaults(&c);
                        if (config_load_file(&c, path, errmsg, sizeof errmsg) !=
                            0) {
                                fail_msg("%s", errmsg);
                        }
                        config_defaults(&d);
                        d.id = c.id;
                        memcpy(d.data_dir, c.data_dir, sizeof d.data_dir);
                        d.n_members = c.n_members;
                        memcpy(d.members, c.members, sizeof d.members);
                        /* The node's own credentials; TLS is on. */
                        assert_true(c.tls);
                        d.tls = c.tls;
                        memcpy(d.tls_ca, c.tls_ca, sizeof d.tls_ca);
                        memcpy(d.tls_cert, c.tls_cert, sizeof d.tls_cert);
                        memcpy(d.tls_key, c.tls_key, sizeof d.tls_key);
                        assert_memory_equal(&c, &d, sizeof c);
                        assert_int_equal(c.id, node);
                        assert_int_equal(c.n_members, sizes[s]);
                        for (i = 0; i < sizes[s]; i++) {
                                snprintf(want, sizeof want, "127.0.0.1:%zu",
                                         7001 + i);
                                assert_string_equal(c.members[i].raft_address,
                                                    want);
                                snprintf(want, sizeof want, "127.0.0.1:%zu",
                                         7101 + i);
                                assert_string_equal(c.members[i].client_address,
                                                    want);
                        }
                        if (config_validate(&c, errmsg, sizeof errmsg) != 0) {
                                fail_msg("%s: %s", rel, errmsg);
                        }
                }
        }
}

/* deploy/README.md's table is the help's table, row for row: a row
 * "KEY  TYPE  DEFAULT  RANGE  DESCRIPTION" (columns split by two or more
 * spaces) is "| `KEY` | TYPE | DEFAULT | RANGE | DESCRIPTION |" there. */
static void readme_matches_help(void **state)
{
        char *readme;
        char *text;
        char *line;
        char *save = NULL;
        char row[1024];
        size_t n_rows = 0;

        (void)state;
        readme = read_source("deploy/README.md");
        if (readme == NULL) {
                skip();
        }
        help_text(&text);
        line = strstr(text, "\nKEY ");
        assert_non_null(line);
        line = strchr(line + 1, '\n');
        assert_non_null(line);
        for (line = strtok_r(line + 1, "\n", &save); line != NULL;
             line = strtok_r(NULL, "\n", &save)) {
                const char *p = line;
                size_t len = 0;
                int col = 0;

                len += (size_t)snprintf(row, sizeof row, "| `");
                while (*p != '\0') {
                        if (p[0] == ' ' && p[1] == ' ') {
                                p += strspn(p, " ");
                                len += (size_t)snprintf(
                                    row + len, sizeof row - len, "%s",
                                    col == 0 ? "` | " : " | ");
                                col++;
                                continue;
                        }
                        assert_true(len + 1 < sizeof row);
                        row[len++] = *p++;
                        row[len] = '\0';
                }
                assert_int_equal(col, 4);
                snprintf(row + len, sizeof row - len, " |\n");
                if (strstr(readme, row) == NULL) {
                        fail_msg("deploy/README.md lacks the row\n%s", row);
                }
                n_rows++;
        }
        assert_int_equal(n_rows, configcase_n_keys);
        free(text);
        free(readme);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(help_lists_every_key),
            cmocka_unit_test(example_configs),
            cmocka_unit_test(readme_matches_help),
        };

        return cmocka_run_group_tests_name("config_help", tests, NULL, NULL);
}
