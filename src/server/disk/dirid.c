/* A data directory's identity record (dirid.h). */
#include "dirid.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../include/baton/errors.h"
#include "../base/fnv.h"

size_t dirid_format(const struct dirid *d, char *buf, size_t cap)
{
        size_t off = 0;
        unsigned i;
        int n;

#define PUT(...)                                                               \
        do {                                                                   \
                n = snprintf(buf + (off < cap ? off : 0),                      \
                             off < cap ? cap - off : 0, __VA_ARGS__);          \
                off += (size_t)n;                                              \
        } while (0)

        PUT("# Which node of which cluster this data directory belongs "
            "to: batond\n# checks it at every start. Written by batond; "
            "never copy it to\n# another node (docs/operations.md, \"The "
            "data directory\").\n");
        PUT("format %d\n", DIRID_FORMAT);
        if (d->cluster == 0) {
                PUT("cluster unknown\n");
        } else {
                PUT("cluster %016" PRIx64 "\n", d->cluster);
        }
        PUT("node %" PRIu64 "\n", d->node);
        PUT("incarnation %016" PRIx64 "\n", d->incarnation);
        for (i = 0; i < d->n_peers; i++) {
                PUT("peer %" PRIu64 " %016" PRIx64 "\n", d->peers[i].id,
                    d->peers[i].incarnation);
        }
#undef PUT
        if (off >= cap && cap > 0) {
                buf[0] = '\0';
        }
        return off;
}

/* A whole unsigned number in `s` (base 10 or 16), nothing after it. */
static bool number(const char *s, int base, uint64_t *out)
{
        char *end;

        if (s == NULL || *s == '\0' || *s == '-' || *s == '+') {
                return false;
        }
        *out = strtoull(s, &end, base);
        return *end == '\0';
}

/* One `key value...` line, split into the words `w`. */
static int parse_line(struct dirid *d, char **w, unsigned n, bool *format,
                      const char **why)
{
        uint64_t v, inc;

        if (strcmp(w[0], "format") == 0) {
                if (n != 2 || !number(w[1], 10, &v) || v == 0) {
                        *why = "format: a number expected";
                        return -1;
                }
                if (v > DIRID_FORMAT) {
                        *why = "format: written by a newer batond";
                        return -1;
                }
                *format = true;
        } else if (strcmp(w[0], "cluster") == 0) {
                if (n == 2 && strcmp(w[1], "unknown") == 0) {
                        d->cluster = 0;
                } else if (n != 2 || !number(w[1], 16, &d->cluster) ||
                           d->cluster == 0) {
                        *why = "cluster: 16 hex digits or \"unknown\" expected";
                        return -1;
                }
        } else if (strcmp(w[0], "node") == 0) {
                if (n != 2 || !number(w[1], 10, &d->node) || d->node == 0) {
                        *why = "node: a raft id expected";
                        return -1;
                }
        } else if (strcmp(w[0], "incarnation") == 0) {
                if (n != 2 || !number(w[1], 16, &d->incarnation) ||
                    d->incarnation == 0) {
                        *why = "incarnation: 16 hex digits expected";
                        return -1;
                }
        } else if (strcmp(w[0], "peer") == 0) {
                if (n != 3 || !number(w[1], 10, &v) || v == 0 ||
                    !number(w[2], 16, &inc) || inc == 0) {
                        *why = "peer: an id and 16 hex digits expected";
                        return -1;
                }
                dirid_remember(d, v, inc);
        }
        /* Other keys: a later batond's, skipped. */
        return 0;
}

