/* What batond's settings are, and what every parser of them shares: the
 * struct config that config.c's key table fills, and how a parser of one
 * part (members.h, roles.h, tlsconfig.h) reads numbers and says what is
 * wrong. Below config.h, so that those parsers need not include the table
 * that calls them. */
#ifndef SERVER_SETTINGS_H
#define SERVER_SETTINGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/log.h"

#define CONFIG_ADDRESS_MAX  65 /* ADDRESS_MAX (the wire's limit) and a NUL */
#define CONFIG_MAX_MEMBERS  16
#define CONFIG_ERRMSG_MAX   512
#define CONFIG_IDENTITY_MAX 256 /* an identity and a NUL (TLS_IDENTITY_MAX) */
#define CONFIG_MAX_ROLES    64
#define CONFIG_MAX_RULES    64  /* rule lines: the first start's rules */
#define CONFIG_PREFIX_MAX   256 /* a rule's prefix and a NUL */
#define CONFIG_MAX_QUOTAS   64  /* quota lines (ACL_QUOTA_MAX) */
#define CONFIG_QUOTA_KINDS  5   /* ACL_QUOTA_KINDS */

/* One `role = IDENTITY ROLE` line (roles.h). */
struct config_role {
        char identity[CONFIG_IDENTITY_MAX];
        uint8_t role; /* enum roles_role */
};

/* One `rule = SUBJECT PREFIX PERMS` line (roles.h). */
struct config_rule {
        uint8_t kind;  /* ACL_RULE_PREFIX or ACL_RULE_GROUP_PREFIX */
        uint8_t perms; /* enum acl_perm bits, read always among them */
        char subject[CONFIG_IDENTITY_MAX];
        char prefix[CONFIG_PREFIX_MAX];
};

/* One `quota = SUBJECT KIND=N ...` line (roles.h). */
struct config_quota {
        char subject[CONFIG_IDENTITY_MAX];  /* an identity, or "*" */
        uint32_t limit[CONFIG_QUOTA_KINDS]; /* enum acl_quota_kind; 0: none */
};

/* One node of the initial cluster, as every node's config lists it. */
struct config_member {
        uint64_t id;
        char raft_address[CONFIG_ADDRESS_MAX];   /* host:port, not IPv6 */
        char client_address[CONFIG_ADDRESS_MAX]; /* where clients connect */
        /* Where its HTTP API is reached ("": not given), the member
         * line's optional fourth field: a follower's redirect to the
         * leader names it (docs/http.md). */
        char http_address[CONFIG_ADDRESS_MAX];
};

/*
 * Every setting of batond. Each field is one key of the table in config.c
 * (name = the field name with '_' written '-', e.g. election-timeout-ms),
 * which also gives its type, default, range and one line of documentation.
 */
