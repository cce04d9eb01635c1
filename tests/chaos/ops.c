/* A chaos worker's operations and their history lines. */
#include "ops.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history_out.h"

#define NS_PER_MS UINT64_C(1000000)

/* A blocking acquire that returns BATON_ETIMEDOUT this much before
 * libbaton's own deadline (wait + request timeout) was answered by the
 * cluster; libbaton's deadline has millisecond granularity. */
#define DECIDED_MARGIN_MS 5

static uint64_t process_id(const struct ops_worker *w)
{
        return (uint64_t)w->id * 1000 + w->incarnation;
}

static void sleep_ms(int64_t ms)
{
        struct timespec ts = {.tv_sec = ms / 1000,
                              .tv_nsec = (ms % 1000) * 1000000};

        nanosleep(&ts, NULL);
}

static void start(struct ops_worker *w, struct history_line *l, uint64_t t,
                  const char *type, const char *f, const char *key)
{
        history_line_start(l, t, process_id(w), w->id, type, f, key);
}

static const char *type_name(enum ops_outcome o)
{
        return o == OPS_OK ? "ok" : o == OPS_FAIL ? "fail" : "info";
}

/* The fields of every completion: session= and, while the session is live,
 * lease= (dated from `t`, before the lease was read: never later than the
 * lease libbaton computed). */
static void session_fields(struct ops_worker *w, struct history_line *l,
                           uint64_t t)
{
        uint64_t id = baton_session_id(w->h);
        int64_t left = baton_session_remaining_ms(w->h);

        if (id != 0) {
                w->session = id;
        }
        history_line_u64(l, "session", id);
        if (id != 0 && left > 0) {
                history_line_u64(l, "lease", t + (uint64_t)left * NS_PER_MS);
        }
}

/* Write a finished line. A worker that cannot record is useless to the
 * checkers: say so and exit (the suite sees the exit). */
static void emit(struct ops_worker *w, struct history_line *l)
{
        if (history_line_write(w->hist_fd, l) != 0) {
                fprintf(stderr, "chaos-worker %d: history write: %s\n", w->id,
                        strerror(errno));
                exit(1);
        }
}

static void count(struct ops_worker *w, enum ops_outcome o)
{
        if (o == OPS_OK) {
                w->n_ok++;
        } else if (o == OPS_FAIL) {
                w->n_fail++;
        } else {
                w->n_info++;
        }
}

static int create_handle(struct ops_worker *w)
{
        struct baton_options o;
        char name[64];

        baton_options_init(&o);
        o.ttl_ms = w->ttl_ms;
        o.request_timeout_ms = w->request_timeout_ms;
        snprintf(name, sizeof name, "chaos-w%d-i%u", w->id, w->incarnation);
        o.client_name = name;
        return baton_client_create(&w->h, w->endpoints, &o);
}

int ops_start(struct ops_worker *w)
{
        w->incarnation = 0;
        w->session = 0;
        w->holding = false;
        w->held_leader = false;
        w->n_held_names = 0;
        return create_handle(w);
}

void ops_close(struct ops_worker *w, uint64_t t, bool last)
{
        struct history_line l;
        const char *key = w->holding ? w->held : w->key;
        uint64_t id = baton_session_id(w->h);
        int rv;

        if (id == 0) {
                id = w->session; /* expired: still the session it ends */
        }
        start(w, &l, t, "invoke", "close", key[0] != '\0' ? key : "-");
        emit(w, &l);
        baton_client_destroy(w->h);
        w->h = NULL;
        /* destroy() reports nothing: the close may or may not have been
         * applied (if not, the session expires after its TTL). */
        start(w, &l, history_now_ns(), "info", "close",
              key[0] != '\0' ? key : "-");
        history_line_str(&l, "err", "BATON_EUNKNOWN");
        history_line_u64(&l, "session", id);
        emit(w, &l);
        w->n_closes++;
        w->holding = false;
        w->held_leader = false;
        w->n_held_names = 0;
        w->session = 0;
        if (last) {
                return;
        }
        w->incarnation++;
        if (w->incarnation == 1000) {
                fprintf(stderr,
                        "chaos-worker %d: 1000 incarnations: process ids "
                        "now overlap worker %d's\n",
                        w->id, w->id + 1);
        }
        while ((rv = create_handle(w)) != 0) {
                fprintf(stderr, "chaos-worker %d: baton_client_create: %s\n",
                        w->id, baton_strerror(rv));
                sleep_ms(100);
        }
}

