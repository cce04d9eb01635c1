/* batond's configuration: one table of keys, a config file, flags. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/lockfsm.h"
#include "../../lib/address.h"
#include "members.h"
#include "roles.h"
#include "tlsconfig.h"

/* What a key's value is, and so how it is parsed, checked and printed. */
enum type {
        T_U64,
        T_U32,
        T_BOOL,
        T_PATH,       /* char[size]; "" allowed (means unset or off) */
        T_STRING,     /* char[size]; free text, "" allowed */
        T_ADDRESS,    /* char[size]; "host:port", "[ipv6]:port", or "" */
        T_LOG_LEVEL,  /* enum log_level */
        T_LOG_FORMAT, /* enum log_format */
        T_MEMBER,     /* one more entry of members[]; min..max = list size */
        T_ROLE,       /* uint8_t enum roles_role */
        T_ROLE_MAP,   /* one more entry of roles[]; min..max = list size */
        T_RULE_MAP,   /* one more entry of rules[]; min..max = list size */
        T_QUOTA_MAP,  /* one more entry of quotas[]; min..max = list size */
};

struct key {
        const char *name; /* the field's name with '_' written '-' */
        enum type type;
        size_t offset;   /* into struct config */
        size_t size;     /* of the field, for strings */
        const char *def; /* parsed like any value; NULL: required, no default */
        uint64_t min;    /* numbers: range of the value */
        uint64_t max;
        const char *help; /* one line, no double spaces (deploy/README.md) */
};

#define F(field)                                                               \
        offsetof(struct config, field), sizeof(((struct config *)0)->field)

