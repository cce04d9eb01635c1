/* The fenced register's log of a chaos run. */
#include "reglog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 16

static const char *const op_names[] = {
    [REGLOG_READ] = "read",   [REGLOG_WRITE] = "write",
    [REGLOG_ENTER] = "enter", [REGLOG_LEAVE] = "leave",
    [REGLOG_INIT] = "init",
};

const char *reglog_op_name(int op)
{
        return op >= 0 && op <= REGLOG_INIT ? op_names[op] : "?";
}

uint64_t reglog_bound(const struct reglog_line *l)
{
        return l->reader ? l->wmax : l->max;
}

static bool parse_line(char *s, unsigned lineno, void *rec, void *arg)
{
        struct reglog_line *l = rec;
        struct util_strtab *keys = arg;
        struct util_kv kv[MAX_FIELDS];
        size_t n = util_split_kv(s, kv, MAX_FIELDS);
        const char *op = util_kv_get(kv, n, "op");
        const char *key = util_kv_get(kv, n, "key");
        const char *result = util_kv_get(kv, n, "result");
        const char *mode = util_kv_get(kv, n, "mode");
        const char *wmax = util_kv_get(kv, n, "wmax");
        const char *session = util_kv_get(kv, n, "session");
        const char *ended = util_kv_get(kv, n, "ended");
        int64_t w;
        int i;

        if (op == NULL || key == NULL || result == NULL ||
            !util_parse_i64(util_kv_get(kv, n, "t"), &l->t) ||
            !util_parse_i64(util_kv_get(kv, n, "w"), &w) ||
            !util_parse_u64(util_kv_get(kv, n, "token"), &l->token) ||
            !util_parse_u64(util_kv_get(kv, n, "max"), &l->max) ||
            !util_parse_u64(util_kv_get(kv, n, "value"), &l->value) ||
            !util_parse_u64(util_kv_get(kv, n, "version"), &l->version) ||
            !util_parse_u64(util_kv_get(kv, n, "based"), &l->based)) {
                return false;
        }
        for (i = 0; i <= REGLOG_INIT; i++) {
                if (strcmp(op, op_names[i]) == 0) {
                        break;
                }
        }
        if (i > REGLOG_INIT) {
                return false;
        }
        l->op = i;
        l->write = i == REGLOG_WRITE;
        if (mode != NULL && strcmp(mode, "r") == 0) {
                l->reader = true;
        } else if (mode != NULL && strcmp(mode, "s") == 0) {
                l->sem = true;
        } else if (mode != NULL && strcmp(mode, "w") != 0) {
                return false;
        }
        if ((session != NULL && !util_parse_u64(session, &l->session)) ||
            (ended != NULL && !util_parse_u64(ended, &l->ended))) {
                return false;
        }
        l->wmax = l->max;
        if (wmax != NULL && !util_parse_u64(wmax, &l->wmax)) {
                return false;
        }
        if (strcmp(result, "ok") == 0) {
                l->ok = true;
        } else if (strcmp(result, "stale") != 0) {
                return false;
        }
        l->line = lineno;
        l->worker = (int)w;
        l->key = util_strtab_intern(keys, key, strlen(key));
        return true;
}

int reglog_load(struct reglog *r, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap)
{
        memset(r, 0, sizeof *r);
        return util_load_log(path, sizeof *r->lines, parse_line, keys,
                             (void **)&r->lines, &r->n, &r->cap, &r->log,
                             errmsg, cap);
}

void reglog_free(struct reglog *r)
{
        free(r->lines);
        memset(r, 0, sizeof *r);
}
