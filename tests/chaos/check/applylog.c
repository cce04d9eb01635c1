/* The nodes' apply logs of a chaos run, parsed per node and merged. */
#include "applylog.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../include/baton.h"

static const char *const event_names[] = {
    [APPLYLOG_UNKNOWN] = "UNKNOWN",   [APPLYLOG_RESULT] = "RESULT",
    [APPLYLOG_OPEN] = "OPEN",         [APPLYLOG_END] = "END",
    [APPLYLOG_GRANT] = "GRANT",       [APPLYLOG_RELEASE] = "RELEASE",
    [APPLYLOG_QUEUE] = "QUEUE",       [APPLYLOG_UNQUEUE] = "UNQUEUE",
    [APPLYLOG_BLOCK] = "BLOCK",       [APPLYLOG_UNBLOCK] = "UNBLOCK",
    [APPLYLOG_PROCLAIM] = "PROCLAIM", [APPLYLOG_ENTRY] = "ENTRY",
    [APPLYLOG_EXTEND] = "EXTEND",
};

static const char *const cause_names[] = {
    [0] = "UNKNOWN",
    [APPLYLOG_C_OPEN] = "OPEN",
    [APPLYLOG_C_CLOSE] = "CLOSE",
    [APPLYLOG_C_EXPIRE] = "EXPIRE",
    [APPLYLOG_C_ACQUIRE] = "ACQUIRE",
    [APPLYLOG_C_RELEASE] = "RELEASE",
    [APPLYLOG_C_CANCEL] = "CANCEL",
    [APPLYLOG_C_TIMEOUT] = "TIMEOUT",
    [APPLYLOG_C_QUERY] = "QUERY",
    [APPLYLOG_C_CHECK] = "CHECK",
    [APPLYLOG_C_MEMBER] = "MEMBER",
    [APPLYLOG_C_BATCH] = "BATCH",
    [APPLYLOG_C_REVOKE] = "REVOKE",
    [APPLYLOG_C_UNBLOCK] = "UNBLOCK",
    [APPLYLOG_C_MULTI] = "MULTI",
    [APPLYLOG_C_REVOKE_LOCK] = "REVOKE_LOCK",
    [APPLYLOG_C_CLOCK] = "CLOCK",
    [APPLYLOG_C_PROCLAIM] = "PROCLAIM",
    [APPLYLOG_C_ACL] = "ACL",
    [APPLYLOG_C_DIGEST] = "DIGEST",
    [APPLYLOG_C_SET_VALUE] = "SET_VALUE",
    [APPLYLOG_C_EXTEND] = "EXTEND",
    [APPLYLOG_C_EXPIRE_HOLD] = "EXPIRE_HOLD",
};

#define N_EVENTS (sizeof event_names / sizeof event_names[0])
#define N_CAUSES (sizeof cause_names / sizeof cause_names[0])

const char *applylog_event_name(int type)
{
        return type >= 0 && (size_t)type < N_EVENTS ? event_names[type] : "?";
}

const char *applylog_cause_name(int cause)
{
        return cause >= 0 && (size_t)cause < N_CAUSES ? cause_names[cause]
                                                      : "?";
}

static int lookup(const char *const *names, size_t n, const char *s)
{
        size_t i;

        for (i = 1; i < n; i++) {
                if (strcmp(names[i], s) == 0) {
                        return (int)i;
                }
        }
        return 0;
}

/* A JSON string starting after its opening quote: decoded into `out` (at
 * most `cap` - 1 bytes), `*p` left after the closing quote. The writer only
 * escapes '"', '\\' and bytes as \u00XX. */