/* The one table: every key of the config file and every flag. */
/* clang-format off */
static const struct key keys[] = {
    {"id",                    T_U64,       F(id),                    NULL,      1,     UINT64_MAX, "This node's raft id; must be one of the members"},
    {"data-dir",              T_PATH,      F(data_dir),              NULL,      1,     0,          "Directory of this node's raft log and snapshots, never shared; created if missing"},
    {"member",                T_MEMBER,    F(members),               NULL,      1,     CONFIG_MAX_MEMBERS, "ID RAFT_ADDRESS CLIENT_ADDRESS [HTTP_ADDRESS] of one node of the initial cluster; same lines on every node; HTTP_ADDRESS is where its HTTP API is reached, which followers redirect writes to"},
    {"client-listen",         T_ADDRESS,   F(client_listen),         "",        0,     0,          "Address the client port binds, e.g. 0.0.0.0:7101 for every interface, or the inside of a port mapping; clients are told the member line's client address; empty = that address"},
    {"raft-listen",           T_ADDRESS,   F(raft_listen),           "",        0,     0,          "Address the raft port binds, e.g. 0.0.0.0:7001; the peers dial the member line's raft address; empty = that address"},
    {"join",                  T_BOOL,      F(join),                  "false",   0,     1,          "Start without bootstrapping, to be added to a running cluster with member add"},
    {"cluster-name",          T_STRING,    F(cluster_name),          "",        0,     0,          "Mixed into the cluster id that a new data directory records, so that clusters with the same member lines refuse each other's directories (as etcd's initial-cluster-token does); same on every node; read only when a directory is made"},
    {"election-timeout-ms",   T_U32,       F(election_timeout_ms),   "300",     100,   60000,      "Raft election timeout; losing the leader costs about 1.3-2x this"},
    {"heartbeat-timeout-ms",  T_U32,       F(heartbeat_timeout_ms),  "50",      10,    10000,      "Leader heartbeat period and raft tick; below election-timeout-ms"},
    {"restore-margin",        T_U64,       F(restore_margin),        "1099511627776", 1, UINT64_C(1) << 62, "batond --restore: the restored log starts this many entries (default 2^40) above the backup's index, so new tokens exceed every token the old cluster handed out before and after the backup (docs/operations.md)"},
    {"snapshot-threshold",    T_U32,       F(snapshot_threshold),    "4096",    1,     16777216,   "Most log entries applied between snapshots, which each node takes at indexes of its own; a follower installing a snapshot freezes for time quadratic in this (docs/raft.md)"},
    {"snapshot-trailing",     T_U32,       F(snapshot_trailing),     "2048",    0,     16777216,   "Log entries kept behind a snapshot, so a follower that lags less needs no snapshot; at least snapshot-threshold / 8"},
    {"snapshot-compression",  T_BOOL,      F(snapshot_compression),  "true",    0,     1,          "Compress snapshots with lz4"},
    {"max-connections",       T_U32,       F(max_connections),       "10000",   1,     1048576,    "Client connections open at once; more are refused"},
    {"max-frame",             T_U32,       F(max_frame),             "65536",   1024,  65536,      "Largest request body accepted, in bytes"},
    {"output-limit",          T_U32,       F(output_limit),          "1048576", 65536, 1073741824, "Reply bytes queued on one connection before reading from it pauses"},
    {"max-sessions",          T_U32,       F(max_sessions),          "65536",   1,     16777216,   "Live sessions in the cluster; same value on every node"},
    {"max-locks-per-session", T_U32,       F(max_locks_per_session), "1024",    1,     1048576,    "Locks held or awaited by one session; same value on every node"},
    {"max-waiters-per-lock",  T_U32,       F(max_waiters_per_lock),  "4096",    1,     1048576,    "Sessions queued on one lock; same value on every node"},
    {"max-permits",           T_U32,       F(max_permits),           "4096",    1,     1048576,    "Permits of one semaphore (and so its holders); same value on every node"},
    {"max-holders-per-lock",  T_U32,       F(max_holders_per_lock),  "65536",   1,     16777216,   "Grants of one lock at once (readers, a semaphore's holders); same value on every node"},
    {"max-names-per-acquire", T_U32,       F(max_names_per_acquire), "16",      1,     16,         "Names one multi-lock takes at once (at most 16); same value on every node"},
    {"max-lock-delay-ms",     T_U32,       F(max_lock_delay_ms),     "60000",   0,     3600000,    "The longest lock-delay a session may ask for when it opens (BATON_EDELAY above); same value on every node"},
    {"max-hold-ms",           T_U32,       F(max_hold_ms),           "86400000", 1000, 604800000,  "The longest hold time a grant may be acquired or extended with (BATON_EINVAL above); same value on every node"},
    {"lock-delay-ms",         T_U32,       F(lock_delay_ms),         "0",       0,     3600000,    "Lock-delay: a lock whose holder's session expires or is revoked is granted to no one for this long (0: none); the leader writes it into each EXPIRE and REVOKE"},
    {"max-watches",           T_U32,       F(max_watches),           "65536",   0,     16777216,   "Watches this node serves at once (BATON_ETOOMANYWATCHES above); 0: none"},
    {"max-watches-per-connection", T_U32,  F(max_watches_per_conn),  "1024",    0,     16777216,   "Watches one client connection may have at once"},
    {"watch-batch-ms",        T_U32,       F(watch_batch_ms),        "5",       0,     1000,       "Longest a watch event waits for more to share its write to a connection (0: sent at the end of the loop turn that applied it); with many watchers, fewer and larger writes are what keeps watching cheap (docs/performance.md)"},
    {"watch-history",         T_U32,       F(watch_history),         "16384",   16,    16777216,   "Grants, releases and proclaims this node keeps so that a watch can resume after a reconnect (BATON_ECOMPACTED from before them); about 100 bytes each"},
    {"max-inflight-entries",  T_U32,       F(max_inflight_entries),  "8192",    1,     1048576,    "Entries proposed to raft and not yet applied, at most"},
    {"min-ttl-ms",            T_U32,       F(min_ttl_ms),            "0",       0,     86400000,   "Shortest session TTL; 0 = 2 x election-timeout-ms, never less; same on every node"},
    {"max-ttl-ms",            T_U32,       F(max_ttl_ms),            "3600000", 1000,  86400000,   "Longest session TTL; same value on every node"},
    {"metrics-address",       T_ADDRESS,   F(metrics_address),       "",        0,     0,          "Where /health, /ready and /metrics are served, e.g. 10.0.0.1:7201; plain HTTP off loopback or with metrics-tls gets liveness only, metrics need TLS; empty = off"},
    {"metrics-tls",           T_BOOL,      F(metrics_tls),           "false",   0,     1,          "Serve TLS too on the metrics port, with the node's certificate: /metrics for client certificates of role read or admin"},
    {"metrics-max-connections", T_U32,     F(metrics_max_connections), "16",    1,     1024,       "Metrics connections open at once; more are closed; each gets handshake-timeout-ms to be answered"},
    {"http-listen",           T_ADDRESS,   F(http_listen),           "",        0,     0,          "Address the HTTP/JSON API binds (docs/http.md), over TLS with client certificates when tls is on, e.g. 0.0.0.0:7301; empty = off"},
    {"http-max-connections",  T_U32,       F(http_max_connections),  "1024",    1,     1048576,    "HTTP API connections open at once; more are refused (429)"},
    {"http-max-header-bytes", T_U32,       F(http_max_header_bytes), "8192",    1024,  65536,      "Largest request line and headers of one HTTP request (431 above)"},
    {"http-max-body-bytes",   T_U32,       F(http_max_body_bytes),   "16384",   1024,  65536,      "Largest HTTP request body (413 above)"},
    {"http-request-timeout-ms", T_U32,     F(http_request_timeout_ms), "10000", 100,   600000,     "Time an HTTP request has to arrive whole once its first byte came (408 after)"},
    {"http-idle-timeout-ms",  T_U32,       F(http_idle_timeout_ms),  "60000",   100,   86400000,   "An HTTP connection with no request under way for this long is closed"},
    {"http-max-wait-ms",      T_U32,       F(http_max_wait_ms),      "300000",  0,     86400000,   "Longest wait_ms an HTTP acquire or campaign may hold its request open for"},
    {"digest-interval",       T_U32,       F(digest_interval),       "16384",   0,     UINT32_MAX, "Every this many log entries each node digests its state machine (in a forked child) and the leader proposes its digest; a node whose digest differs says so and GET /ready answers 503 diverged (docs/operations.md); 0 = no digests; same value on every node"},
    {"ready-max-lag",         T_U32,       F(ready_max_lag),         "1000",    0,     UINT32_MAX, "GET /ready answers 503 while this node's applied index is more than this many entries behind the leader's commit index"},
    {"apply-log",             T_PATH,      F(apply_log),             "",        0,     0,          "File that gets one JSON line per state machine event, reopened on SIGHUP (logrotate); empty = off"},
    {"audit-log",             T_PATH,      F(audit_log),             "",        0,     0,          "File that gets one JSON line per admin request this node served and per request it refused for lack of permission or authentication (docs/security.md), reopened on SIGHUP (logrotate); empty = off"},
    {"tls",                   T_BOOL,      F(tls),                   "true",    0,     1,          "TLS 1.3 with mutual authentication on the client and raft ports; off only for a trusted single host (logged as a warning)"},
    {"tls-ca",                T_PATH,      F(tls_ca),                "",        0,     0,          "PEM CA certificate that signs every node's certificate, and the clients' unless tls-client-ca is set; required with tls"},
    {"tls-cert",              T_PATH,      F(tls_cert),              "",        0,     0,          "PEM certificate of this node for both ports; carries the identity tls-peer-identity gives its id, and its client address as a SAN; required with tls"},
    {"tls-key",               T_PATH,      F(tls_key),               "",        0,     0,          "PEM private key of tls-cert; required with tls"},
    {"tls-crl",               T_PATH,      F(tls_crl),               "",        0,     0,          "PEM certificate revocation list checked on both ports; empty = none"},
    {"tls-client-ca",         T_PATH,      F(tls_client_ca),         "",        0,     0,          "PEM CA that signs client certificates; empty = tls-ca"},
    {"tls-expiry-warn-days",  T_U32,       F(tls_expiry_warn_days),  "30",      0,     3650,       "batond warns at start and once a day while tls-cert expires within this many days (0: never); an expired tls-cert stops it from starting"},
    {"tls-peer-identity",     T_STRING,    F(tls_peer_identity),     "node-{id}", 1,   0,          "Identity (certificate CN or DNS/URI SAN) a node must present on the raft port; {id} stands for its raft id"},
    {"handshake-timeout-ms",  T_U32,       F(handshake_timeout_ms),  "5000",    100,   600000,     "Time a new connection has to complete its TLS handshake on any port"},
    {"idle-timeout-ms",       T_U32,       F(idle_timeout_ms),       "0",       0,     86400000,   "A client connection that sends nothing for this long is closed; 0 = max-ttl-ms"},
    {"max-connections-per-address", T_U32, F(max_connections_per_address), "256", 1, 1048576,  "Client connections open at once from one source address"},
    {"role",                  T_ROLE_MAP,  F(roles),                 "",        0,     CONFIG_MAX_ROLES, "IDENTITY ROLE: the role (admin, lock, read, none) of clients whose certificate has this identity; one line each"},
    {"rule",                  T_RULE_MAP,  F(rules),                 "",        0,     CONFIG_MAX_RULES, "SUBJECT PREFIX PERMS: a rule on lock names the cluster starts with: SUBJECT (an identity, or group:OU) may PERMS (read, lock, manage, or a list: lock,manage) every name starting with PREFIX (a word, or \"...\"; \"\" is every name); once any rule exists, names no rule gives are closed; one line each"},
    {"quota",                 T_QUOTA_MAP, F(quotas),                "",        0,     CONFIG_MAX_QUOTAS, "SUBJECT KIND=N ...: a quota the cluster starts with: what the sessions of identity SUBJECT (* for every identity without a line of its own) may have at once: sessions, locks (held and awaited), waiters, and on each node watches and rate (requests per second); N 0 or none: no limit; admins have none; one line each"},
    {"default-role",          T_ROLE,      F(default_role),          "lock",    0,     0,          "Role of client identities no role line names: admin, lock, read or none"},
    {"log-level",             T_LOG_LEVEL, F(log_level),             "info",    0,     0,          "Least severe log lines written: error, warn, info or debug"},
    {"log-format",            T_LOG_FORMAT, F(log_format),           "text",    0,     0,          "Log lines on stderr: text, or json (one object per line: time, level, node, message, and session, seq, connection, request where known)"},
};
/* clang-format on */

