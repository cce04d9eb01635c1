/* batonctl: Baton's command line tool, built on libbaton alone. */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "args.h"
#include "commands.h"
#include "console.h"
#include "ping.h"
#include "print.h"
#include "printquota.h"
#include "printrule.h"
#include "supervise.h"
#include "sessions.h"
#include "watch.h"

/* Exit statuses of every command but `lock` (see batonctl(1)). */
enum {
        EXIT_OK = 0,
        EXIT_NO = 1,    /* the answer is no: busy, stale, not acquired */
        EXIT_USAGE = 2, /* bad command line */
        EXIT_ERROR = 3, /* the cluster could not be asked */
        EXIT_LOST = 4,  /* a held lock was lost */
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

/* The cluster to ask: --endpoints, else $BATON_ENDPOINTS unless empty,
 * else the local cluster of scripts/cluster. `*source` names the one. */
static const char *endpoints(const struct args *a, const char **source)
{
        const char *env = getenv("BATON_ENDPOINTS");

        if (a->endpoints != NULL) {
                *source = "--endpoints";
                return a->endpoints;
        }
        if (env != NULL && env[0] != '\0') {
                *source = "BATON_ENDPOINTS";
                return env;
        }
        *source = "the default";
        return BATON_DEFAULT_ENDPOINTS;
}

/* A TLS file: its flag, else its environment variable unless empty. */
static const char *tls_file(const char *flag, const char *var)
{
        const char *env = getenv(var);

        if (flag != NULL) {
                return flag;
        }
        return env != NULL && env[0] != '\0' ? env : NULL;
}

/* The handle; 0, or the exit status of a command whose handle cannot be
 * made (2 or 125 for bad endpoints, else 3 or 125). */
static int open_client(const struct args *o, const char *source,
                       baton_client **c)
{
        struct baton_options bo;
        bool lock = o->command == ARGS_LOCK || o->command == ARGS_SEM ||
                    o->command == ARGS_ELECT;
        int rv;

        baton_options_init(&bo);
        if (o->ttl_ms != 0) {
                bo.ttl_ms = o->ttl_ms;
        }
        bo.lock_delay_ms = o->lock_delay_ms;
        if (o->timeout_ms != 0) {
                bo.request_timeout_ms = o->timeout_ms;
        }
        bo.on_lock_lost = on_lock_lost;
        bo.tls_ca = tls_file(o->cacert, "BATON_CACERT");
        bo.tls_cert = tls_file(o->cert, "BATON_CERT");
        bo.tls_key = tls_file(o->key, "BATON_KEY");
        if ((bo.tls_ca != NULL || bo.tls_cert != NULL || bo.tls_key != NULL) &&
            (bo.tls_ca == NULL || bo.tls_cert == NULL || bo.tls_key == NULL)) {
                fprintf(stderr,
                        "batonctl: TLS needs all of --cacert, --cert and "
                        "--key (or BATON_CACERT, BATON_CERT, BATON_KEY); %s "
                        "is missing\n",
                        bo.tls_ca == NULL     ? "--cacert"
                        : bo.tls_cert == NULL ? "--cert"
                                              : "--key");
                return lock ? SUPERVISE_FAILED : EXIT_USAGE;
        }
        rv = baton_client_create(c, o->endpoints, &bo);
        if (rv == BATON_ETLS || rv == BATON_EINVAL) {
                /* libbaton's detail names the file, the option or the
                 * endpoint at fault ("bad endpoint ..."); for endpoints,
                 * say too where they came from. */
                const char *detail = baton_errmsg(rv);
                bool ep = strncmp(detail, "bad endpoint", 12) == 0;
                fprintf(stderr, "batonctl: %s%s%s%s\n", detail,
                        ep ? " (from " : "", ep ? source : "", ep ? ")" : "");
                return lock ? SUPERVISE_FAILED : EXIT_USAGE;
        }
        if (rv != 0) {
                print_error(o->json, "connect", rv);
                return lock ? SUPERVISE_FAILED : EXIT_ERROR;
        }
        return 0;
}

/* The exit status for an error answer. */
static int failed(const struct args *o, const char *what, int rv)
{
        print_error(o->json, what, rv);
        return rv == BATON_EBUSY || rv == BATON_ETIMEDOUT ||
                       rv == BATON_ESTALE || rv == BATON_ENOTHOLDER
                   ? EXIT_NO
                   : EXIT_ERROR;
}

/* CLOCK_MONOTONIC ms, libbaton's clock. */
static int64_t mono_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The lock `name` for `owner`: the leadership of an election for elect,
 * --take of the --permits of a semaphore, the read lock with --shared,
 * else the write lock; with the --value. */
static int take(baton_client *c, const struct args *o, const char *name,
                uint64_t owner, uint64_t *token)
{
        struct baton_acquire_options opts = {.mode = BATON_MODE_EXCLUSIVE,
                                             .value = o->value,
                                             .hold_ms = o->hold_ms};

        if (o->command == ARGS_ELECT) {
                return baton_campaign(c, name, o->value, owner, o->wait_ms,
                                      token);
        }
        if (o->permits != 0) {
                opts.mode = BATON_MODE_PERMITS;
                opts.limit = o->permits;
                opts.permits = o->take;
        } else if (o->shared) {
                opts.mode = BATON_MODE_SHARED;
        }
        return baton_acquire_with(c, name, owner, o->wait_ms, &opts, token);
}

/* The names of a multi-lock as baton_multi_acquire() takes them, every
 * one in the --shared mode or not, and joined by spaces into `joined`
 * (for $BATON_LOCK). */
static size_t multi_names(const struct args *o, struct baton_lock_name *out,
                          char *joined, size_t cap)
{
        size_t at = 0;

        joined[0] = '\0';
        for (unsigned i = 0; i < o->n_names; i++) {
                out[i].name = o->names[i];
                out[i].mode =
                    o->shared ? BATON_MODE_SHARED : BATON_MODE_EXCLUSIVE;
                if (at < cap) { /* a name too long is refused anyway */
                        at += (size_t)snprintf(joined + at, cap - at, "%s%s",
                                               i > 0 ? " " : "", o->names[i]);
                }
        }
        return o->n_names;
}

/* The TTL of the handle's session: --ttl, else libbaton's default. */
static uint32_t session_ttl(const struct args *o)
{
        struct baton_options bo;

        if (o->ttl_ms != 0) {
                return o->ttl_ms;
        }
        baton_options_init(&bo);
        return bo.ttl_ms;
}

/* --check's first run, before the lock is asked for: an owner that is
 * not healthy does not take it (as Consul creates no session whose
 * checks fail). True when it passed or there is no --check. */
static bool healthy_first(const struct args *o, struct healthcheck *hc,
                          const char *name)
{
        char why[128];

        if (o->check == NULL) {
                return true;
        }
        healthcheck_init(hc, o->check, o->check_interval_ms,
                         o->check_timeout_ms, 0);
        if (healthcheck_once(hc)) {
                return true;
        }
        healthcheck_describe(hc, why, sizeof why);
        fprintf(stderr,
                "batonctl: health check failed (%s): not taking lock %s\n", why,
                name);
        return false;
}

static int cmd_lock(baton_client *c, const struct args *o, const char *name,
                    char **argv)
{
        struct baton_lock_name names[ARGS_NAMES_MAX];
        char joined[ARGS_NAMES_MAX * 256];
        struct healthcheck hc;
        size_t n = 0;
        struct supervise s;
        uint64_t token;
        int rv, status;

        if (!healthy_first(o, &hc, name)) {
                return SUPERVISE_UNHEALTHY;
        }
        s.hold_from = mono_ms();
        if (o->n_names > 1) {
                n = multi_names(o, names, joined, sizeof joined);
                name = joined;
                rv = baton_multi_acquire(c, names, n, BATON_OWNER_THREAD,
                                         o->wait_ms, &token);
        } else {
                rv = take(c, o, name, BATON_OWNER_THREAD, &token);
        }
        if (rv != 0) {
                print_error(o->json, "acquire", rv);
                return rv == BATON_ETIMEDOUT || rv == BATON_EBUSY
                           ? SUPERVISE_NOT_TAKEN
                           : SUPERVISE_FAILED;
        }
        s.hold_ms = o->hold_ms;
        if (o->hold_ms != 0 && mono_ms() - s.hold_from > o->hold_ms / 10) {
                /* The hold time ran from the grant, somewhere in the wait,
                 * which counted against it in this reckoning: restart it,
                 * so that CMD gets all of it. Too late if it ran out. */
                int64_t again = mono_ms();
                if (baton_extend(c, name, BATON_OWNER_THREAD, token,
                                 o->hold_ms) == 0) {
                        s.hold_from = again;
                }
        }
        s.client = c;
        s.name = name;
        s.token = token;
        s.ttl_ms = session_ttl(o);
        s.grace_ms = o->grace_ms;
        s.argv = argv;
        s.lost = &lock_lost;
        s.check = NULL;
        if (o->check != NULL) {
                /* The next run an interval after the grant, not after the
                 * first run: a long wait for the lock is no check. */
                healthcheck_init(&hc, o->check, o->check_interval_ms,
                                 o->check_timeout_ms, o->check_interval_ms);
                s.check = &hc;
        }
        status = supervise_run(&s);
        if (status != SUPERVISE_LOST) {
                rv = n > 0 ? baton_multi_release(c, names, n,
                                                 BATON_OWNER_THREAD, token)
                           : baton_release(c, name, BATON_OWNER_THREAD, token);
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
static int cmd_detach(baton_client *c, const struct args *o, const char *name)
{
        uint8_t secret[BATON_SECRET_SIZE];
        uint64_t token, session;
        int rv;

        rv = take(c, o, name, BATON_OWNER_DETACHED, &token);
        if (rv != 0) {
                return failed(o, "acquire", rv);
        }
        rv = baton_client_detach(c, &session, secret);
        if (rv != 0) {
                /* The session ended under the grant: the lock is lost. */
                print_error(o->json, name, BATON_EEXPIRED);
                return EXIT_LOST;
        }
        print_grant(stdout, o->json, name, token, session, secret);
        return EXIT_OK;
}

/* Why a release through a session that is not live did nothing, in words
 * true to what the cluster can tell: a session that ended recently leaves a
 * tombstone saying how (expired or closed); one it knows nothing of never
 * existed or ended too long ago for it to remember. */
static void release_ended(const struct args *o, const char *name, int rv)
{
        if (o->json) {
                print_error(true, "release", rv);
        } else if (rv == BATON_ENOSESSION) {
                fprintf(stderr,
                        "batonctl: release: no session %" PRIu64
                        " on the cluster: it never existed, or it ended "
                        "before the last 4096 sessions that ended (which the "
                        "cluster remembers); %s is not held under it\n",
                        o->session, name);
        } else if (rv == BATON_ECLOSED) {
                fprintf(stderr,
                        "batonctl: release: session %" PRIu64
                        " already ended: it was closed, and %s was released "
                        "then\n",
                        o->session, name);
        } else {
                fprintf(stderr,
                        "batonctl: release: session %" PRIu64
                        " already ended: it expired (its lease ran out, or "
                        "an administrator ended it), and %s was released "
                        "then\n",
                        o->session, name);
        }
}

/* release NAME TOKEN --session S --secret HEX: release a detached grant. */
static int cmd_release(baton_client *c, const struct args *o, const char *name,
                       uint64_t token)
{
        int rv = baton_release_in(c, o->session, o->secret, name,
                                  BATON_OWNER_DETACHED, token);

        if (rv == BATON_EEXPIRED || rv == BATON_ENOSESSION ||
            rv == BATON_ECLOSED) {
                release_ended(o, name, rv);
                return EXIT_NO;
        }
        return rv == 0 ? EXIT_OK : failed(o, "release", rv);
}

/* set-value NAME TOKEN VALUE --session S --secret HEX: change a detached
 * grant's value. */
static int cmd_set_value(baton_client *c, const struct args *o)
{
        int rv = baton_set_value_in(c, o->session, o->secret, o->name,
                                    BATON_OWNER_DETACHED, o->token, o->value);

        if (rv != 0) {
                return failed(o, "set-value", rv);
        }
        print_value_set(stdout, o->json, o->name, o->token, o->value);
        return EXIT_OK;
}

/* acquire and try: hold the lock until a signal, watching the session. */
static int cmd_hold(baton_client *c, const struct args *o, const char *name)
{
        struct sigaction sa = {0};
        uint64_t token;
        int rv;

        rv = take(c, o, name, BATON_OWNER_THREAD, &token);
        if (rv != 0) {
                return failed(o, "acquire", rv);
        }
        print_grant(stdout, o->json, name, token, 0, NULL);
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

/* The grants of one lock that holder --all and revoke read: as many as
 * one reply carries; one command runs per process, so they share it. */
#define HOLDERS_MAX 1000
static struct baton_grant grants[HOLDERS_MAX];
/* The same with values, for holder. */
static struct baton_grant_value values[HOLDERS_MAX];

/* revoke NAME: end every session that holds NAME, each once, as an
 * expiry would (its other locks go too). */
static int cmd_revoke(baton_client *c, const struct args *o)
{
        size_t n = 0, i, j, done = 0;
        int rv = baton_holders(c, o->name, grants, HOLDERS_MAX, &n, NULL);

        if (rv != 0) {
                return failed(o, "revoke", rv);
        }
        for (i = 0; i < n; i++) {
                for (j = 0; j < i && (grants[j].session != grants[i].session ||
                                      grants[j].token != grants[i].token);
                     j++) {
                }
                if (j < i) {
                        continue; /* that grant again (an owner's two) */
                }
                /* By token: a retry never takes a later grant away. */
                rv = baton_revoke(c, o->name, grants[i].session,
                                  grants[i].token);
                if (rv != 0 && rv != BATON_ENOTHOLDER) {
                        return failed(o, "revoke", rv);
                }
                print_revoked(stdout, o->json, o->name, &grants[i]);
                done++;
        }
        if (done == 0) {
                print_error(o->json, o->name, BATON_ENOTFOUND);
                return EXIT_NO;
        }
        return EXIT_OK;
}

/* holder --all: every grant of the lock or semaphore, each with its
 * session's time left and its value. */
static int cmd_holders(baton_client *c, const struct args *o)
{
        struct baton_grant_value *g = values;
        static uint64_t ids[HOLDERS_MAX];
        static int64_t left[HOLDERS_MAX];
        size_t n = 0, i;
        int more = 0;
        int rv = baton_holders_values(c, o->name, g, HOLDERS_MAX, &n, &more);

        if (rv != 0) {
                return failed(o, "holder", rv);
        }
        for (i = 0; i < n; i++) {
                ids[i] = g[i].grant.session;
        }
        cli_sessions_left(c, ids, n, left);
        print_grants(stdout, o->json, o->name, g, left, n, more != 0);
        return EXIT_OK;
}

/* holder NAME: who holds it, with the session's time left and the
 * grant's value (read by a second query: "" if the grant ended between
 * the two). */
static int cmd_holder(baton_client *c, const struct args *o)
{
        struct baton_grant_value *g = values;
        struct baton_holder h;
        const char *value = "";
        int64_t left = -1;
        size_t n = 0, i;
        int rv;

        if (o->all) {
                return cmd_holders(c, o);
        }
        rv = baton_holder(c, o->name, &h);
        if (rv != 0) {
                return failed(o, "holder", rv);
        }
        if (h.held) {
                cli_sessions_left(c, &h.session, 1, &left);
                rv = baton_holders_values(c, o->name, g, HOLDERS_MAX, &n, NULL);
                for (i = 0; rv == 0 && i < n; i++) {
                        if (g[i].grant.session == h.session &&
                            g[i].grant.token == h.token) {
                                value = g[i].value;
                        }
                }
        }
        print_holder(stdout, o->json, o->name, &h, left, value);
        return EXIT_OK;
}

static int cmd_leader(baton_client *c, const struct args *o)
{
        struct baton_leader l;
        int rv = baton_leader(c, o->name, &l);

        if (rv != 0) {
                return failed(o, "leader", rv);
        }
        print_leader(stdout, o->json, o->name, &l);
        return EXIT_OK;
}

static int cmd_status(baton_client *c, const struct args *o)
{
        char list[1024];
        char *ep, *save = NULL;
        struct baton_status st;
        struct baton_node_version v;
        struct baton_node_alarms a;
        int shown = 0, worst = EXIT_OK;
        int rv;

        snprintf(list, sizeof list, "%s", o->endpoints);
        for (ep = strtok_r(list, ",", &save); ep != NULL;
             ep = strtok_r(NULL, ",", &save)) {
                const char *next = save != NULL ? save : "";
                rv = baton_status_alarms(c, ep, &st, &v, &a);
                if (rv != 0) {
                        memset(&st, 0, sizeof st);
                        snprintf(st.endpoint, sizeof st.endpoint, "%s", ep);
                        print_status_error(stdout, o->json, &st, rv, shown == 0,
                                           strchr(next, ':') == NULL);
                        worst = EXIT_ERROR;
                        shown++;
                        continue;
                }
                print_status(stdout, o->json, &st, &v, &a, shown == 0,
                             strchr(next, ':') == NULL);
                shown++;
        }
        return worst;
}

static int cmd_member(baton_client *c, const struct args *o)
{
        struct baton_status st;
        int rv;

        switch (o->command) {
        case ARGS_MEMBER_LIST:
                rv = baton_status(c, NULL, &st);
                if (rv != 0) {
                        return failed(o, "status", rv);
                }
                print_members(stdout, o->json, &st);
                return EXIT_OK;
        case ARGS_MEMBER_ADD:
                rv = baton_member_add(c, o->id, o->raft_address,
                                      o->client_address);
                if (rv == BATON_EINVAL) {
                        /* libbaton refuses a malformed address before it
                         * sends anything: the command line is wrong. */
                        print_error(o->json, "member add", rv);
                        return EXIT_USAGE;
                }
                if (rv != 0) {
                        return failed(o, "member add", rv);
                }
                print_member_added(stdout, o->json, o->id);
                return EXIT_OK;
        default:
                rv = baton_member_remove(c, o->id);
                if (rv != 0) {
                        return failed(o, "member remove", rv);
                }
                print_member_removed(stdout, o->json, o->id);
                return EXIT_OK;
        }
}

/* acl list | add | remove: one line on success (list: one a rule). */
static int cmd_acl(baton_client *c, const struct args *o)
{
        struct baton_acl acl;
        int rv;

        switch (o->command) {
        case ARGS_ACL_LIST:
                rv = baton_acl_list(c, &acl);
                if (rv != 0) {
                        return failed(o, "acl list", rv);
                }
                print_acl(stdout, o->json, &acl);
                baton_acl_free(&acl);
                return EXIT_OK;
        case ARGS_ACL_ADD:
                rv = baton_acl_set(c, o->identity, o->role);
                if (rv != 0) {
                        return failed(o, "acl add", rv);
                }
                print_acl_changed(stdout, o->json, o->identity, o->role);
                return EXIT_OK;
        default:
                rv = baton_acl_remove(c, o->identity);
                if (rv != 0) {
                        return failed(o, "acl remove", rv);
                }
                print_acl_changed(stdout, o->json, o->identity, -1);
                return EXIT_OK;
        }
}

/* rule list | add | remove: one line on success (list: one a rule). */
static int cmd_rule(baton_client *c, const struct args *o)
{
        struct baton_rules rules;
        int rv;

        switch (o->command) {
        case ARGS_RULE_LIST:
                rv = baton_rule_list(c, &rules);
                if (rv != 0) {
                        return failed(o, "rule list", rv);
                }
                print_rules(stdout, o->json, &rules);
                baton_rules_free(&rules);
                return EXIT_OK;
        case ARGS_RULE_ADD:
                rv = baton_rule_set(c, o->subject, o->rule_prefix, o->perms);
                if (rv != 0) {
                        return failed(o, "rule add", rv);
                }
                print_rule_changed(stdout, o->json, o->subject, o->rule_prefix,
                                   o->perms);
                return EXIT_OK;
        default:
                rv = baton_rule_remove(c, o->subject, o->rule_prefix);
                if (rv != 0) {
                        return failed(o, "rule remove", rv);
                }
                print_rule_changed(stdout, o->json, o->subject, o->rule_prefix,
                                   -1);
                return EXIT_OK;
        }
}

/* quota list | set | remove: one line on success (list: one a quota). */
static int cmd_quota(baton_client *c, const struct args *o)
{
        struct baton_quotas quotas;
        int rv;

        switch (o->command) {
        case ARGS_QUOTA_LIST:
                rv = baton_quota_list(c, &quotas);
                if (rv != 0) {
                        return failed(o, "quota list", rv);
                }
                print_quotas(stdout, o->json, &quotas);
                baton_quotas_free(&quotas);
                return EXIT_OK;
        case ARGS_QUOTA_SET:
                rv = baton_quota_set(c, o->subject, o->quota);
                if (rv != 0) {
                        return failed(o, "quota set", rv);
                }
                print_quota_changed(stdout, o->json, o->subject, o->quota);
                return EXIT_OK;
        default:
                rv = baton_quota_remove(c, o->subject);
                if (rv != 0) {
                        return failed(o, "quota remove", rv);
                }
                print_quota_changed(stdout, o->json, o->subject, NULL);
                return EXIT_OK;
        }
}

/* transfer ID: where leadership went; exit 1 when it is not where it was
 * asked to go (another member won, or none is known yet). */
static int cmd_transfer(baton_client *c, const struct args *o)
{
        uint64_t from = 0, to = 0;
        int rv = baton_transfer_to(c, o->id, &from, &to);

        if (rv != 0) {
                return failed(o, "transfer", rv);
        }
        print_transferred(stdout, o->json, o->id, from, to);
        return from != 0 && (to == 0 || (o->id != 0 && to != o->id)) ? EXIT_NO
                                                                     : EXIT_OK;
}

/* The most locks `list` shows: as many as one request returns. */
#define LIST_MAX 1000

/* list [PREFIX]: the held locks, with their values. A cluster of a
 * release before values refuses that listing (BATON_EMALFORMED): it gets
 * the plain one, each value "". */
static int cmd_list(baton_client *c, const struct args *o, const char *prefix)
{
        struct baton_lock_value *locks = calloc(LIST_MAX, sizeof *locks);
        struct baton_lock_info *plain = NULL;
        size_t n = 0;
        int more = 0, rv;

        if (locks == NULL) {
                return failed(o, "list", BATON_ENOMEM);
        }
        rv = baton_list_values(c, prefix, locks, LIST_MAX, &n, &more);
        if (rv == BATON_EMALFORMED) {
                plain = calloc(LIST_MAX, sizeof *plain);
                rv = plain == NULL
                         ? BATON_ENOMEM
                         : baton_list(c, prefix, plain, LIST_MAX, &n, &more);
                for (size_t i = 0; rv == 0 && i < n; i++) {
                        locks[i].lock = plain[i];
                }
                free(plain);
        }
        if (rv != 0) {
                free(locks);
                return failed(o, "list", rv);
        }
        print_list(stdout, o->json, locks, n, more != 0);
        free(locks);
        return EXIT_OK;
}

/* Runs the command of `o`. */
/* snapshot save FILE: an online backup from the leader. */
static int cmd_snapshot_save(baton_client *c, const struct args *o)
{
        struct baton_backup_info info;
        int rv = baton_backup_save(c, o->name, o->timeout_ms, &info);

        if (rv != 0) {
                return failed(o, "snapshot save", rv);
        }
        print_backup(stdout, o->json, o->name, &info);
        return EXIT_OK;
}

/* snapshot inspect FILE: offline, no cluster needed. */
static int cmd_snapshot_inspect(const struct args *o)
{
        struct baton_backup_info info;
        int rv = baton_backup_inspect(o->name, &info);

        if (rv != 0) {
                return failed(o, "snapshot inspect", rv); /* names the file */
        }
        print_backup(stdout, o->json, o->name, &info);
        return EXIT_OK;
}

static int cmd_console(baton_client *c, const struct args *o)
{
        struct console_settings s = {
            .listen = o->listen != NULL ? o->listen : CONSOLE_DEFAULT_LISTEN,
            .endpoints = o->endpoints,
            .files = console_files(),
        };

        return console_run(c, &s) == 0 ? EXIT_OK : EXIT_USAGE;
}

static int run(baton_client *c, const struct args *o)
{
        int rv;

        switch (o->command) {
        case ARGS_STATUS:
                return cmd_status(c, o);
        case ARGS_PING:
                return cli_ping(c, o);
        case ARGS_MEMBER_LIST:
        case ARGS_MEMBER_ADD:
        case ARGS_MEMBER_REMOVE:
                return cmd_member(c, o);
        case ARGS_LIST:
                return cmd_list(c, o, o->name);
        case ARGS_TRANSFER:
                return cmd_transfer(c, o);
        case ARGS_ACL_LIST:
        case ARGS_ACL_ADD:
        case ARGS_ACL_REMOVE:
                return cmd_acl(c, o);
        case ARGS_RULE_LIST:
        case ARGS_RULE_ADD:
        case ARGS_RULE_REMOVE:
                return cmd_rule(c, o);
        case ARGS_QUOTA_LIST:
        case ARGS_QUOTA_SET:
        case ARGS_QUOTA_REMOVE:
                return cmd_quota(c, o);
        case ARGS_SESSION_CLOSE:
                rv = baton_session_revoke(c, o->id);
                if (rv != 0) {
                        return failed(o, "session close", rv);
                }
                print_session_closed(stdout, o->json, o->id);
                return EXIT_OK;
        case ARGS_SESSION_LIST:
        case ARGS_SESSION_INFO:
                return cli_session(c, o);
        case ARGS_REVOKE:
                return cmd_revoke(c, o);
        case ARGS_HOLDER:
                return cmd_holder(c, o);
        case ARGS_SET_VALUE:
                return cmd_set_value(c, o);
        case ARGS_CHECK:
                rv = baton_check(c, o->name, o->token);
                if (rv != 0 && rv != BATON_ESTALE) {
                        return failed(o, "check", rv);
                }
                print_check(stdout, o->json, o->name, o->token, rv);
                return rv == 0 ? EXIT_OK : EXIT_NO;
        case ARGS_RELEASE:
                return cmd_release(c, o, o->name, o->token);
        case ARGS_LOCK:
        case ARGS_SEM:
        case ARGS_ELECT:
                return cmd_lock(c, o, o->name, o->argv);
        case ARGS_LEADER:
                return cmd_leader(c, o);
        case ARGS_WATCH:
                return cli_watch(c, o);
        case ARGS_OBSERVE:
                return cli_observe(c, o);
        case ARGS_SNAPSHOT_SAVE:
                return cmd_snapshot_save(c, o);
        case ARGS_CONSOLE:
                return cmd_console(c, o);
        default: /* acquire, try */
                return o->detach ? cmd_detach(c, o, o->name)
                                 : cmd_hold(c, o, o->name);
        }
}

int main(int argc, char **argv)
{
        struct args a;
        const char *source;
        baton_client *c = NULL;
        int status;

        signal(SIGPIPE, SIG_IGN);
        switch (args_parse(&a, argc, argv)) {
        case ARGS_HELP:
                if (a.command != ARGS_NONE) {
                        commands_help(stdout, commands_of(a.command));
                } else {
                        commands_usage(stdout);
                }
                return EXIT_OK;
        case ARGS_VERSION:
                printf("batonctl %s (libbaton %s)\n", PACKAGE_VERSION,
                       baton_version());
                return EXIT_OK;
        case ARGS_BAD:
                fprintf(stderr,
                        "batonctl: %s\nRun 'batonctl %s%s--help' for usage.\n",
                        a.errmsg,
                        a.command != ARGS_NONE ? commands_of(a.command)->name
                                               : "",
                        a.command != ARGS_NONE ? " " : "");
                return a.command == ARGS_LOCK || a.command == ARGS_SEM ||
                               a.command == ARGS_ELECT
                           ? SUPERVISE_FAILED
                           : EXIT_USAGE;
        }
        if (a.command == ARGS_SNAPSHOT_INSPECT) {
                return cmd_snapshot_inspect(&a);
        }
        a.endpoints = endpoints(&a, &source); /* from here on, never NULL */
        status = open_client(&a, source, &c);
        if (status != 0) {
                return status;
        }
        status = run(c, &a);
        baton_client_destroy(c);
        return status;
}
