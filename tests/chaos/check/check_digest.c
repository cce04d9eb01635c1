/* Checker S16 of a chaos run: the replicas agree (check_digest.h). */
#include "check_digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"

/* Lines of the file at `path` with `needle` in them, the first into
 * `first` (`cap` bytes, may be NULL); -1 when it cannot be read. */
static long count_lines(const char *path, const char *needle, char *first,
                        size_t cap)
{
        size_t len, n = strlen(needle);
        const char *at, *end;
        long count = 0;
        char *buf;

        if (util_read_file(path, &buf, &len) != 0) {
                return -1;
        }
        end = buf + len;
        for (at = buf; (at = memmem(at, (size_t)(end - at), needle, n)) != NULL;
             at += n) {
                const char *bol = at,
                           *eol = memchr(at, '\n', (size_t)(end - at));
                while (bol > buf && bol[-1] != '\n') {
                        bol--;
                }
                if (count++ == 0 && first != NULL) {
                        int w = (int)((eol != NULL ? eol : end) - bol);
                        snprintf(first, cap, "%.*s", w > 300 ? 300 : w, bol);
                }
                if (eol == NULL) {
                        break;
                }
                at = eol;
        }
        free(buf);
        return count;
}

void check_s16(const struct run *r, struct check_result *res)
{
        const struct applylog *a = &r->applylog;
        struct check_note bad = {0, ""};
        char path[4096], line[320];
        long digests = 0, logs = 0, n;
        size_t i;

        for (i = 0; i < a->n_nodes; i++) {
                const char *node = a->nodes[i].name;
                snprintf(path, sizeof path, "%s/nodes/%s/node.log", r->dir,
                         node);
                n = count_lines(path, CHECK_DIGEST_MISMATCH, line, sizeof line);
                logs += n >= 0;
                if (n > 0) {
                        check_note(&bad, "nodes/%s/node.log: %s", node, line);
                }
                snprintf(path, sizeof path, "%s/nodes/%s/apply.log", r->dir,
                         node);
                n = count_lines(
                    path, "\"event\":\"ENTRY\",\"cause\":\"DIGEST\"", NULL, 0);
                digests = n > digests ? n : digests;
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL,
                          "a replica's state is not the leader's: %s (%zu "
                          "nodes)",
                          bad.first, bad.count);
                return;
        }
        check_set(res, CHECK_PASS,
                  "no digest mismatch in %ld node logs; up to %ld DIGEST "
                  "entries applied by a node",
                  logs, digests);
}
