/* The suite's own records of a chaos run: nemesis log, exits, plan. */
#include "nemlog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_FIELDS 16

static void note_bad(struct nemlog *nl, const char *file, unsigned line)
{
        if (nl->n_bad++ == 0) {
                snprintf(nl->first_bad, sizeof nl->first_bad,
                         "%s:%u: malformed line", file, line);
        }
}

/* Read `path` and call `fn` on each complete, non-blank line. An
 * unterminated last line is skipped: its writer was cut off. */
static int each_line(struct nemlog *nl, const char *path, bool *present,
                     void (*fn)(struct nemlog *nl, char *line, unsigned no),
                     char *errmsg, size_t cap)
{
        size_t len, pos = 0;
        unsigned no = 0;
        char *buf, *s;
        bool complete;

        if (util_read_file(path, &buf, &len) != 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        *present = true;
        while ((s = util_next_line(buf, len, &pos, &complete)) != NULL &&
               complete) {
                no++;
                if (s[0] != '\0' && s[0] != '#') {
                        fn(nl, s, no);
                }
        }
        free(buf);
        return 0;
}

static void nemesis_line(struct nemlog *nl, char *s, unsigned no)
{
        struct util_kv kv[MAX_FIELDS];
        struct nemlog_action a;
        char *cmd = strstr(s, " cmd=");
        const char *action, *fault, *target;
        size_t n;

        memset(&a, 0, sizeof a);
        /* The command is the rest of the line, spaces and all. */
        if (cmd != NULL) {
                *cmd = '\0';
                cmd += 5;
        }
        n = util_split_kv(s, kv, MAX_FIELDS);
        action = util_kv_get(kv, n, "action");
        fault = util_kv_get(kv, n, "fault");
        target = util_kv_get(kv, n, "target");
        if (!util_parse_i64(util_kv_get(kv, n, "t"), &a.t) || action == NULL ||
            fault == NULL) {
                note_bad(nl, "nemesis.log", no);
                return;
        }
        if (strcmp(action, "start") == 0) {
                a.action = NEMLOG_START;
        } else if (strcmp(action, "end") == 0) {
                a.action = NEMLOG_END;
        } else {
                a.action = NEMLOG_INFO;
        }
        a.fault = util_strndup(fault, strlen(fault));
        a.target = util_strndup(target != NULL ? target : "",
                                target != NULL ? strlen(target) : 0);
        a.cmd =
            util_strndup(cmd != NULL ? cmd : "", cmd != NULL ? strlen(cmd) : 0);
        a.line = no;
        util_push((void **)&nl->actions, &nl->n_actions, &nl->cap_actions, &a,
                  sizeof a);
}

static void exits_line(struct nemlog *nl, char *s, unsigned no)
{
        struct util_kv kv[MAX_FIELDS];
        size_t n = util_split_kv(s, kv, MAX_FIELDS);
        const char *proc = util_kv_get(kv, n, "proc");
        const char *expected = util_kv_get(kv, n, "expected");
        struct nemlog_exit e;

        memset(&e, 0, sizeof e);
        if (proc == NULL || expected == NULL ||
            !util_parse_i64(util_kv_get(kv, n, "t"), &e.t)) {
                note_bad(nl, "exits", no);
                return;
        }
        util_parse_i64(util_kv_get(kv, n, "pid"), &e.pid);
        util_parse_i64(util_kv_get(kv, n, "status"), &e.status);
        e.expected = strcmp(expected, "0") != 0;
        e.proc = util_strndup(proc, strlen(proc));
        e.line = no;
        util_push((void **)&nl->exits, &nl->n_exits, &nl->cap_exits, &e,
                  sizeof e);
}

static void plan_line(struct nemlog *nl, char *s, unsigned no)
{
        char *eq = strchr(s, '=');
        char *end;
        struct nemlog_param p;

        if (eq == NULL || eq == s) {
                note_bad(nl, "plan", no);
                return;
        }
        end = eq + strlen(eq);
        while (end > eq + 1 && (end[-1] == ' ' || end[-1] == '\t')) {
                end--;
        }
        p.key = util_strndup(s, (size_t)(eq - s));
        p.value = util_strndup(eq + 1, (size_t)(end - eq - 1));
        util_push((void **)&nl->plan, &nl->n_plan, &nl->cap_plan, &p, sizeof p);
}

static void build_intervals(struct nemlog *nl)
{
        size_t i, j;

        for (i = 0; i < nl->n_actions; i++) {
                const struct nemlog_action *a = &nl->actions[i];
                if (strcmp(a->fault, "heal-all") == 0) {
                        nl->has_heal = true;
                        nl->heal_t = a->t;
                }
        }
        for (i = 0; i < nl->n_actions; i++) {
                const struct nemlog_action *a = &nl->actions[i];
                struct nemlog_interval *best = NULL;

                if (strcmp(a->fault, "heal-all") == 0) {
                        continue;
                }
                if (a->action == NEMLOG_START) {
                        struct nemlog_interval iv = {a->t, -1, a->fault,
                                                     a->target};
                        nl->n_faults++;
                        util_push((void **)&nl->intervals, &nl->n_intervals,
                                  &nl->cap_intervals, &iv, sizeof iv);
                        continue;
                }
                if (a->action != NEMLOG_END) {
                        continue;
                }
                for (j = 0; j < nl->n_intervals; j++) {
                        struct nemlog_interval *iv = &nl->intervals[j];
                        if (iv->end != -1 || strcmp(iv->fault, a->fault) != 0) {
                                continue;
                        }
                        if (strcmp(iv->target, a->target) == 0) {
                                best = iv;
                                break;
                        }
                        if (best == NULL) {
                                best = iv;
                        }
                }
                if (best != NULL) {
                        best->end = a->t;
                }
        }
        for (j = 0; j < nl->n_intervals; j++) {
                struct nemlog_interval *iv = &nl->intervals[j];
                if (iv->end == -1) {
                        iv->end = nl->has_heal && iv->start <= nl->heal_t
                                      ? nl->heal_t
                                      : INT64_MAX;
                }
        }
}

int nemlog_load(struct nemlog *nl, const char *run_dir, char *errmsg,
                size_t cap)
{
        char path[4096];

        memset(nl, 0, sizeof *nl);
        snprintf(path, sizeof path, "%s/nemesis.log", run_dir);
        if (each_line(nl, path, &nl->present, nemesis_line, errmsg, cap) != 0) {
                return -1;
        }
        snprintf(path, sizeof path, "%s/exits", run_dir);
        if (each_line(nl, path, &nl->exits_present, exits_line, errmsg, cap) !=
            0) {
                return -1;
        }
        snprintf(path, sizeof path, "%s/plan", run_dir);
        if (each_line(nl, path, &nl->plan_present, plan_line, errmsg, cap) !=
            0) {
                return -1;
        }
        build_intervals(nl);
        return 0;
}

void nemlog_free(struct nemlog *nl)
{
        size_t i;

        for (i = 0; i < nl->n_actions; i++) {
                free(nl->actions[i].fault);
                free(nl->actions[i].target);
                free(nl->actions[i].cmd);
        }
        for (i = 0; i < nl->n_exits; i++) {
                free(nl->exits[i].proc);
        }
        for (i = 0; i < nl->n_plan; i++) {
                free(nl->plan[i].key);
                free(nl->plan[i].value);
        }
        free(nl->actions);
        free(nl->intervals);
        free(nl->exits);
        free(nl->plan);
        memset(nl, 0, sizeof *nl);
}

const char *nemlog_plan_get(const struct nemlog *nl, const char *key)
{
        size_t i;

        for (i = nl->n_plan; i > 0; i--) {
                if (strcmp(nl->plan[i - 1].key, key) == 0) {
                        return nl->plan[i - 1].value;
                }
        }
        return NULL;
}