static bool parse_string(const char **p, char *out, size_t cap, size_t *len)
{
        const char *s = *p;
        size_t n = 0;

        for (;;) {
                char c = *s++;
                if (c == '\0') {
                        return false;
                }
                if (c == '"') {
                        break;
                }
                if (c == '\\') {
                        c = *s++;
                        if (c == 'u') {
                                unsigned v = 0;
                                int i;
                                for (i = 0; i < 4; i++) {
                                        char h = *s++;
                                        v <<= 4;
                                        if (h >= '0' && h <= '9') {
                                                v |= (unsigned)(h - '0');
                                        } else if (h >= 'a' && h <= 'f') {
                                                v |= (unsigned)(h - 'a' + 10);
                                        } else if (h >= 'A' && h <= 'F') {
                                                v |= (unsigned)(h - 'A' + 10);
                                        } else {
                                                return false;
                                        }
                                }
                                if (v > 0xff) {
                                        return false;
                                }
                                c = (char)v;
                        } else if (c == 'n') {
                                c = '\n';
                        } else if (c == 't') {
                                c = '\t';
                        } else if (c != '"' && c != '\\' && c != '/') {
                                return false;
                        }
                }
                if (n + 1 >= cap) {
                        return false;
                }
                out[n++] = c;
        }
        out[n] = '\0';
        *len = n;
        *p = s;
        return true;
}

static bool parse_number(const char **p, int64_t *neg_or_u, uint64_t *u,
                         bool *negative)
{
        const char *s = *p;
        uint64_t v = 0;

        *negative = false;
        if (*s == '-') {
                *negative = true;
                s++;
        }
        if (*s < '0' || *s > '9') {
                return false;
        }
        while (*s >= '0' && *s <= '9') {
                unsigned d = (unsigned)(*s++ - '0');
                if (v > (UINT64_MAX - d) / 10) {
                        return false;
                }
                v = v * 10 + d;
        }
        if (*negative && v > (uint64_t)INT64_MAX) {
                return false;
        }
        *u = v;
        *neg_or_u = *negative ? -(int64_t)v : (int64_t)v;
        *p = s;
        return true;
}

/* Parse one flat JSON line of the apply log into `ev`, interning its lock
 * name into `locks` and its value (an election's) into `values`. The line
 * stays intact until the end, where it is cut before its mono_ns. */
static bool parse_event(char *line, struct applylog_event *ev,
                        struct util_strtab *locks, struct util_strtab *values)
{
        char str[1024];
        const char *p = line;
        char *mono_at = NULL;
        bool have_index = false, have_event = false, have_mono = false;
        size_t len;

        memset(ev, 0, sizeof *ev);
        ev->lock = -1;
        ev->value = -1;
        ev->mode = APPLYLOG_MODE_NONE;
        len = strlen(line);
        if (len < 2 || line[0] != '{' || line[len - 1] != '}') {
                return false;
        }
        p++;
        while (*p != '}') {
                char key[32];
                const char *key_start = p;
                size_t klen;

                if (*p++ != '"' || !parse_string(&p, key, sizeof key, &klen) ||
                    *p++ != ':') {
                        return false;
                }
                if (*p == '"') {
                        p++;
                        if (!parse_string(&p, str, sizeof str, &len)) {
                                return false;
                        }
                        if (strcmp(key, "event") == 0) {
                                ev->type = lookup(event_names, N_EVENTS, str);
                                have_event = true;
                        } else if (strcmp(key, "cause") == 0) {
                                ev->cause = lookup(cause_names, N_CAUSES, str);
                        } else if (strcmp(key, "lock") == 0 && len > 0) {
                                ev->lock = util_strtab_intern(locks, str, len);
                        } else if (strcmp(key, "value") == 0) {
                                ev->value =
                                    util_strtab_intern(values, str, len);
                        }
                } else {
                        int64_t i;
                        uint64_t u;
                        bool neg;

                        if (!parse_number(&p, &i, &u, &neg)) {
                                return false;
                        }
                        if (strcmp(key, "index") == 0) {
                                ev->index = u;
                                have_index = !neg;
                        } else if (strcmp(key, "term") == 0) {
                                ev->term = u;
                        } else if (strcmp(key, "session") == 0) {
                                ev->session = u;
                        } else if (strcmp(key, "seq") == 0) {
                                ev->seq = u;
                        } else if (strcmp(key, "owner") == 0) {
                                ev->owner = u;
                        } else if (strcmp(key, "token") == 0) {
                                ev->token = u;
                        } else if (strcmp(key, "status") == 0) {
                                ev->status = (int)i;
                        } else if (strcmp(key, "mode") == 0 && !neg &&
                                   u <= 255) {
                                ev->mode = (int)u;
                        } else if (strcmp(key, "permits") == 0 && !neg &&
                                   u <= UINT32_MAX) {
                                ev->permits = (uint32_t)u;
                        } else if (strcmp(key, "hold_ms") == 0 && !neg &&
                                   u <= UINT32_MAX) {
                                ev->hold_ms = (uint32_t)u;
                        } else if (strcmp(key, "mono_ns") == 0) {
                                ev->mono_ns = i;
                                have_mono = true;
                                /* key_start - 1 is the comma before it. */
                                mono_at = (char *)key_start - 1;
                        }
                }
                if (*p == ',') {
                        p++;
                } else if (*p != '}') {
                        return false;
                }
        }
        if (!have_index || !have_event || !have_mono || p[1] != '\0') {
                return false;
        }
        if (mono_at > line && *mono_at == ',') {
                *mono_at = '\0';
        }
        ev->text = line;
        return true;
}