struct config {
        uint64_t id;             /* this node's id; must be a member */
        char data_dir[PATH_MAX]; /* raft log and snapshots; created */
        unsigned n_members;
        struct config_member members[CONFIG_MAX_MEMBERS];
        /* What this node's ports bind; "" in the file means its member
         * line's address (the advertised one), which config_validate()
         * fills in. */
        char client_listen[CONFIG_ADDRESS_MAX];
        char raft_listen[CONFIG_ADDRESS_MAX];
        bool join; /* default false: bootstrap the members on a pristine
                      data dir; true: wait to be added with `member add` */
        /* Told into the cluster id a new data dir records (dirid.h). */
        char cluster_name[CONFIG_IDENTITY_MAX]; /* default "" */
        /* Raft timing: failover costs about 1.3-2x the election timeout. */
        uint32_t election_timeout_ms;  /* default 300, 100..60000 */
        uint32_t heartbeat_timeout_ms; /* default 50, 10..10000, < election */
        /* batond --restore: where the restored log starts beyond the
         * backup's index (restore.h). */
        uint64_t restore_margin;     /* default 1e9 entries */
        uint64_t restore_rate;       /* default 1e6 entries per second */
        uint32_t snapshot_threshold; /* default 32768 entries */
        uint32_t snapshot_trailing;  /* default 4096 entries */
        bool snapshot_compression;   /* default true (lz4) */
        /* Limits. */
        uint32_t max_connections;       /* default 10000 */
        uint32_t max_frame;             /* default 65536 bytes, body limit */
        uint32_t output_limit;          /* default 1048576: queued reply
                                           bytes before reading pauses */
        uint32_t max_sessions;          /* default 65536 */
        uint32_t max_locks_per_session; /* default 1024 */
        uint32_t max_waiters_per_lock;  /* default 4096 */
        uint32_t max_permits;           /* default 4096 */
        uint32_t max_holders_per_lock;  /* default 65536 */
        uint32_t max_names_per_acquire; /* default 16 */
        uint32_t max_lock_delay_ms;     /* default 60000 */
        uint32_t max_hold_ms;           /* a grant's hold time, at most;
                                           default 86400000 (a day) */
        uint32_t lock_delay_ms;         /* default 0: none */
        uint32_t max_inflight_entries;  /* default 8192 entries proposed
                                           and not yet applied */
        uint32_t max_watches;           /* default 65536, on this node */
        uint32_t max_watches_per_conn;  /* default 1024 */
        uint32_t watch_batch_ms;        /* default 5 */
        uint32_t watch_history;         /* default 16384 events kept */
        uint32_t min_ttl_ms; /* default 0 = 2 x election timeout; when set,
                                at least 2 x election timeout */
        uint32_t max_ttl_ms; /* default 3600000 */
        /* Security: TLS on the client and raft ports (see batond(8)). */
        bool tls;                                    /* default true */
        char tls_ca[PATH_MAX];                       /* required with tls */
        char tls_cert[PATH_MAX];                     /* required with tls */
        char tls_key[PATH_MAX];                      /* required with tls */
        char tls_crl[PATH_MAX];                      /* "" = none */
        char tls_client_ca[PATH_MAX];                /* "" = tls_ca */
        char tls_peer_identity[CONFIG_IDENTITY_MAX]; /* "node-{id}" */
        uint32_t tls_expiry_warn_days;               /* default 30 */
        uint32_t handshake_timeout_ms;               /* default 5000 */
        uint32_t idle_timeout_ms;             /* default 0 = max_ttl_ms */
        uint32_t max_connections_per_address; /* default 256 */
        /* Authorization: what each client identity may do (roles.h). */
        unsigned n_roles;
        struct config_role roles[CONFIG_MAX_ROLES];
        uint8_t default_role; /* enum roles_role, default lock */
        /* The rules on name prefixes the first leader seeds (roles.h). */
        unsigned n_rules;
        struct config_rule rules[CONFIG_MAX_RULES];
        /* The quotas per identity the first leader seeds (roles.h). */
        unsigned n_quotas;
        struct config_quota quotas[CONFIG_MAX_QUOTAS];
        /* Operations. */
        char metrics_address[CONFIG_ADDRESS_MAX]; /* "" = no HTTP metrics */
        bool metrics_tls;                         /* default false */
        uint32_t metrics_max_connections;         /* default 16 */
        /* The HTTP/JSON API (src/server/http/, docs/http.md). */
        char http_listen[CONFIG_ADDRESS_MAX]; /* "" = off */
        uint32_t http_max_connections;        /* default 1024 */
        uint32_t http_max_header_bytes;       /* default 8192 */
        uint32_t http_max_body_bytes;         /* default 16384 */
        uint32_t http_request_timeout_ms;     /* default 10000 */
        uint32_t http_idle_timeout_ms;        /* default 60000 */
        uint32_t http_max_wait_ms;            /* default 300000 */
        uint32_t ready_max_lag;     /* default 1000 entries (GET /ready) */
        uint32_t digest_interval;   /* default 16384 entries; 0 = off */
        char apply_log[PATH_MAX];   /* "" = off; JSON line per fsm event */
        char audit_log[PATH_MAX];   /* "" = off; JSON line per admin action
                                       or refusal (base/audit.h) */
        enum log_level log_level;   /* error|warn|info|debug, default
                                              info */
        enum log_format log_format; /* text|json, default text */
};

/* The member entry of `id`, or NULL. */
const struct config_member *settings_member(const struct config *c,
                                            uint64_t id);

/* A decimal number in min..max: 0, or BATON_EINVAL with a message. */
int settings_number(const char *s, uint64_t min, uint64_t max, uint64_t *out,
                    char *msg, size_t size);

/* "min..max" into buf, as messages and --help print a range. */
void settings_range(char *buf, size_t size, uint64_t min, uint64_t max);

/* Format a message into `msg` (which may be NULL) and return BATON_EINVAL:
 * how config and member checks report what is wrong. */
int settings_fail(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* SERVER_SETTINGS_H */