/* Close after an outcome that is unknown: the close's invoke carries the
 * timestamp of the info. */
static void after_info(struct ops_worker *w, uint64_t t)
{
        ops_close(w, t, false);
}

void ops_check_session(struct ops_worker *w)
{
        if (baton_session_state(w->h) == BATON_SESSION_EXPIRED) {
                ops_close(w, history_now_ns(), false);
        }
}

/*
 * What an acquire's error says about whether it happened. Refusals are
 * sure. BATON_ETIMEDOUT is sure only when the cluster timed the wait out:
 * libbaton's own deadline (wait + request timeout) had not yet come.
 * BATON_EEXPIRED is not sure: libbaton also fails a request in flight with
 * it when its local lease runs out, and the cluster may have applied it.
 * BATON_ECONNECT and BATON_ETLS are sure: libbaton gives them only to a
 * call none of whose requests was ever written to a connection (one that
 * went out keeps its unknown outcome, BATON_ENOANSWER / BATON_ETIMEDOUT).
 */
static enum ops_outcome acquire_outcome(const struct ops_worker *w, int rv,
                                        int64_t wait_ms, uint64_t elapsed_ns)
{
        switch (rv) {
        case 0:
                return OPS_OK;
        case BATON_EBUSY:
        case BATON_EWAITING:
        case BATON_ENAME:
        case BATON_EINVAL:
        case BATON_ETTL:
        case BATON_ETOOMANYSESSIONS:
        case BATON_ETOOMANYLOCKS:
        case BATON_ETOOMANYWAITERS:
        case BATON_EUPGRADE:
        case BATON_EKIND:
        case BATON_EPERMITS:
        case BATON_ETOOMANYPERMITS:
        case BATON_EHELD:
        case BATON_ETOOMANYNAMES:
        case BATON_ETOOMANYHOLDERS:
        case BATON_EUNSUPPORTED:
        case BATON_ECONNECT:
        case BATON_ETLS:
                return OPS_FAIL;
        case BATON_ETIMEDOUT:
                if (wait_ms > 0 &&
                    elapsed_ns + DECIDED_MARGIN_MS * NS_PER_MS <
                        (uint64_t)(wait_ms + w->request_timeout_ms) *
                            NS_PER_MS) {
                        return OPS_FAIL;
                }
                return OPS_INFO;
        default:
                return OPS_INFO;
        }
}

/* The history's name of a lock mode, NULL for OPS_PLAIN. */
static const char *lock_mode_name(enum ops_mode mode)
{
        switch (mode) {
        case OPS_READER:
                return "shared";
        case OPS_WRITER:
                return "exclusive";
        case OPS_SEM:
                return "semaphore";
        case OPS_MULTI:
                return "multi";
        case OPS_LEADER:
                return "leader";
        default:
                return NULL;
        }
}

/* The register's name of a mode ("r", "w", "s"), NULL for OPS_PLAIN. */
static const char *reg_mode_name(enum ops_mode mode)
{
        switch (mode) {
        case OPS_READER:
                return "r";
        case OPS_WRITER:
                return "w";
        case OPS_SEM:
                return "s";
        default:
                return NULL;
        }
}

static uint64_t owner_of(enum ops_mode mode)
{
        switch (mode) {
        case OPS_READER:
                return OPS_OWNER_READER;
        case OPS_WRITER:
                return OPS_OWNER_WRITER;
        case OPS_SEM:
                return OPS_OWNER_SEM;
        default:
                return BATON_OWNER_THREAD;
        }
}

/* What an acquire asks for: its mode, a semaphore's limit and permits,
 * a multi-lock's names, a candidate's value. */
struct ask {
        enum ops_mode mode;
        uint32_t limit, permits;
        const char *const *names;
        size_t n_names;
        const char *value; /* OPS_LEADER */
        uint32_t hold_ms;  /* OPS_PLAIN: the grant's hold time (0: none) */
};

