/* The unfenced register's log of a chaos run. */
#include "unflog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 12

static bool parse_line(char *s, unsigned lineno, void *rec, void *arg)
{
        struct unflog_line *l = rec;
        struct util_strtab *keys = arg;
        struct util_kv kv[MAX_FIELDS];
        size_t n = util_split_kv(s, kv, MAX_FIELDS);
        const char *key = util_kv_get(kv, n, "key");
        const char *phase = util_kv_get(kv, n, "phase");
        int64_t w, pid;

        if (key == NULL || !util_parse_i64(util_kv_get(kv, n, "t"), &l->t) ||
            !util_parse_i64(util_kv_get(kv, n, "w"), &w) ||
            !util_parse_u64(util_kv_get(kv, n, "p"), &l->process) ||
            !util_parse_u64(util_kv_get(kv, n, "token"), &l->token) ||
            !util_parse_i64(util_kv_get(kv, n, "pid"), &pid) ||
            !util_parse_u64(util_kv_get(kv, n, "n"), &l->n)) {
                return false;
        }
        if (phase != NULL && strcmp(phase, "term") != 0) {
                return false;
        }
        l->term = phase != NULL;
        l->line = lineno;
        l->worker = (int)w;
        l->pid = (long)pid;
        l->key = util_strtab_intern(keys, key, strlen(key));
        return true;
}

int unflog_load(struct unflog *u, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap)
{
        memset(u, 0, sizeof *u);
        return util_load_log(path, sizeof *u->lines, parse_line, keys,
                             (void **)&u->lines, &u->n, &u->cap, &u->log,
                             errmsg, cap);
}

void unflog_free(struct unflog *u)
{
        free(u->lines);
        memset(u, 0, sizeof *u);
}
