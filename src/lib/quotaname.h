/* The names of what a quota limits (enum baton_quota_kind of
 * include/baton/admin.h) and its KIND=N words, as config files' quota
 * lines, batonctl, the logs and the audit trail write them: sessions,
 * locks, waiters, watches, rate. */
#ifndef LIB_QUOTANAME_H
#define LIB_QUOTANAME_H

#include <stddef.h>
#include <stdint.h>

#include "../../include/baton/admin.h"

/* Longest text quotaname_format() writes, with its NUL. */
#define QUOTANAME_TEXT_MAX (BATON_QUOTA_KINDS * sizeof " sessions=4294967295")

/* The name of `kind`; "unknown" for any value not a kind, so that a kind
 * a newer node sends can still be printed. Never NULL. */
const char *quotaname(int kind);

/*
 * Parse one word KIND=N (`len` bytes at `w`): KIND a kind's name, N
 * 0..4294967295 in decimal or "none" (0: no limit), into limit[KIND]. 0;
 * -1 when the word is not KIND=... with a known KIND; -2 when N is not a
 * number in range (`limit` then unchanged).
 */
int quotaname_parse_word(const char *w, size_t len,
                         uint32_t limit[BATON_QUOTA_KINDS]);

/* The limits as words "KIND=N", blank-separated, in kind order, the kinds
 * without a limit (0) left out; "" when none has one. Writes into `buf`
 * (QUOTANAME_TEXT_MAX bytes fit every value) and returns it. */
const char *quotaname_format(const uint32_t limit[BATON_QUOTA_KINDS], char *buf,
                             size_t size);

/* Write into `buf` what a client tells of a BATON_EQUOTA refusal by the
 * quota of `kind` (a RESULT's waiters) whose limit is `limit` (its
 * count): "quota locks = 10 of this client's identity used up (...)". */
void quotaname_refused(char *buf, size_t size, uint32_t kind, uint32_t limit);

#endif /* LIB_QUOTANAME_H */