/* " names=A,B,..." of a multi-lock's `n` names. */
static void names_field(struct history_line *l, const char *const *names,
                        size_t n)
{
        char list[OPS_MULTI_MAX * OPS_KEY_CAP];
        size_t i, used = 0;

        list[0] = '\0';
        for (i = 0; i < n && used < sizeof list; i++) {
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%s", i > 0 ? "," : "", names[i]);
        }
        history_line_str(l, "names", list);
}

/* The mode (and a semaphore's limit and permits, a multi-lock's names)
 * an acquire's invoke and completion both say. */
static void ask_fields(struct history_line *l, const struct ask *a)
{
        const char *mname = lock_mode_name(a->mode);

        if (mname != NULL) {
                history_line_str(l, "mode", mname);
        }
        if (a->mode == OPS_SEM) {
                history_line_u64(l, "limit", a->limit);
                history_line_u64(l, "permits", a->permits);
        }
        if (a->mode == OPS_MULTI) {
                names_field(l, a->names, a->n_names);
        }
        if (a->mode == OPS_LEADER) {
                history_line_str(l, "value", a->value);
        }
        if (a->hold_ms > 0) {
                history_line_u64(l, "hold", a->hold_ms);
        }
}

/* baton_multi_acquire() of `a`'s names, each exclusive. */
static int call_multi(struct ops_worker *w, const struct ask *a, uint64_t owner,
                      int64_t wait_ms, uint64_t *token)
{
        struct baton_lock_name names[OPS_MULTI_MAX];
        size_t i;

        for (i = 0; i < a->n_names; i++) {
                names[i].name = a->names[i];
                names[i].mode = BATON_MODE_EXCLUSIVE;
        }
        return baton_multi_acquire(w->h, names, a->n_names, owner, wait_ms,
                                   token);
}

static int call_acquire(struct ops_worker *w, const char *key,
                        const struct ask *a, uint64_t owner, int64_t wait_ms,
                        uint64_t *token)
{
        switch (a->mode) {
        case OPS_READER:
                return baton_acquire_shared(w->h, key, owner, wait_ms, token);
        case OPS_SEM:
                return baton_sem_acquire(w->h, key, a->limit, a->permits, owner,
                                         wait_ms, token);
        case OPS_MULTI:
                return call_multi(w, a, owner, wait_ms, token);
        case OPS_LEADER:
                return baton_campaign(w->h, key, a->value, owner, wait_ms,
                                      token);
        default:
                if (a->hold_ms > 0) {
                        struct baton_acquire_options o;
                        memset(&o, 0, sizeof o);
                        o.hold_ms = a->hold_ms;
                        return baton_acquire_with(w->h, key, owner, wait_ms, &o,
                                                  token);
                }
                return baton_acquire(w->h, key, owner, wait_ms, token);
        }
}

/* The worker holds what `a` asked for, granted with `token`. */
static void hold(struct ops_worker *w, const char *key, const struct ask *a,
                 uint64_t owner, uint64_t token)
{
        uint64_t granted_to = baton_session_id(w->h);
        size_t i;

        w->holding = true;
        snprintf(w->held, sizeof w->held, "%s", key);
        w->n_held_names = a->mode == OPS_MULTI ? a->n_names : 0;
        for (i = 0; i < w->n_held_names; i++) {
                snprintf(w->held_names[i], sizeof w->held_names[i], "%s",
                         a->names[i]);
        }
        w->token = token;
        w->held_owner = owner;
        w->held_leader = a->mode == OPS_LEADER;
        w->held_session = granted_to != 0 ? granted_to : w->session;
}

