/* libbaton's handle and its public calls (include/baton.h). */
#include "client.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/permname.h"
#include "../lib/quotaname.h"
#include "../proto/proto.h"
#include "../proto/reply.h"
#include "../proto/list.h"
#include "await.h"
#include "effects.h"
#include "clock.h"
#include "errmsg.h"
#include "health.h"
#include "outcome.h"
#include "request.h"
#include "resolve.h"

#define DEFAULT_TTL_MS     10000
#define DEFAULT_TIMEOUT_MS 5000

/* Owner tags of BATON_OWNER_THREAD: the thread id with the top bit set, so
 * that they stay apart from small tags chosen by users. */
#define THREAD_OWNER_BIT (UINT64_C(1) << 63)

/* --- Waiting -------------------------------------------------------------- */

void client_lock(struct baton_client *c)
{
        pthread_mutex_lock(&c->mu);
}

void client_effects(struct baton_client *c)
{
        effects_apply(&c->core.registry, &c->io, &c->cv);
}

void client_unlock(struct baton_client *c)
{
        client_effects(c);
        pthread_mutex_unlock(&c->mu);
}

int client_roundtrip(struct baton_client *c, struct request *r,
                     int64_t deadline)
{
        int rv;

        registry_submit(&c->core.registry, r, clock_now_ms());
        rv = await_request(c, r, deadline);
        if (rv != 0) {
                registry_abandon(&c->core.registry, r, clock_now_ms());
        }
        return rv;
}

/* Submit a command and wait for its final answer: its status with `*res`
 * filled, or BATON_ENOANSWER (it then goes on in the background), or
 * BATON_ECONNECT / BATON_ETLS when it never went out and no node can be
 * reached (it is dropped). */
int client_run(struct baton_client *c, struct command *k, int64_t deadline,
               struct proto_result *res)
{
        struct request *r;
        int rv = await_submit(c, k, deadline, &r);

        if (rv != 0) {
                return rv;
        }
        rv = await_request(c, r, deadline);
        if (rv != 0) {
                registry_abandon(&c->core.registry, r, clock_now_ms());
                return rv;
        }
        rv = client_status(r);
        *res = r->res;
        registry_drop(&c->core.registry, r);
        return rv;
}

int client_status(const struct request *r)
{
        char why[ERRMSG_MAX];

        if (r->status == BATON_EQUOTA) {
                quotaname_refused(why, sizeof why, r->res.waiters,
                                  r->res.count);
                return errmsg_set(BATON_EQUOTA, "%s", why);
        }
        if (r->status == BATON_EPERM && r->res.count != 0) {
                permname_refused(why, sizeof why, (int)r->res.count,
                                 r->cmd == COMMAND_MULTI ? NULL : r->name,
                                 r->name_len,
                                 r->type == PROTO_LIST || r->watch_prefix);
                return errmsg_set(BATON_EPERM, "%s", why);
        }
        return r->status;
}

/* What the user sees of an ended session. */
int client_user_status(int status)
{
        return status == BATON_ENOSESSION ? BATON_EEXPIRED : status;
}

/* --- Options, create, destroy --------------------------------------------- */

void baton_options_init(struct baton_options *o)
{
        memset(o, 0, sizeof *o);
        o->ttl_ms = DEFAULT_TTL_MS;
        o->request_timeout_ms = DEFAULT_TIMEOUT_MS;
}

static int parse_endpoints(struct baton_client *c, const char *list)
{
        const char *p = list;

        c->n_endpoints = 0;
        for (;;) {
                size_t n = strcspn(p, ",");
                char *e;
                if (c->n_endpoints == CLIENT_MAX_ENDPOINTS) {
                        return errmsg_set(BATON_EINVAL,
                                          "bad endpoints \"%s\": more than "
                                          "%d",
                                          list, CLIENT_MAX_ENDPOINTS);
                }
                if (n == 0 || n >= LINK_ADDR_MAX) {
                        return errmsg_set(
                            BATON_EINVAL, "bad endpoints \"%s\": %s", list,
                            n == 0 ? "an empty one" : "one over 64 bytes");
                }
                e = c->endpoints[c->n_endpoints];
                memcpy(e, p, n);
                e[n] = '\0';
                if (resolve_check(e) != 0) {
                        return errmsg_set(BATON_EINVAL,
                                          "bad endpoint \"%s\": want "
                                          "host:port or [ipv6]:port",
                                          e);
                }
                c->n_endpoints++;
                if (p[n] == '\0') {
                        return 0;
                }
                p += n + 1;
        }
}