#define N_KEYS (sizeof keys / sizeof keys[0])

static const char *const level_names[] = {
    [LOG_ERROR] = "error",
    [LOG_WARN] = "warn",
    [LOG_INFO] = "info",
    [LOG_DEBUG] = "debug",
};

static const char *const format_names[] = {
    [LOG_TEXT] = "text",
    [LOG_JSON] = "json",
};

static const char *const type_names[] = {
    [T_U64] = "u64",
    [T_U32] = "u32",
    [T_BOOL] = "bool",
    [T_PATH] = "path",
    [T_ADDRESS] = "address",
    [T_LOG_LEVEL] = "log-level",
    [T_STRING] = "string",
    [T_MEMBER] = "member",
    [T_ROLE] = "role",
    [T_ROLE_MAP] = "role-line",
    [T_RULE_MAP] = "rule-line",
    [T_QUOTA_MAP] = "quota-line",
    [T_LOG_FORMAT] = "log-format",
};

static const struct key *lookup(const char *name, size_t len)
{
        size_t i;

        for (i = 0; i < N_KEYS; i++) {
                if (strlen(keys[i].name) == len &&
                    memcmp(keys[i].name, name, len) == 0) {
                        return &keys[i];
                }
        }
        return NULL;
}

/* Write "MIN..MAX" of a number key, with 2^N-1 for the type's maximum. */