int dirid_parse(struct dirid *d, const char *text, size_t len, char *errmsg,
                size_t size)
{
        char line[256], *w[4], *save = NULL, *tok;
        const char *why = NULL, *p = text, *end = text + len, *nl;
        unsigned lineno = 0, n;
        bool format = false;

        memset(d, 0, sizeof *d);
        while (p < end) {
                nl = memchr(p, '\n', (size_t)(end - p));
                size_t l = (size_t)((nl != NULL ? nl : end) - p);
                lineno++;
                if (l >= sizeof line) {
                        snprintf(errmsg, size, "line %u: too long", lineno);
                        return BATON_EINVAL;
                }
                memcpy(line, p, l);
                line[l] = '\0';
                p += l + (nl != NULL ? 1 : 0);
                n = 0;
                for (tok = strtok_r(line, " \t\r", &save); tok != NULL && n < 4;
                     tok = strtok_r(NULL, " \t\r", &save)) {
                        w[n++] = tok;
                }
                if (n == 0 || w[0][0] == '#') {
                        continue;
                }
                if (parse_line(d, w, n, &format, &why) != 0) {
                        snprintf(errmsg, size, "line %u: %s", lineno, why);
                        return BATON_EINVAL;
                }
        }
        if (!format || d->node == 0 || d->incarnation == 0) {
                snprintf(errmsg, size, "%s missing",
                         !format        ? "format"
                         : d->node == 0 ? "node"
                                        : "incarnation");
                return BATON_EINVAL;
        }
        return 0;
}

static int by_id(const void *a, const void *b)
{
        uint64_t x = (*(const struct config_member *const *)a)->id;
        uint64_t y = (*(const struct config_member *const *)b)->id;

        return x < y ? -1 : x > y;
}

uint64_t dirid_cluster_of(const struct config_member *members, unsigned n,
                          const char *name, const char *salt)
{
        const struct config_member *sorted[CONFIG_MAX_MEMBERS];
        uint64_t h = FNV1A64_OFFSET;
        char line[CONFIG_ADDRESS_MAX + 32];
        unsigned i;
        int len;

        n = n < CONFIG_MAX_MEMBERS ? n : CONFIG_MAX_MEMBERS;
        for (i = 0; i < n; i++) {
                sorted[i] = &members[i];
        }
        qsort(sorted, n, sizeof sorted[0], by_id);
        h = fnv1a64(h, "baton cluster 1\n", 16);
        h = fnv1a64(h, name, strlen(name) + 1);
        h = fnv1a64(h, salt, strlen(salt) + 1);
        for (i = 0; i < n; i++) {
                len = snprintf(line, sizeof line, "%" PRIu64 " %s\n",
                               sorted[i]->id, sorted[i]->raft_address);
                h = fnv1a64(h, line, (size_t)len);
        }
        /* FNV's last bytes reach only the low bits well: mix them all. */
        h ^= h >> 33;
        h *= UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 33;
        h *= UINT64_C(0xc4ceb9fe1a85ec53);
        h ^= h >> 33;
        return h != 0 ? h : 1;
}

uint64_t dirid_peer(const struct dirid *d, uint64_t id)
{
        unsigned i;

        for (i = 0; i < d->n_peers; i++) {
                if (d->peers[i].id == id) {
                        return d->peers[i].incarnation;
                }
        }
        return 0;
}

bool dirid_remember(struct dirid *d, uint64_t id, uint64_t incarnation)
{
        unsigned i;

        for (i = 0; i < d->n_peers; i++) {
                if (d->peers[i].id == id) {
                        if (d->peers[i].incarnation == incarnation) {
                                return false;
                        }
                        d->peers[i].incarnation = incarnation;
                        return true;
                }
        }
        if (d->n_peers == DIRID_MAX_PEERS) {
                return false;
        }
        d->peers[d->n_peers].id = id;
        d->peers[d->n_peers].incarnation = incarnation;
        d->n_peers++;
        return true;
}

bool dirid_forget_others(struct dirid *d, const uint64_t *voters, unsigned n)
{
        unsigned i, j, kept = 0;
        bool found;

        for (i = 0; i < d->n_peers; i++) {
                found = false;
                for (j = 0; j < n && !found; j++) {
                        found = voters[j] == d->peers[i].id;
                }
                if (found) {
                        d->peers[kept++] = d->peers[i];
                }
        }
        found = kept != d->n_peers;
        d->n_peers = kept;
        return found;
}
