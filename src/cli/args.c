/* batonctl's command line: options anywhere, every number checked, and one
 * message saying what is wrong. */
#include "args.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "argsacl.h"
#include "commands.h"
#include "healthcheck.h"

/* Long options' values: above every character, so that getopt's optopt
 * tells a long option from an unknown short one. */
enum {
        O_HELP = 'h',
        O_ENDPOINTS = 256,
        O_JSON,
        O_TIMEOUT,
        O_TTL,
        O_WAIT,
        O_GRACE,
        O_DETACH,
        O_SHARED,
        O_SESSION,
        O_SECRET,
        O_VERSION,
        O_CACERT,
        O_CERT,
        O_KEY,
        O_PERMITS,
        O_TAKE,
        O_ALL,
        O_LOCK_DELAY,
        O_VALUE,
        O_PREFIX,
        O_FROM,
        O_AFTER,
        O_LIMIT,
        O_LISTEN,
        O_CHECK,
        O_CHECK_INTERVAL,
        O_CHECK_TIMEOUT,
        O_HOLD,
};

static const struct option options[] = {
    {"endpoints", required_argument, NULL, O_ENDPOINTS},
    {"cacert", required_argument, NULL, O_CACERT},
    {"cert", required_argument, NULL, O_CERT},
    {"key", required_argument, NULL, O_KEY},
    {"json", no_argument, NULL, O_JSON},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"ttl", required_argument, NULL, O_TTL},
    {"wait", required_argument, NULL, O_WAIT},
    {"grace", required_argument, NULL, O_GRACE},
    {"detach", no_argument, NULL, O_DETACH},
    {"shared", no_argument, NULL, O_SHARED},
    {"permits", required_argument, NULL, O_PERMITS},
    {"take", required_argument, NULL, O_TAKE},
    {"all", no_argument, NULL, O_ALL},
    {"lock-delay", required_argument, NULL, O_LOCK_DELAY},
    {"value", required_argument, NULL, O_VALUE},
    {"prefix", required_argument, NULL, O_PREFIX},
    {"from", required_argument, NULL, O_FROM},
    {"after", required_argument, NULL, O_AFTER},
    {"limit", required_argument, NULL, O_LIMIT},
    {"listen", required_argument, NULL, O_LISTEN},
    {"check", required_argument, NULL, O_CHECK},
    {"check-interval", required_argument, NULL, O_CHECK_INTERVAL},
    {"check-timeout", required_argument, NULL, O_CHECK_TIMEOUT},
    {"hold", required_argument, NULL, O_HOLD},
    {"session", required_argument, NULL, O_SESSION},
    {"secret", required_argument, NULL, O_SECRET},
    {"version", no_argument, NULL, O_VERSION},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

#define CMD(c) (UINT64_C(1) << (c)) /* a set of commands: over 32 */
#define LEASE_CMDS                                                             \
        (CMD(ARGS_LOCK) | CMD(ARGS_SEM) | CMD(ARGS_ACQUIRE) | CMD(ARGS_TRY) |  \
         CMD(ARGS_ELECT))
/* The commands that run a command while holding (lock, sem, elect). */
#define RUNS_COMMAND(c)                                                        \
        ((c) == ARGS_LOCK || (c) == ARGS_SEM || (c) == ARGS_ELECT)
#define RUNS_COMMANDS (CMD(ARGS_LOCK) | CMD(ARGS_SEM) | CMD(ARGS_ELECT))
#define ANY_COMMAND   (~UINT64_C(0))

/* The options that take a number, their ranges, and the commands they
 * belong to (the others belong to every command). */