static void default_name(char *buf, size_t cap)
{
        char host[64];

        if (gethostname(host, sizeof host) != 0) {
                snprintf(host, sizeof host, "unknown");
        }
        host[sizeof host - 1] = '\0';
        snprintf(buf, cap, "%.40s:%ld", host, (long)getpid());
}

/* Copy `opts` (NULL: the defaults) into the handle, with the client name
 * in the handle's own buffer. 0 or BATON_EINVAL. */
static int take_options(struct baton_client *c,
                        const struct baton_options *opts)
{
        if (opts != NULL) {
                c->opts = *opts;
        } else {
                baton_options_init(&c->opts);
        }
        if (c->opts.ttl_ms == 0) {
                return errmsg_set(BATON_EINVAL, "ttl_ms 0: a session needs "
                                                "a TTL");
        }
        if (c->opts.request_timeout_ms == 0 ||
            c->opts.request_timeout_ms > INT32_MAX) {
                return errmsg_set(BATON_EINVAL,
                                  "request_timeout_ms %u out of range: "
                                  "1..%d",
                                  (unsigned)c->opts.request_timeout_ms,
                                  INT32_MAX);
        }
        if (c->opts.client_name != NULL &&
            strlen(c->opts.client_name) > COMMAND_CLIENT_NAME_MAX) {
                return errmsg_set(BATON_EINVAL, "client_name over %d bytes",
                                  COMMAND_CLIENT_NAME_MAX);
        }
        if (c->opts.client_name != NULL) {
                snprintf(c->client_name, sizeof c->client_name, "%s",
                         c->opts.client_name);
        } else {
                default_name(c->client_name, sizeof c->client_name);
        }
        c->opts.client_name = c->client_name;
        return 0;
}

static bool unset(const char *s)
{
        return s == NULL || s[0] == '\0';
}

/* The TLS settings: the options', else the environment's; neither gives
 * plain connections. */
static int load_tls(struct baton_client *c)
{
        const char *ca = c->opts.tls_ca;
        const char *cert = c->opts.tls_cert;
        const char *key = c->opts.tls_key;
        char err[TLS_ERRMSG_MAX];
        struct tls_files f;
        int rv;

        if (unset(ca) && unset(cert) && unset(key)) {
                ca = getenv("BATON_CACERT");
                cert = getenv("BATON_CERT");
                key = getenv("BATON_KEY");
        }
        if (unset(ca) && unset(cert) && unset(key)) {
                return 0;
        }
        if (unset(ca) || unset(cert) || unset(key)) {
                return errmsg_set(BATON_EINVAL,
                                  "TLS needs the CA, the certificate and its "
                                  "key; the %s is missing",
                                  unset(ca)     ? "CA"
                                  : unset(cert) ? "certificate"
                                                : "key");
        }
        f.ca = ca;
        f.cert = cert;
        f.key = key;
        f.crl = NULL;
        rv = tls_ctx_create(&c->tls, TLS_CLIENT, &f, err, sizeof err);
        return rv == BATON_ETLS ? errmsg_set(rv, "TLS files: %s", err) : rv;
}

/* The cluster of a handle given no endpoints: BATON_ENDPOINTS unless it is
 * unset or empty, as batonctl and baton-bench take it, else the local
 * cluster of scripts/cluster. */
static const char *default_endpoints(void)
{
        const char *env = getenv("BATON_ENDPOINTS");

        return unset(env) ? BATON_DEFAULT_ENDPOINTS : env;
}

/* The options, the endpoints and the TLS files: everything a handle is
 * told, checked before anything starts. */
static int take_settings(struct baton_client *c, const char *endpoints,
                         const struct baton_options *opts)
{
        int rv = take_options(c, opts);

        if (rv != 0) {
                return rv;
        }
        rv = parse_endpoints(c, endpoints != NULL ? endpoints
                                                  : default_endpoints());
        if (rv != 0) {
                return rv;
        }
        return load_tls(c);
}

/* One function from the options to the running thread, so that every
 * failure unwinds through one chain of labels. */
