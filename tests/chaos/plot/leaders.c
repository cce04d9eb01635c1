/* Who led when, from the nodes' logs. */
#include "leaders.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check/util.h"

/* scripts/chaos writes this line into a node's log before each start. */
#define START_MARK "=== scripts/chaos: t="

/* A node's leadership or start, before the clocks are reconciled. */
struct ev {
        int node;
        int kind; /* enum ev_kind */
        uint64_t term;
        int64_t t; /* EV_START: monotonic; else wall clock ns */
};

enum ev_kind { EV_START = 0, EV_LEAD, EV_STOP };

struct evs {
        struct ev *v;
        size_t n, cap;
};

/* "2026-11-29T10:52:13.595Z" at the start of `s` as wall clock ns. */
static bool parse_stamp(const char *s, int64_t *out)
{
        struct tm tm;
        int ms = 0, used = 0;

        memset(&tm, 0, sizeof tm);
        if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon,
                   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms,
                   &used) != 7 ||
            used == 0) {
                return false;
        }
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        *out = (int64_t)timegm(&tm) * 1000000000 + (int64_t)ms * 1000000;
        return true;
}

/* One line of node `node`'s log; `*anchor` is the monotonic time of the
 * last start line not yet matched with a stamped line (-1: none). */
static void node_line(struct leaders *l, struct evs *e, int node, const char *s,
                      int64_t *anchor)
{
        struct ev ev = {.node = node};
        const char *m;
        int64_t wall;

        if (strncmp(s, START_MARK, strlen(START_MARK)) == 0) {
                const char *num = s + strlen(START_MARK);
                char buf[32];
                size_t k = strspn(num, "0123456789");

                if (k == 0 || k >= sizeof buf) {
                        return;
                }
                memcpy(buf, num, k);
                buf[k] = '\0';
                if (!util_parse_i64(buf, &ev.t)) {
                        return;
                }
                ev.kind = EV_START;
                util_push((void **)&e->v, &e->n, &e->cap, &ev, sizeof ev);
                *anchor = ev.t;
                return;
        }
        if (!parse_stamp(s, &wall)) {
                return;
        }
        /* The first stamped line after a start comes soonest after it: its
         * distance bounds the clocks' offset from above. */
        if (*anchor >= 0) {
                if (!l->have_offset || wall - *anchor < l->offset) {
                        l->offset = wall - *anchor;
                        l->have_offset = true;
                }
                *anchor = -1;
        }
        ev.t = wall;
        if ((m = strstr(s, "serving as leader in term ")) != NULL) {
                ev.kind = EV_LEAD;
                ev.term = strtoull(m + strlen("serving as leader in term "),
                                   NULL, 10);
        } else if (strstr(s, "stopped serving") != NULL) {
                ev.kind = EV_STOP;
        } else {
                return;
        }
        util_push((void **)&e->v, &e->n, &e->cap, &ev, sizeof ev);
}

static int read_node(struct leaders *l, struct evs *e, const char *run_dir,
                     int node, bool *present, char *errmsg, size_t cap)
{
        char path[4096], *buf, *s;
        size_t len, pos = 0;
        int64_t anchor = -1;
        bool complete;

        snprintf(path, sizeof path, "%s/nodes/n%d/node.log", run_dir, node);
        *present = false;
        if (util_read_file(path, &buf, &len) != 0) {
                if (errno == ENOENT) {
                        return 0;
                }
                snprintf(errmsg, cap, "%s: %s", path, strerror(errno));
                return -1;
        }
        *present = true;
        while ((s = util_next_line(buf, len, &pos, &complete)) != NULL) {
                node_line(l, e, node, s, &anchor);
        }
        free(buf);
        return 0;
}

/* The node an exit's proc= names: "node3" (scripts/chaos) or "n3"; 0 for
 * other processes. */
static int proc_node(const char *proc)
{
        int node, used = 0;

        if ((sscanf(proc, "node%d%n", &node, &used) == 1 ||
             sscanf(proc, "n%d%n", &node, &used) == 1) &&
            proc[used] == '\0' && node > 0) {
                return node;
        }
        return 0;
}