static const struct number_option {
        int opt;
        uint64_t lo, hi;
        const char *unit;
        uint64_t commands;
} number_options[] = {
    {O_TIMEOUT, 1, INT32_MAX, " ms", ANY_COMMAND},
    {O_TTL, 1, UINT32_MAX, " ms", LEASE_CMDS | CMD(ARGS_RELEASE)},
    {O_WAIT, 0, UINT32_MAX - 1, " ms",
     LEASE_CMDS | CMD(ARGS_RELEASE) | CMD(ARGS_PING)},
    {O_GRACE, 0, UINT32_MAX, " ms", LEASE_CMDS | CMD(ARGS_RELEASE)},
    {O_SESSION, 1, UINT64_MAX, "", CMD(ARGS_RELEASE) | CMD(ARGS_SET_VALUE)},
    {O_PERMITS, 1, UINT32_MAX, "", LEASE_CMDS & ~CMD(ARGS_ELECT)},
    {O_TAKE, 1, UINT32_MAX, "", LEASE_CMDS & ~CMD(ARGS_ELECT)},
    {O_LOCK_DELAY, 0, 3600000, " ms", LEASE_CMDS & ~CMD(ARGS_ELECT)},
    /* session list's (check_options() tells it from info and close) */
    {O_AFTER, 0, UINT64_MAX, "", CMD(ARGS_SESSION_CLOSE)},
    {O_LIMIT, 1, UINT64_MAX, "", CMD(ARGS_SESSION_CLOSE)},
    {O_CHECK_INTERVAL, HEALTHCHECK_MIN_MS, HEALTHCHECK_MAX_MS, " ms",
     RUNS_COMMANDS},
    {O_CHECK_TIMEOUT, HEALTHCHECK_MIN_MS, HEALTHCHECK_MAX_MS, " ms",
     RUNS_COMMANDS},
    /* A week: max-hold-ms's own top; the cluster's may be lower. */
    {O_HOLD, 1, 604800000, " ms", LEASE_CMDS & ~CMD(ARGS_ELECT)},
};

#define DETACH_COMMANDS (CMD(ARGS_ACQUIRE) | CMD(ARGS_TRY))
/* The commands that act in a detached session: --session and --secret. */
#define IN_SESSION_CMDS (CMD(ARGS_RELEASE) | CMD(ARGS_SET_VALUE))
/* The commands with a value: --value (set-value's is an operand, which
 * the same checks read). */
#define VALUE_CMDS (LEASE_CMDS | CMD(ARGS_SET_VALUE))

void args_bad(struct args *a, const char *fmt, ...)
{
        va_list ap;

        if (a->errmsg[0] != '\0') {
                return;
        }
        va_start(ap, fmt);
        vsnprintf(a->errmsg, sizeof a->errmsg, fmt, ap);
        va_end(ap);
}

static void add_operand(struct operands *o, const char *s)
{
        if (o->n < ARGS_MAX_OPERANDS) {
                o->v[o->n] = s;
        }
        o->n++;
}

static const char *option_name(int opt)
{
        const struct option *o;

        for (o = options; o->name != NULL; o++) {
                if (o->val == opt) {
                        return o->name;
                }
        }
        return "?";
}

/* Decimal digits only (no sign, space or base prefix): 1 with `*v`, 0 if
 * `s` is not that, -1 if its value does not fit 64 bits. */
static int digits(const char *s, uint64_t *v)
{
        const char *p;
        uint64_t x = 0;

        if (*s == '\0') {
                return 0;
        }
        for (p = s; *p != '\0'; p++) {
                if (*p < '0' || *p > '9') {
                        return 0;
                }
        }
        for (p = s; *p != '\0'; p++) {
                unsigned d = (unsigned)(*p - '0');
                if (x > (UINT64_MAX - d) / 10) {
                        return -1;
                }
                x = x * 10 + d;
        }
        *v = x;
        return 1;
}

/* A number for `what` in lo..hi; false (and the message) if it is not. */
static bool number(struct args *a, const char *what, const char *s, uint64_t lo,
                   uint64_t hi, const char *unit, uint64_t *v)
{
        uint64_t x = 0;
        int rv = digits(s, &x);

        if (rv == 0) {
                args_bad(a,
                         "%s: \"%s\" is not a number (%" PRIu64 " to %" PRIu64
                         "%s)",
                         what, s, lo, hi, unit);
                return false;
        }
        if (rv < 0 || x < lo || x > hi) {
                args_bad(
                    a, "%s: %s is out of range (%" PRIu64 " to %" PRIu64 "%s)",
                    what, s, lo, hi, unit);
                return false;
        }
        *v = x;
        return true;
}