int baton_client_create(baton_client **out, const char *endpoints,
                        const struct baton_options *opts)
{
        struct baton_client *c;
        pthread_condattr_t ca;
        int rv;

        if (out == NULL) {
                return BATON_EINVAL;
        }
        *out = NULL;
        c = calloc(1, sizeof *c);
        if (c == NULL) {
                return BATON_ENOMEM;
        }
        rv = take_settings(c, endpoints, opts);
        if (rv != 0) {
                goto err_after_alloc;
        }
        rv = core_init(&c->core,
                       &(struct core_config){c->opts.ttl_ms,
                                             c->opts.lock_delay_ms,
                                             c->client_name, c->endpoints,
                                             c->n_endpoints, watch_on_event},
                       clock_env());
        if (rv != 0) {
                goto err_after_tls;
        }
        rv = linkio_init(&c->io, &c->core.link, c->tls);
        if (rv != 0) {
                goto err_after_core;
        }
        if (pthread_mutex_init(&c->mu, NULL) != 0) {
                rv = BATON_ENOMEM;
                goto err_after_io;
        }
        if (pthread_condattr_init(&ca) != 0) {
                rv = BATON_ENOMEM;
                goto err_after_mutex;
        }
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        rv = pthread_cond_init(&c->cv, &ca);
        pthread_condattr_destroy(&ca);
        if (rv != 0) {
                rv = BATON_ENOMEM;
                goto err_after_mutex;
        }
        c->loop.mu = &c->mu;
        c->loop.cv = &c->cv;
        c->loop.handle = c;
        c->loop.opts = &c->opts;
        c->loop.core = &c->core;
        c->loop.io = &c->io;
        rv = loop_start(&c->loop);
        if (rv != 0) {
                goto err_after_cond;
        }
        *out = c;
        return 0;

err_after_cond:
        pthread_cond_destroy(&c->cv);
err_after_mutex:
        pthread_mutex_destroy(&c->mu);
err_after_io:
        linkio_close(&c->io);
err_after_core:
        core_close(&c->core);
err_after_tls:
        tls_ctx_destroy(c->tls);
err_after_alloc:
        free(c);
        return rv;
}

void baton_client_destroy(baton_client *c)
{
        struct proto_result res;
        struct command k;

        if (c == NULL) {
                return;
        }
        health_stop(c);
        client_lock(c);
        c->core.notify.muted = true;
        notify_close(&c->core.notify);
        session_tick(&c->core.session, clock_now_ms());
        if (session_usable(&c->core.session)) {
                memset(&k, 0, sizeof k);
                k.type = COMMAND_CLOSE;
                (void)client_run(
                    c, &k,
                    clock_after(clock_now_ms(), c->opts.request_timeout_ms),
                    &res);
        }
        loop_stop(&c->loop);
        client_unlock(c);
        loop_join(&c->loop);
        linkio_close(&c->io);
        core_close(&c->core);
        tls_ctx_destroy(c->tls);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
}

/* --- Locks ---------------------------------------------------------------- */

uint64_t client_owner(uint64_t owner)
{
        return owner != BATON_OWNER_THREAD
                   ? owner
                   : THREAD_OWNER_BIT | (uint64_t)(uint32_t)gettid();
}

/* 1..255 bytes (a C string has no NUL inside). */
int client_check_name(const char *name, uint8_t *len)
{
        size_t n;

        if (name == NULL) {
                return BATON_ENAME;
        }
        n = strnlen(name, COMMAND_NAME_MAX + 1);
        if (n == 0 || n > COMMAND_NAME_MAX) {
                return BATON_ENAME;
        }
        *len = (uint8_t)n;
        return 0;
}

/* The handle and the lock name of a call: 0, BATON_EINVAL or BATON_ENAME. */
static int check_call(const baton_client *c, const char *name, uint8_t *len)
{
        return c == NULL ? BATON_EINVAL : client_check_name(name, len);
}

int client_holding_session(struct baton_client *c)
{
        if (session_usable(&c->core.session)) {
                return 0;
        }
        return c->core.session.state == BATON_SESSION_EXPIRED
                   ? BATON_EEXPIRED
                   : BATON_ENOTHOLDER;
}

