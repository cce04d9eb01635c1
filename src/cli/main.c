/* batonctl: Baton's command line tool, built on libbaton alone. */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "print.h"
#include "supervise.h"

/* Exit statuses of every command but `lock` (see batonctl(1)). */
enum {
        EXIT_OK = 0,
        EXIT_NO = 1,    /* the answer is no: busy, stale, not acquired */
        EXIT_USAGE = 2, /* bad command line */
        EXIT_ERROR = 3, /* the cluster could not be asked */
        EXIT_LOST = 4,  /* a held lock was lost */
};

struct opts {
        const char *endpoints; /* NULL: the local cluster */
        bool json;
        uint32_t timeout_ms;
        uint32_t ttl_ms;
        int64_t wait_ms; /* -1: forever */
        uint32_t grace_ms;
        bool detach;      /* acquire, try: leave the session to expire */
        uint64_t session; /* release: the session of the grant */
};

static volatile sig_atomic_t lock_lost;
static volatile sig_atomic_t stop_signal;

static void on_lock_lost(baton_client *c, const char *name, uint64_t token,
                         void *data)
{
        (void)c;
        (void)name;
        (void)token;
        (void)data;
        lock_lost = 1;
}

static void on_stop(int sig)
{
        stop_signal = sig;
}

static void usage(FILE *out)
{
        fputs(
            "usage: batonctl [--endpoints H:P,...] [--json] [--timeout MS] "
            "COMMAND ...\n\n"
            "  lock NAME [--ttl MS] [--wait MS] [--grace MS] -- CMD [ARG...]\n"
            "                      run CMD while holding NAME\n"
            "  acquire NAME [--ttl MS] [--wait MS]\n"
            "                      hold NAME until SIGINT or SIGTERM\n"
            "  try NAME [--ttl MS] the same, without waiting\n"
            "  acquire|try NAME [--ttl MS] [--wait MS] --detach\n"
            "                      take NAME as a lease that expires TTL "
            "after\n"
            "                      exit; print NAME TOKEN SESSION\n"
            "  release NAME TOKEN --session S\n"
            "                      release a detached grant\n"
            "  holder NAME         who holds NAME\n"
            "  check NAME TOKEN    is TOKEN the current grant of NAME\n"
            "  list [PREFIX]       held locks (whose names start with PREFIX)\n"
            "  status              every node's view of the cluster\n"
            "  member list | add ID RAFT CLIENT | remove ID\n"
            "  transfer ID         hand leadership to ID (0: any)\n\n"
            "Exit status: 0 ok, 1 no (busy, stale, not acquired), 2 usage,\n"
            "3 cluster error, 4 lock lost; lock: the command's status, or\n"
            "121 lost, 124 not acquired, 125 error, 126/127 cannot run.\n",
            out);
}

static bool number(const char *s, uint64_t *v)
{
        char *end;

        if (s == NULL || *s == '\0' || *s == '-') {
                return false;
        }
        *v = strtoull(s, &end, 10);
        return *end == '\0';
}

/* Parse the per-command options; returns the index of the first operand
 * or -1 on a bad option. Stops at "--". */
static int command_options(int argc, char **argv, int i, struct opts *o)
{
        uint64_t v;

        for (; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--") == 0 || a[0] != '-') {
                        return i;
                }
                if (strcmp(a, "--detach") == 0) {
                        o->detach = true;
                        continue;
                }
                if (i + 1 >= argc || !number(argv[i + 1], &v)) {
                        return -1;
                }
                if (strcmp(a, "--ttl") == 0) {
                        o->ttl_ms = (uint32_t)v;
                } else if (strcmp(a, "--wait") == 0) {
                        o->wait_ms = (int64_t)v;
                } else if (strcmp(a, "--grace") == 0) {
                        o->grace_ms = (uint32_t)v;
                } else if (strcmp(a, "--session") == 0 && v != 0) {
                        o->session = v;
                } else if (strcmp(a, "--timeout") == 0) {
                        o->timeout_ms = (uint32_t)v;
                } else {
                        return -1;
                }
                i++;
        }
        return i;
}