static void set_number(struct args *a, const struct number_option *no,
                       const char *s)
{
        char what[32];
        uint64_t v;

        snprintf(what, sizeof what, "--%s", option_name(no->opt));
        if (!number(a, what, s, no->lo, no->hi, no->unit, &v)) {
                return;
        }
        switch (no->opt) {
        case O_TIMEOUT:
                a->timeout_ms = (uint32_t)v;
                break;
        case O_TTL:
                a->ttl_ms = (uint32_t)v;
                break;
        case O_WAIT:
                a->wait_ms = (int64_t)v;
                break;
        case O_GRACE:
                a->grace_ms = (uint32_t)v;
                break;
        case O_SESSION:
                a->session = v;
                break;
        case O_PERMITS:
                a->permits = (uint32_t)v;
                break;
        case O_TAKE:
                a->take = (uint32_t)v;
                break;
        case O_LOCK_DELAY:
                a->lock_delay_ms = (uint32_t)v;
                break;
        case O_AFTER:
                a->after = v;
                break;
        case O_LIMIT:
                a->limit = v;
                break;
        case O_CHECK_INTERVAL:
                a->check_interval_ms = (uint32_t)v;
                break;
        case O_CHECK_TIMEOUT:
                a->check_timeout_ms = (uint32_t)v;
                break;
        case O_HOLD:
                a->hold_ms = (uint32_t)v;
                break;
        }
}

static const struct number_option *number_option(int opt)
{
        size_t i;

        for (i = 0; i < sizeof number_options / sizeof number_options[0]; i++) {
                if (number_options[i].opt == opt) {
                        return &number_options[i];
                }
        }
        return NULL;
}

/* getopt's complaint, as one message. */
static void bad_option(struct args *a, int ch, char **argv)
{
        if (ch == ':') {
                args_bad(a, "--%s needs a value", option_name(optopt));
        } else if (optopt >= O_ENDPOINTS) {
                args_bad(a, "--%s takes no value", option_name(optopt));
        } else if (optopt != 0) {
                args_bad(a, "unknown option -%c", optopt);
        } else {
                args_bad(a, "unknown option %s", argv[optind - 1]);
        }
}

/* --secret: exactly 2 x BATON_SECRET_SIZE hex digits. */
static void set_secret(struct args *a, const char *s)
{
        size_t i;
        unsigned v;

        if (strlen(s) != 2 * BATON_SECRET_SIZE ||
            strspn(s, "0123456789abcdefABCDEF") != 2 * BATON_SECRET_SIZE) {
                args_bad(a,
                         "--secret: \"%s\" is not %d hex digits (what "
                         "acquire --detach printed)",
                         s, 2 * BATON_SECRET_SIZE);
                return;
        }
        for (i = 0; i < BATON_SECRET_SIZE; i++) {
                sscanf(s + 2 * i, "%2x", &v);
                a->secret[i] = (uint8_t)v;
        }
        a->has_secret = true;
}

/* Which options were given, to check them against the command. */
/* watch --from INDEX[:ORD]: the last event seen (ORD 0: before the
 * entry's first). */
static void set_from(struct args *a, const char *s)
{
        const char *colon = strchr(s, ':');
        char index[32];
        uint64_t ord = 0;
        size_t n = colon != NULL ? (size_t)(colon - s) : strlen(s);

        if (n == 0 || n >= sizeof index) {
                args_bad(a, "--from: want INDEX or INDEX:ORD, not \"%s\"", s);
                return;
        }
        memcpy(index, s, n);
        index[n] = '\0';
        number(a, "--from: INDEX", index, 1, UINT64_MAX, "", &a->from_index);
        if (colon != NULL) {
                number(a, "--from: ORD", colon + 1, 0, UINT32_MAX, "", &ord);
        }
        a->from_ord = (uint32_t)ord;
}

struct given {
        unsigned numbers; /* bit i: number_options[i] */
        bool detach;
        bool shared;
        bool all;
};

