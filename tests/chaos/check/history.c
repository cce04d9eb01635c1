/* The workers' histories of a chaos run, parsed and paired into operations. */
#include "history.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 32

static const char *const f_names[] = {
    [HISTORY_ACQUIRE] = "acquire", [HISTORY_RELEASE] = "release",
    [HISTORY_HOLDER] = "holder",   [HISTORY_CLOSE] = "close",
    [HISTORY_READ] = "read",       [HISTORY_WRITE] = "write",
    [HISTORY_OTHER] = "other",
};

static const char *const type_names[] = {
    [HISTORY_OK] = "ok",
    [HISTORY_FAIL] = "fail",
    [HISTORY_INFO] = "info",
    [HISTORY_NONE] = "none",
};

const char *history_f_name(int f)
{
        return f >= 0 && f <= HISTORY_OTHER ? f_names[f] : "?";
}

const char *history_type_name(int type)
{
        return type >= 0 && type <= HISTORY_NONE ? type_names[type] : "?";
}

static int parse_f(const char *s)
{
        int f;

        for (f = 0; f < HISTORY_OTHER; f++) {
                if (strcmp(s, f_names[f]) == 0) {
                        return f;
                }
        }
        return HISTORY_OTHER;
}

/* An invoke waiting for its completion. */
struct pending {
        uint64_t process;
        size_t op; /* index into struct history.ops */
        size_t n;  /* ops from there: one per name of a multi-lock */
};

/* State of one file's parse. */
struct parse {
        struct history *h;
        struct util_strtab *keys;
        unsigned file;
        struct pending *pend;
        size_t n_pend, cap_pend;
};

static void note_bad(struct parse *ps, unsigned line, const char *why)
{
        struct history *h = ps->h;

        if (h->n_bad++ == 0) {
                snprintf(h->first_bad, sizeof h->first_bad, "%s:%u: %s",
                         h->files[ps->file], line, why);
        }
}

/* Read the optional fields a completion (or an invoke) may carry. */
static void take_fields(struct history_op *op, const struct util_kv *kv,
                        size_t n)
{
        const char *v;
        uint64_t u;

        if ((v = util_kv_get(kv, n, "session")) != NULL) {
                util_parse_u64(v, &op->session);
        }
        if ((v = util_kv_get(kv, n, "token")) != NULL) {
                op->has_token = util_parse_u64(v, &op->token);
        }
        if ((v = util_kv_get(kv, n, "holder")) != NULL) {
                op->has_holder = util_parse_u64(v, &op->holder);
        }
        if ((v = util_kv_get(kv, n, "value")) != NULL) {
                op->has_value = util_parse_u64(v, &op->value);
        }
        if ((v = util_kv_get(kv, n, "version")) != NULL) {
                op->has_version = util_parse_u64(v, &op->version);
        }
        if ((v = util_kv_get(kv, n, "index")) != NULL) {
                op->has_index = util_parse_u64(v, &op->index);
        }
        if ((v = util_kv_get(kv, n, "lease")) != NULL) {
                op->has_lease = util_parse_i64(v, &op->lease);
        }
        if ((v = util_kv_get(kv, n, "err")) != NULL) {
                snprintf(op->err, sizeof op->err, "%s", v);
        }
        if ((v = util_kv_get(kv, n, "phase")) != NULL &&
            strcmp(v, "final") == 0) {
                op->final = true;
        }
        if ((v = util_kv_get(kv, n, "mode")) != NULL) {
                op->shared = op->shared || strcmp(v, "shared") == 0;
                op->sem = op->sem || strcmp(v, "semaphore") == 0;
                op->multi = op->multi || strcmp(v, "multi") == 0;
                op->leader = op->leader || strcmp(v, "leader") == 0;
                op->cmd = op->cmd || strcmp(v, "cmd") == 0;
        }
        if ((v = util_kv_get(kv, n, "limit")) != NULL &&
            util_parse_u64(v, &u) && u <= UINT32_MAX) {
                op->limit = (uint32_t)u;
        }
        if ((v = util_kv_get(kv, n, "permits")) != NULL &&
            util_parse_u64(v, &u) && u <= UINT32_MAX) {
                op->permits = (uint32_t)u;
        }
}

/* The names of names=A,B,... split at the commas (in place) into
 * `names`: their count, 0 when the line has none. */