/* A decimal number in min..max: digits only, nothing before or after. */

static int parse_bool(const char *s, bool *out, char *msg, size_t size)
{
        static const char *const yes[] = {"true", "yes", "on", "1"};
        static const char *const no[] = {"false", "no", "off", "0"};
        size_t i;

        for (i = 0; i < sizeof yes / sizeof yes[0]; i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *out = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *out = false;
                        return 0;
                }
        }
        return settings_fail(
            msg, size,
            "'%s' is not a boolean (true/false, yes/no, on/off, 1/0)", s);
}

static int set_string(char *field, size_t field_size, const char *value,
                      char *msg, size_t size)
{
        size_t len = strlen(value);

        if (len >= field_size) {
                return settings_fail(msg, size, "too long (at most %zu bytes)",
                                     field_size - 1);
        }
        memcpy(field, value, len + 1);
        return 0;
}

/* Parse `value` into the field of `k`; the message does not name the key. */
static int set(struct config *c, const struct key *k, const char *value,
               char *msg, size_t size)
{
        char *field = (char *)c + k->offset;
        uint64_t v = 0;
        bool b = false; /* set whenever used; gcc -O2 cannot tell */
        size_t i;
        int rv;

        switch (k->type) {
        case T_U64:
        case T_U32:
                rv = settings_number(value, k->min, k->max, &v, msg, size);
                if (rv != 0) {
                        return rv;
                }
                if (k->type == T_U64) {
                        *(uint64_t *)(void *)field = v;
                } else {
                        *(uint32_t *)(void *)field = (uint32_t)v;
                }
                return 0;
        case T_BOOL:
                rv = parse_bool(value, &b, msg, size);
                if (rv == 0) {
                        *(bool *)(void *)field = b;
                }
                return rv;
        case T_PATH:
        case T_STRING:
                return set_string(field, k->size, value, msg, size);
        case T_ADDRESS:
                if (value[0] != '\0') {
                        rv = members_parse_address(value, false, msg, size);
                        if (rv != 0) {
                                return rv;
                        }
                }
                return set_string(field, k->size, value, msg, size);
        case T_LOG_LEVEL:
                for (i = 0; i < sizeof level_names / sizeof level_names[0];
                     i++) {
                        if (strcmp(value, level_names[i]) == 0) {
                                *(enum log_level *)(void *)field =
                                    (enum log_level)i;
                                return 0;
                        }
                }
                return settings_fail(
                    msg, size,
                    "'%s' is not a log level (error, warn, info, "
                    "debug)",
                    value);
        case T_LOG_FORMAT:
                for (i = 0; i < 2; i++) {
                        if (strcmp(value, format_names[i]) == 0) {
                                *(enum log_format *)(void *)field =
                                    (enum log_format)i;
                                return 0;
                        }
                }
                return settings_fail(
                    msg, size, "'%s' is not a log format (text, json)", value);
        case T_MEMBER:
                return members_add(c, value, msg, size);
        case T_ROLE:
                return roles_parse(value, (uint8_t *)field, msg, size);
        case T_ROLE_MAP:
                return value[0] == '\0' ? 0 : roles_add(c, value, msg, size);
        case T_RULE_MAP:
                return value[0] == '\0' ? 0 : rules_add(c, value, msg, size);
        case T_QUOTA_MAP:
                return value[0] == '\0' ? 0 : quotas_add(c, value, msg, size);
        }
        assert(false);
        return BATON_EINVAL;
}