static int open_client(const struct opts *o, baton_client **c)
{
        struct baton_options bo;
        int rv;

        baton_options_init(&bo);
        if (o->ttl_ms != 0) {
                bo.ttl_ms = o->ttl_ms;
        }
        if (o->timeout_ms != 0) {
                bo.request_timeout_ms = o->timeout_ms;
        }
        bo.on_lock_lost = on_lock_lost;
        rv = baton_client_create(c, o->endpoints, &bo);
        if (rv != 0) {
                print_error(o->json, "connect", rv);
        }
        return rv;
}

/* The exit status for an error answer. */
static int failed(const struct opts *o, const char *what, int rv)
{
        print_error(o->json, what, rv);
        return rv == BATON_EBUSY || rv == BATON_ETIMEDOUT ||
                       rv == BATON_ESTALE || rv == BATON_ENOTHOLDER
                   ? EXIT_NO
                   : EXIT_ERROR;
}

static int cmd_lock(baton_client *c, const struct opts *o, const char *name,
                    char **argv)
{
        struct supervise s;
        uint64_t token;
        int rv, status;

        rv = baton_acquire(c, name, BATON_OWNER_THREAD, o->wait_ms, &token);
        if (rv != 0) {
                print_error(o->json, "acquire", rv);
                return rv == BATON_ETIMEDOUT || rv == BATON_EBUSY
                           ? SUPERVISE_NOT_TAKEN
                           : SUPERVISE_FAILED;
        }
        s.client = c;
        s.name = name;
        s.token = token;
        s.grace_ms = o->grace_ms;
        s.argv = argv;
        s.lost = &lock_lost;
        status = supervise_run(&s);
        if (status != SUPERVISE_LOST) {
                rv = baton_release(c, name, BATON_OWNER_THREAD, token);
                if (rv != 0 && rv != BATON_EEXPIRED) {
                        print_error(o->json, "release", rv);
                }
        }
        return status;
}

/* acquire and try with --detach: take the lock for the fixed owner tag
 * BATON_OWNER_DETACHED, print the grant and its session, and leave the
 * session to expire (a lease: the lock is free TTL after the exit, or when
 * `release --session` releases it). */
static int cmd_detach(baton_client *c, const struct opts *o, const char *name)
{
        uint64_t token, session;
        int rv;

        rv = baton_acquire(c, name, BATON_OWNER_DETACHED, o->wait_ms, &token);
        if (rv != 0) {
                return failed(o, "acquire", rv);
        }
        rv = baton_client_detach(c, &session);
        if (rv != 0) {
                /* The session ended under the grant: the lock is lost. */
                print_error(o->json, name, BATON_EEXPIRED);
                return EXIT_LOST;
        }
        print_grant(stdout, o->json, name, token, session);
        return EXIT_OK;
}

/* release NAME TOKEN --session S: release a detached grant. */
static int cmd_release(baton_client *c, const struct opts *o, const char *name,
                       uint64_t token)
{
        int rv =
            baton_release_in(c, o->session, name, BATON_OWNER_DETACHED, token);

        if (rv == BATON_EEXPIRED || rv == BATON_ENOSESSION ||
            rv == BATON_ECLOSED) {
                if (o->json) {
                        print_error(true, "release", rv);
                } else {
                        fprintf(stderr,
                                "batonctl: release: session %" PRIu64
                                " already ended (%s): its lease ran out and "
                                "%s was released then\n",
                                o->session, baton_strerror(rv), name);
                }
                return EXIT_NO;
        }
        return rv == 0 ? EXIT_OK : failed(o, "release", rv);
}