static enum ops_outcome acquire(struct ops_worker *w, const char *key,
                                int64_t wait_ms, bool final,
                                const struct ask *a)
{
        struct history_line l;
        enum ops_outcome o;
        uint64_t t0, t1, token = 0;
        uint64_t owner = owner_of(a->mode);
        int rv;

        snprintf(w->key, sizeof w->key, "%s", key);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", "acquire", key);
        history_line_u64(&l, "wait", (uint64_t)wait_ms);
        ask_fields(&l, a);
        if (final) {
                history_line_str(&l, "phase", "final");
        }
        emit(w, &l);
        rv = call_acquire(w, key, a, owner, wait_ms, &token);
        t1 = history_now_ns();
        o = acquire_outcome(w, rv, wait_ms, t1 - t0);
        start(w, &l, t1, type_name(o), "acquire", key);
        ask_fields(&l, a);
        if (o == OPS_OK) {
                history_line_u64(&l, "token", token);
        } else {
                history_line_str(&l, "err", baton_errname(rv));
        }
        session_fields(w, &l, t1);
        if (final) {
                history_line_str(&l, "phase", "final");
        }
        emit(w, &l);
        count(w, o);
        if (o == OPS_OK) {
                hold(w, key, a, owner, token);
        } else if (o == OPS_INFO) {
                after_info(w, t1);
        }
        return o;
}

enum ops_outcome ops_acquire(struct ops_worker *w, const char *key,
                             int64_t wait_ms, bool final)
{
        const struct ask a = {OPS_PLAIN, 0, 0, NULL, 0, NULL, 0};

        return acquire(w, key, wait_ms, final, &a);
}

enum ops_outcome ops_acquire_hold(struct ops_worker *w, const char *key,
                                  int64_t wait_ms, uint32_t hold_ms)
{
        const struct ask a = {OPS_PLAIN, 0, 0, NULL, 0, NULL, hold_ms};

        return acquire(w, key, wait_ms, false, &a);
}

enum ops_outcome ops_acquire_rw(struct ops_worker *w, const char *key,
                                int64_t wait_ms, enum ops_mode mode)
{
        const struct ask a = {mode, 0, 0, NULL, 0, NULL, 0};

        return acquire(w, key, wait_ms, false, &a);
}

enum ops_outcome ops_acquire_sem(struct ops_worker *w, const char *key,
                                 int64_t wait_ms, uint32_t limit,
                                 uint32_t permits, bool final)
{
        const struct ask a = {OPS_SEM, limit, permits, NULL, 0, NULL, 0};

        return acquire(w, key, wait_ms, final, &a);
}

enum ops_outcome ops_acquire_multi(struct ops_worker *w,
                                   const char *const *names, size_t n,
                                   int64_t wait_ms, bool final)
{
        const struct ask a = {OPS_MULTI, 0, 0, names, n, NULL, 0};

        if (n == 0 || n > OPS_MULTI_MAX) {
                fprintf(stderr, "chaos-worker %d: a multi-lock of %zu names\n",
                        w->id, n);
                exit(1);
        }
        return acquire(w, names[0], wait_ms, final, &a);
}

enum ops_outcome ops_campaign(struct ops_worker *w, const char *key,
                              int64_t wait_ms, const char *value, bool final)
{
        const struct ask a = {OPS_LEADER, 0, 0, NULL, 0, value, 0};

        return acquire(w, key, wait_ms, final, &a);
}

/* What EEXPIRED or ECLOSED says about a call on a held name, given the
 * session's state just before it: a session that was over before the call
 * is refused locally, never sent, so that refusal is sure; one that ended
 * during the call may have had its command applied first. */
static enum ops_outcome session_over_outcome(int before)
{
        return before == BATON_SESSION_LIVE || before == BATON_SESSION_JEOPARDY
                   ? OPS_INFO
                   : OPS_FAIL;
}

/* What a release's error says about whether it happened; `before` is
 * the session's state before the call. */
static enum ops_outcome release_outcome(const struct ops_worker *w, int rv,
                                        int before)
{
        switch (rv) {
        case 0:
                return OPS_OK;
        case BATON_ENOTHOLDER:
        case BATON_ESTALE:
        case BATON_ENAME:
        case BATON_EINVAL:
                /* baton_multi_release() tells the first failure only: the
                 * other names may have been released. */
                return w->n_held_names > 0 ? OPS_INFO : OPS_FAIL;
        case BATON_EEXPIRED:
        case BATON_ECLOSED:
                return session_over_outcome(before);
        default:
                /* BATON_ECONNECT / BATON_ETLS too, though the release was
                 * surely not sent: the worker holds nothing after a
                 * release, and only an info makes it close the session
                 * that still holds the lock (a fail would leave that hold
                 * to the session's expiry, unknown to the checkers). */
                return OPS_INFO;
        }
}