static size_t split_names(const struct util_kv *kv, size_t n,
                          const char *names[HISTORY_MAX_NAMES])
{
        char *v = (char *)util_kv_get(kv, n, "names");
        size_t k = 0;

        while (v != NULL && *v != '\0' && k < HISTORY_MAX_NAMES) {
                char *comma = strchr(v, ',');
                if (comma != NULL) {
                        *comma = '\0';
                }
                if (*v != '\0') {
                        names[k++] = v;
                }
                v = comma != NULL ? comma + 1 : NULL;
        }
        return k;
}

/* An invoke line: one op (or one per name of a multi-lock), waiting for
 * its completion. */
static void parse_invoke(struct parse *ps, const struct util_kv *kv, size_t n,
                         int64_t t, uint64_t p, unsigned lineno)
{
        const char *f = util_kv_get(kv, n, "f");
        const char *key = util_kv_get(kv, n, "key");
        const char *w = util_kv_get(kv, n, "w");
        const char *names[HISTORY_MAX_NAMES];
        size_t n_names, i;
        struct history_op op;
        int64_t wait;

        /* An invoke while the process still waits for an earlier
         * completion: the earlier one stays unknown. */
        for (i = 0; i < ps->n_pend; i++) {
                if (ps->pend[i].process == p) {
                        ps->pend[i] = ps->pend[--ps->n_pend];
                        break;
                }
        }
        memset(&op, 0, sizeof op);
        op.invoke_ns = t;
        op.complete_ns = INT64_MAX;
        op.process = p;
        op.worker = w != NULL ? atoi(w) : (int)(p / 1000);
        op.type = HISTORY_NONE;
        op.f = parse_f(f);
        op.key = -1;
        op.wait_ms = -2;
        if (util_parse_i64(util_kv_get(kv, n, "wait"), &wait)) {
                op.wait_ms = wait;
        }
        op.file = ps->file;
        op.line = lineno;
        take_fields(&op, kv, n);
        op.session = 0; /* only a completion reports the session */
        n_names = op.f == HISTORY_ACQUIRE || op.f == HISTORY_RELEASE
                      ? split_names(kv, n, names)
                      : 0;
        if (n_names == 0) {
                names[0] = op.f != HISTORY_CLOSE ? key : NULL;
        }
        util_push((void **)&ps->pend, &ps->n_pend, &ps->cap_pend,
                  &(struct pending){p, ps->h->n, n_names > 0 ? n_names : 1},
                  sizeof(struct pending));
        for (i = 0; i < (n_names > 0 ? n_names : 1); i++) {
                op.multi = n_names > 0;
                op.key = names[i] != NULL
                             ? util_strtab_intern(ps->keys, names[i],
                                                  strlen(names[i]))
                             : -1;
                util_push((void **)&ps->h->ops, &ps->h->n, &ps->h->cap, &op,
                          sizeof op);
        }
}

/* A completion line: the type and fields of the process's pending ops. */
static void parse_completion(struct parse *ps, const struct util_kv *kv,
                             size_t n, int64_t t, uint64_t p, unsigned lineno)
{
        const char *type = util_kv_get(kv, n, "type");
        struct pending pend;
        int ty;
        size_t i;

        for (i = 0; i < ps->n_pend; i++) {
                if (ps->pend[i].process == p) {
                        break;
                }
        }
        if (i == ps->n_pend) {
                ps->h->n_orphans++;
                return;
        }
        pend = ps->pend[i];
        ps->pend[i] = ps->pend[--ps->n_pend];
        if (strcmp(type, "ok") == 0) {
                ty = HISTORY_OK;
        } else if (strcmp(type, "fail") == 0) {
                ty = HISTORY_FAIL;
        } else if (strcmp(type, "info") == 0) {
                ty = HISTORY_INFO;
        } else {
                note_bad(ps, lineno, "unknown type=");
                return;
        }
        for (i = 0; i < pend.n; i++) {
                struct history_op *o = &ps->h->ops[pend.op + i];
                o->type = ty;
                o->complete_ns = t;
                take_fields(o, kv, n);
        }
}

static const char *const obs_types[] = {
    [HISTORY_OBS_OPEN] = "open",
    [HISTORY_OBS_EVENT] = "event",
    [HISTORY_OBS_COMPACTED] = "compacted",
    [HISTORY_OBS_END] = "end",
};

static const char *const obs_kinds[] = {
    [HISTORY_OBS_GRANTED] = "granted",
    [HISTORY_OBS_RELEASED] = "released",
    [HISTORY_OBS_PROCLAIMED] = "proclaimed",
};