/* The entry at `index` among a node's (sorted) entries, or NULL; `*at` is
 * where it is or would be inserted. */
static struct applylog_entry *node_find(struct applylog_node *nd,
                                        uint64_t index, size_t *at)
{
        size_t lo = 0, hi = nd->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (nd->entries[mid].index < index) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        *at = lo;
        return lo < nd->n_entries && nd->entries[lo].index == index
                   ? &nd->entries[lo]
                   : NULL;
}

/* Whether entry `a` (n_a events from a_first) is a prefix of or equal to
 * entry `b`. */
static bool is_prefix(const struct applylog_node *nd,
                      const struct applylog_entry *a,
                      const struct applylog_entry *b)
{
        size_t i;

        if (a->n > b->n) {
                return false;
        }
        for (i = 0; i < a->n; i++) {
                if (!applylog_same_event(&nd->events[a->first + i],
                                         &nd->events[b->first + i])) {
                        return false;
                }
        }
        return true;
}

/* Add an entry just read (its events are the last e.n of the node's). */
static void add_entry(struct applylog_node *nd, struct applylog_entry e)
{
        struct applylog_entry *old;
        size_t at;

        e.complete = nd->events[e.first + e.n - 1].type == APPLYLOG_ENTRY;
        e.mono_ns = nd->events[e.first].mono_ns;
        old = node_find(nd, e.index, &at);
        if (old == NULL) {
                util_reserve((void **)&nd->entries, &nd->cap_entries,
                             nd->n_entries + 1, sizeof *nd->entries);
                memmove(&nd->entries[at + 1], &nd->entries[at],
                        (nd->n_entries - at) * sizeof *nd->entries);
                nd->entries[at] = e;
                nd->n_entries++;
                return;
        }
        /* Applied again (a restart replays the log after the snapshot):
         * the same index must give the same events. */
        nd->n_replayed++;
        if (is_prefix(nd, old, &e) && (!old->complete || old->n == e.n)) {
                if (!old->complete && e.complete) {
                        int64_t mono = old->mono_ns;
                        *old = e;
                        old->mono_ns = mono;
                }
                return;
        }
        if (!e.complete && is_prefix(nd, &e, old)) {
                return;
        }
        if (nd->mismatch[0] == '\0') {
                snprintf(nd->mismatch, sizeof nd->mismatch,
                         "%s applied index %llu twice differently: %.150s "
                         "vs %.150s",
                         nd->name, (unsigned long long)e.index,
                         nd->events[old->first].text, nd->events[e.first].text);
        }
}