/* A command of `type` on `name` for `owner`, its other fields zero. */
void client_command(struct command *k, uint8_t type, const char *name,
                    uint8_t len, uint64_t owner)
{
        memset(k, 0, sizeof *k);
        k->type = type;
        k->owner = owner;
        k->name = name;
        k->name_len = len;
}

/* QUERY `name`: the RESULT's status with `*res` filled, and the holder's
 * client name copied into `holder` (NULL: not wanted; res->client_name is
 * then not to be read). */
int client_query(struct baton_client *c, const char *name, uint8_t len,
                 int64_t deadline, struct proto_result *res,
                 char holder[PROTO_CLIENT_NAME_MAX + 1])
{
        struct request *r = request_read(PROTO_QUERY, name, len, 0);
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        rv = client_roundtrip(c, r, deadline);
        if (rv != 0) {
                return rv;
        }
        rv = client_status(r);
        *res = r->res;
        if (holder != NULL) {
                memcpy(holder, r->client_name, sizeof r->client_name);
        }
        res->client_name.p = NULL; /* it went with r */
        res->client_name.len = 0;
        registry_drop(&c->core.registry, r);
        return rv;
}

int baton_release(baton_client *c, const char *name, uint64_t owner,
                  uint64_t token)
{
        struct proto_result res;
        struct command k;
        uint8_t len;
        int rv;

        rv = check_call(c, name, &len);
        if (rv != 0) {
                return rv;
        }
        owner = client_owner(owner);
        client_lock(c);
        session_tick(&c->core.session, clock_now_ms());
        /* A hold of an ended session stays lost: never release it through
         * another session, never open one for this. */
        if (locks_take_lost(&c->core.locks, name, len, owner, token) &&
            locks_count(&c->core.locks, c->core.session.id, name, len, owner,
                        LOCKS_ANY_MODE) == 0) {
                client_unlock(c);
                return BATON_EEXPIRED;
        }
        rv = client_holding_session(c);
        if (rv != 0) {
                client_unlock(c);
                return rv;
        }
        client_command(&k, COMMAND_RELEASE, name, len, owner);
        k.token = token;
        rv = client_run(c, &k,
                        clock_after(clock_now_ms(), c->opts.request_timeout_ms),
                        &res);
        client_unlock(c);
        return client_user_status(rv);
}

int baton_client_detach(baton_client *c, uint64_t *session,
                        uint8_t secret[BATON_SECRET_SIZE])
{
        uint64_t id;
        int64_t now;

        if (session != NULL) {
                *session = 0;
        }
        if (secret != NULL) {
                memset(secret, 0, BATON_SECRET_SIZE);
        }
        if (c == NULL) {
                return BATON_EINVAL;
        }
        client_lock(c);
        now = clock_now_ms();
        session_tick(&c->core.session, now);
        id = session_detach(&c->core.session, secret, now);
        client_unlock(c);
        if (id == 0) {
                return BATON_ENOSESSION;
        }
        if (session != NULL) {
                *session = id;
        }
        return 0;
}

/* Run the command `k` (its session and secret given: ANOTHER session's,
 * baton_release_in()) with a seq above every one that session used. */
static int foreign_command(baton_client *c, const uint8_t *secret,
                           struct command *k)
{
        struct request *r;
        int rv;

        k->seq = clock_unique_ns();
        k->ack = k->seq; /* forget the session's older outcomes */
        client_lock(c);
        r = request_command(k, &rv);
        if (r == NULL) {
                client_unlock(c);
                return rv;
        }
        /* Not a command of the handle's session: it neither pins the
         * handle's ack nor touches its lock table. */
        r->kind = REQUEST_FOREIGN;
        /* Its connections attach to the session first (registry.h). */
        registry_own(&c->core.registry, k->session, secret);
        registry_submit(&c->core.registry, r, clock_now_ms());
        rv = await_request(
            c, r, clock_after(clock_now_ms(), c->opts.request_timeout_ms));
        if (rv != 0) {
                registry_abandon(&c->core.registry, r, clock_now_ms());
                client_unlock(c);
                return rv;
        }
        rv = client_status(r);
        registry_drop(&c->core.registry, r);
        if (k->session != c->core.session.id) {
                registry_disown(&c->core.registry, k->session);
        }
        client_unlock(c);
        return rv;
}