/* An option whose value is a string (or a string it parses): true when
 * `ch` is one. */
static bool string_option(struct args *a, int ch, const char *arg)
{
        switch (ch) {
        case O_ENDPOINTS:
                a->endpoints = arg;
                return true;
        case O_CACERT:
                a->cacert = arg;
                return true;
        case O_CERT:
                a->cert = arg;
                return true;
        case O_KEY:
                a->key = arg;
                return true;
        case O_SECRET:
                set_secret(a, arg);
                return true;
        case O_VALUE:
                a->value = arg;
                return true;
        case O_PREFIX:
                a->prefix = arg;
                return true;
        case O_FROM:
                set_from(a, arg);
                return true;
        case O_LISTEN:
                a->listen = arg;
                return true;
        case O_CHECK:
                a->check = arg;
                return true;
        default:
                return false;
        }
}

/*
 * Read every option and operand in order. Returns ARGS_HELP or
 * ARGS_VERSION when one comes before any error, else ARGS_RUN (errors
 * are left in errmsg). `*dashdash` gets the index of "--", or 0.
 */
static int scan(struct args *a, int argc, char **argv, struct operands *ops,
                struct given *given, int *dashdash)
{
        const struct number_option *no;
        int ch, at;

        *dashdash = 0;
        optind = 0; /* glibc: start afresh */
        opterr = 0;
        for (;;) {
                at = optind > 0 ? optind : 1;
                /* "-": operands come back in order as 1, whatever
                 * POSIXLY_CORRECT says; ":": a missing value is ':'. */
                ch = getopt_long(argc, argv, "-:h", options, NULL);
                if (ch == -1) {
                        if (at < argc && strcmp(argv[at], "--") == 0) {
                                *dashdash = at;
                        }
                        return ARGS_RUN;
                }
                switch (ch) {
                case 1:
                        add_operand(ops, optarg);
                        break;
                case O_HELP:
                case O_VERSION:
                        if (a->errmsg[0] == '\0') {
                                return ch == O_HELP ? ARGS_HELP : ARGS_VERSION;
                        }
                        break;
                case O_JSON:
                        a->json = true;
                        break;
                case O_DETACH:
                        a->detach = true;
                        given->detach = true;
                        break;
                case O_SHARED:
                        a->shared = true;
                        given->shared = true;
                        break;
                case O_ALL:
                        a->all = true;
                        given->all = true;
                        break;
                case ':':
                case '?':
                        bad_option(a, ch, argv);
                        break;
                default:
                        if (string_option(a, ch, optarg)) {
                                break;
                        }
                        no = number_option(ch);
                        if (no != NULL) {
                                given->numbers |=
                                    1u << (unsigned)(no - number_options);
                                set_number(a, no, optarg);
                        }
                        break;
                }
        }
}

/* member list | add ID RAFT CLIENT | remove ID. */
static void member(struct args *a, const struct commands_entry *c,
                   const struct operands *ops)
{
        const char *sub = ops->v[1];
        unsigned want;

        if (strcmp(sub, "list") == 0) {
                a->command = ARGS_MEMBER_LIST;
                want = 2;
        } else if (strcmp(sub, "add") == 0) {
                a->command = ARGS_MEMBER_ADD;
                want = 5;
        } else if (strcmp(sub, "remove") == 0) {
                a->command = ARGS_MEMBER_REMOVE;
                want = 3;
        } else {
                args_bad(a,
                         "member: unknown subcommand \"%s\" (list, add or "
                         "remove)",
                         sub);
                return;
        }
        if (ops->n < want) {
                args_bad(a, "member %s: too few arguments (usage: batonctl %s)",
                         sub, c->synopsis);
        } else if (ops->n > want) {
                args_bad(a, "member %s: unexpected argument \"%s\"", sub,
                         ops->v[want]);
        } else if (a->command != ARGS_MEMBER_LIST) {
                number(a,
                       a->command == ARGS_MEMBER_ADD ? "member add: ID"
                                                     : "member remove: ID",
                       ops->v[2], 1, UINT64_MAX, "", &a->id);
                a->raft_address = ops->n > 3 ? ops->v[3] : NULL;
                a->client_address = ops->n > 4 ? ops->v[4] : NULL;
        }
}

