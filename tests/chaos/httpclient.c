/*
 * The libbaton calls a chaos worker makes, served over the HTTP API
 * (docs/http.md) instead of the binary protocol: linked in place of
 * libbaton, it makes chaos-httpworker, the worker of the http-counter
 * workload, whose history the same checkers read. What an HTTP client
 * must do to keep libbaton's promises is here, as a user of the API in
 * another language would write it:
 *
 *   - a session opened with POST /v1/session, kept alive every TTL/3 by a
 *     thread of its own with its own connection; the local lease runs
 *     from the send of the last acknowledged keepalive, as libbaton's;
 *   - every write carries an Idempotency-Key (its seq in the session), so
 *     that it can be sent again, to another node, when its answer is
 *     lost; a redirect (307) is followed, a 503 or a dropped connection
 *     tries the next endpoint, until the call's deadline;
 *   - an answer that never came within the deadline is BATON_ENOANSWER
 *     (the outcome is unknown), one whose request was never written is
 *     BATON_ECONNECT (surely not applied), as libbaton reports them.
 *
 * The requests themselves are src/bench/httpc.c's and hsession.c's,
 * which baton-bench's --http workloads use too. Only the calls of the
 * counter workload are served: baton_acquire(), baton_release() and the
 * session's; the others answer BATON_EUNSUPPORTED (scripts/chaos runs
 * only http-counter with this).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../src/bench/hsession.h"

struct baton_client {
        struct httpc_cluster cl;
        struct hsession s;
        struct httpc_conn calls; /* the worker's thread's */
        struct httpc_conn ka;    /* the keepalive thread's */
        pthread_t ka_thread;
        bool ka_running;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool stopping;
        int64_t lease_until_ms; /* local lease: last acked send + TTL */
        bool expired;           /* the cluster said so */
};

static void *keepalive_main(void *arg)
{
        struct baton_client *c = arg;
        struct timespec ts;
        int64_t sent;
        int rv;

        pthread_mutex_lock(&c->mu);
        while (!c->stopping && !c->expired) {
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += (long)(c->s.ttl_ms / 3) * 1000000L;
                ts.tv_sec += ts.tv_nsec / 1000000000L;
                ts.tv_nsec %= 1000000000L;
                pthread_cond_timedwait(&c->cv, &c->mu, &ts);
                if (c->stopping) {
                        break;
                }
                pthread_mutex_unlock(&c->mu);
                sent = httpc_now_ms();
                rv = hsession_keepalive(&c->s, &c->ka);
                pthread_mutex_lock(&c->mu);
                if (rv == 0 && sent + c->s.ttl_ms > c->lease_until_ms) {
                        c->lease_until_ms = sent + c->s.ttl_ms;
                } else if (rv == BATON_EEXPIRED || rv == BATON_ECLOSED ||
                           rv == BATON_ENOSESSION) {
                        c->expired = true;
                }
        }
        pthread_mutex_unlock(&c->mu);
        return NULL;
}

void baton_options_init(struct baton_options *o)
{
        memset(o, 0, sizeof *o);
        o->ttl_ms = 10000;
        o->request_timeout_ms = 5000;
}

int baton_client_create(baton_client **out, const char *endpoints,
                        const struct baton_options *opts)
{
        struct baton_client *c = calloc(1, sizeof *c);
        char why[256];
        int rv;

        if (c == NULL) {
                return BATON_ENOMEM;
        }
        rv = httpc_cluster_init(&c->cl, endpoints, why, sizeof why);
        if (rv != 0) {
                fprintf(stderr, "chaos-httpworker: %s\n", why);
                free(c);
                return rv;
        }
        httpc_conn_init(&c->calls);
        httpc_conn_init(&c->ka);
        pthread_mutex_init(&c->mu, NULL);
        pthread_cond_init(&c->cv, NULL);
        c->lease_until_ms = httpc_now_ms() + opts->ttl_ms;
        rv = hsession_open(&c->s, &c->cl, &c->calls, opts->ttl_ms,
                           opts->request_timeout_ms,
                           opts->client_name != NULL ? opts->client_name : "");
        if (rv != 0) {
                baton_client_destroy(c);
                return rv;
        }
        c->ka_running =
            pthread_create(&c->ka_thread, NULL, keepalive_main, c) == 0;
        *out = c;
        return 0;
}

void baton_client_destroy(baton_client *c)
{
        if (c == NULL) {
                return;
        }
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (c->ka_running) {
                pthread_join(c->ka_thread, NULL);
        }
        if (!c->expired) {
                hsession_close(&c->s, &c->calls);
        }
        httpc_conn_close(&c->calls);
        httpc_conn_close(&c->ka);
        httpc_cluster_close(&c->cl);
        pthread_mutex_destroy(&c->mu);
        pthread_cond_destroy(&c->cv);
        free(c);
}

