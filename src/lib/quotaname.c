/* What a quota limits, by name. */
#include "quotaname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[BATON_QUOTA_KINDS] = {
    [BATON_QUOTA_SESSIONS] = "sessions", [BATON_QUOTA_LOCKS] = "locks",
    [BATON_QUOTA_WAITERS] = "waiters",   [BATON_QUOTA_WATCHES] = "watches",
    [BATON_QUOTA_RATE] = "rate",
};

const char *quotaname(int kind)
{
        return kind >= 0 && kind < BATON_QUOTA_KINDS ? names[kind] : "unknown";
}

int quotaname_parse_word(const char *w, size_t len,
                         uint32_t limit[BATON_QUOTA_KINDS])
{
        const char *eq = memchr(w, '=', len);
        const char *n;
        unsigned long long v = 0;
        char digits[16];
        char *stop;
        size_t nlen;
        int k;

        for (k = 0; eq != NULL && k < BATON_QUOTA_KINDS; k++) {
                if ((size_t)(eq - w) == strlen(names[k]) &&
                    memcmp(w, names[k], (size_t)(eq - w)) == 0) {
                        break;
                }
        }
        if (eq == NULL || k == BATON_QUOTA_KINDS) {
                return -1;
        }
        n = eq + 1;
        nlen = len - (size_t)(n - w);
        if (nlen == 4 && memcmp(n, "none", 4) == 0) {
                limit[k] = 0;
                return 0;
        }
        /* Digits only (strtoull would take blanks and signs), copied so
         * that the word needs no NUL after it. */
        if (nlen == 0 || nlen >= sizeof digits) {
                return -2;
        }
        for (size_t i = 0; i < nlen; i++) {
                if (n[i] < '0' || n[i] > '9') {
                        return -2;
                }
        }
        memcpy(digits, n, nlen);
        digits[nlen] = '\0';
        v = strtoull(digits, &stop, 10);
        if (v > UINT32_MAX) {
                return -2;
        }
        limit[k] = (uint32_t)v;
        return 0;
}

void quotaname_refused(char *buf, size_t size, uint32_t kind, uint32_t limit)
{
        snprintf(buf, size,
                 "quota %s = %u of this client's identity used up (batonctl "
                 "quota list shows each identity's quota and use)",
                 quotaname(kind > INT32_MAX ? -1 : (int)kind), (unsigned)limit);
}

const char *quotaname_format(const uint32_t limit[BATON_QUOTA_KINDS], char *buf,
                             size_t size)
{
        size_t at = 0;
        int k, n;

        if (size == 0) {
                return buf;
        }
        buf[0] = '\0';
        for (k = 0; k < BATON_QUOTA_KINDS && at < size; k++) {
                if (limit[k] == 0) {
                        continue;
                }
                n = snprintf(buf + at, size - at, "%s%s=%u", at > 0 ? " " : "",
                             names[k], (unsigned)limit[k]);
                at += n > 0 ? (size_t)n : 0;
        }
        return buf;
}
