/* What the checkers of a chaos run share. */
#include "check_util.h"

#include <stdarg.h>
#include <stdio.h>

#include "util.h"

__attribute__((format(printf, 3, 4))) void
check_set(struct check_result *res, int verdict, const char *fmt, ...)
{
        va_list ap;
        char *p;

        res->verdict = verdict;
        va_start(ap, fmt);
        vsnprintf(res->detail, sizeof res->detail, fmt, ap);
        va_end(ap);
        for (p = res->detail; *p != '\0'; p++) {
                if (*p == '\n' || *p == '\r' || *p == '\t') {
                        *p = ' ';
                }
        }
}

__attribute__((format(printf, 2, 3))) void check_note(struct check_note *n,
                                                      const char *fmt, ...)
{
        va_list ap;

        if (n->count++ > 0) {
                return;
        }
        va_start(ap, fmt);
        vsnprintf(n->first, sizeof n->first, fmt, ap);
        va_end(ap);
}

double check_secs(int64_t ns)
{
        return (double)ns / 1e9;
}

/* The event that made grant `token` of `lock` (a GRANT at index = token),
 * or NULL; `*logged` says whether any node logged that index at all. */
const struct applylog_event *check_grant_at(const struct run *r, int lock,
                                            uint64_t token, bool *logged)
{
        const struct applylog_ref *ref = applylog_find(&r->applylog, token);
        const struct applylog_event *ev;
        size_t n, i;

        *logged = ref != NULL;
        if (ref == NULL) {
                return NULL;
        }
        ev = applylog_events(&r->applylog, ref, &n);
        for (i = 0; i < n; i++) {
                if (ev[i].type == APPLYLOG_GRANT && ev[i].lock == lock &&
                    ev[i].token == token) {
                        return &ev[i];
                }
        }
        return NULL;
}

/* The GRANT at index `token` of `lock` to `session`, else the first. */
const struct applylog_event *check_grant_of(const struct run *r, int lock,
                                            uint64_t token, uint64_t session,
                                            bool *logged)
{
        const struct applylog_ref *ref = applylog_find(&r->applylog, token);
        const struct applylog_event *ev, *first = NULL;
        size_t n, i;

        *logged = ref != NULL;
        if (ref == NULL) {
                return NULL;
        }
        ev = applylog_events(&r->applylog, ref, &n);
        for (i = 0; i < n; i++) {
                if (ev[i].type != APPLYLOG_GRANT || ev[i].lock != lock ||
                    ev[i].token != token) {
                        continue;
                }
                if (ev[i].session == session) {
                        return &ev[i];
                }
                if (first == NULL) {
                        first = &ev[i];
                }
        }
        return first;
}

/* The index where grant `token` of `lock` to `session` ended, or 0. */
uint64_t check_grant_end(const struct run *r, int lock, uint64_t token,
                         uint64_t session)
{
        size_t n, i;
        const struct applylog_fact *f =
            applylog_releases(&r->applylog, lock, token, &n);
        const struct applylog_fact *end;

        for (i = 0; i < n; i++) {
                if (f[i].type == APPLYLOG_RELEASE && f[i].session == session) {
                        return f[i].index;
                }
        }
        end = applylog_end(&r->applylog, session);
        return end != NULL && end->index >= token ? end->index : 0;
}

/* Whether every grant of `lock` at index `token` had ended by `by`. */
int check_grants_ended(const struct run *r, int lock, uint64_t token,
                       uint64_t by, const struct applylog_event **live)
{
        const struct applylog_ref *ref = applylog_find(&r->applylog, token);
        const struct applylog_event *ev;
        size_t n, i;
        int found = -1;

        *live = NULL;
        if (ref == NULL) {
                return -1;
        }
        ev = applylog_events(&r->applylog, ref, &n);
        for (i = 0; i < n; i++) {
                uint64_t ended;
                if (ev[i].type != APPLYLOG_GRANT || ev[i].lock != lock ||
                    ev[i].token != token) {
                        continue;
                }
                found = 1;
                ended = check_grant_end(r, lock, token, ev[i].session);
                if (ended == 0 || ended > by) {
                        *live = &ev[i];
                        return 0;
                }
        }
        return found;
}

/* The limits the history's acquires named, per semaphore. */
uint32_t *check_sem_limits(const struct run *r)
{
        uint32_t *limits = util_calloc(r->names.n, sizeof *limits);
        size_t i;

        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->f == HISTORY_ACQUIRE && h->sem && h->key >= 0 &&
                    h->limit > limits[h->key]) {
                        limits[h->key] = h->limit;
                }
        }
        return limits;
}

/* Whether `ev` comes after the END of its session. */
bool check_after_end(const struct run *r, const struct applylog_event *ev,
                     uint64_t *end_index)
{
        const struct applylog_fact *end;

        if (ev->session == 0) {
                return false;
        }
        end = applylog_end(&r->applylog, ev->session);
        if (end == NULL || ev->index <= end->index) {
                return false;
        }
        *end_index = end->index;
        return true;
}