/* acquire and try: hold the lock until a signal, watching the session. */
static int cmd_hold(baton_client *c, const struct opts *o, const char *name)
{
        struct sigaction sa = {0};
        uint64_t token;
        int rv;

        rv = baton_acquire(c, name, BATON_OWNER_THREAD, o->wait_ms, &token);
        if (rv != 0) {
                return failed(o, "acquire", rv);
        }
        print_grant(stdout, o->json, name, token, 0);
        fflush(stdout);
        sa.sa_handler = on_stop;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        while (stop_signal == 0) {
                if (lock_lost ||
                    baton_session_state(c) == BATON_SESSION_EXPIRED) {
                        print_error(o->json, name, BATON_EEXPIRED);
                        return EXIT_LOST;
                }
                usleep(50 * 1000);
        }
        rv = baton_release(c, name, BATON_OWNER_THREAD, token);
        return rv == 0 ? EXIT_OK : failed(o, "release", rv);
}

static int cmd_status(baton_client *c, const struct opts *o)
{
        char list[1024];
        char *ep, *save = NULL;
        struct baton_status st;
        int shown = 0, worst = EXIT_OK;
        int rv;

        snprintf(list, sizeof list, "%s",
                 o->endpoints != NULL
                     ? o->endpoints
                     : "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103");
        for (ep = strtok_r(list, ",", &save); ep != NULL;
             ep = strtok_r(NULL, ",", &save)) {
                const char *next = save != NULL ? save : "";
                rv = baton_status(c, ep, &st);
                if (rv != 0) {
                        memset(&st, 0, sizeof st);
                        snprintf(st.endpoint, sizeof st.endpoint, "%s", ep);
                        if (!o->json) {
                                fprintf(stderr, "batonctl: %s: %s\n", ep,
                                        baton_strerror(rv));
                        }
                        worst = EXIT_ERROR;
                }
                print_status(stdout, o->json, &st, shown == 0,
                             strchr(next, ':') == NULL);
                shown++;
        }
        return worst;
}

static int cmd_member(baton_client *c, const struct opts *o, int argc,
                      char **argv)
{
        struct baton_status st;
        uint64_t id;
        int rv;

        if (argc >= 1 && strcmp(argv[0], "list") == 0) {
                rv = baton_status(c, NULL, &st);
                if (rv != 0) {
                        return failed(o, "status", rv);
                }
                print_members(stdout, o->json, &st);
                return EXIT_OK;
        }
        if (argc == 4 && strcmp(argv[0], "add") == 0 && number(argv[1], &id)) {
                rv = baton_member_add(c, id, argv[2], argv[3]);
                return rv == 0 ? EXIT_OK : failed(o, "member add", rv);
        }
        if (argc == 2 && strcmp(argv[0], "remove") == 0 &&
            number(argv[1], &id)) {
                rv = baton_member_remove(c, id);
                return rv == 0 ? EXIT_OK : failed(o, "member remove", rv);
        }
        usage(stderr);
        return EXIT_USAGE;
}

/* The most locks `list` shows: as many as one request returns. */
#define LIST_MAX 1000

static int cmd_list(baton_client *c, struct opts *o, const char *prefix)
{
        struct baton_lock_info *locks = calloc(LIST_MAX, sizeof *locks);
        size_t n = 0;
        int more = 0, rv;

        if (locks == NULL) {
                return failed(o, "list", BATON_ENOMEM);
        }
        rv = baton_list(c, prefix, locks, LIST_MAX, &n, &more);
        if (rv != 0) {
                free(locks);
                return failed(o, "list", rv);
        }
        print_list(stdout, o->json, locks, n, more != 0);
        free(locks);
        return EXIT_OK;
}