void config_defaults(struct config *c)
{
        char msg[CONFIG_ERRMSG_MAX];
        size_t i;
        int rv;

        memset(c, 0, sizeof *c);
        for (i = 0; i < N_KEYS; i++) {
                if (keys[i].def != NULL) {
                        rv = set(c, &keys[i], keys[i].def, msg, sizeof msg);
                        assert(rv == 0); /* the table is ours */
                        (void)rv;
                }
        }
}

/* --- The config file ------------------------------------------------------ */

/*
 * Debian's inih is built without INI_HANDLER_LINENO, so the handler does not
 * learn the line it is called for. inih reads through our reader, one line
 * per call, and calls the handler before it reads the next line: the reader
 * counts lines, and the handler reports against that count. The reader also
 * keeps inih's quirks away: leading blanks are dropped (an indented line is
 * otherwise a continuation of the previous value); comment lines are dropped
 * whatever their length; section headers, "key: value" and lines longer than
 * inih's buffer are refused here rather than misread.
 */
struct loader {
        struct config *c;
        FILE *f;
        char *buf; /* getline's buffer */
        size_t cap;
        int line;           /* number of the line being parsed */
        int err_line;       /* first line we refused, 0 if none */
        int read_errno;     /* 0, or why reading stopped early */
        bool members;       /* a member line was seen: the file's list wins */
        int set_on[N_KEYS]; /* line that set each key, or 0 */
        char err[CONFIG_ERRMSG_MAX]; /* message for err_line */
};