/* The fields of a release's invoke and completion after key=. */
static void release_fields(const struct ops_worker *w, struct history_line *l)
{
        const char *names[OPS_MULTI_MAX];
        size_t i;

        if (w->n_held_names > 0) {
                for (i = 0; i < w->n_held_names; i++) {
                        names[i] = w->held_names[i];
                }
                names_field(l, names, w->n_held_names);
        }
        if (w->held_leader) {
                history_line_str(l, "mode", "leader");
        }
        history_line_u64(l, "token", w->token);
}

/* baton_release() of the held lock, or baton_multi_release() of the held
 * multi-lock's names. */
static int call_release(struct ops_worker *w, const char *key)
{
        struct baton_lock_name names[OPS_MULTI_MAX];
        size_t i;

        if (w->held_leader) {
                return baton_resign(w->h, key, w->held_owner, w->token);
        }
        if (w->n_held_names == 0) {
                return baton_release(w->h, key, w->held_owner, w->token);
        }
        for (i = 0; i < w->n_held_names; i++) {
                names[i].name = w->held_names[i];
                names[i].mode = BATON_MODE_EXCLUSIVE;
        }
        return baton_multi_release(w->h, names, w->n_held_names, w->held_owner,
                                   w->token);
}

enum ops_outcome ops_release(struct ops_worker *w, bool final)
{
        struct history_line l;
        enum ops_outcome o;
        char key[OPS_KEY_CAP];
        uint64_t t0, t1;
        int before, rv;

        snprintf(key, sizeof key, "%s", w->held);
        snprintf(w->key, sizeof w->key, "%s", key);
        before = baton_session_state(w->h);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", "release", key);
        release_fields(w, &l);
        if (final) {
                history_line_str(&l, "phase", "final");
        }
        emit(w, &l);
        rv = call_release(w, key);
        t1 = history_now_ns();
        o = release_outcome(w, rv, before);
        start(w, &l, t1, type_name(o), "release", key);
        release_fields(w, &l);
        if (o != OPS_OK) {
                history_line_str(&l, "err", baton_errname(rv));
        }
        session_fields(w, &l, t1);
        if (final) {
                history_line_str(&l, "phase", "final");
        }
        emit(w, &l);
        count(w, o);
        if (o == OPS_INFO) {
                after_info(w, t1); /* `key` is still held for the close */
        }
        w->holding = false;
        w->held_leader = false;
        w->n_held_names = 0;
        return o;
}

/* What a proclaim's or an extend's error says about whether it happened:
 * a refusal is sure, as a release's. */
static enum ops_outcome held_call_outcome(int rv, int before)
{
        switch (rv) {
        case 0:
                return OPS_OK;
        case BATON_ENOTHOLDER:
        case BATON_ESTALE:
        case BATON_EKIND:
        case BATON_ENAME:
        case BATON_EINVAL:
        case BATON_EPERM:
        case BATON_ECONNECT: /* never sent: nothing changed */
        case BATON_ETLS:
                return OPS_FAIL;
        case BATON_EEXPIRED:
        case BATON_ECLOSED:
                return session_over_outcome(before);
        default:
                return OPS_INFO;
        }
}

/* A call on the held grant that keeps it (f=proclaim with value=, or
 * f=extend with hold=), logged with token=. */
static enum ops_outcome held_call(struct ops_worker *w, const char *f,
                                  const char *value, uint32_t hold_ms)
{
        struct history_line l;
        enum ops_outcome o;
        char key[OPS_KEY_CAP];
        uint64_t t0, t1;
        int before, rv;

        snprintf(key, sizeof key, "%s", w->held);
        snprintf(w->key, sizeof w->key, "%s", key);
        before = baton_session_state(w->h);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", f, key);
        history_line_u64(&l, "token", w->token);
        if (value != NULL) {
                history_line_str(&l, "value", value);
        } else {
                history_line_u64(&l, "hold", hold_ms);
        }
        emit(w, &l);
        rv = value != NULL
                 ? baton_proclaim(w->h, key, w->held_owner, w->token, value)
                 : baton_extend(w->h, key, w->held_owner, w->token, hold_ms);
        t1 = history_now_ns();
        o = held_call_outcome(rv, before);
        start(w, &l, t1, type_name(o), f, key);
        history_line_u64(&l, "token", w->token);
        if (value != NULL) {
                history_line_str(&l, "value", value);
        } else {
                history_line_u64(&l, "hold", hold_ms);
        }
        if (o != OPS_OK) {
                history_line_str(&l, "err", baton_errname(rv));
        }
        session_fields(w, &l, t1);
        emit(w, &l);
        count(w, o);
        if (o == OPS_INFO) {
                after_info(w, t1); /* the close ends the grant */
        }
        return o;
}

