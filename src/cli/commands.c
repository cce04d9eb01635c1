/* batonctl's commands in one table, which the parser, `batonctl --help` and
 * `batonctl COMMAND --help` all read, so that none of them can leave a
 * command out or tell another story about it. */
#include "commands.h"

#include <stdbool.h>
#include <string.h>

#include "../../include/baton.h"
#include "args.h"
#include "console.h"

#define WIDTH  79 /* columns of help text */
#define INDENT 22 /* where a command's summary starts in the global help */

/* Options several commands share, in the words of each command's help. */
#define OPT_TTL "--ttl MS\tthe session's TTL (default 10000)\n"
#define OPT_LOCK_DELAY                                                         \
        "--lock-delay MS\tif the session expires or is revoked, what it "      \
        "held is granted to no one for MS (default 0)\n"
#define OPT_WAIT_LOCK                                                          \
        "--wait MS\thow long to wait in the queue (default: until "            \
        "granted)\n"
#define OPT_GRACE                                                              \
        "--grace MS\ttime CMD has between SIGTERM and SIGKILL when the "       \
        "lease is lost (default 2000; shortened so that CMD is dead before "   \
        "the lease runs out)\n"
#define OPT_CHECK                                                              \
        "--check CMD\ta health command (sh -c CMD), run before taking the "    \
        "lock and then every --check-interval: when a run fails (exit "        \
        "status not 0, or --check-timeout), the command is stopped, then "     \
        "the lock released, and batonctl exits 122\n"                          \
        "--check-interval MS\tbetween runs of --check (default 10000)\n"       \
        "--check-timeout MS\ta run still going after MS fails (default: "      \
        "the interval)\n"
#define OPT_PERMITS                                                            \
        "--permits N\tNAME is a semaphore of N permits\n"                      \
        "--take K\twith --permits: the permits to take (default 1)\n"
#define OPT_SHARED                                                             \
        "--shared\tthe read lock, which readers hold together while no "       \
        "writer does\n"
#define OPT_VALUE                                                              \
        "--value V\tthe grant's value, at most 255 bytes, which `holder` "     \
        "and watches show while it lasts (where the holder is, a job id); "    \
        "one name only\n"
#define OPT_HOLD                                                               \
        "--hold MS\tthe most the grant is held: the cluster ends it MS "       \
        "after it was granted (lock and sem stop CMD before that, and exit "   \
        "123); one name only\n"
#define OPT_DETACH                                                             \
        "--detach\ttake it as a lease that outlives batonctl: print NAME "     \
        "TOKEN SESSION SECRET and exit; the cluster frees it TTL later, or "   \
        "`release` does\n"

