/* The fixtures batond's configuration tests share. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configcase.h"

/* Every key of the table, as config.h's struct lists them. */
const char *const configcase_keys[] = {
    "id",
    "data-dir",
    "member",
    "client-listen",
    "raft-listen",
    "join",
    "cluster-name",
    "election-timeout-ms",
    "heartbeat-timeout-ms",
    "restore-margin",
    "snapshot-threshold",
    "snapshot-trailing",
    "snapshot-compression",
    "max-connections",
    "max-frame",
    "output-limit",
    "max-sessions",
    "max-locks-per-session",
    "max-waiters-per-lock",
    "max-permits",
    "max-holders-per-lock",
    "max-names-per-acquire",
    "max-lock-delay-ms",
    "max-hold-ms",
    "lock-delay-ms",
    "max-watches",
    "max-watches-per-connection",
    "watch-batch-ms",
    "watch-history",
    "max-inflight-entries",
    "min-ttl-ms",
    "max-ttl-ms",
    "metrics-address",
    "metrics-tls",
    "metrics-max-connections",
    "http-listen",
    "http-max-connections",
    "http-max-header-bytes",
    "http-max-body-bytes",
    "http-request-timeout-ms",
    "http-idle-timeout-ms",
    "http-max-wait-ms",
    "digest-interval",
    "ready-max-lag",
    "apply-log",
    "audit-log",
    "tls",
    "tls-ca",
    "tls-cert",
    "tls-key",
    "tls-crl",
    "tls-client-ca",
    "tls-expiry-warn-days",
    "tls-peer-identity",
    "handshake-timeout-ms",
    "idle-timeout-ms",
    "max-connections-per-address",
    "role",
    "rule",
    "quota",
    "default-role",
    "log-level",
    "log-format",
};

const size_t configcase_n_keys =
    sizeof configcase_keys / sizeof configcase_keys[0];

void configcase_tmp_write(struct configcase_tmpfile *t, const char *text)
{
        size_t len = strlen(text);
        int fd;

        strcpy(t->path, "/tmp/baton-config-XXXXXX");
        fd = mkstemp(t->path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t)len);
        assert_int_equal(close(fd), 0);
}

void configcase_tmp_remove(struct configcase_tmpfile *t)
{
        assert_int_equal(unlink(t->path), 0);
}

/* Load `text` as a file; returns the result, message in `errmsg`. */
int configcase_load(struct config *c, const char *text, char *path_out,
                    char *errmsg)
{
        struct configcase_tmpfile t;
        int rv;

        configcase_tmp_write(&t, text);
        config_defaults(c);
        rv = config_load_file(c, t.path, errmsg, CONFIG_ERRMSG_MAX);
        if (path_out != NULL) {
                strcpy(path_out, t.path);
        }
        configcase_tmp_remove(&t);
        return rv;
}

/* Parse argv (NULL-terminated) over defaults. */
int configcase_parse(struct config *c, char **argv, char *errmsg)
{
        int argc = 0;

        while (argv[argc] != NULL) {
                argc++;
        }
        config_defaults(c);
        return config_parse_args(c, argc, argv, errmsg, CONFIG_ERRMSG_MAX);
}
