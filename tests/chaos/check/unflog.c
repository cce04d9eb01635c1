/* The unfenced register's log of a chaos run. */
#include "unflog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 12

static bool parse_line(char *s, struct unflog_line *l, struct util_strtab *keys)
{
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
        l->worker = (int)w;
        l->pid = (long)pid;
        l->key = util_strtab_intern(keys, key, strlen(key));
        return true;
}

int unflog_load(struct unflog *u, const char *path, struct util_strtab *keys,
                char *errmsg, size_t cap)
{
        struct unflog_line l;
        size_t len, pos = 0;
        unsigned lineno = 0;
        char *buf, *s;
        bool complete;

        memset(u, 0, sizeof *u);
        if (util_read_file(path, &buf, &len) != 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        u->present = true;
        while ((s = util_next_line(buf, len, &pos, &complete)) != NULL) {
                lineno++;
                if (!complete) {
                        u->n_torn += s[0] != '\0';
                        break;
                }
                if (s[0] == '\0') {
                        continue;
                }
                memset(&l, 0, sizeof l);
                if (!parse_line(s, &l, keys)) {
                        u->n_bad++;
                        continue;
                }
                l.line = lineno;
                util_push((void **)&u->lines, &u->n, &u->cap, &l, sizeof l);
        }
        free(buf);
        return 0;
}

void unflog_free(struct unflog *u)
{
        free(u->lines);
        memset(u, 0, sizeof *u);
}
