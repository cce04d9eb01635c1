/* The fixtures batond's configuration tests share: a file that loads and
 * validates, every key of the table, temporary files and argv parsing. */
#ifndef BATON_TESTS_CONFIGCASE_H
#define BATON_TESTS_CONFIGCASE_H

#include <stddef.h>

#include "../../src/server/config/config.h"

/* The members of a file, without its TLS files. */
#define GOOD_MEMBERS                                                           \
        "id = 1\n"                                                             \
        "data-dir = /tmp/baton-test\n"                                         \
        "member = 1 127.0.0.1:7001 127.0.0.1:7101\n"                           \
        "member = 2 127.0.0.1:7002 127.0.0.1:7102\n"                           \
        "member = 3 127.0.0.1:7003 127.0.0.1:7103\n"

/* A file that loads and validates; tests append one bad line to it. */
#define GOOD                                                                   \
        GOOD_MEMBERS                                                           \
        "tls-ca = /etc/baton/tls/ca.crt\n"                                     \
        "tls-cert = /etc/baton/tls/node1.crt\n"                                \
        "tls-key = /etc/baton/tls/node1.key\n"
#define GOOD_LINES 8

/* Every key of the table, as config.h's struct lists them. */
extern const char *const configcase_keys[];
extern const size_t configcase_n_keys;

/* A file under /tmp that a test writes, then removes. */
struct configcase_tmpfile {
        char path[64];
};

/* Writes `text` to a fresh file under /tmp (asserts it could). */
void configcase_tmp_write(struct configcase_tmpfile *t, const char *text);
/* Removes the file (asserts it could). */
void configcase_tmp_remove(struct configcase_tmpfile *t);

/* Loads `text` as a file over defaults; returns config_load_file()'s
 * result, its message in `errmsg` (CONFIG_ERRMSG_MAX bytes), the file's
 * path in `path_out` (64 bytes) unless NULL. */
int configcase_load(struct config *c, const char *text, char *path_out,
                    char *errmsg);

/* Parses argv (NULL-terminated) over defaults, as config_parse_args(). */
int configcase_parse(struct config *c, char **argv, char *errmsg);

#endif
