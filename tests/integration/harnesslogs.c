/* What a harness's nodes wrote: apply logs compared across nodes, log lines
 * counted, and reports of sanitizers and failed assertions found. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../lib/tclient.h"
#include "harness.h"

/* --- Apply logs (S9) ---------------------------------------------------------
 */

/* One node's apply log: the event lines of each index, concatenated. */
struct applied {
        char **at; /* at[index]: NULL when this node did not log it */
        uint64_t cap;
        uint64_t last; /* highest index logged */
};

static void applied_free(struct applied *a)
{
        uint64_t i;

        for (i = 0; i < a->cap; i++) {
                free(a->at[i]);
        }
        free(a->at);
        memset(a, 0, sizeof *a);
}

char *harness_read_file(const char *path, size_t *len)
{
        FILE *f = fopen(path, "r");
        char *buf = NULL;
        size_t cap = 0, n = 0;

        if (len != NULL) {
                *len = 0;
        }
        if (f == NULL) {
                return NULL;
        }
        for (;;) {
                size_t got;
                if (cap - n < 65536) {
                        char *p = realloc(buf, cap + 65536 + 1);
                        if (p == NULL) {
                                break;
                        }
                        buf = p;
                        cap += 65536;
                }
                got = fread(buf + n, 1, cap - n, f);
                n += got;
                if (got == 0) {
                        break;
                }
        }
        fclose(f);
        if (buf != NULL) {
                buf[n] = '\0';
        }
        if (len != NULL) {
                *len = n;
        }
        return buf;
}

static bool is_prefix(const char *a, const char *b)
{
        return strncmp(a, b, strlen(a)) == 0;
}

/* Store one index's lines. A replay after a restart must repeat what was
 * logged before (or extend it, if the node died within the entry). */
static int applied_put(struct harness *h, unsigned id, struct applied *a,
                       uint64_t index, char *text)
{
        char **slot;

        if (index >= a->cap) {
                uint64_t cap = a->cap == 0 ? 1024 : a->cap;
                char **p;
                while (cap <= index) {
                        cap *= 2;
                }
                p = realloc(a->at, cap * sizeof *p);
                if (p == NULL) {
                        free(text);
                        return -1;
                }
                memset(p + a->cap, 0, (cap - a->cap) * sizeof *p);
                a->at = p;
                a->cap = cap;
        }
        slot = &a->at[index];
        if (*slot != NULL) {
                if (is_prefix(*slot, text)) {
                        free(*slot);
                        *slot = text;
                } else if (!is_prefix(text, *slot)) {
                        harness_set_err(
                            h,
                            "node %u applied index %" PRIu64
                            " differently when it replayed its log:\n"
                            "#   first:  %.300s\n#   replay: %.300s",
                            id, index, *slot, text);
                        free(text);
                        return -1;
                }
        } else {
                *slot = text;
        }
        if (index > a->last) {
                a->last = index;
        }
        return 0;
}

static int applied_load(struct harness *h, unsigned id, struct applied *a)
{
        size_t len;
        char *buf = harness_read_file(h->nodes[id - 1].apply_log, &len);
        char *p, *group = NULL;
        uint64_t group_index = 0;
        bool group_done = false;
        size_t glen = 0;
        int rv = 0;

        memset(a, 0, sizeof *a);
        if (buf == NULL) {
                return 0; /* never applied anything */
        }
        /* Each line is cut at its newline before it is searched: a search
         * that ran on into the rest of the file made the check quadratic
         * in the log's length (and ASan's strstr measures its whole
         * haystack on every call). */
        for (p = buf; *p != '\0' && rv == 0;) {
                char *nl = strchr(p, '\n');
                char *ix, *mono, *g;
                uint64_t index;
                size_t l;
                if (nl == NULL) {
                        break; /* a torn last line: the node died */
                }
                *nl = '\0';
                ix = strstr(p, "\"index\":");
                if (ix == NULL) {
                        p = nl + 1;
                        continue;
                }
                index = strtoull(ix + 8, NULL, 10);
                if (group != NULL && (index != group_index || group_done)) {
                        rv = applied_put(h, id, a, group_index, group);
                        group = NULL;
                        glen = 0;
                        if (rv != 0) {
                                break;
                        }
                }
                /* Nodes apply at different times: compare the lines
                 * without their trailing mono_ns. */
                mono = strstr(p, ",\"mono_ns\":");
                if (mono != NULL) {
                        *mono++ = '}';
                        *mono = '\0';
                }
                l = strlen(p);
                g = realloc(group, glen + l + 2);
                if (g == NULL) {
                        rv = -1;
                        break;
                }
                group = g;
                memcpy(group + glen, p, l);
                glen += l;
                group[glen++] = '\n';
                group[glen] = '\0';
                group_index = index;
                /* Every entry's events end with an ENTRY line. */
                group_done = strstr(p, "\"event\":\"ENTRY\"") != NULL;
                p = nl + 1;
        }
        if (rv == 0 && group != NULL) {
                rv = applied_put(h, id, a, group_index, group);
                group = NULL;
        }
        free(group);
        free(buf);
        return rv;
}