static const struct commands_entry table[] = {
    {"lock", ARGS_LOCK, 1, ARGS_NAMES_MAX,
     "lock NAME [NAME...] [--shared] [--value V] [--hold MS] [--ttl MS] "
     "[--lock-delay MS] [--wait MS] [--grace MS] [--check CMD] -- CMD "
     "[ARG...]",
     "run CMD while holding NAME, with the grant's fencing token in "
     "$BATON_TOKEN; with several NAMEs, while holding every one, all taken "
     "at once or none (a multi-lock, one token). CMD is stopped (SIGTERM, "
     "then SIGKILL) before the lease could run out if the session is in "
     "jeopardy or the lock is lost, or when a --check fails.",
     OPT_SHARED OPT_VALUE OPT_HOLD OPT_TTL OPT_LOCK_DELAY OPT_WAIT_LOCK
         OPT_GRACE OPT_CHECK},
    {"sem", ARGS_SEM, 1, 1,
     "sem NAME --permits N [--take K] [--value V] [--hold MS] [--ttl MS] "
     "[--lock-delay MS] [--wait MS] [--grace MS] [--check CMD] -- CMD "
     "[ARG...]",
     "run CMD while holding K (default 1) of the N permits of the semaphore "
     "NAME, as lock runs it.",
     "--permits N\tthe semaphore's number of permits (required; every "
     "holder names the same)\n"
     "--take K\tthe permits to take (default 1)\n" OPT_VALUE OPT_HOLD OPT_TTL
         OPT_LOCK_DELAY OPT_WAIT_LOCK OPT_GRACE OPT_CHECK},
    {"elect", ARGS_ELECT, 1, 1,
     "elect NAME [--value V] [--ttl MS] [--wait MS] [--grace MS] "
     "[--check CMD] -- CMD [ARG...]",
     "campaign in the election NAME advertising V, run CMD while leading "
     "(stopped as lock stops it), then resign, handing the leadership to "
     "the next candidate.",
     "--value V\twhat the leader advertises, at most 255 bytes (default "
     "empty)\n" OPT_TTL "--wait MS\thow long to wait to lead (default: "
     "until leading)\n" OPT_GRACE OPT_CHECK},
    {"acquire", ARGS_ACQUIRE, 1, 1,
     "acquire NAME [--shared | --permits N [--take K]] [--value V] "
     "[--hold MS] [--ttl MS] [--lock-delay MS] [--wait MS] [--detach]",
     "take NAME, print NAME TOKEN, and hold it until SIGINT or SIGTERM; "
     "with --detach, take it as a lease that outlives batonctl and print "
     "NAME TOKEN SESSION SECRET.",
     OPT_SHARED OPT_PERMITS OPT_VALUE OPT_HOLD OPT_TTL OPT_LOCK_DELAY
         OPT_WAIT_LOCK OPT_DETACH},
    {"try", ARGS_TRY, 1, 1,
     "try NAME [--shared | --permits N [--take K]] [--value V] [--hold MS] "
     "[--ttl MS] [--lock-delay MS] [--detach]",
     "acquire without waiting: exit 1 at once if another owner holds NAME.",
     OPT_SHARED OPT_PERMITS OPT_VALUE OPT_HOLD OPT_TTL OPT_LOCK_DELAY
         OPT_DETACH},
    {"release", ARGS_RELEASE, 2, 2,
     "release NAME TOKEN --session S --secret HEX",
     "release the grant TOKEN of NAME that acquire --detach printed, from "
     "any process that has its session's secret.",
     "--session S\tthe grant's session, as acquire --detach printed it "
     "(required)\n"
     "--secret HEX\tthe session's secret, the 32 hex digits acquire "
     "--detach printed (required)\n"},
    {"set-value", ARGS_SET_VALUE, 3, 3,
     "set-value NAME TOKEN VALUE --session S --secret HEX",
     "change the value of the grant TOKEN of NAME that acquire --detach "
     "printed (\"\" clears it), keeping the grant and its token, from any "
     "process that has its session's secret.",
     "--session S\tthe grant's session, as acquire --detach printed it "
     "(required)\n"
     "--secret HEX\tthe session's secret, the 32 hex digits acquire "
     "--detach printed (required)\n"},
    {"holder", ARGS_HOLDER, 1, 1, "holder NAME [--all]",
     "who holds NAME: its session, owner, token, count, waiters, value and "
     "client.",
     "--all\tevery grant of NAME (a read lock's readers, a semaphore's "
     "holders), with its mode or permits\n"},
    {"check", ARGS_CHECK, 2, 2, "check NAME TOKEN",
     "whether TOKEN is the current grant of NAME (exit 0) or not (exit 1).",
     NULL},
    {"list", ARGS_LIST, 0, 1, "list [PREFIX]",
     "the held locks (those whose names start with PREFIX).", NULL},
    {"status", ARGS_STATUS, 0, 0, "status",
     "every node's view of the cluster: role, term, leader, indexes, "
     "version and alarms (diverged).",
     NULL},
    {"ping", ARGS_PING, 0, 0, "ping [--wait MS]",
     "one read through the cluster's leader, which answers it only once a "
     "majority confirms its leadership: print the leader's endpoint, id and "
     "term and the round trip (exit 3 if no leader serves).",
     "--wait MS\task again until a leader serves or MS have passed "
     "(default: one try, within --timeout)\n"},
    {"member", ARGS_MEMBER_LIST, 1, 4,
     "member list | member add ID RAFT CLIENT | member remove ID",
     "the cluster's members; add node ID with its raft and client "
     "addresses (answered once it votes); remove node ID (admin).",
     NULL},
    {"acl", ARGS_ACL_LIST, 1, 3,
     "acl list | acl add IDENTITY ROLE | acl remove IDENTITY",
     "the cluster's access list: which role (admin, lock, read or none) "
     "each client certificate identity has; add an identity or change its "
     "role, or remove it (it then has the default role); admin only.",
     NULL},
    {"rule", ARGS_RULE_LIST, 1, 4,
     "rule list | rule add SUBJECT PREFIX PERMS | rule remove SUBJECT PREFIX",
     "the cluster's rules on lock names: SUBJECT (a client certificate "
     "identity, or group:NAME for the certificates whose subject has the "
     "OU NAME) may PERMS (read, lock, manage, or a list: lock,manage) every "
     "name that starts with PREFIX (\"\" is every name); once there is a "
     "rule, a name is closed to what no rule gives. add sets a rule or "
     "changes it, remove takes it out; admin only.",
     NULL},
    {"quota", ARGS_QUOTA_LIST, 1, 2 + BATON_QUOTA_KINDS,
     "quota list | quota set SUBJECT KIND=N... | quota remove SUBJECT",
     "the cluster's quotas per identity: what SUBJECT (a client "
     "certificate identity, or * for every identity without a quota of its "
     "own) may hold or do at once, KIND sessions, locks, waiters, watches "
     "(on one node) or rate (requests a second on one node), N a number or "
     "none; list shows each identity's use now. set gives a quota or "
     "replaces it, remove takes it out; admin only.",
     NULL},
    {"console", ARGS_CONSOLE, 0, 0, "console [--listen HOST:PORT]",
     "serve a page showing the cluster (members, locks, sessions, "
     "elections and a live stream of events) to a browser on this machine, "
     "with this certificate's role: an admin's page can revoke a grant, "
     "close a session and transfer leadership, each after a confirmation. "
     "Open the address it prints; it runs until SIGINT or SIGTERM.",
     "--listen HOST:PORT\twhere to serve the page, a loopback address "
     "(default " CONSOLE_DEFAULT_LISTEN "; PORT 0: any free port)\n"},
    {"transfer", ARGS_TRANSFER, 1, 1, "transfer ID",
     "hand the leadership to node ID (0: to any other node) and say "
     "where it went (admin).",
     NULL},
    {"session", ARGS_SESSION_CLOSE, 1, 2,
     "session list [--after ID] [--limit N] | session info ID | "
     "session close ID",
     "the live sessions, by id: each one's client, certificate identity "
     "and address, TTL and time left, lock-delay, and the locks it holds "
     "(with their tokens) and awaits; list pages through every one (or N, "
     "after session ID), info shows one. close ends session ID now, as its "
     "expiry would: its locks are released (admin).",
     "--after ID\tlist: the sessions after session ID (default: from the "
     "first)\n"
     "--limit N\tlist: at most N sessions (default: every one)\n"},
    {"revoke", ARGS_REVOKE, 1, 1, "revoke NAME",
     "take NAME away from its holders, their sessions living on; each "
     "holder's client is told at its next keepalive (admin).",
     NULL},
    {"leader", ARGS_LEADER, 1, 1, "leader NAME",
     "who leads the election NAME, and its value.", NULL},
    {"watch", ARGS_WATCH, 0, 1, "watch NAME|--prefix P [--from INDEX[:ORD]]",
     "print every grant, release and proclaim of NAME (or of the names "
     "beginning with P) in log order, each with its position, until SIGINT "
     "or SIGTERM.",
     "--prefix P\tinstead of NAME: every name that begins with P (empty: "
     "every name)\n"
     "--from INDEX[:ORD]\tstart after that position (what a watch printed "
     "last) instead of from now\n"},
    {"observe", ARGS_OBSERVE, 1, 1, "observe NAME",
     "the leader of the election NAME, then each new leader or value, until "
     "SIGINT or SIGTERM.",
     NULL},
    {"snapshot", ARGS_SNAPSHOT_SAVE, 2, 2,
     "snapshot save FILE | snapshot inspect FILE",
     "save: an online backup of the cluster's state, taken from the leader, "
     "into FILE (batond --restore seeds a new cluster from it; admin); "
     "inspect: what a backup file holds, read offline.",
     NULL},
};