/* The first monotonic time after `after` at which node `node` exited, or
 * INT64_MAX. */
static int64_t next_exit(const struct nemlog *nl, int node, int64_t after)
{
        int64_t best = INT64_MAX;
        size_t i;

        for (i = 0; i < nl->n_exits; i++) {
                const struct nemlog_exit *x = &nl->exits[i];

                if (x->t > after && x->t < best && proc_node(x->proc) == node) {
                        best = x->t;
                }
        }
        return best;
}

/* The first event of `kind` of node `node` (0: any) after `after`, with a
 * term above `term` for EV_LEAD, or INT64_MAX. */
static int64_t next_ev(const struct evs *e, int kind, int node, uint64_t term,
                       int64_t after)
{
        int64_t best = INT64_MAX;
        size_t i;

        for (i = 0; i < e->n; i++) {
                const struct ev *v = &e->v[i];

                if (v->kind != kind || v->t <= after || v->t >= best ||
                    (node != 0 && v->node != node) ||
                    (kind == EV_LEAD && v->term <= term)) {
                        continue;
                }
                best = v->t;
        }
        return best;
}

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

static int cmp_span(const void *a, const void *b)
{
        const struct leaders_span *x = a, *y = b;

        return (x->start > y->start) - (x->start < y->start);
}

static void build(struct leaders *l, struct evs *e, const struct nemlog *nl,
                  int64_t t_end)
{
        size_t i;

        /* Every event on the monotonic clock from here on. */
        for (i = 0; i < e->n; i++) {
                if (e->v[i].kind != EV_START) {
                        e->v[i].t -= l->offset;
                }
        }
        for (i = 0; i < e->n; i++) {
                const struct ev *v = &e->v[i];
                struct leaders_span sp = {.node = v->node, .term = v->term};

                if (v->kind != EV_LEAD) {
                        continue;
                }
                sp.start = v->t;
                sp.end = min64(t_end, next_ev(e, EV_STOP, v->node, 0, v->t));
                sp.end = min64(sp.end, next_ev(e, EV_START, v->node, 0, v->t));
                sp.end = min64(sp.end, next_exit(nl, v->node, v->t));
                sp.end = min64(sp.end, next_ev(e, EV_LEAD, 0, v->term, v->t));
                if (sp.end > sp.start) {
                        util_push((void **)&l->spans, &l->n_spans,
                                  &l->cap_spans, &sp, sizeof sp);
                }
        }
        util_sort(l->spans, l->n_spans, sizeof *l->spans, cmp_span);
        for (i = 0; i < nl->n_exits; i++) {
                const struct nemlog_exit *x = &nl->exits[i];
                struct leaders_down d;

                if ((d.node = proc_node(x->proc)) == 0) {
                        continue;
                }
                d.start = x->t;
                d.end = min64(t_end, next_ev(e, EV_START, d.node, 0, x->t));
                if (d.end > d.start) {
                        util_push((void **)&l->downs, &l->n_downs,
                                  &l->cap_downs, &d, sizeof d);
                }
        }
}

int leaders_load(struct leaders *l, const char *run_dir,
                 const struct nemlog *nl, int64_t t_end, char *errmsg,
                 size_t cap)
{
        struct evs e = {0};
        bool present;
        int node;

        memset(l, 0, sizeof *l);
        /* A node that never wrote a log has no line to draw. */
        for (node = 1; node <= LEADERS_MAX_NODES; node++) {
                if (read_node(l, &e, run_dir, node, &present, errmsg, cap) !=
                    0) {
                        free(e.v);
                        leaders_free(l);
                        return -1;
                }
                if (present) {
                        l->n_nodes = node;
                }
        }
        if (l->have_offset) {
                build(l, &e, nl, t_end);
        }
        free(e.v);
        return 0;
}

void leaders_free(struct leaders *l)
{
        if (l == NULL) {
                return;
        }
        free(l->spans);
        free(l->downs);
        memset(l, 0, sizeof *l);
}