uint64_t baton_session_id(baton_client *c)
{
        return c->s.id;
}

int baton_session_state(baton_client *c)
{
        int64_t now = httpc_now_ms();
        int s;

        pthread_mutex_lock(&c->mu);
        s = c->expired || now >= c->lease_until_ms ? BATON_SESSION_EXPIRED
            : now >= c->lease_until_ms - c->s.ttl_ms / 2
                ? BATON_SESSION_JEOPARDY
                : BATON_SESSION_LIVE;
        pthread_mutex_unlock(&c->mu);
        return s;
}

int64_t baton_session_remaining_ms(baton_client *c)
{
        int64_t left;

        pthread_mutex_lock(&c->mu);
        left = c->expired ? 0 : c->lease_until_ms - httpc_now_ms();
        pthread_mutex_unlock(&c->mu);
        return left > 0 ? left : 0;
}

/* libbaton's owner tag for BATON_OWNER_THREAD: the thread id, top bit
 * set (src/client/client.c). */
static uint64_t owner_tag(uint64_t owner)
{
        return owner != BATON_OWNER_THREAD
                   ? owner
                   : (uint64_t)syscall(SYS_gettid) | (UINT64_C(1) << 63);
}

int baton_acquire(baton_client *c, const char *name, uint64_t owner,
                  int64_t wait_ms, uint64_t *token)
{
        if (baton_session_state(c) == BATON_SESSION_EXPIRED) {
                return BATON_EEXPIRED;
        }
        return hsession_acquire(&c->s, &c->calls, name, owner_tag(owner),
                                wait_ms, token);
}

int baton_release(baton_client *c, const char *name, uint64_t owner,
                  uint64_t token)
{
        return hsession_release(&c->s, &c->calls, name, owner_tag(owner),
                                token);
}

/* The calls of the other workloads: not served over HTTP by this worker. */
int baton_acquire_shared(baton_client *c, const char *name, uint64_t owner,
                         int64_t wait_ms, uint64_t *token)
{
        (void)c, (void)name, (void)owner, (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_sem_acquire(baton_client *c, const char *name, uint32_t limit,
                      uint32_t permits, uint64_t owner, int64_t wait_ms,
                      uint64_t *token)
{
        (void)c, (void)name, (void)limit, (void)permits, (void)owner;
        (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_multi_acquire(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, int64_t wait_ms,
                        uint64_t *token)
{
        (void)c, (void)names, (void)n, (void)owner, (void)wait_ms, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_multi_release(baton_client *c, const struct baton_lock_name *names,
                        size_t n, uint64_t owner, uint64_t token)
{
        (void)c, (void)names, (void)n, (void)owner, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_campaign(baton_client *c, const char *name, const char *value,
                   uint64_t owner, int64_t wait_ms, uint64_t *token)
{
        (void)c, (void)name, (void)value, (void)owner, (void)wait_ms;
        (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_proclaim(baton_client *c, const char *name, uint64_t owner,
                   uint64_t token, const char *value)
{
        (void)c, (void)name, (void)owner, (void)token, (void)value;
        return BATON_EUNSUPPORTED;
}

int baton_acquire_with(baton_client *c, const char *name, uint64_t owner,
                       int64_t wait_ms,
                       const struct baton_acquire_options *opts,
                       uint64_t *token)
{
        (void)c, (void)name, (void)owner, (void)wait_ms, (void)opts;
        (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_extend(baton_client *c, const char *name, uint64_t owner,
                 uint64_t token, uint32_t hold_ms)
{
        (void)c, (void)name, (void)owner, (void)token, (void)hold_ms;
        return BATON_EUNSUPPORTED;
}

int baton_resign(baton_client *c, const char *name, uint64_t owner,
                 uint64_t token)
{
        (void)c, (void)name, (void)owner, (void)token;
        return BATON_EUNSUPPORTED;
}

int baton_holder(baton_client *c, const char *name, struct baton_holder *out)
{
        (void)c, (void)name;
        memset(out, 0, sizeof *out);
        return BATON_EUNSUPPORTED;
}

int baton_watch_open(baton_client *c, const char *name, int flags,
                     uint64_t from_index, uint32_t from_ord, baton_watch **w)
{
        (void)c, (void)name, (void)flags, (void)from_index, (void)from_ord;
        *w = NULL;
        return BATON_EUNSUPPORTED;
}

int baton_watch_next(baton_watch *w, struct baton_event *ev, int64_t wait_ms)
{
        (void)w, (void)ev, (void)wait_ms;
        return BATON_EUNSUPPORTED;
}

void baton_watch_close(baton_watch *w)
{
        (void)w;
}
