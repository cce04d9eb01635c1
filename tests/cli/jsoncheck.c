/* A minimal JSON validator and the checks of batonctl's --json output. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../lib/tap.h"
#include "jsoncheck.h"

static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
                s++;
        }
        return s;
}

static const char *json_string(const char *s)
{
        if (*s != '"') {
                return NULL;
        }
        for (s++; *s != '"'; s++) {
                if ((unsigned char)*s < 0x20) {
                        return NULL;
                }
                if (*s == '\\') {
                        s++;
                        if (*s == 'u') {
                                int i;
                                for (i = 1; i <= 4; i++) {
                                        if (!isxdigit((unsigned char)s[i])) {
                                                return NULL;
                                        }
                                }
                                s += 4;
                        } else if (strchr("\"\\/bfnrt", *s) == NULL ||
                                   *s == '\0') {
                                return NULL;
                        }
                }
        }
        return s + 1;
}

static const char *json_number(const char *s)
{
        const char *start;

        if (*s == '-') {
                s++;
        }
        if (*s == '0') {
                s++;
        } else if (isdigit((unsigned char)*s)) {
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
        } else {
                return NULL;
        }
        if (*s == '.') {
                start = ++s;
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
                if (s == start) {
                        return NULL;
                }
        }
        if (*s == 'e' || *s == 'E') {
                s++;
                if (*s == '+' || *s == '-') {
                        s++;
                }
                start = s;
                while (isdigit((unsigned char)*s)) {
                        s++;
                }
                if (s == start) {
                        return NULL;
                }
        }
        return s;
}

static const char *json_items(const char *s, int depth, char close, bool obj)
{
        s = json_ws(s + 1);
        if (*s == close) {
                return s + 1;
        }
        for (;;) {
                if (obj) {
                        s = json_string(json_ws(s));
                        if (s == NULL) {
                                return NULL;
                        }
                        s = json_ws(s);
                        if (*s != ':') {
                                return NULL;
                        }
                        s++;
                }
                s = json_value(s, depth + 1);
                if (s == NULL) {
                        return NULL;
                }
                s = json_ws(s);
                if (*s == close) {
                        return s + 1;
                }
                if (*s != ',') {
                        return NULL;
                }
                s++;
        }
}

static const char *json_value(const char *s, int depth)
{
        if (depth > 32) {
                return NULL;
        }
        s = json_ws(s);
        switch (*s) {
        case '{':
                return json_items(s, depth, '}', true);
        case '[':
                return json_items(s, depth, ']', false);
        case '"':
                return json_string(s);
        case 't':
                return strncmp(s, "true", 4) == 0 ? s + 4 : NULL;
        case 'f':
                return strncmp(s, "false", 5) == 0 ? s + 5 : NULL;
        case 'n':
                return strncmp(s, "null", 4) == 0 ? s + 4 : NULL;
        default:
                return json_number(s);
        }
}

bool jsoncheck_valid(const char *s)
{
        const char *end = json_value(s, 0);

        return end != NULL && *json_ws(end) == '\0';
}

bool jsoncheck_has_fields(const char *json, const char *const *fields)
{
        char key[64];

        for (; *fields != NULL; fields++) {
                snprintf(key, sizeof key, "\"%s\":", *fields);
                if (strstr(json, key) == NULL) {
                        tap_diag("JSON lacks %s", key);
                        return false;
                }
        }
        return true;
}

bool jsoncheck_utf8(const char *str)
{
        const unsigned char *s = (const unsigned char *)str;

        while (*s != '\0') {
                unsigned len, k;
                uint32_t cp, min;

                if (*s < 0x80) {
                        s++;
                        continue;
                }
                if ((*s & 0xe0) == 0xc0) {
                        len = 2, cp = *s & 0x1f, min = 0x80;
                } else if ((*s & 0xf0) == 0xe0) {
                        len = 3, cp = *s & 0x0f, min = 0x800;
                } else if ((*s & 0xf8) == 0xf0) {
                        len = 4, cp = *s & 0x07, min = 0x10000;
                } else {
                        return false;
                }
                for (k = 1; k < len; k++) {
                        if ((s[k] & 0xc0) != 0x80) {
                                return false;
                        }
                        cp = cp << 6 | (s[k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff ||
                    (cp >= 0xd800 && cp <= 0xdfff)) {
                        return false;
                }
                s += len;
        }
        return true;
}