/* Runs one command; `argv` starts at the command's name. */
static int run(baton_client *c, struct opts *o, int argc, char **argv)
{
        const char *cmd = argv[0];
        struct baton_holder h;
        uint64_t token, id;
        int i, rv;

        if (strcmp(cmd, "status") == 0) {
                return cmd_status(c, o);
        }
        if (strcmp(cmd, "member") == 0) {
                return cmd_member(c, o, argc - 1, argv + 1);
        }
        if (strcmp(cmd, "list") == 0 && argc <= 2) {
                return cmd_list(c, o, argc == 2 ? argv[1] : "");
        }
        if (strcmp(cmd, "transfer") == 0 && argc == 2 && number(argv[1], &id)) {
                rv = baton_transfer(c, id);
                return rv == 0 ? EXIT_OK : failed(o, "transfer", rv);
        }
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(cmd, "holder") == 0 && argc == 2) {
                rv = baton_holder(c, argv[1], &h);
                if (rv != 0) {
                        return failed(o, "holder", rv);
                }
                print_holder(stdout, o->json, argv[1], &h);
                return EXIT_OK;
        }
        if (strcmp(cmd, "check") == 0 && argc == 3 && number(argv[2], &token)) {
                rv = baton_check(c, argv[1], token);
                if (rv != 0 && rv != BATON_ESTALE) {
                        return failed(o, "check", rv);
                }
                print_check(stdout, o->json, argv[1], token, rv);
                return rv == 0 ? EXIT_OK : EXIT_NO;
        }
        if (strcmp(cmd, "release") == 0) {
                o->session = 0;
                if (argc < 3 || !number(argv[2], &token)) {
                        usage(stderr);
                        return EXIT_USAGE;
                }
                i = command_options(argc, argv, 3, o);
                if (i != argc || o->session == 0 || o->detach) {
                        usage(stderr);
                        return EXIT_USAGE;
                }
                return cmd_release(c, o, argv[1], token);
        }
        if (strcmp(cmd, "try") == 0) {
                o->wait_ms = BATON_WAIT_TRY;
        }
        i = command_options(argc, argv, 2, o);
        if (i < 0) {
                usage(stderr);
                return strcmp(cmd, "lock") == 0 ? SUPERVISE_FAILED : EXIT_USAGE;
        }
        if (strcmp(cmd, "lock") == 0) {
                if (o->detach || o->session != 0 || i >= argc ||
                    strcmp(argv[i], "--") != 0 || i + 1 >= argc) {
                        usage(stderr);
                        return SUPERVISE_FAILED;
                }
                return cmd_lock(c, o, argv[1], argv + i + 1);
        }
        if ((strcmp(cmd, "acquire") == 0 || strcmp(cmd, "try") == 0) &&
            i == argc && o->session == 0) {
                return o->detach ? cmd_detach(c, o, argv[1])
                                 : cmd_hold(c, o, argv[1]);
        }
        usage(stderr);
        return EXIT_USAGE;
}

int main(int argc, char **argv)
{
        struct opts o = {NULL, false, 0, 0, BATON_WAIT_FOREVER, 2000, false, 0};
        baton_client *c = NULL;
        uint64_t v;
        int i = 1, status;

        signal(SIGPIPE, SIG_IGN);
        while (i < argc && argv[i][0] == '-') {
                if (strcmp(argv[i], "--help") == 0 ||
                    strcmp(argv[i], "-h") == 0) {
                        usage(stdout);
                        return EXIT_OK;
                }
                if (strcmp(argv[i], "--json") == 0) {
                        o.json = true;
                        i++;
                } else if (strcmp(argv[i], "--endpoints") == 0 &&
                           i + 1 < argc) {
                        o.endpoints = argv[i + 1];
                        i += 2;
                } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc &&
                           number(argv[i + 1], &v)) {
                        o.timeout_ms = (uint32_t)v;
                        i += 2;
                } else {
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (i >= argc) {
                usage(stderr);
                return EXIT_USAGE;
        }
        /* The options of lock, acquire and try (--ttl) shape the session,
         * so they are read before the client is created. */
        if (argc - i >= 2 &&
            (strcmp(argv[i], "lock") == 0 || strcmp(argv[i], "acquire") == 0 ||
             strcmp(argv[i], "try") == 0) &&
            command_options(argc, argv, i + 2, &o) < 0) {
                usage(stderr);
                return strcmp(argv[i], "lock") == 0 ? SUPERVISE_FAILED
                                                    : EXIT_USAGE;
        }
        if (open_client(&o, &c) != 0) {
                return strcmp(argv[i], "lock") == 0 ? SUPERVISE_FAILED
                                                    : EXIT_ERROR;
        }
        status = run(c, &o, argc - i, argv + i);
        baton_client_destroy(c);
        return status;
}