/* The command `type` of `owner`'s grant `token` of `name` in ANOTHER
 * session, its arguments checked. */
static int foreign_grant(baton_client *c, uint8_t type, uint64_t session,
                         const uint8_t *secret, const char *name,
                         uint64_t owner, uint64_t token, const char *value)
{
        size_t value_len = value != NULL ? strlen(value) : 0;
        struct command k;
        uint8_t len;
        int rv;

        if (c == NULL || session == 0 || owner == BATON_OWNER_THREAD ||
            secret == NULL || value_len > BATON_VALUE_MAX) {
                return BATON_EINVAL;
        }
        rv = client_check_name(name, &len);
        if (rv != 0) {
                return rv;
        }
        memset(&k, 0, sizeof k);
        k.type = type;
        k.session = session;
        k.owner = owner;
        k.token = token;
        k.name = name;
        k.name_len = len;
        k.value = value;
        k.value_len = (uint8_t)value_len;
        return foreign_command(c, secret, &k);
}

int baton_release_in(baton_client *c, uint64_t session,
                     const uint8_t secret[BATON_SECRET_SIZE], const char *name,
                     uint64_t owner, uint64_t token)
{
        return foreign_grant(c, COMMAND_RELEASE, session, secret, name, owner,
                             token, NULL);
}

int baton_set_value_in(baton_client *c, uint64_t session,
                       const uint8_t secret[BATON_SECRET_SIZE],
                       const char *name, uint64_t owner, uint64_t token,
                       const char *value)
{
        return foreign_grant(c, COMMAND_SET_VALUE, session, secret, name, owner,
                             token, value);
}

int baton_holder(baton_client *c, const char *name, struct baton_holder *out)
{
        char holder[PROTO_CLIENT_NAME_MAX + 1];
        struct proto_result res;
        uint8_t len;
        int rv;

        if (c == NULL || out == NULL) {
                return BATON_EINVAL;
        }
        memset(out, 0, sizeof *out);
        rv = client_check_name(name, &len);
        if (rv != 0) {
                return rv;
        }
        client_lock(c);
        rv = client_query(
            c, name, len,
            clock_after(clock_now_ms(), c->opts.request_timeout_ms), &res,
            holder);
        client_unlock(c);
        if (rv != 0) {
                return rv;
        }
        out->index = res.index;
        out->waiters = res.waiters;
        if (res.kind == PROTO_KIND_HOLDER) {
                out->held = 1;
                out->session = res.session;
                out->owner = res.owner;
                out->token = res.token;
                out->count = res.count;
                out->waiters = res.waiters;
                memcpy(out->client_name, holder, sizeof out->client_name);
        }
        return 0;
}

/* baton_list(), into `locks` or, with each lock's value, into `values`
 * (the other NULL). */
static int list(baton_client *c, const char *prefix,
                struct baton_lock_info *locks, struct baton_lock_value *values,
                size_t cap, size_t *n, int *more)
{
        struct request *r;
        size_t len = 0;
        uint32_t limit, i;
        int rv;

        if (n != NULL) {
                *n = 0;
        }
        if (more != NULL) {
                *more = 0;
        }
        if (c == NULL || (locks == NULL && values == NULL) || cap == 0 ||
            n == NULL) {
                return BATON_EINVAL;
        }
        if (prefix != NULL) {
                len = strnlen(prefix, COMMAND_NAME_MAX + 1);
                if (len > COMMAND_NAME_MAX) {
                        return BATON_ENAME;
                }
        }
        limit = cap < PROTO_LIST_MAX ? (uint32_t)cap : PROTO_LIST_MAX;
        client_lock(c);
        r = request_list(prefix, (uint8_t)len, limit, values != NULL);
        if (r == NULL) {
                client_unlock(c);
                return BATON_ENOMEM;
        }
        rv = client_roundtrip(
            c, r, clock_after(clock_now_ms(), c->opts.request_timeout_ms));
        if (rv == 0) {
                rv = client_status(r);
                for (i = 0; rv == 0 && i < r->list_n; i++) {
                        if (locks != NULL) {
                                locks[i] = r->list[i];
                                continue;
                        }
                        values[i].lock = r->list[i];
                        memcpy(values[i].value, r->values[i],
                               sizeof values[i].value);
                }
                if (rv == 0) {
                        *n = r->list_n;
                        if (more != NULL) {
                                *more = r->list_more ? 1 : 0;
                        }
                }
                registry_drop(&c->core.registry, r);
        }
        client_unlock(c);
        return client_user_status(rv);
}