static int load_node(struct applylog_node *nd, const char *path,
                     struct util_strtab *locks, struct util_strtab *values,
                     char *errmsg, size_t cap)
{
        struct applylog_entry cur = {0, 0, 0, 0, false};
        struct applylog_event ev;
        size_t len, pos = 0;
        char *line;
        bool complete, open = false;

        if (util_read_file(path, &nd->buf, &len) != 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        nd->present = true;
        while ((line = util_next_line(nd->buf, len, &pos, &complete)) != NULL) {
                if (!complete) {
                        /* Cut by a kill or a full disk mid-write. */
                        nd->n_torn += line[0] != '\0';
                        break;
                }
                if (line[0] == '\0') {
                        continue;
                }
                if (!parse_event(line, &ev, locks, values)) {
                        nd->n_bad++;
                        continue;
                }
                /* An entry's events are consecutive and end with an ENTRY
                 * line; a change of index without one means the entry was
                 * cut short (the node died while applying it). */
                if (open && ev.index != cur.index) {
                        add_entry(nd, cur);
                        open = false;
                }
                util_push((void **)&nd->events, &nd->n_events, &nd->cap_events,
                          &ev, sizeof ev);
                if (!open) {
                        cur.index = ev.index;
                        cur.first = nd->n_events - 1;
                        cur.n = 0;
                        open = true;
                }
                cur.n++;
                if (ev.type == APPLYLOG_ENTRY) {
                        add_entry(nd, cur);
                        open = false;
                }
        }
        if (open) {
                add_entry(nd, cur);
        }
        return 0;
}

static int cmp_node_names(const void *a, const void *b)
{
        const struct applylog_node *x = a, *y = b;
        size_t lx = strlen(x->name), ly = strlen(y->name);

        /* n2 before n10. */
        if (lx != ly) {
                return lx < ly ? -1 : 1;
        }
        return strcmp(x->name, y->name);
}

/* Preference among the nodes that logged one index: complete first, then
 * the node with more entries, then the lower node. */
static bool better(const struct applylog *a, const struct applylog_ref *x,
                   const struct applylog_ref *y)
{
        const struct applylog_node *nx = &a->nodes[x->node];
        const struct applylog_node *ny = &a->nodes[y->node];
        bool cx = nx->entries[x->entry].complete;
        bool cy = ny->entries[y->entry].complete;

        if (cx != cy) {
                return cx;
        }
        if (nx->n_entries != ny->n_entries) {
                return nx->n_entries > ny->n_entries;
        }
        return x->node < y->node;
}

static int cmp_refs(const void *p, const void *q)
{
        const struct applylog_ref *x = p, *y = q;

        if (x->index != y->index) {
                return x->index < y->index ? -1 : 1;
        }
        return x->node < y->node ? -1 : x->node > y->node;
}

static void merge(struct applylog *a)
{
        struct applylog_ref *all = NULL;
        size_t n = 0, cap = 0, i, j, k;

        for (i = 0; i < a->n_nodes; i++) {
                const struct applylog_node *nd = &a->nodes[i];
                for (j = 0; j < nd->n_entries; j++) {
                        struct applylog_ref r = {nd->entries[j].index, (int)i,
                                                 j, nd->entries[j].mono_ns};
                        util_push((void **)&all, &n, &cap, &r, sizeof r);
                }
        }
        util_sort(all, n, sizeof *all, cmp_refs);
        for (i = 0, k = 0; i < n; i = j) {
                struct applylog_ref best = all[i];
                for (j = i + 1; j < n && all[j].index == all[i].index; j++) {
                        if (all[j].mono_ns < best.mono_ns) {
                                best.mono_ns = all[j].mono_ns;
                        }
                        if (better(a, &all[j], &best)) {
                                int64_t mono = best.mono_ns;
                                best = all[j];
                                best.mono_ns = mono;
                        }
                }
                all[k++] = best;
        }
        a->merged = all;
        a->n_merged = k;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
        return x < y ? -1 : x > y;
}

static int cmp_grants(const void *p, const void *q)
{
        const struct applylog_fact *x = p, *y = q;

        if (x->lock != y->lock) {
                return x->lock < y->lock ? -1 : 1;
        }
        if (x->session != y->session) {
                return cmp_u64(x->session, y->session);
        }
        return cmp_u64(x->index, y->index);
}

static int cmp_releases(const void *p, const void *q)
{
        const struct applylog_fact *x = p, *y = q;

        if (x->lock != y->lock) {
                return x->lock < y->lock ? -1 : 1;
        }
        if (x->token != y->token) {
                return cmp_u64(x->token, y->token);
        }
        return cmp_u64(x->index, y->index);
}

static int cmp_ends(const void *p, const void *q)
{
        const struct applylog_fact *x = p, *y = q;

        if (x->session != y->session) {
                return cmp_u64(x->session, y->session);
        }
        return cmp_u64(x->index, y->index);
}

/* Collect the facts the checkers look up, from the merged log. */
static void index_facts(struct applylog *a)
{
        size_t cap_g = 0, cap_r = 0, cap_e = 0, cap_b = 0, i, j, n;

        for (i = 0; i < a->n_merged; i++) {
                const struct applylog_event *ev =
                    applylog_events(a, &a->merged[i], &n);
                for (j = 0; j < n; j++) {
                        struct applylog_fact f = {
                            ev[j].lock,          ev[j].type,  ev[j].cause,
                            ev[j].session,       ev[j].token, ev[j].index,
                            a->merged[i].mono_ns};
                        if (ev[j].type == APPLYLOG_GRANT) {
                                util_push((void **)&a->grants, &a->n_grants,
                                          &cap_g, &f, sizeof f);
                        } else if (ev[j].type == APPLYLOG_RELEASE ||
                                   (ev[j].type == APPLYLOG_RESULT &&
                                    ev[j].cause == APPLYLOG_C_RELEASE &&
                                    ev[j].status == 0)) {
                                util_push((void **)&a->releases, &a->n_releases,
                                          &cap_r, &f, sizeof f);
                        } else if (ev[j].type == APPLYLOG_END) {
                                util_push((void **)&a->ends, &a->n_ends, &cap_e,
                                          &f, sizeof f);
                        } else if (ev[j].type == APPLYLOG_RESULT &&
                                   ev[j].cause == APPLYLOG_C_ACQUIRE &&
                                   ev[j].status == BATON_EBUSY) {
                                util_push((void **)&a->busies, &a->n_busies,
                                          &cap_b, &f, sizeof f);
                        }
                }
        }
        util_sort(a->grants, a->n_grants, sizeof *a->grants, cmp_grants);
        util_sort(a->releases, a->n_releases, sizeof *a->releases,
                  cmp_releases);
        util_sort(a->ends, a->n_ends, sizeof *a->ends, cmp_ends);
        util_sort(a->busies, a->n_busies, sizeof *a->busies, cmp_grants);
}

/* The range of `facts` (sorted by `cmp`) that compares equal to `key` when
 * the index is ignored: keys carry index 0 and ranges are found as
 * [first >= key, first >= key with index UINT64_MAX). */
static size_t lower(const struct applylog_fact *facts, size_t n,
                    const struct applylog_fact *key,
                    int (*cmp)(const void *, const void *))
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (cmp(&facts[mid], key) < 0) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo;
}

