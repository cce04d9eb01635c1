/* A chaos run directory loaded into memory. */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int run_load(struct run *r, const char *dir, char *errmsg, size_t cap)
{
        char path[4096];
        struct stat st;

        memset(r, 0, sizeof *r);
        errno = 0;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                snprintf(errmsg, cap, "%s: %s", dir,
                         errno != 0 ? strerror(errno) : "not a directory");
                return -1;
        }
        r->dir = util_strndup(dir, strlen(dir));
        util_strtab_init(&r->names);
        snprintf(path, sizeof path, "%s/history", dir);
        if (history_load(&r->history, path, &r->names, errmsg, cap) != 0) {
                goto err;
        }
        snprintf(path, sizeof path, "%s/nodes", dir);
        if (applylog_load(&r->applylog, path, &r->names, errmsg, cap) != 0) {
                goto err;
        }
        snprintf(path, sizeof path, "%s/register.log", dir);
        if (reglog_load(&r->reglog, path, &r->names, errmsg, cap) != 0) {
                goto err;
        }
        snprintf(path, sizeof path, "%s/unfenced.log", dir);
        if (unflog_load(&r->unflog, path, &r->names, errmsg, cap) != 0) {
                goto err;
        }
        if (nemlog_load(&r->nemlog, dir, errmsg, cap) != 0) {
                goto err;
        }
        return 0;

err:
        run_free(r);
        return -1;
}

void run_free(struct run *r)
{
        history_free(&r->history);
        applylog_free(&r->applylog);
        reglog_free(&r->reglog);
        unflog_free(&r->unflog);
        nemlog_free(&r->nemlog);
        util_strtab_close(&r->names);
        free(r->dir);
        memset(r, 0, sizeof *r);
}

const char *run_name(const struct run *r, int id)
{
        return id >= 0 && (size_t)id < r->names.n ? r->names.names[id] : "";
}

bool run_state_lock(const struct run *r, int id)
{
        const char *v = nemlog_plan_get(&r->nemlog, "state");

        return v != NULL && strcmp(v, "none") != 0 &&
               strncmp(run_name(r, id), RUN_STATE_PREFIX,
                       strlen(RUN_STATE_PREFIX)) == 0;
}

bool run_clock_fault(const struct run *r)
{
        const char *v = nemlog_plan_get(&r->nemlog, "clock_fault");

        return v != NULL && strcmp(v, "1") == 0;
}
