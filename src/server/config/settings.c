/* What every parser of batond's settings shares (settings.h). */
#include "settings.h"

#include <stdarg.h>
#include <stdio.h>

#include "../../../include/baton.h"

int settings_fail(char *msg, size_t size, const char *fmt, ...)
{
        va_list ap;

        if (msg != NULL && size > 0) {
                va_start(ap, fmt);
                vsnprintf(msg, size, fmt, ap);
                va_end(ap);
        }
        return BATON_EINVAL;
}

static bool is_digit(char ch)
{
        return ch >= '0' && ch <= '9';
}

void settings_range(char *buf, size_t size, uint64_t min, uint64_t max)
{
        if (max == UINT64_MAX) {
                snprintf(buf, size, "%llu..2^64-1", (unsigned long long)min);
        } else if (max == UINT32_MAX) {
                snprintf(buf, size, "%llu..2^32-1", (unsigned long long)min);
        } else {
                snprintf(buf, size, "%llu..%llu", (unsigned long long)min,
                         (unsigned long long)max);
        }
}

int settings_number(const char *s, uint64_t min, uint64_t max, uint64_t *out,
                    char *msg, size_t size)
{
        const char *p;
        uint64_t v = 0;
        bool too_big = false;
        char range[64];

        if (!is_digit(s[0])) {
                return settings_fail(msg, size, "'%s' is not a decimal number",
                                     s);
        }
        for (p = s; is_digit(*p); p++) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10) {
                        too_big = true;
                } else {
                        v = v * 10 + d;
                }
        }
        if (*p != '\0') {
                return settings_fail(msg, size, "junk after the number in '%s'",
                                     s);
        }
        if (too_big || v < min || v > max) {
                settings_range(range, sizeof range, min, max);
                return settings_fail(msg, size, "%s is out of range %s", s,
                                     range);
        }
        *out = v;
        return 0;
}

const struct config_member *settings_member(const struct config *c, uint64_t id)
{
        unsigned i;

        for (i = 0; i < c->n_members && i < CONFIG_MAX_MEMBERS; i++) {
                if (c->members[i].id == id) {
                        return &c->members[i];
                }
        }
        return NULL;
}