/* An observer's line (f=observe): kept apart, in file order. */
static void parse_obs(struct parse *ps, const struct util_kv *kv, size_t n,
                      int64_t t, unsigned lineno)
{
        const char *type = util_kv_get(kv, n, "type");
        const char *key = util_kv_get(kv, n, "key");
        const char *w = util_kv_get(kv, n, "w");
        const char *v;
        struct history_obs o;
        uint64_t u;
        int i;

        memset(&o, 0, sizeof o);
        o.t = t;
        o.worker = w != NULL ? atoi(w) : -1;
        o.file = ps->file;
        o.line = lineno;
        o.type = -1;
        for (i = 0; i <= HISTORY_OBS_END; i++) {
                if (strcmp(type, obs_types[i]) == 0) {
                        o.type = i;
                }
        }
        if (o.type < 0 || key == NULL) {
                note_bad(ps, lineno,
                         "an observer's line without a known "
                         "type= or a key=");
                return;
        }
        o.key = util_strtab_intern(ps->keys, key, strlen(key));
        if ((v = util_kv_get(kv, n, "kind")) != NULL) {
                for (i = HISTORY_OBS_GRANTED; i <= HISTORY_OBS_PROCLAIMED;
                     i++) {
                        if (strcmp(v, obs_kinds[i]) == 0) {
                                o.kind = i;
                        }
                }
        }
        o.has_pos = util_parse_u64(util_kv_get(kv, n, "index"), &o.index) &&
                    util_parse_u64(util_kv_get(kv, n, "ord"), &u) &&
                    u <= UINT32_MAX;
        o.ord = o.has_pos ? (uint32_t)u : 0;
        if (o.type == HISTORY_OBS_EVENT && !o.has_pos) {
                note_bad(ps, lineno,
                         "an observer's event without index= "
                         "and ord=");
                return;
        }
        v = util_kv_get(kv, n, "from");
        o.from_last = v != NULL && strcmp(v, "last") == 0;
        if (o.type == HISTORY_OBS_OPEN && o.from_last && !o.has_pos) {
                note_bad(ps, lineno,
                         "an observer's open from=last without "
                         "index= and ord=");
                return;
        }
        util_parse_u64(util_kv_get(kv, n, "session"), &o.session);
        util_parse_u64(util_kv_get(kv, n, "owner"), &o.owner);
        util_parse_u64(util_kv_get(kv, n, "token"), &o.token);
        if ((v = util_kv_get(kv, n, "mode")) != NULL) {
                snprintf(o.mode, sizeof o.mode, "%s", v);
        }
        if ((v = util_kv_get(kv, n, "value")) != NULL) {
                snprintf(o.value, sizeof o.value, "%s", v);
        }
        if ((v = util_kv_get(kv, n, "err")) != NULL) {
                snprintf(o.err, sizeof o.err, "%s", v);
        }
        util_push((void **)&ps->h->obs, &ps->h->n_obs, &ps->h->cap_obs, &o,
                  sizeof o);
}

static void parse_line(struct parse *ps, char *line, unsigned lineno)
{
        struct util_kv kv[MAX_FIELDS];
        size_t n = util_split_kv(line, kv, MAX_FIELDS);
        const char *type = util_kv_get(kv, n, "type");
        const char *f = util_kv_get(kv, n, "f");
        uint64_t p;
        int64_t t;

        if (n == 0) {
                return; /* a blank line */
        }
        if (!util_parse_i64(util_kv_get(kv, n, "t"), &t) ||
            !util_parse_u64(util_kv_get(kv, n, "p"), &p) || type == NULL ||
            f == NULL) {
                note_bad(ps, lineno, "no t=, p=, type= or f=");
                return;
        }
        if (strcmp(f, "observe") == 0) {
                parse_obs(ps, kv, n, t, lineno);
        } else if (strcmp(type, "invoke") == 0) {
                parse_invoke(ps, kv, n, t, p, lineno);
        } else {
                parse_completion(ps, kv, n, t, p, lineno);
        }
}

