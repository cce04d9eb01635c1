/* batonctl's command line: options anywhere, every number checked, and one
 * message saying what is wrong. */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../include/baton.h"

enum args_command {
        ARGS_NONE = 0, /* no command (or an unknown one) */
        ARGS_LOCK,
        ARGS_ACQUIRE,
        ARGS_TRY,
        ARGS_RELEASE,
        ARGS_HOLDER,
        ARGS_CHECK,
        ARGS_LIST,
        ARGS_STATUS,
        ARGS_MEMBER_LIST,
        ARGS_MEMBER_ADD,
        ARGS_MEMBER_REMOVE,
        ARGS_TRANSFER,
        ARGS_SEM,              /* lock's twin for a semaphore's permits */
        ARGS_SESSION_CLOSE,    /* session close ID */
        ARGS_REVOKE,           /* revoke NAME: take it from its holders */
        ARGS_ELECT,            /* lock's twin for an election's leadership */
        ARGS_LEADER,           /* leader NAME: who leads an election */
        ARGS_WATCH,            /* watch NAME | --prefix P */
        ARGS_OBSERVE,          /* observe NAME: an election's leaderships */
        ARGS_SNAPSHOT_SAVE,    /* snapshot save FILE: an online backup */
        ARGS_SNAPSHOT_INSPECT, /* snapshot inspect FILE: what one holds */
        ARGS_ACL_LIST,         /* acl list: the cluster's access list */
        ARGS_ACL_ADD,          /* acl add IDENTITY ROLE */
        ARGS_ACL_REMOVE,       /* acl remove IDENTITY */
        ARGS_RULE_LIST,        /* rule list: the rules on lock names */
        ARGS_RULE_ADD,         /* rule add SUBJECT PREFIX PERMS */
        ARGS_RULE_REMOVE,      /* rule remove SUBJECT PREFIX */
        ARGS_QUOTA_LIST,       /* quota list: the quotas per identity */
        ARGS_QUOTA_SET,        /* quota set SUBJECT KIND=N ... */
        ARGS_QUOTA_REMOVE,     /* quota remove SUBJECT */
        ARGS_PING,             /* ping: a read through the leader */
        ARGS_SESSION_LIST,     /* session list: the live sessions */
        ARGS_SESSION_INFO,     /* session info ID: one of them */
        ARGS_CONSOLE,          /* console: the page in a browser */
        ARGS_SET_VALUE,        /* set-value NAME TOKEN VALUE: a detached
                                * grant's value */
        ARGS_COMMANDS_END,     /* not a command: one past the last */
};
/* args.c keeps sets of commands as bits of a uint64_t. */
_Static_assert(ARGS_COMMANDS_END <= 64, "each command has a bit of 64");

/* What args_parse() asks the caller to do. */
enum args_result {
        ARGS_RUN,     /* run the command */
        ARGS_HELP,    /* --help or -h: print the usage (of `command`, the
                       * command named before it or just after it, unless
                       * ARGS_NONE) */
        ARGS_VERSION, /* --version */
        ARGS_BAD,     /* a bad command line: errmsg says what is wrong */
};

#define ARGS_ERRMSG_MAX        256
#define ARGS_NAMES_MAX         BATON_MULTI_MAX /* names of one `lock` */
#define ARGS_CHECK_INTERVAL_MS 10000           /* --check-interval's default */

/* The command line, checked. Strings point into argv. */
struct args {
        int command;            /* enum args_command */
        const char *endpoints;  /* --endpoints; NULL: not given */
        const char *cacert;     /* --cacert; NULL: not given */
        const char *cert;       /* --cert; NULL: not given */
        const char *key;        /* --key; NULL: not given */
        bool json;              /* --json */
        uint32_t timeout_ms;    /* --timeout; 0: not given */
        uint32_t ttl_ms;        /* --ttl; 0: not given */
        uint32_t lock_delay_ms; /* --lock-delay; 0: none */
        uint32_t hold_ms;       /* --hold; 0: none */
        int64_t wait_ms;        /* --wait; else 0 for try, else -1 (ping:
                                 * one try) */
        uint32_t grace_ms;      /* --grace; default 2000 */
        bool detach;            /* --detach */
        bool shared;            /* --shared: the read lock */
        bool all;               /* holder --all: every grant */
        uint32_t permits; /* --permits: a semaphore of that many; 0: a lock */
        uint32_t take;    /* --take: permits to take, default 1 */
        uint64_t session; /* --session; 0: not given */
        bool has_secret;  /* --secret given */
        uint8_t secret[BATON_SECRET_SIZE]; /* --secret, from hex */
        /* lock, sem, acquire, try --value: the grant's value; elect
         * --value: what the leader advertises; set-value's VALUE. */
        const char *value;
        const char *prefix; /* watch --prefix; NULL: a name */
        const char *listen; /* console --listen; NULL: not given */
        /* lock, sem, elect --check CMD: a health command (healthcheck.h);
         * NULL: none. Its interval and timeout, ms, set when it is. */
        const char *check;
        uint32_t check_interval_ms;
        uint32_t check_timeout_ms;
        uint64_t from_index; /* watch --from INDEX[:ORD]; 0: from now */
        uint32_t from_ord;
        const char *name; /* the lock name; list's prefix ("": none) */
        /* lock: every name (names[0] is `name`); two or more take them all
         * at once, a multi-lock. */
        const char *names[ARGS_NAMES_MAX];
        unsigned n_names;
        uint64_t token; /* check, release, set-value */
        uint64_t id;    /* member add, member remove, transfer, session */
        uint64_t after; /* session list --after: the cursor; 0: none */
        uint64_t limit; /* session list --limit: at most; 0: every one */
        const char *raft_address;   /* member add */
        const char *client_address; /* member add */
        const char *identity;       /* acl add, acl remove */
        int role;                   /* acl add: enum baton_access_role */
        /* rule add, rule remove: an identity or group:NAME, and the
         * prefix of the names ("": every name) */
        const char *subject;
        const char *rule_prefix;
        int perms; /* rule add: BATON_PERM_* bits, read included */
        /* quota set (with `subject`, an identity or "*"): the limit of
         * each enum baton_quota_kind, 0 for none */
        unsigned quota[BATON_QUOTA_KINDS];
        char **argv; /* lock: the command, NULL-terminated */
        char errmsg[ARGS_ERRMSG_MAX];
};

/*
 * Parse argv[1..argc) (argv[argc] is NULL, as main() gets it). Options may
 * come anywhere, as --opt VALUE or --opt=VALUE; "--" ends them (for lock,
 * what follows is the command). Every number is decimal digits only,
 * without overflow, within the option's range.
 *
 * Returns an enum args_result. On ARGS_BAD, `errmsg` holds one line (no
 * newline) naming what is wrong, and `command` is the command if one was
 * recognised (its exit status for usage errors may differ). --help and
 * --version win over what follows them, not over an error before them.
 * Uses getopt_long(), whose state it resets: not thread-safe.
 */
int args_parse(struct args *a, int argc, char **argv);

#endif /* CLI_ARGS_H */