int baton_list(baton_client *c, const char *prefix, struct baton_lock_info *out,
               size_t cap, size_t *n, int *more)
{
        return list(c, prefix, out, NULL, cap, n, more);
}

int baton_list_values(baton_client *c, const char *prefix,
                      struct baton_lock_value *out, size_t cap, size_t *n,
                      int *more)
{
        return list(c, prefix, NULL, out, cap, n, more);
}

/* baton_holders(), into `grants` or, with each grant's value, into
 * `values` (the other NULL). */
static int holders(baton_client *c, const char *name,
                   struct baton_grant *grants, struct baton_grant_value *values,
                   size_t cap, size_t *n, int *more)
{
        struct request *r;
        uint8_t len;
        int rv;

        if (n != NULL) {
                *n = 0;
        }
        if (more != NULL) {
                *more = 0;
        }
        if ((grants == NULL && values == NULL) || cap == 0 || n == NULL) {
                return BATON_EINVAL;
        }
        rv = check_call(c, name, &len);
        if (rv != 0) {
                return rv;
        }
        /* The server sends up to PROTO_LIST_MAX of them, whatever `cap`. */
        client_lock(c);
        r = request_holders(name, len, PROTO_LIST_MAX, values != NULL);
        rv = r == NULL
                 ? BATON_ENOMEM
                 : client_roundtrip(
                       c, r,
                       clock_after(clock_now_ms(), c->opts.request_timeout_ms));
        if (r != NULL && rv == 0) {
                rv = client_status(r);
                if (rv == 0) {
                        *n = r->list_n < cap ? r->list_n : cap;
                        for (size_t i = 0; i < *n; i++) {
                                if (grants != NULL) {
                                        grants[i] = r->grants[i];
                                        continue;
                                }
                                values[i].grant = r->grants[i];
                                memcpy(values[i].value, r->values[i],
                                       sizeof values[i].value);
                        }
                        if (more != NULL) {
                                *more = r->list_more || r->list_n > cap;
                        }
                }
                registry_drop(&c->core.registry, r);
        }
        client_unlock(c);
        return client_user_status(rv);
}

int baton_holders(baton_client *c, const char *name, struct baton_grant *out,
                  size_t cap, size_t *n, int *more)
{
        return holders(c, name, out, NULL, cap, n, more);
}

int baton_holders_values(baton_client *c, const char *name,
                         struct baton_grant_value *out, size_t cap, size_t *n,
                         int *more)
{
        return holders(c, name, NULL, out, cap, n, more);
}

int client_ask(baton_client *c, struct request *r)
{
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        client_lock(c);
        rv = client_roundtrip(
            c, r, clock_after(clock_now_ms(), c->opts.request_timeout_ms));
        if (rv == 0) {
                rv = client_status(r);
                registry_drop(&c->core.registry, r);
        }
        client_unlock(c);
        return rv;
}

int baton_check(baton_client *c, const char *name, uint64_t token)
{
        uint8_t len;
        int rv;

        rv = check_call(c, name, &len);
        if (rv != 0) {
                return rv;
        }
        return client_ask(c, request_read(PROTO_CHECK, name, len, token));
}

/* --- Session -------------------------------------------------------------- */

int baton_session_state(baton_client *c)
{
        int state;

        if (c == NULL) {
                return BATON_SESSION_NONE;
        }
        client_lock(c);
        session_tick(&c->core.session, clock_now_ms());
        state = c->core.session.state;
        client_unlock(c);
        return state;
}

int64_t baton_session_remaining_ms(baton_client *c)
{
        int64_t left;

        if (c == NULL) {
                return 0;
        }
        client_lock(c);
        session_tick(&c->core.session, clock_now_ms());
        left = session_remaining(&c->core.session, clock_now_ms());
        client_unlock(c);
        return left;
}

uint64_t baton_session_id(baton_client *c)
{
        uint64_t id;

        if (c == NULL) {
                return 0;
        }
        client_lock(c);
        id = c->core.session.last_id;
        client_unlock(c);
        return id;
}