/* session list | session info ID | session close ID. */
static void session(struct args *a, const struct commands_entry *c,
                    const struct operands *ops)
{
        const char *sub = ops->v[1];
        unsigned want = 3;

        if (strcmp(sub, "list") == 0) {
                a->command = ARGS_SESSION_LIST;
                want = 2;
        } else if (strcmp(sub, "info") == 0) {
                a->command = ARGS_SESSION_INFO;
        } else if (strcmp(sub, "close") != 0) {
                args_bad(a,
                         "session: unknown subcommand \"%s\" (list, info or "
                         "close)",
                         sub);
                return;
        }
        if (ops->n != want) {
                args_bad(a, "session %s: %s (usage: batonctl %s)", sub,
                         ops->n < want ? "too few arguments"
                                       : "too many arguments",
                         c->synopsis);
                return;
        }
        if (want == 3) {
                char what[32];

                snprintf(what, sizeof what, "session %s: ID", sub);
                number(a, what, ops->v[2], 1, UINT64_MAX, "", &a->id);
        }
}

/* The operands of `c`, whose count is right. */
static void operands(struct args *a, const struct commands_entry *c,
                     const struct operands *ops)
{
        char what[32];

        a->name = ops->n > 1 ? ops->v[1] : "";
        switch (c->command) {
        case ARGS_LOCK:
                for (unsigned i = 1; i < ops->n; i++) {
                        for (unsigned j = 0; j < a->n_names; j++) {
                                if (strcmp(a->names[j], ops->v[i]) == 0) {
                                        args_bad(
                                            a,
                                            "lock: \"%s\" named twice: a "
                                            "multi-lock takes each name once",
                                            ops->v[i]);
                                }
                        }
                        a->names[a->n_names++] = ops->v[i];
                }
                break;
        case ARGS_MEMBER_LIST:
                member(a, c, ops);
                break;
        case ARGS_ACL_LIST:
                args_acl(a, c, ops);
                break;
        case ARGS_RULE_LIST:
                args_rule(a, c, ops);
                break;
        case ARGS_QUOTA_LIST:
                args_quota(a, c, ops);
                break;
        case ARGS_SNAPSHOT_SAVE:
                if (strcmp(ops->v[1], "inspect") == 0) {
                        a->command = ARGS_SNAPSHOT_INSPECT;
                } else if (strcmp(ops->v[1], "save") != 0) {
                        args_bad(a,
                                 "snapshot: unknown subcommand \"%s\" (save or "
                                 "inspect)",
                                 ops->v[1]);
                        break;
                }
                a->name = ops->v[2];
                break;
        case ARGS_TRANSFER:
                number(a, "transfer: ID", ops->v[1], 0, UINT64_MAX, "", &a->id);
                break;
        case ARGS_SESSION_CLOSE:
                session(a, c, ops);
                break;
        case ARGS_CHECK:
        case ARGS_RELEASE:
        case ARGS_SET_VALUE:
                snprintf(what, sizeof what, "%s: TOKEN", c->name);
                number(a, what, ops->v[2], 0, UINT64_MAX, "", &a->token);
                if (c->command == ARGS_SET_VALUE && a->value != NULL) {
                        args_bad(a, "--value is not an option of set-value: "
                                    "VALUE is its third argument");
                } else if (c->command == ARGS_SET_VALUE) {
                        a->value = ops->v[3];
                }
                break;
        }
}

/* A semaphore's options: sem needs --permits; --take needs --permits and
 * is at most that; --shared is a lock's. */