static void refuse(struct loader *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Remember the first error only: that is the one startup reports. */
static void refuse(struct loader *l, const char *fmt, ...)
{
        va_list ap;

        if (l->err_line != 0) {
                return;
        }
        l->err_line = l->line;
        va_start(ap, fmt);
        vsnprintf(l->err, sizeof l->err, fmt, ap);
        va_end(ap);
}

static char *reader(char *str, int num, void *stream)
{
        struct loader *l = stream;
        ssize_t n;
        const char *s;
        size_t len;

        errno = 0;
        n = getline(&l->buf, &l->cap, l->f);
        if (n < 0) {
                if (ferror(l->f)) {
                        l->read_errno = errno != 0 ? errno : EIO;
                }
                return NULL;
        }
        l->line++;
        s = l->buf + strspn(l->buf, " \t");
        len = strlen(s);
        if (l->buf + n != s + len) {
                refuse(l, "NUL byte in the line");
                s = "";
        } else if (s[0] == '#' || s[0] == ';') {
                s = ""; /* a comment, of any length */
        } else if (s[0] == '[') {
                refuse(l, "sections are not supported: every key goes at "
                          "the top level");
                s = "";
        } else if (len >= (size_t)num) {
                refuse(l, "line too long (at most %d characters)", num - 2);
                s = "";
        } else if (s[strcspn(s, "=:")] == ':') {
                /* inih would take "key: value" too; we document '='. */
                refuse(l, "expected 'key = value'");
                s = "";
        }
        len = strlen(s);
        memcpy(str, s, len + 1);
        return str;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value)
{
        struct loader *l = user;
        const struct key *k;
        char msg[CONFIG_ERRMSG_MAX];

        if (section[0] != '\0') {
                refuse(l, "sections are not supported");
                return 0;
        }
        k = lookup(name, strlen(name));
        if (k == NULL) {
                refuse(l, "unknown key '%s'", name);
                return 0;
        }
        if (k->type == T_MEMBER && !l->members) {
                l->c->n_members = 0; /* the file's list replaces any other */
                l->members = true;
        }
        /* A second line for a key is a mistake: which one was meant? */
        if (k->type != T_MEMBER && k->type != T_ROLE_MAP &&
            k->type != T_RULE_MAP && k->type != T_QUOTA_MAP &&
            l->set_on[k - keys] != 0) {
                refuse(l, "%s: set twice (first on line %d)", k->name,
                       l->set_on[k - keys]);
                return 0;
        }
        l->set_on[k - keys] = l->line;
        if (set(l->c, k, value, msg, sizeof msg) != 0) {
                refuse(l, "%s: %s", k->name, msg);
                return 0;
        }
        return 1;
}

int config_load_file(struct config *c, const char *path, char *errmsg,
                     size_t errmsg_size)
{
        struct loader l;
        int rv;

        memset(&l, 0, sizeof l);
        l.c = c;
        l.f = fopen(path, "r");
        if (l.f == NULL) {
                rv = errno;
                settings_fail(errmsg, errmsg_size, "%s: cannot open: %s", path,
                              strerror(rv));
                return BATON_EIO;
        }
        rv = ini_parse_stream(reader, &l, handler, &l);
        free(l.buf);
        fclose(l.f);
        if (l.read_errno != 0) {
                settings_fail(errmsg, errmsg_size, "%s:%d: cannot read: %s",
                              path, l.line + 1, strerror(l.read_errno));
                return BATON_EIO;
        }
        if (rv < 0) { /* -1 cannot happen with our reader, -2 is malloc */
                settings_fail(errmsg, errmsg_size, "%s: out of memory", path);
                return BATON_ENOMEM;
        }
        /* inih returns the first line it found wrong, or that the handler
         * refused; an earlier one of ours (the reader's) wins. */
        if (l.err_line != 0 && (rv == 0 || l.err_line <= rv)) {
                return settings_fail(errmsg, errmsg_size, "%s:%d: %s", path,
                                     l.err_line, l.err);
        }
        if (rv > 0) {
                return settings_fail(errmsg, errmsg_size,
                                     "%s:%d: expected 'key = value', a comment "
                                     "or a blank line",
                                     path, rv);
        }
        return 0;
}

/* --- Flags ---------------------------------------------------------------- */

static bool is_help(const char *arg)
{
        return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

bool config_wants_help(int argc, char **argv)
{
        int i;

        for (i = 1; i < argc; i++) {
                if (is_help(argv[i])) {
                        return true;
                }
        }
        return false;
}

/*
 * Split argv[*i] ("--name=value" or "--name value") into its name and
 * value, advancing *i past what it used. Returns 0, or BATON_EINVAL.
 */
static int split_flag(int argc, char **argv, int *i, const char **name,
                      size_t *name_len, const char **value, char *errmsg,
                      size_t errmsg_size)
{
        const char *arg = argv[*i];
        const char *eq;

        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
                return settings_fail(
                    errmsg, errmsg_size,
                    "argument '%s': expected --KEY=VALUE or --KEY "
                    "VALUE",
                    arg);
        }
        *name = arg + 2;
        eq = strchr(*name, '=');
        if (eq != NULL) {
                *name_len = (size_t)(eq - *name);
                *value = eq + 1;
                (*i)++;
                return 0;
        }
        *name_len = strlen(*name);
        /* A value that looks like a flag is a forgotten value. */
        if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0) {
                return settings_fail(errmsg, errmsg_size,
                                     "flag %s: missing value", arg);
        }
        *value = argv[*i + 1];
        *i += 2;
        return 0;
}

int config_parse_args(struct config *c, int argc, char **argv, char *errmsg,
                      size_t errmsg_size)
{
        const char *config_path = NULL;
        const char *name;
        const char *value;
        const struct key *k;
        size_t len;
        bool members = false;
        char msg[CONFIG_ERRMSG_MAX];
        int i;
        int rv;

        /* The file first, wherever --config is, so that flags win. */
        for (i = 1; i < argc;) {
                if (is_help(argv[i]) || strcmp(argv[i], "--version") == 0) {
                        i++;
                        continue;
                }
                rv = split_flag(argc, argv, &i, &name, &len, &value, errmsg,
                                errmsg_size);
                if (rv != 0) {
                        return rv;
                }
                if (len == strlen("config") &&
                    memcmp(name, "config", len) == 0) {
                        if (config_path != NULL) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "flag --config: given twice");
                        }
                        config_path = value;
                }
        }
        if (config_path != NULL) {
                rv = config_load_file(c, config_path, errmsg, errmsg_size);
                if (rv != 0) {
                        return rv;
                }
        }

        for (i = 1; i < argc;) {
                if (is_help(argv[i]) || strcmp(argv[i], "--version") == 0) {
                        i++;
                        continue;
                }
                rv = split_flag(argc, argv, &i, &name, &len, &value, errmsg,
                                errmsg_size);
                assert(rv == 0); /* the first pass saw the same arguments */
                if (len == strlen("config") &&
                    memcmp(name, "config", len) == 0) {
                        continue;
                }
                k = lookup(name, len);
                if (k == NULL) {
                        return settings_fail(
                            errmsg, errmsg_size,
                            "flag --%.*s: unknown flag (see --help)", (int)len,
                            name);
                }
                if (k->type == T_MEMBER && !members) {
                        c->n_members = 0; /* any --member replaces the file's */
                        members = true;
                }
                if (set(c, k, value, msg, sizeof msg) != 0) {
                        return settings_fail(errmsg, errmsg_size,
                                             "flag --%s: %s", k->name, msg);
                }
        }
        return 0;
}