enum ops_outcome ops_proclaim(struct ops_worker *w, const char *value)
{
        return held_call(w, "proclaim", value, 0);
}

enum ops_outcome ops_extend(struct ops_worker *w, uint32_t hold_ms)
{
        return held_call(w, "extend", NULL, hold_ms);
}

enum ops_outcome ops_holder(struct ops_worker *w, const char *key,
                            struct baton_holder *out)
{
        struct history_line l;
        struct baton_holder hd;
        enum ops_outcome o;
        uint64_t t0, t1;
        int rv;

        snprintf(w->key, sizeof w->key, "%s", key);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", "holder", key);
        emit(w, &l);
        rv = baton_holder(w->h, key, &hd);
        t1 = history_now_ns();
        o = rv == 0 ? OPS_OK : OPS_FAIL;
        start(w, &l, t1, type_name(o), "holder", key);
        if (o == OPS_OK) {
                history_line_u64(&l, "holder", hd.held ? hd.session : 0);
                history_line_u64(&l, "token", hd.held ? hd.token : 0);
                history_line_u64(&l, "index", hd.index);
        } else {
                history_line_str(&l, "err", baton_errname(rv));
        }
        session_fields(w, &l, t1);
        emit(w, &l);
        count(w, o);
        if (out != NULL) {
                *out = hd;
        }
        return o;
}

/* One register request and what became of it: ok with the answer's
 * numbers (`want` of them: 0, 1 or 2), fail (STALE, an ERR refusal, or
 * never sent) or info (sent, no answer). `err` gets the name for the
 * history. */
static enum ops_outcome reg_call(struct ops_worker *w, const char *req,
                                 uint64_t *a, uint64_t *b, int want,
                                 const char **err)
{
        char reply[REGCLIENT_LINE_MAX + 1];
        unsigned long long x = 0, y = 0;
        int rv, n = 0;
        char c;

        rv = regclient_request(&w->reg, req, reply, sizeof reply);
        if (rv != REGCLIENT_ANSWERED) {
                fprintf(stderr, "chaos-worker %d: register %s: %s\n", w->id,
                        rv == REGCLIENT_NOT_SENT ? "unreachable" : "no answer",
                        req);
                *err = "BATON_EIO";
                return rv == REGCLIENT_NOT_SENT ? OPS_FAIL : OPS_INFO;
        }
        if (strncmp(reply, "STALE ", 6) == 0) {
                *err = "STALE";
                return OPS_FAIL;
        }
        if (want == 0 && strcmp(reply, "OK") == 0) {
                return OPS_OK;
        }
        if (want > 0 && strncmp(reply, "OK ", 3) == 0) {
                n = want == 2 ? sscanf(reply + 3, "%llu %llu%c", &x, &y, &c)
                              : sscanf(reply + 3, "%llu%c", &x, &c);
        }
        if (n != want) {
                /* ERR: the register refused the line and changed nothing. */
                fprintf(stderr,
                        "chaos-worker %d: register answered '%s' to "
                        "'%s'\n",
                        w->id, reply, req);
                *err = "ERR";
                return OPS_FAIL;
        }
        *a = x;
        *b = y;
        return OPS_OK;
}

/* A register request `req` that reads (`want` 2: value and version) or
 * only says where the holder is (`want` 0), as history op `f`. */