static void check_permits(struct args *a, const struct commands_entry *c,
                          const struct given *given)
{
        if (c->command == ARGS_SEM && a->permits == 0) {
                args_bad(a, "sem: --permits is required (usage: batonctl %s)",
                         c->synopsis);
        }
        if (a->permits == 0 && a->take != 0) {
                args_bad(a, "--take needs --permits (the semaphore's number)");
        }
        if (a->permits != 0 && a->n_names > 1) {
                args_bad(a,
                         "a multi-lock takes locks, not a semaphore's permits: "
                         "--permits with one name only");
        }
        if (a->permits != 0 && given->shared) {
                args_bad(a,
                         "--shared is for a lock, --permits for a semaphore: "
                         "not both");
        }
        if (a->take == 0) {
                a->take = 1;
        }
        if (a->permits != 0 && a->take > a->permits) {
                args_bad(a,
                         "--take %" PRIu32 " is more than --permits %" PRIu32,
                         a->take, a->permits);
        }
}

/* watch takes a NAME or --prefix P (P may be empty: every name), and
 * --from; only watch does. */
static void check_watch(struct args *a, const struct commands_entry *c)
{
        if (c->command != ARGS_WATCH) {
                if (a->prefix != NULL || a->from_index != 0) {
                        args_bad(a, "--%s is not an option of %s",
                                 a->prefix != NULL ? "prefix" : "from",
                                 c->name);
                }
                return;
        }
        if ((a->prefix != NULL) == (a->name[0] != '\0')) {
                args_bad(a,
                         "watch: a NAME or --prefix P, one of them (usage: "
                         "batonctl %s)",
                         c->synopsis);
        }
        if (a->prefix != NULL && strlen(a->prefix) > 255) {
                args_bad(a, "--prefix: over 255 bytes");
        }
}

/* --check CMD, with --check-interval (default 10 s, Consul's usual) and
 * --check-timeout (default: the interval): only for the commands that
 * run a command while holding, and the two numbers only with --check. */
static void check_health(struct args *a, const struct commands_entry *c)
{
        if (a->check != NULL && !RUNS_COMMAND(c->command)) {
                args_bad(a, "--check is not an option of %s", c->name);
                return;
        }
        if (a->check == NULL) {
                if (a->check_interval_ms != 0 || a->check_timeout_ms != 0) {
                        args_bad(a, "--%s needs --check CMD",
                                 a->check_interval_ms != 0 ? "check-interval"
                                                           : "check-timeout");
                }
                return;
        }
        if (a->check[0] == '\0') {
                args_bad(a, "--check: an empty command");
        }
        if (a->check_interval_ms == 0) {
                a->check_interval_ms = ARGS_CHECK_INTERVAL_MS;
        }
        if (a->check_timeout_ms == 0) {
                a->check_timeout_ms = a->check_interval_ms;
        }
}

/* Options given to a command they do not belong to, and the ones a
 * command requires. */
static void check_options(struct args *a, const struct commands_entry *c,
                          const struct given *given)
{
        size_t i;

        for (i = 0; i < sizeof number_options / sizeof number_options[0]; i++) {
                if ((given->numbers & (1u << i)) != 0 &&
                    (number_options[i].commands & CMD(c->command)) == 0) {
                        args_bad(a, "--%s is not an option of %s",
                                 option_name(number_options[i].opt), c->name);
                }
        }
        if (given->detach && (DETACH_COMMANDS & CMD(c->command)) == 0) {
                args_bad(a, "--detach is not an option of %s", c->name);
        }
        if (given->shared &&
            (LEASE_CMDS & ~CMD(ARGS_ELECT) & CMD(c->command)) == 0) {
                args_bad(a, "--shared is not an option of %s", c->name);
        }
        check_permits(a, c, given);
        if ((a->after != 0 || a->limit != 0) &&
            a->command != ARGS_SESSION_LIST) {
                args_bad(a, "--%s is not an option of %s",
                         a->limit != 0 ? "limit" : "after",
                         a->command == ARGS_SESSION_INFO ? "session info"
                                                         : "session close");
        }
        if (given->all && c->command != ARGS_HOLDER) {
                args_bad(a, "--all is not an option of %s", c->name);
        }
        if ((CMD(c->command) & IN_SESSION_CMDS) != 0 &&
            (a->session == 0 || !a->has_secret)) {
                args_bad(a,
                         "%s: --session and --secret are required (usage: "
                         "batonctl %s)",
                         c->name, c->synopsis);
        }
        if (a->has_secret && (CMD(c->command) & IN_SESSION_CMDS) == 0) {
                args_bad(a, "--secret is not an option of %s", c->name);
        }
        check_watch(a, c);
        if (a->listen != NULL && c->command != ARGS_CONSOLE) {
                args_bad(a, "--listen is not an option of %s", c->name);
        }
        check_health(a, c);
        if (a->value != NULL && (CMD(c->command) & VALUE_CMDS) == 0) {
                args_bad(a, "--value is not an option of %s", c->name);
        }
        if (a->hold_ms != 0 && a->n_names > 1) {
                args_bad(a,
                         "--hold: the grants of a multi-lock have no hold time "
                         "(name one lock)");
        }
        if (a->value != NULL && a->n_names > 1) {
                args_bad(a,
                         "--value: the grants of a multi-lock carry no value "
                         "(name one lock)");
        }
        if (a->value != NULL && strlen(a->value) > BATON_VALUE_MAX) {
                args_bad(a, "%s: %zu bytes, at most %d",
                         c->command == ARGS_SET_VALUE ? "set-value: VALUE"
                                                      : "--value",
                         strlen(a->value), BATON_VALUE_MAX);
        }
}