/* --- The whole ------------------------------------------------------------ */

/* Every field holds what its key's parser would have accepted. */
static int check_fields(const struct config *c, char *errmsg,
                        size_t errmsg_size)
{
        const char *field;
        char msg[CONFIG_ERRMSG_MAX];
        char range[64];
        uint64_t v;
        size_t i;

        for (i = 0; i < N_KEYS; i++) {
                const struct key *k = &keys[i];
                field = (const char *)c + k->offset;
                switch (k->type) {
                case T_U64:
                case T_U32:
                        v = k->type == T_U64
                                ? *(const uint64_t *)(const void *)field
                                : *(const uint32_t *)(const void *)field;
                        if (v == 0 && k->def == NULL) {
                                return settings_fail(errmsg, errmsg_size,
                                                     "%s: not set", k->name);
                        }
                        if (v < k->min || v > k->max) {
                                settings_range(range, sizeof range, k->min,
                                               k->max);
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "%s: %llu is out of range %s", k->name,
                                    (unsigned long long)v, range);
                        }
                        break;
                case T_PATH:
                case T_STRING:
                case T_ADDRESS:
                        if (memchr(field, '\0', k->size) == NULL) {
                                return settings_fail(errmsg, errmsg_size,
                                                     "%s: not NUL-terminated",
                                                     k->name);
                        }
                        if (field[0] == '\0' && k->def == NULL) {
                                return settings_fail(errmsg, errmsg_size,
                                                     "%s: not set", k->name);
                        }
                        if (k->type == T_ADDRESS && field[0] != '\0' &&
                            members_parse_address(field, false, msg,
                                                  sizeof msg) != 0) {
                                return settings_fail(errmsg, errmsg_size,
                                                     "%s: %s", k->name, msg);
                        }
                        break;
                case T_LOG_LEVEL:
                        if ((unsigned)c->log_level > (unsigned)LOG_DEBUG) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "%s: %d is not a log level", k->name,
                                    (int)c->log_level);
                        }
                        break;
                case T_LOG_FORMAT:
                        if ((unsigned)c->log_format > (unsigned)LOG_JSON) {
                                return settings_fail(
                                    errmsg, errmsg_size,
                                    "%s: %d is not a log format", k->name,
                                    (int)c->log_format);
                        }
                        break;
                case T_BOOL:
                case T_MEMBER:
                case T_ROLE_MAP:
                case T_RULE_MAP:
                case T_QUOTA_MAP:
                        break;
                case T_ROLE:
                        if (c->default_role > ROLES_ADMIN) {
                                return settings_fail(errmsg, errmsg_size,
                                                     "%s: not a role", k->name);
                        }
                        break;
                }
        }
        return 0;
}

int config_validate(struct config *c, char *errmsg, size_t errmsg_size)
{
        uint32_t min_ttl;
        int rv;

        rv = check_fields(c, errmsg, errmsg_size);
        if (rv != 0) {
                return rv;
        }
        rv = members_check(c, errmsg, errmsg_size);
        if (rv == 0) {
                rv = members_listen(c, errmsg, errmsg_size);
        }
        if (rv != 0) {
                return rv;
        }
        if (c->heartbeat_timeout_ms >= c->election_timeout_ms) {
                return settings_fail(errmsg, errmsg_size,
                                     "heartbeat-timeout-ms: %u must be below "
                                     "election-timeout-ms (%u)",
                                     (unsigned)c->heartbeat_timeout_ms,
                                     (unsigned)c->election_timeout_ms);
        }
        if (c->snapshot_trailing < c->snapshot_threshold / 8) {
                return settings_fail(errmsg, errmsg_size,
                                     "snapshot-trailing: %u is below "
                                     "snapshot-threshold / 8 (%u)",
                                     (unsigned)c->snapshot_trailing,
                                     (unsigned)(c->snapshot_threshold / 8));
        }
        /* A session must outlive a failover, which takes up to about 2x
         * the election timeout, or a leader change expires sessions. The
         * range check above keeps this product far below 2^32. */
        min_ttl = 2 * c->election_timeout_ms;
        if (c->min_ttl_ms != 0 && c->min_ttl_ms < min_ttl) {
                return settings_fail(errmsg, errmsg_size,
                                     "min-ttl-ms: %u is below 2 x "
                                     "election-timeout-ms (%u)",
                                     (unsigned)c->min_ttl_ms,
                                     (unsigned)min_ttl);
        }
        if (c->min_ttl_ms != 0) {
                min_ttl = c->min_ttl_ms;
        }
        if (c->max_ttl_ms < min_ttl) {
                return settings_fail(errmsg, errmsg_size,
                                     "max-ttl-ms: %u is below min-ttl-ms (%u)",
                                     (unsigned)c->max_ttl_ms,
                                     (unsigned)min_ttl);
        }
        c->min_ttl_ms = min_ttl;
        if (c->idle_timeout_ms == 0) {
                c->idle_timeout_ms = c->max_ttl_ms;
        }
        return tlsconfig_check(c, errmsg, errmsg_size);
}