static const struct applylog_fact *range(const struct applylog_fact *facts,
                                         size_t n, struct applylog_fact key,
                                         int (*cmp)(const void *, const void *),
                                         size_t *count)
{
        size_t from, to;

        key.index = 0;
        from = lower(facts, n, &key, cmp);
        key.index = UINT64_MAX;
        to = lower(facts, n, &key, cmp);
        /* An index of UINT64_MAX itself would sort at `to`: include it. */
        while (to < n && cmp(&facts[to], &key) == 0) {
                to++;
        }
        *count = to - from;
        return facts + from;
}

const struct applylog_fact *applylog_grants(const struct applylog *a, int lock,
                                            uint64_t session, size_t *n)
{
        struct applylog_fact key = {.lock = lock, .session = session};

        return range(a->grants, a->n_grants, key, cmp_grants, n);
}

const struct applylog_fact *applylog_busies(const struct applylog *a, int lock,
                                            uint64_t session, size_t *n)
{
        struct applylog_fact key = {.lock = lock, .session = session};

        return range(a->busies, a->n_busies, key, cmp_grants, n);
}

const struct applylog_fact *
applylog_releases(const struct applylog *a, int lock, uint64_t token, size_t *n)
{
        struct applylog_fact key = {.lock = lock, .token = token};

        return range(a->releases, a->n_releases, key, cmp_releases, n);
}