int harness_check_apply_logs(struct harness *h, unsigned *compared)
{
        struct applied logs[HARNESS_MAX_NODES];
        unsigned i, j, n = 0;
        uint64_t k;
        int rv = 0;

        memset(logs, 0, sizeof logs);
        for (i = 0; i < h->n && rv == 0; i++) {
                rv = applied_load(h, i + 1, &logs[i]);
        }
        for (i = 0; i < h->n && rv == 0; i++) {
                for (j = i + 1; j < h->n && rv == 0; j++) {
                        uint64_t last = logs[i].last < logs[j].last
                                            ? logs[i].last
                                            : logs[j].last;
                        for (k = 1; k <= last && rv == 0; k++) {
                                const char *x = logs[i].at[k];
                                const char *y = logs[j].at[k];
                                if (x == NULL || y == NULL) {
                                        continue;
                                }
                                n++;
                                if (strcmp(x, y) == 0) {
                                        continue;
                                }
                                /* Killed within an entry, never restarted. */
                                if ((k == logs[i].last && is_prefix(x, y)) ||
                                    (k == logs[j].last && is_prefix(y, x))) {
                                        continue;
                                }
                                harness_set_err(
                                    h,
                                    "apply logs differ at index %" PRIu64
                                    ":\n#   node %u: %.300s\n#   node "
                                    "%u: %.300s",
                                    k, i + 1, x, j + 1, y);
                                rv = -1;
                        }
                }
        }
        for (i = 0; i < h->n; i++) {
                applied_free(&logs[i]);
        }
        if (compared != NULL) {
                *compared = n;
        }
        return rv;
}

unsigned harness_undecodable_entries(struct harness *h, unsigned *node)
{
        unsigned i, total = 0;

        for (i = 0; i < h->n; i++) {
                size_t len;
                char *buf = harness_read_file(h->nodes[i].apply_log, &len);
                char *p = buf;
                unsigned n = 0;
                while (p != NULL &&
                       (p = strstr(p, "\"cause\":\"UNKNOWN\"")) != NULL) {
                        char *st = strstr(p, "\"status\":");
                        int status = st != NULL ? atoi(st + 9) : 0;
                        if (status == BATON_EVERSION ||
                            status == BATON_EMALFORMED) {
                                n++;
                        }
                        p++;
                }
                free(buf);
                if (n > 0 && total == 0 && node != NULL) {
                        *node = i + 1;
                }
                total += n;
        }
        return total;
}

unsigned harness_log_count(const struct harness *h, unsigned id,
                           const char *needle)
{
        FILE *f = fopen(h->nodes[id - 1].log_path, "r");
        char line[2048];
        unsigned n = 0;

        if (f == NULL) {
                return 0;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                n += strstr(line, needle) != NULL;
        }
        fclose(f);
        return n;
}

/* Print the first report's line and the ones after it (up to REPORT_LINES):
 * a sanitizer's stack, which the summary line alone does not give. `nl` is
 * where `line` ended (NULL: the end of the log). */
#define REPORT_LINES 36
static void report_lines(unsigned node, const char *line, const char *nl)
{
        unsigned k;

        printf("# node %u's log: %s\n", node, line);
        for (k = 1; k < REPORT_LINES && nl != NULL; k++) {
                const char *next = nl + 1;
                const char *end = strchr(next, '\n');

                if (*next == '\0') {
                        break;
                }
                printf("#   %.*s\n",
                       (int)(end != NULL ? end - next : (long)strlen(next)),
                       next);
                nl = end;
        }
}

unsigned harness_scan_logs(struct harness *h, char *first, size_t cap)
{
        static const char *const bad[] = {
            "ERROR: AddressSanitizer",
            "ERROR: LeakSanitizer",
            "runtime error:",
            "Assertion",
            "assertion",
            "WARNING: ThreadSanitizer",
        };
        unsigned i, k, n = 0;

        if (first != NULL && cap > 0) {
                first[0] = '\0';
        }
        for (i = 0; i < h->n; i++) {
                size_t len;
                char *buf = harness_read_file(h->nodes[i].log_path, &len);
                char *line = buf;
                while (line != NULL && *line != '\0') {
                        char *nl = strchr(line, '\n');
                        if (nl != NULL) {
                                *nl = '\0';
                        }
                        for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
                                if (strstr(line, bad[k]) == NULL) {
                                        continue;
                                }
                                if (n++ == 0) {
                                        report_lines(i + 1, line, nl);
                                }
                                if (n == 1 && first != NULL) {
                                        snprintf(first, cap, "node %u: %.200s",
                                                 i + 1, line);
                                }
                                break;
                        }
                        line = nl != NULL ? nl + 1 : NULL;
                }
                free(buf);
        }
        return n;
}

bool harness_apply_log_has(struct harness *h, const char *needle)
{
        for (unsigned i = 0; i < h->n; i++) {
                size_t len;
                char *buf = harness_read_file(h->nodes[i].apply_log, &len);
                bool found = buf != NULL && strstr(buf, needle) != NULL;

                free(buf);
                if (found) {
                        return true;
                }
        }
        return false;
}
