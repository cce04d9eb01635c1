/* What the checkers of a chaos run share: verdicts with a one-line detail,
 * first-failure notes, and two lookups in the merged apply log. */
#ifndef CHAOS_CHECK_CHECK_UTIL_H
#define CHAOS_CHECK_CHECK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checks.h"
#include "run.h"

/* Set a verdict; the detail is made one line. */
__attribute__((format(printf, 3, 4))) void
check_set(struct check_result *res, int verdict, const char *fmt, ...);

/* A first-failure note: keeps the first message and counts the rest. */
struct check_note {
        size_t count;
        char first[400];
};

__attribute__((format(printf, 2, 3))) void check_note(struct check_note *n,
                                                      const char *fmt, ...);

/* Nanoseconds in seconds, for details. */
double check_secs(int64_t ns);

/* The event that made grant `token` of `lock` (a GRANT at index = token),
 * or NULL; `*logged` says whether any node logged that index at all. */
const struct applylog_event *check_grant_at(const struct run *r, int lock,
                                            uint64_t token, bool *logged);

/* As check_grant_at(), but readers admitted together share a token: the
 * GRANT at that index to `session` if there is one, else the first. */
const struct applylog_event *check_grant_of(const struct run *r, int lock,
                                            uint64_t token, uint64_t session,
                                            bool *logged);

/* The index where the grant `token` of `lock` to `session` ended: its
 * first RELEASE event (any cause), else its session's END; 0 if it never
 * ended. */
uint64_t check_grant_end(const struct run *r, int lock, uint64_t token,
                         uint64_t session);

/* Whether every grant of `lock` made at index `token` (one, or readers
 * admitted together) had ended at index `by` or before (a handoff ends the
 * old grant and makes the new one in one entry, RELEASE first): 1 yes, 0
 * no (`*live` is one that had not: its GRANT event), -1 when the apply
 * logs hold no GRANT there. */
int check_grants_ended(const struct run *r, int lock, uint64_t token,
                       uint64_t by, const struct applylog_event **live);

/* Per name id (calloc'd, r->names.n of them; the caller frees): the
 * permits of the semaphore of that name, as the history's acquires named
 * them (limit=; the largest if they differ), 0 for a name no acquire of a
 * semaphore named. The apply logs do not carry it. */
uint32_t *check_sem_limits(const struct run *r);

/* Whether `ev` comes after the END of its session (then `*end_index` is
 * the END's index). */
bool check_after_end(const struct run *r, const struct applylog_event *ev,
                     uint64_t *end_index);

#endif /* CHAOS_CHECK_CHECK_UTIL_H */
