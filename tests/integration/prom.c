/* A checker of the Prometheus text exposition format. */
#include "prom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROM_TYPES 128

struct prom {
        char types[PROM_TYPES][96]; /* "name kind" of each # TYPE */
        unsigned n_types;
        unsigned samples;
};

static bool prom_name(const char **p, bool colon)
{
        const char *s = *p;

        if (!(**p == '_' || (**p >= 'a' && **p <= 'z') ||
              (**p >= 'A' && **p <= 'Z') || (colon && **p == ':'))) {
                return false;
        }
        while (**p == '_' || (**p >= 'a' && **p <= 'z') ||
               (**p >= 'A' && **p <= 'Z') || (**p >= '0' && **p <= '9') ||
               (colon && **p == ':')) {
                (*p)++;
        }
        return *p > s;
}

static bool prom_number(const char **p)
{
        static const char *const words[] = {"+Inf", "-Inf", "NaN"};
        unsigned i;
        char *end;

        for (i = 0; i < 3; i++) {
                if (strncmp(*p, words[i], strlen(words[i])) == 0) {
                        *p += strlen(words[i]);
                        return true;
                }
        }
        if (!((**p >= '0' && **p <= '9') || **p == '-' || **p == '+' ||
              **p == '.')) {
                return false;
        }
        strtod(*p, &end);
        if (end == *p) {
                return false;
        }
        *p = end;
        return true;
}

/* The kind a # TYPE line gave the family of sample `name`, or NULL. */
static const char *prom_kind(const struct prom *pr, const char *name,
                             size_t len)
{
        static const char *const suffixes[] = {"", "_bucket", "_sum", "_count"};
        unsigned i, k;

        for (k = 0; k < 4; k++) {
                size_t sl = strlen(suffixes[k]);
                if (len <= sl ||
                    memcmp(name + len - sl, suffixes[k], sl) != 0) {
                        continue;
                }
                for (i = 0; i < pr->n_types; i++) {
                        const char *t = pr->types[i];
                        if (strncmp(t, name, len - sl) == 0 &&
                            t[len - sl] == ' ' &&
                            (k == 0 ||
                             strcmp(t + len - sl + 1, "histogram") == 0 ||
                             strcmp(t + len - sl + 1, "summary") == 0)) {
                                return t + len - sl + 1;
                        }
                }
        }
        return NULL;
}

/* One line of the text format; false with `why`. */
static bool prom_line(struct prom *pr, const char *l, char *why, size_t cap)
{
        const char *p = l, *name;
        size_t len;

        if (*p == '\0') {
                return true;
        }
        if (*p == '#') {
                if (strncmp(p, "# TYPE ", 7) == 0) {
                        p += 7;
                        name = p;
                        if (!prom_name(&p, true) || *p != ' ' ||
                            pr->n_types == PROM_TYPES) {
                                snprintf(why, cap, "bad TYPE line: %.100s", l);
                                return false;
                        }
                        if (strcmp(p + 1, "counter") != 0 &&
                            strcmp(p + 1, "gauge") != 0 &&
                            strcmp(p + 1, "histogram") != 0 &&
                            strcmp(p + 1, "summary") != 0 &&
                            strcmp(p + 1, "untyped") != 0) {
                                snprintf(why, cap, "unknown type: %.100s", l);
                                return false;
                        }
                        if (strlen(name) >= sizeof pr->types[0]) {
                                snprintf(why, cap, "long TYPE line: %.100s", l);
                                return false;
                        }
                        memcpy(pr->types[pr->n_types++], name,
                               strlen(name) + 1);
                } else if (strncmp(p, "# HELP ", 7) == 0) {
                        p += 7;
                        if (!prom_name(&p, true) || *p != ' ') {
                                snprintf(why, cap, "bad HELP line: %.100s", l);
                                return false;
                        }
                }
                return true;
        }
        name = p;
        if (!prom_name(&p, true)) {
                snprintf(why, cap, "no metric name: %.100s", l);
                return false;
        }
        len = (size_t)(p - name);
        if (*p == '{') {
                p++;
                while (*p != '}') {
                        if (!prom_name(&p, false) || *p++ != '=' ||
                            *p++ != '"') {
                                snprintf(why, cap, "bad label: %.100s", l);
                                return false;
                        }
                        while (*p != '"' && *p != '\0') {
                                if (*p == '\\' && p[1] != '\0') {
                                        p++;
                                }
                                p++;
                        }
                        if (*p++ != '"' || (*p != ',' && *p != '}')) {
                                snprintf(why, cap, "bad label value: %.100s",
                                         l);
                                return false;
                        }
                        if (*p == ',') {
                                p++;
                        }
                }
                p++;
        }
        if (*p++ != ' ' || !prom_number(&p)) {
                snprintf(why, cap, "no value: %.100s", l);
                return false;
        }
        if (*p == ' ') { /* an optional timestamp */
                p++;
                if (*p == '-') {
                        p++;
                }
                while (*p >= '0' && *p <= '9') {
                        p++;
                }
        }
        if (*p != '\0') {
                snprintf(why, cap, "trailing text: %.100s", l);
                return false;
        }
        if (prom_kind(pr, name, len) == NULL) {
                snprintf(why, cap, "sample without a # TYPE: %.100s", l);
                return false;
        }
        pr->samples++;
        return true;
}

/* Whether `text` is valid Prometheus text exposition; `*samples` counts. */
bool prom_valid(const char *text, unsigned *samples, char *why, size_t cap)
{
        struct prom *pr = calloc(1, sizeof *pr);
        char line[1024];
        const char *p = text;
        bool ok = pr != NULL;

        while (ok && *p != '\0') {
                const char *nl = strchr(p, '\n');
                size_t len;
                if (nl == NULL) {
                        snprintf(why, cap, "the last line has no newline");
                        ok = false;
                        break;
                }
                len = (size_t)(nl - p);
                if (len >= sizeof line) {
                        snprintf(why, cap, "a line of %zu bytes", len);
                        ok = false;
                        break;
                }
                memcpy(line, p, len);
                line[len] = '\0';
                ok = prom_line(pr, line, why, cap);
                p = nl + 1;
        }
        if (ok && pr->samples == 0) {
                snprintf(why, cap, "no samples");
                ok = false;
        }
        *samples = pr != NULL ? pr->samples : 0;
        free(pr);
        return ok;
}

/* The value of the sample written exactly `series` ("name" or
 * "name{labels}"). */
bool prom_value(const char *text, const char *series, double *v)
{
        size_t len = strlen(series);
        const char *p = text;

        while (p != NULL && *p != '\0') {
                if (strncmp(p, series, len) == 0 && p[len] == ' ') {
                        *v = strtod(p + len + 1, NULL);
                        return true;
                }
                p = strchr(p, '\n');
                if (p != NULL) {
                        p++;
                }
        }
        return false;
}