static int load_file(struct history *h, const char *dir, const char *name,
                     struct util_strtab *keys, char *errmsg, size_t cap)
{
        char path[4096];
        struct parse ps;
        char *buf, *line;
        size_t len, pos = 0;
        unsigned lineno = 0;
        bool complete;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (util_read_file(path, &buf, &len) != 0) {
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        memset(&ps, 0, sizeof ps);
        ps.h = h;
        ps.keys = keys;
        ps.file = (unsigned)h->n_files - 1;
        while ((line = util_next_line(buf, len, &pos, &complete)) != NULL) {
                lineno++;
                if (!complete) {
                        /* The worker writes each line with one write(2), so
                         * an unterminated last line was cut by a full disk
                         * or a kill: its last value may be cut short. */
                        if (line[0] != '\0') {
                                h->n_torn++;
                        }
                        break;
                }
                parse_line(&ps, line, lineno);
        }
        free(ps.pend);
        free(buf);
        return 0;
}

static int cmp_names(const void *a, const void *b)
{
        const char *x = *(const char *const *)a, *y = *(const char *const *)b;

        /* w2.log before w10.log. */
        if (strlen(x) != strlen(y)) {
                return strlen(x) < strlen(y) ? -1 : 1;
        }
        return strcmp(x, y);
}

static int cmp_ops(const void *a, const void *b)
{
        const struct history_op *x = a, *y = b;

        if (x->invoke_ns != y->invoke_ns) {
                return x->invoke_ns < y->invoke_ns ? -1 : 1;
        }
        if (x->file != y->file) {
                return x->file < y->file ? -1 : 1;
        }
        return x->line < y->line ? -1 : x->line > y->line;
}

/* Sort order for inferring sessions: by process, then invoke. */
static int cmp_by_process(const void *a, const void *b, void *data)
{
        const struct history_op *ops = data;
        const struct history_op *x = &ops[*(const size_t *)a];
        const struct history_op *y = &ops[*(const size_t *)b];

        if (x->process != y->process) {
                return x->process < y->process ? -1 : 1;
        }
        /* Indexes are already in invoke order. */
        return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void infer_sessions(struct history *h)
{
        size_t *idx = util_calloc(h->n, sizeof *idx);
        size_t i, j, k;

        for (i = 0; i < h->n; i++) {
                idx[i] = i;
        }
        if (h->n > 1) {
                qsort_r(idx, h->n, sizeof *idx, cmp_by_process, h->ops);
        }
        for (i = 0; i < h->n; i = j) {
                uint64_t p = h->ops[idx[i]].process, last = 0;

                for (j = i; j < h->n && h->ops[idx[j]].process == p; j++) {
                        struct history_op *o = &h->ops[idx[j]];
                        if (o->session != 0) {
                                last = o->session;
                        }
                        o->session_eff = o->session != 0 ? o->session : last;
                }
                last = 0;
                for (k = j; k > i; k--) {
                        struct history_op *o = &h->ops[idx[k - 1]];
                        if (o->session != 0) {
                                last = o->session;
                        }
                        if (o->session_eff == 0) {
                                o->session_eff =
                                    last != 0 ? last
                                              : HISTORY_SESSION_UNKNOWN | p;
                        }
                }
        }
        free(idx);
}

int history_load(struct history *h, const char *dir, struct util_strtab *keys,
                 char *errmsg, size_t cap)
{
        DIR *d;
        struct dirent *e;
        char **names = NULL;
        size_t n = 0, ncap = 0, i;
        int rv = 0;

        memset(h, 0, sizeof *h);
        d = opendir(dir);
        if (d == NULL) {
                return 0;
        }
        while ((e = readdir(d)) != NULL) {
                size_t len = strlen(e->d_name);
                if (e->d_name[0] == 'w' && len > 4 &&
                    strcmp(e->d_name + len - 4, ".log") == 0) {
                        char *copy = util_strndup(e->d_name, len);
                        util_push((void **)&names, &n, &ncap, &copy,
                                  sizeof copy);
                }
        }
        closedir(d);
        util_sort(names, n, sizeof *names, cmp_names);
        h->files = names;
        for (i = 0; i < n && rv == 0; i++) {
                h->n_files = i + 1;
                rv = load_file(h, dir, names[i], keys, errmsg, cap);
        }
        h->n_files = n;
        if (rv != 0) {
                return rv;
        }
        /* Sorting the ops moves them: line numbers, not pointers, identify
         * them from here on. */
        util_sort(h->ops, h->n, sizeof *h->ops, cmp_ops);
        infer_sessions(h);
        return 0;
}

void history_free(struct history *h)
{
        size_t i;

        for (i = 0; i < h->n_files; i++) {
                free(h->files[i]);
        }
        free(h->files);
        free(h->ops);
        free(h->obs);
        memset(h, 0, sizeof *h);
}