/* --- Help ----------------------------------------------------------------- */

static void describe(const struct key *k, const char **def, char *range,
                     size_t size)
{
        *def = k->def == NULL      ? "required"
               : k->def[0] == '\0' ? "\"\""
                                   : k->def;
        switch (k->type) {
        case T_U64:
        case T_U32:
                settings_range(range, size, k->min, k->max);
                break;
        case T_BOOL:
                snprintf(range, size, "true/false");
                break;
        case T_PATH:
        case T_STRING:
                snprintf(range, size, "%llu..%zu bytes",
                         (unsigned long long)k->min, k->size - 1);
                break;
        case T_ADDRESS:
                snprintf(range, size, ADDRESS_FORMS);
                break;
        case T_LOG_LEVEL:
                snprintf(range, size, "error/warn/info/debug");
                break;
        case T_LOG_FORMAT:
                snprintf(range, size, "text/json");
                break;
        case T_ROLE:
                snprintf(range, size, "admin/lock/read/none");
                break;
        case T_MEMBER:
        case T_ROLE_MAP:
        case T_RULE_MAP:
        case T_QUOTA_MAP:
                snprintf(range, size, "%llu..%llu lines",
                         (unsigned long long)k->min,
                         (unsigned long long)k->max);
                break;
        }
}

void config_print_help(FILE *out)
{
        int w_name = (int)strlen("KEY");
        int w_type = (int)strlen("TYPE");
        int w_def = (int)strlen("DEFAULT");
        int w_range = (int)strlen("RANGE");
        const char *def;
        char range[64];
        size_t i;
        int n;

        for (i = 0; i < N_KEYS; i++) {
                describe(&keys[i], &def, range, sizeof range);
                n = (int)strlen(keys[i].name);
                w_name = n > w_name ? n : w_name;
                n = (int)strlen(type_names[keys[i].type]);
                w_type = n > w_type ? n : w_type;
                n = (int)strlen(def);
                w_def = n > w_def ? n : w_def;
                n = (int)strlen(range);
                w_range = n > w_range ? n : w_range;
        }
        fprintf(out, "Every key can be set in the file given by --config "
                     "PATH, one 'key = value'\n"
                     "per line ('#' or ';' starts a comment line), or as a "
                     "flag --key=VALUE or\n"
                     "--key VALUE. Flags override the file; --member "
                     "replaces the file's members.\n\n");
        fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w_name, "KEY", w_type,
                "TYPE", w_def, "DEFAULT", w_range, "RANGE", "DESCRIPTION");
        for (i = 0; i < N_KEYS; i++) {
                describe(&keys[i], &def, range, sizeof range);
                fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w_name,
                        keys[i].name, w_type, type_names[keys[i].type], w_def,
                        def, w_range, range, keys[i].help);
        }
}

void config_fsm_limits(const struct config *c, struct lockfsm_limits *limits)
{
        lockfsm_limits_default(limits);
        limits->max_sessions = c->max_sessions;
        limits->max_locks_per_session = c->max_locks_per_session;
        limits->max_waiters_per_lock = c->max_waiters_per_lock;
        limits->max_permits = c->max_permits;
        limits->max_holders_per_lock = c->max_holders_per_lock;
        limits->max_names_per_acquire = c->max_names_per_acquire;
        limits->max_lock_delay_ms = c->max_lock_delay_ms;
        limits->max_hold_ms = c->max_hold_ms;
        limits->max_ttl_ms = c->max_ttl_ms;
}