#define N_ENTRIES (sizeof table / sizeof table[0])

const struct commands_entry *commands_find(const char *name)
{
        size_t i;

        for (i = 0; i < N_ENTRIES; i++) {
                if (strcmp(table[i].name, name) == 0) {
                        return &table[i];
                }
        }
        return NULL;
}

const struct commands_entry *commands_of(int command)
{
        switch (command) {
        case ARGS_MEMBER_ADD:
        case ARGS_MEMBER_REMOVE:
                command = ARGS_MEMBER_LIST;
                break;
        case ARGS_SNAPSHOT_INSPECT:
                command = ARGS_SNAPSHOT_SAVE;
                break;
        case ARGS_ACL_ADD:
        case ARGS_ACL_REMOVE:
                command = ARGS_ACL_LIST;
                break;
        case ARGS_RULE_ADD:
        case ARGS_RULE_REMOVE:
                command = ARGS_RULE_LIST;
                break;
        case ARGS_QUOTA_SET:
        case ARGS_QUOTA_REMOVE:
                command = ARGS_QUOTA_LIST;
                break;
        case ARGS_SESSION_LIST:
        case ARGS_SESSION_INFO:
                command = ARGS_SESSION_CLOSE;
                break;
        }
        for (size_t i = 0; i < N_ENTRIES; i++) {
                if (table[i].command == command) {
                        return &table[i];
                }
        }
        return NULL;
}

void commands_names(char *buf, size_t cap)
{
        size_t at = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < N_ENTRIES && at < cap; i++) {
                const char *sep = i == 0              ? ""
                                  : i + 1 < N_ENTRIES ? ", "
                                                      : " or ";
                at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep,
                                       table[i].name);
        }
}

/* Print `n` bytes of `text` wrapped at WIDTH, the first line starting at
 * column `col` (where the cursor is), later ones at `indent`; words are
 * split at spaces only. */
