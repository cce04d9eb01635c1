/* Fuzz target of batond's configuration (src/server/config/): the first
 * byte picks what the rest is read as,
 *
 *   0  a config file, config_load_file() (inih, through config.c's line
 *      reader), then config_validate();
 *   1  command line flags, split on NUL or newline, config_parse_args(),
 *      then config_validate();
 *   2  role lines, roles_add(), one per line, into one config;
 *   3  rule lines, rules_add();
 *   4  quota lines, quotas_add();
 *
 * starting from config_defaults(); the lines' config then becomes the
 * access list the first leader would seed (roles_config_acl()).
 *
 * Each parser refuses with BATON_EINVAL (the file also BATON_EIO or
 * BATON_ENOMEM) and a message, a non-empty NUL-terminated string, or
 * accepts; an accepted config keeps its lists within their bounds and
 * every string NUL-terminated. The file is written into a directory of
 * this process's own, made once and removed at exit; a --config flag is
 * pointed at a file there, so that no input reads any other file. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/fsm/acl.h"
#include "../../src/server/config/config.h"
#include "../../src/server/config/roles.h"
#include "replay.h"

/* More arguments than this are refused by the target, not the parser:
 * argv is on the stack. */
#define MAX_ARGS 256

/* Too large for the stack; set afresh by every input. */
static struct config cfg;
static struct acl acl;

static char dir[] = "/tmp/baton-fuzz-config-XXXXXX";
static char file[sizeof dir + 16];     /* the config file of mode 0 */
static char flagfile[sizeof dir + 16]; /* what --config loads in mode 1 */

static void fail(const char *why, const char *detail)
{
        fprintf(stderr, "fuzz_config: %s%s%s\n", why,
                detail != NULL ? ": " : "", detail != NULL ? detail : "");
        abort();
}

static void cleanup(void)
{
        unlink(file);
        unlink(flagfile);
        rmdir(dir);
}

static bool write_file(const char *path, const void *p, size_t n)
{
        FILE *f = fopen(path, "wb");
        bool ok;

        if (f == NULL) {
                return false;
        }
        ok = fwrite(p, 1, n, f) == n;
        return fclose(f) == 0 && ok;
}

static void setup(void)
{
        static const char small[] = "tls = off\nid = 2\ndata-dir = /nowhere\n";

        if (mkdtemp(dir) == NULL) {
                fail("cannot make a temp dir", dir);
        }
        snprintf(file, sizeof file, "%s/batond.conf", dir);
        snprintf(flagfile, sizeof flagfile, "%s/flags.conf", dir);
        if (!write_file(flagfile, small, sizeof small - 1)) {
                fail("cannot write", flagfile);
        }
        atexit(cleanup);
}

/* A refusal: a code the parser documents and a message. `msg` was filled
 * with 0xff before the call, so a message left unterminated shows. */
static void refused(int rv, const char *msg, size_t size, bool io)
{
        if (rv != BATON_EINVAL &&
            !(io && (rv == BATON_EIO || rv == BATON_ENOMEM))) {
                fail("a refusal with an undocumented code", baton_strerror(rv));
        }
        if (memchr(msg, '\0', size) == NULL) {
                fail("a refusal's message is not NUL-terminated", NULL);
        }
        if (msg[0] == '\0') {
                fail("a refusal without a message", NULL);
        }
}

static void terminated(const char *s, size_t size, const char *what)
{
        if (memchr(s, '\0', size) == NULL) {
                fail("an accepted string is not NUL-terminated", what);
        }
}

/* An accepted config (or one refused part way, which is left as it was
 * when the refusal came): its lists within their bounds. */
static void check_config(const struct config *c)
{
        unsigned i;

        if (c->n_members > CONFIG_MAX_MEMBERS ||
            c->n_roles > CONFIG_MAX_ROLES || c->n_rules > CONFIG_MAX_RULES ||
            c->n_quotas > CONFIG_MAX_QUOTAS) {
                fail("a list beyond its bound", NULL);
        }
        for (i = 0; i < c->n_members; i++) {
                terminated(c->members[i].raft_address,
                           sizeof c->members[i].raft_address, "member");
                terminated(c->members[i].client_address,
                           sizeof c->members[i].client_address, "member");
                terminated(c->members[i].http_address,
                           sizeof c->members[i].http_address, "member");
        }
        for (i = 0; i < c->n_roles; i++) {
                terminated(c->roles[i].identity, sizeof c->roles[i].identity,
                           "role");
                if (c->roles[i].identity[0] == '\0' ||
                    c->roles[i].role > ROLES_ADMIN) {
                        fail("a role line accepted empty or out of range",
                             NULL);
                }
        }
        for (i = 0; i < c->n_rules; i++) {
                terminated(c->rules[i].subject, sizeof c->rules[i].subject,
                           "rule");
                terminated(c->rules[i].prefix, sizeof c->rules[i].prefix,
                           "rule");
                if (c->rules[i].subject[0] == '\0') {
                        fail("a rule line accepted without a subject", NULL);
                }
        }
        for (i = 0; i < c->n_quotas; i++) {
                terminated(c->quotas[i].subject, sizeof c->quotas[i].subject,
                           "quota");
                if (c->quotas[i].subject[0] == '\0') {
                        fail("a quota line accepted without a subject", NULL);
                }
        }
        terminated(c->data_dir, sizeof c->data_dir, "data-dir");
        terminated(c->tls_peer_identity, sizeof c->tls_peer_identity,
                   "tls-peer-identity");
        terminated(c->cluster_name, sizeof c->cluster_name, "cluster-name");
}