static enum ops_outcome reg_op(struct ops_worker *w, const char *f,
                               const char *key, const char *req,
                               enum ops_mode mode, int want, uint64_t *value,
                               uint64_t *version)
{
        struct history_line l;
        enum ops_outcome o;
        const char *err = NULL;
        const char *mname = reg_mode_name(mode);
        uint64_t t0, t1, a = 0, b = 0;

        snprintf(w->key, sizeof w->key, "%s", key);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", f, key);
        history_line_u64(&l, "token", w->token);
        if (mname != NULL) {
                history_line_str(&l, "mode", mname);
        }
        emit(w, &l);
        o = reg_call(w, req, &a, &b, want, &err);
        t1 = history_now_ns();
        start(w, &l, t1, type_name(o), f, key);
        history_line_u64(&l, "token", w->token);
        if (mname != NULL) {
                history_line_str(&l, "mode", mname);
        }
        if (o == OPS_OK && want == 2) {
                history_line_u64(&l, "value", a);
                history_line_u64(&l, "version", b);
        } else if (o != OPS_OK) {
                history_line_str(&l, "err", err);
        }
        session_fields(w, &l, t1);
        emit(w, &l);
        count(w, o);
        if (o == OPS_OK && value != NULL) {
                *value = a;
                *version = b;
        }
        if (o == OPS_INFO) {
                after_info(w, t1);
        }
        return o;
}

/* The request `verb` of `key` with the held token and, but for
 * OPS_PLAIN, the mode; a semaphore holder's names its grant's session too:
 * the register asks the apply logs whether that grant ended. */
static void reg_request(const struct ops_worker *w, char *req, size_t cap,
                        const char *verb, const char *key, enum ops_mode mode)
{
        const char *mname = reg_mode_name(mode);

        if (mode == OPS_SEM) {
                snprintf(req, cap, "%s %s %" PRIu64 " s %" PRIu64, verb, key,
                         w->token, w->held_session);
        } else {
                snprintf(req, cap, "%s %s %" PRIu64 "%s%s", verb, key, w->token,
                         mname != NULL ? " " : "", mname != NULL ? mname : "");
        }
}

enum ops_outcome ops_read(struct ops_worker *w, const char *key,
                          enum ops_mode mode, uint64_t *value,
                          uint64_t *version)
{
        char req[OPS_KEY_CAP + 64];

        reg_request(w, req, sizeof req, "READ", key, mode);
        return reg_op(w, "read", key, req, mode, 2, value, version);
}

enum ops_outcome ops_enter(struct ops_worker *w, const char *key,
                           enum ops_mode mode, uint64_t *value,
                           uint64_t *version)
{
        char req[OPS_KEY_CAP + 64];

        reg_request(w, req, sizeof req, "ENTER", key, mode);
        return reg_op(w, "enter", key, req, mode, 2, value, version);
}

enum ops_outcome ops_leave(struct ops_worker *w, const char *key,
                           enum ops_mode mode)
{
        char req[OPS_KEY_CAP + 64];

        reg_request(w, req, sizeof req, "LEAVE", key, mode);
        return reg_op(w, "leave", key, req, mode, 0, NULL, NULL);
}

enum ops_outcome ops_write(struct ops_worker *w, const char *key,
                           uint64_t value, uint64_t based_on)
{
        struct history_line l;
        enum ops_outcome o;
        const char *err = NULL;
        char req[OPS_KEY_CAP + 96];
        uint64_t t0, t1, after = 0, unused = 0;

        snprintf(w->key, sizeof w->key, "%s", key);
        snprintf(req, sizeof req, "WRITE %s %" PRIu64 " %" PRIu64 " %" PRIu64,
                 key, w->token, value, based_on);
        t0 = history_now_ns();
        start(w, &l, t0, "invoke", "write", key);
        history_line_u64(&l, "token", w->token);
        history_line_u64(&l, "value", value);
        history_line_u64(&l, "version", based_on);
        emit(w, &l);
        o = reg_call(w, req, &after, &unused, 1, &err);
        t1 = history_now_ns();
        start(w, &l, t1, type_name(o), "write", key);
        history_line_u64(&l, "token", w->token);
        history_line_u64(&l, "value", value);
        history_line_u64(&l, "version", based_on);
        if (o != OPS_OK) {
                history_line_str(&l, "err", err);
        }
        session_fields(w, &l, t1);
        emit(w, &l);
        count(w, o);
        if (o == OPS_INFO) {
                after_info(w, t1);
        }
        return o;
}