int args_parse(struct args *a, int argc, char **argv)
{
        struct operands ops = {{NULL}, 0};
        struct given given = {0, false, false, false};
        const struct commands_entry *c;
        int dashdash, rv;
        unsigned n;

        memset(a, 0, sizeof *a);
        a->wait_ms = INT64_MIN; /* not given */
        a->grace_ms = 2000;
        rv = scan(a, argc, argv, &ops, &given, &dashdash);
        if (rv == ARGS_HELP) {
                /* `batonctl COMMAND --help`, `batonctl --help COMMAND`:
                 * that command's help. */
                c = ops.n > 0       ? commands_find(ops.v[0])
                    : optind < argc ? commands_find(argv[optind])
                                    : NULL;
                a->command = c != NULL ? c->command : ARGS_NONE;
                return rv;
        }
        if (rv != ARGS_RUN) {
                return rv;
        }
        c = ops.n > 0 ? commands_find(ops.v[0]) : NULL;
        if (c != NULL && RUNS_COMMAND(c->command) && dashdash > 0) {
                a->argv = argv + dashdash + 1;
        } else if (dashdash > 0) {
                for (n = (unsigned)dashdash + 1; n < (unsigned)argc; n++) {
                        add_operand(&ops, argv[n]);
                }
        }
        if (ops.n == 0) {
                char names[256];

                commands_names(names, sizeof names);
                args_bad(a, "no command (%s)", names);
                return ARGS_BAD;
        }
        if (c == NULL) {
                args_bad(a, "unknown command \"%s\"", ops.v[0]);
                return ARGS_BAD;
        }
        a->command = c->command;
        if (ops.n - 1 < c->min) {
                args_bad(a, "%s: too few arguments (usage: batonctl %s)",
                         c->name, c->synopsis);
        } else if (ops.n - 1 > c->max) {
                args_bad(a, "%s: unexpected argument \"%s\"%s", c->name,
                         ops.v[c->max + 1],
                         RUNS_COMMAND(c->command) && dashdash == 0
                             ? " (the command to run goes after --)"
                             : "");
        } else {
                operands(a, c, &ops);
        }
        if (RUNS_COMMAND(c->command) &&
            (a->argv == NULL || a->argv[0] == NULL)) {
                args_bad(a,
                         "%s: no command to run: it goes after -- (usage: "
                         "batonctl %s)",
                         c->name, c->synopsis);
        }
        check_options(a, c, &given);
        if (a->wait_ms == INT64_MIN) {
                a->wait_ms = c->command == ARGS_TRY ? BATON_WAIT_TRY
                                                    : BATON_WAIT_FOREVER;
        }
        return a->errmsg[0] != '\0' ? ARGS_BAD : ARGS_RUN;
}