/* The whole, as batond's start checks it after the file and flags. */
static void validate(void)
{
        char msg[CONFIG_ERRMSG_MAX];
        int rv;

        memset(msg, 0xff, sizeof msg);
        rv = config_validate(&cfg, msg, sizeof msg);
        if (rv != 0) {
                refused(rv, msg, sizeof msg, false);
        }
        check_config(&cfg);
}

static void from_file(const uint8_t *p, size_t n)
{
        char msg[CONFIG_ERRMSG_MAX];
        int rv;

        if (!write_file(file, p, n)) {
                fail("cannot write", file);
        }
        memset(msg, 0xff, sizeof msg);
        rv = config_load_file(&cfg, file, msg, sizeof msg);
        if (rv != 0) {
                refused(rv, msg, sizeof msg, true);
                return;
        }
        validate();
}

/* Split on NUL or newline into argv (after "batond"), each --config
 * pointed at our file: a path in the input must not be opened. */
static void from_flags(const uint8_t *p, size_t n)
{
        static char prog[] = "batond";
        static char opt[sizeof flagfile + 16];
        char *argv[MAX_ARGS + 2];
        char msg[CONFIG_ERRMSG_MAX];
        char *buf = malloc(n + 1);
        int argc = 1;
        size_t i, start = 0;
        int rv;

        if (buf == NULL) {
                fail("out of memory", NULL);
        }
        argv[0] = prog;
        for (i = 0; i <= n; i++) {
                if (i < n && p[i] != '\0' && p[i] != '\n') {
                        buf[i] = (char)p[i];
                        continue;
                }
                buf[i] = '\0';
                if (argc > MAX_ARGS) {
                        free(buf);
                        return;
                }
                argv[argc++] = buf + start;
                start = i + 1;
        }
        argv[argc] = NULL;
        snprintf(opt, sizeof opt, "--config=%s", flagfile);
        /* A value never starts with "--" (split_flag() refuses it), so
         * every "--config" the parser reaches is a flag, and the argument
         * after it its value. */
        for (i = 1; i < (size_t)argc; i++) {
                if (strcmp(argv[i], "--config") == 0 && i + 1 < (size_t)argc &&
                    strncmp(argv[i + 1], "--", 2) != 0) {
                        argv[++i] = flagfile;
                } else if (strncmp(argv[i], "--config=", 9) == 0) {
                        argv[i] = opt;
                }
        }
        (void)config_wants_help(argc, argv);
        memset(msg, 0xff, sizeof msg);
        rv = config_parse_args(&cfg, argc, argv, msg, sizeof msg);
        free(buf);
        if (rv != 0) {
                refused(rv, msg, sizeof msg, true);
                return;
        }
        validate();
}

/* One value per line, as the file's `role = ...` lines give them (but
 * untrimmed: a flag's value is not). */
static void from_lines(const uint8_t *p, size_t n,
                       int (*add)(struct config *, const char *, char *,
                                  size_t))
{
        char msg[CONFIG_ERRMSG_MAX];
        char *buf = malloc(n + 1);
        size_t i, start = 0;
        int rv;

        if (buf == NULL) {
                fail("out of memory", NULL);
        }
        memcpy(buf, p, n);
        buf[n] = '\0';
        for (i = 0; i <= n; i++) {
                if (i < n && buf[i] != '\n' && buf[i] != '\0') {
                        continue;
                }
                buf[i] = '\0';
                memset(msg, 0xff, sizeof msg);
                rv = add(&cfg, buf + start, msg, sizeof msg);
                if (rv != 0) {
                        refused(rv, msg, sizeof msg, false);
                }
                start = i + 1;
        }
        free(buf);
        check_config(&cfg);
        /* The seed the first leader proposes, and the roles it gives. */
        roles_config_acl(&cfg, &acl);
        for (i = 0; i < cfg.n_roles; i++) {
                if (roles_for(&cfg, cfg.roles[i].identity) !=
                    (enum roles_role)cfg.roles[i].role) {
                        fail("a role line does not give its role",
                             cfg.roles[i].identity);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (file[0] == '\0') {
                setup();
        }
        if (size == 0) {
                return 0;
        }
        config_defaults(&cfg);
        switch (data[0] % 5) {
        case 0:
                from_file(data + 1, size - 1);
                break;
        case 1:
                from_flags(data + 1, size - 1);
                break;
        case 2:
                from_lines(data + 1, size - 1, roles_add);
                break;
        case 3:
                from_lines(data + 1, size - 1, rules_add);
                break;
        default:
                from_lines(data + 1, size - 1, quotas_add);
                break;
        }
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "config");
}
#endif