const struct applylog_fact *applylog_end(const struct applylog *a,
                                         uint64_t session)
{
        struct applylog_fact key = {.session = session};
        size_t n;
        const struct applylog_fact *f =
            range(a->ends, a->n_ends, key, cmp_ends, &n);

        return n > 0 ? f : NULL;
}

int applylog_load(struct applylog *a, const char *nodes_dir,
                  struct util_strtab *locks, char *errmsg, size_t cap)
{
        struct applylog_node *nodes = NULL;
        size_t n = 0, ncap = 0, i;
        struct dirent *e;
        char path[4096];
        struct stat st;
        DIR *d;

        memset(a, 0, sizeof *a);
        util_strtab_init(&a->values);
        d = opendir(nodes_dir);
        if (d == NULL) {
                return 0;
        }
        while ((e = readdir(d)) != NULL) {
                struct applylog_node nd;
                if (e->d_name[0] == '.') {
                        continue;
                }
                snprintf(path, sizeof path, "%s/%s", nodes_dir, e->d_name);
                if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
                        continue;
                }
                memset(&nd, 0, sizeof nd);
                nd.name = util_strndup(e->d_name, strlen(e->d_name));
                util_push((void **)&nodes, &n, &ncap, &nd, sizeof nd);
        }
        closedir(d);
        util_sort(nodes, n, sizeof *nodes, cmp_node_names);
        a->nodes = nodes;
        a->n_nodes = n;
        for (i = 0; i < n; i++) {
                snprintf(path, sizeof path, "%s/%s/apply.log", nodes_dir,
                         nodes[i].name);
                if (load_node(&nodes[i], path, locks, &a->values, errmsg,
                              cap) != 0) {
                        return -1;
                }
        }
        merge(a);
        index_facts(a);
        return 0;
}

void applylog_free(struct applylog *a)
{
        size_t i;

        for (i = 0; i < a->n_nodes; i++) {
                free(a->nodes[i].name);
                free(a->nodes[i].buf);
                free(a->nodes[i].events);
                free(a->nodes[i].entries);
        }
        free(a->nodes);
        free(a->merged);
        free(a->grants);
        free(a->releases);
        free(a->ends);
        free(a->busies);
        util_strtab_close(&a->values);
        memset(a, 0, sizeof *a);
}

const struct applylog_ref *applylog_find(const struct applylog *a,
                                         uint64_t index)
{
        size_t lo = 0, hi = a->n_merged;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (a->merged[mid].index < index) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo < a->n_merged && a->merged[lo].index == index ? &a->merged[lo]
                                                                : NULL;
}

const struct applylog_event *applylog_events(const struct applylog *a,
                                             const struct applylog_ref *r,
                                             size_t *n)
{
        const struct applylog_node *nd = &a->nodes[r->node];
        const struct applylog_entry *e = &nd->entries[r->entry];

        *n = e->n;
        return &nd->events[e->first];
}

bool applylog_shared(const struct applylog_event *ev)
{
        return ev->mode == APPLYLOG_MODE_NONE
                   ? ev->owner == APPLYLOG_OWNER_READER
                   : ev->mode == APPLYLOG_MODE_SHARED;
}

const char *applylog_value(const struct applylog *a,
                           const struct applylog_event *ev)
{
        return ev->value >= 0 && (size_t)ev->value < a->values.n
                   ? a->values.names[ev->value]
                   : "";
}

bool applylog_semaphore(const struct applylog_event *ev)
{
        return ev->mode == APPLYLOG_MODE_SEMAPHORE;
}

uint32_t applylog_permits(const struct applylog_event *ev)
{
        return ev->permits > 0 ? ev->permits : 1;
}

bool applylog_same_event(const struct applylog_event *x,
                         const struct applylog_event *y)
{
        return x->index == y->index &&
               (x->term == y->term || x->term == 0 || y->term == 0) &&
               x->type == y->type && x->cause == y->cause &&
               x->session == y->session && x->seq == y->seq &&
               x->owner == y->owner && x->token == y->token &&
               x->status == y->status && x->lock == y->lock &&
               x->permits == y->permits && x->value == y->value &&
               (x->mode == y->mode || x->mode == APPLYLOG_MODE_NONE ||
                y->mode == APPLYLOG_MODE_NONE);
}