static void wrap(FILE *out, const char *text, size_t n, size_t col,
                 size_t indent)
{
        const char *p = text, *end = text + n;
        bool first = true;

        while (p < end) {
                const char *w = p;
                size_t len;

                while (w < end && *w != ' ') {
                        w++;
                }
                len = (size_t)(w - p);
                if (!first && col + 1 + len > WIDTH) {
                        fprintf(out, "\n%*s", (int)indent, "");
                        col = indent;
                } else if (!first) {
                        fputc(' ', out);
                        col++;
                }
                fwrite(p, 1, len, out);
                col += len;
                first = false;
                p = w < end ? w + 1 : w;
        }
        fputc('\n', out);
}

/* One entry of the global help: its synopsis, then its summary at column
 * INDENT (on the synopsis's line when that is short enough). */
static void usage_entry(FILE *out, const struct commands_entry *e)
{
        size_t len = strlen(e->synopsis);

        if (2 + len + 1 < INDENT) {
                fprintf(out, "  %s%*s", e->synopsis, (int)(INDENT - 2 - len),
                        "");
        } else {
                fputs("  ", out);
                wrap(out, e->synopsis, len, 2, 6);
                fprintf(out, "%*s", INDENT, "");
        }
        wrap(out, e->summary, strlen(e->summary), INDENT, INDENT);
}

void commands_usage(FILE *out)
{
        fputs("usage: batonctl [--endpoints H:P,...] [--cacert F --cert F "
              "--key F]\n"
              "                [--json] [--timeout MS] COMMAND ...\n\n",
              out);
        for (size_t i = 0; i < N_ENTRIES; i++) {
                usage_entry(out, &table[i]);
        }
        fputs(
            "\n"
            "`batonctl COMMAND --help` shows one command's usage and options.\n"
            "Options go anywhere on the line, as --opt VALUE or --opt=VALUE;\n"
            "-- ends them. The cluster: --endpoints, else $BATON_ENDPOINTS,\n"
            "else " BATON_DEFAULT_ENDPOINTS ".\n"
            "TLS: --cacert (the cluster's CA), --cert and --key (this "
            "client's\n"
            "certificate), each else $BATON_CACERT, $BATON_CERT, $BATON_KEY;\n"
            "none of them: plain TCP, for nodes run with tls = off.\n"
            "--json prints results and errors as JSON; --timeout MS is each\n"
            "request's deadline (default 5000).\n"
            "--version prints the versions of batonctl and libbaton.\n\n"
            "Exit status: 0 ok, 1 no (busy, stale, not acquired), 2 usage,\n"
            "3 cluster error, 4 lock lost; lock, sem and elect: the "
            "command's\n"
            "status, or 121 lost, 122 unhealthy (--check), 123 held out\n"
            "(--hold), 124 not acquired, 125 error, 126/127 cannot run.\n",
            out);
}

/* A command's options, one a line: the option at column 2, what it does
 * at column INDENT (or on the next line when the option is long). */
static void help_options(FILE *out, const char *options)
{
        const char *p = options;

        while (*p != '\0') {
                const char *nl = strchr(p, '\n');
                const char *tab = strchr(p, '\t');
                size_t flag = (size_t)(tab - p);

                fprintf(out, "  %.*s", (int)flag, p);
                if (2 + flag + 1 < INDENT) {
                        fprintf(out, "%*s", (int)(INDENT - 2 - flag), "");
                } else {
                        fprintf(out, "\n%*s", INDENT, "");
                }
                wrap(out, tab + 1, (size_t)(nl - tab - 1), INDENT, INDENT);
                p = nl + 1;
        }
}

void commands_help(FILE *out, const struct commands_entry *e)
{
        bool runs = e->command == ARGS_LOCK || e->command == ARGS_SEM ||
                    e->command == ARGS_ELECT;

        fputs("usage: batonctl ", out);
        wrap(out, e->synopsis, strlen(e->synopsis), 16, 16);
        fputc('\n', out);
        wrap(out, e->summary, strlen(e->summary), 0, 0);
        if (e->options != NULL) {
                fputs("\nOptions:\n", out);
                help_options(out, e->options);
        }
        fputs("\nThe cluster and TLS: --endpoints H:P,..., --cacert F, --cert "
              "F,\n--key F (else $BATON_ENDPOINTS, $BATON_CACERT, "
              "$BATON_CERT,\n$BATON_KEY); --json; --timeout MS (default "
              "5000). batonctl --help\nlists every command.\n\n",
              out);
        fputs(runs ? "Exit status: CMD's status, or 121 lost, 122 unhealthy "
                     "(--check), 123 held\nout (--hold), 124 not acquired, 125 "
                     "error, 126/127 cannot run.\n"
                   : "Exit status: 0 ok, 1 no (busy, stale, not acquired), 2 "
                     "usage,\n3 cluster error, 4 lock lost.\n",
              out);
}
