/* The timeline of a chaos run, as Jepsen draws one: time runs right, a lane
 * per worker, faults shaded across every lane. */
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NODE_H  12
#define LANE_H  14
#define ROW_GAP 2
#define TICK_Y  11
/* Columns of the aggregated lanes, px. */
#define BUCKET_PX 3
/* Aggregated lanes still draw each op that took this long as a thin span,
 * so a stall shows where it began and how it ended. */
#define LONG_OP_NS 500000000LL

enum { C_OK = 0, C_FAIL, C_INFO, N_CLASSES };

static const char *const class_name[N_CLASSES] = {"ok", "fail", "info"};

static int op_class(const struct history_op *op)
{
        return op->type == HISTORY_OK     ? C_OK
               : op->type == HISTORY_FAIL ? C_FAIL
                                          : C_INFO;
}

static void op_title(FILE *f, const struct plot *p, const struct history_op *op)
{
        char d[32];

        fprintf(f, "<title>w%d p%" PRIu64 " %s ", op->worker, op->process,
                history_f_name(op->f));
        plot_esc(f, op->key >= 0 ? p->names.names[op->key] : "");
        fprintf(f, ": %s",
                op->complete_ns == INT64_MAX ? "no completion"
                                             : history_type_name(op->type));
        if (op->err[0] != '\0') {
                fputc(' ', f);
                plot_esc(f, op->err);
        }
        if (op->has_token) {
                fprintf(f, " token=%" PRIu64, op->token);
        }
        if (op->complete_ns != INT64_MAX) {
                fprintf(f, ", %s",
                        util_fmt_secs(d, sizeof d,
                                      op->complete_ns - op->invoke_ns));
        }
        fprintf(f, " at %s</title>",
                util_fmt_secs(d, sizeof d, op->invoke_ns - p->t0));
}

/* The y of node row `node` and of worker lane `w` (both from 1). */
static double node_y(int node)
{
        return PLOT_LABEL_ROWS * PLOT_LABEL_ROW_H + TICK_Y + 6 +
               (node - 1) * (NODE_H + ROW_GAP);
}

static double lane_y(int n_nodes, int w)
{
        return node_y(n_nodes + 1) + 8 + (w - 1) * (LANE_H + ROW_GAP);
}

static int n_nodes(const struct plot *p)
{
        const char *s = nemlog_plan_get(&p->nemlog, "nodes");
        int n = s != NULL ? atoi(s) : 0;

        return n > p->leaders.n_nodes ? n : p->leaders.n_nodes;
}

static void write_nodes(FILE *f, const struct plot *p, int nn)
{
        const struct leaders *l = &p->leaders;
        char a[32], b[32];
        size_t i;
        int n;

        fprintf(f,
                "<g class=\"nodes\" data-leaders=\"%zu\" data-downs=\"%zu\">\n",
                l->n_spans, l->n_downs);
        for (n = 1; n <= nn; n++) {
                fprintf(
                    f,
                    "<text class=\"row-label\" x=\"%d\" y=\"%.1f\">n%d</text>"
                    "<rect class=\"node-row\" x=\"%d\" y=\"%.1f\" "
                    "width=\"%d\" height=\"%d\"/>\n",
                    PLOT_LEFT - 4, node_y(n) + NODE_H - 2, n, PLOT_LEFT,
                    node_y(n), p->width - PLOT_LEFT - PLOT_RIGHT, NODE_H);
        }
        for (i = 0; i < l->n_downs; i++) {
                const struct leaders_down *d = &l->downs[i];
                double x0 = plot_x(p, d->start), x1 = plot_x(p, d->end);

                fprintf(f,
                        "<rect class=\"down\" data-node=\"n%d\" x=\"%.1f\" "
                        "y=\"%.1f\" width=\"%.1f\" height=\"%d\"><title>n%d "
                        "down: %s to %s</title></rect>\n",
                        d->node, x0, node_y(d->node), x1 - x0 < 1 ? 1 : x1 - x0,
                        NODE_H, d->node,
                        util_fmt_secs(a, sizeof a, d->start - p->t0),
                        util_fmt_secs(b, sizeof b, d->end - p->t0));
        }
        for (i = 0; i < l->n_spans; i++) {
                const struct leaders_span *s = &l->spans[i];
                double x0 = plot_x(p, s->start), x1 = plot_x(p, s->end);

                fprintf(f,
                        "<rect class=\"leader\" data-node=\"n%d\" "
                        "data-term=\"%" PRIu64 "\" x=\"%.1f\" y=\"%.1f\" "
                        "width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>n%d "
                        "leads term %" PRIu64 ": %s to %s</title></rect>\n",
                        s->node, s->term, x0, node_y(s->node),
                        x1 - x0 < 1 ? 1 : x1 - x0, NODE_H,
                        plot_node_colour(s->node), s->node, s->term,
                        util_fmt_secs(a, sizeof a, s->start - p->t0),
                        util_fmt_secs(b, sizeof b, s->end - p->t0));
                if (x1 - x0 > 28) {
                        fprintf(f,
                                "<text class=\"term\" x=\"%.1f\" y=\"%.1f\">"
                                "term %" PRIu64 "</text>\n",
                                x0 + 3, node_y(s->node) + NODE_H - 3, s->term);
                }
        }
        fputs("</g>\n", f);
}

/* Every op of worker `w` as a span from invoke to completion. */
static void lane_detail(FILE *f, const struct plot *p, int w, double y)
{
        const struct history *h = &p->history;
        size_t i;

        for (i = 0; i < h->n; i++) {
                const struct history_op *op = &h->ops[i];
                double x0, x1;

                if (op->worker != w || !plot_op_drawn(p, i)) {
                        continue;
                }
                x0 = plot_x(p, op->invoke_ns);
                x1 = plot_x(p, plot_op_end(p, op));
                fprintf(f,
                        "<rect class=\"op %s\" x=\"%.1f\" y=\"%.1f\" "
                        "width=\"%.1f\" height=\"%d\">",
                        plot_op_class(op), x0, y + 1, x1 - x0 < 1 ? 1 : x1 - x0,
                        LANE_H - 2);
                op_title(f, p, op);
                fputs("</rect>\n", f);
        }
}

/* A run of a worker's long ops that touch on the axis, coloured by the
 * least certain outcome among them (info over fail over ok). */
struct long_run {
        int c; /* class; -1: none yet */
        double x0, x1;
        int64_t t0, t1;
        unsigned n;
};

static void long_flush(FILE *f, const struct plot *p, struct long_run *r,
                       double y)
{
        char a[32], b[32];

        if (r->c < 0) {
                return;
        }
        fprintf(f,
                "<rect class=\"long %s\" data-n=\"%u\" x=\"%.1f\" "
                "y=\"%.1f\" width=\"%.1f\" height=\"2\"><title>%u "
                "op(s) of 0.5 s or more, at worst %s, %s to %s</title>"
                "</rect>\n",
                class_name[r->c], r->n, r->x0, y,
                r->x1 - r->x0 < 1 ? 1 : r->x1 - r->x0, r->n, class_name[r->c],
                util_fmt_secs(a, sizeof a, r->t0 - p->t0),
                util_fmt_secs(b, sizeof b, r->t1 - p->t0));
        r->c = -1;
}

/* Worker `w`'s ops that took LONG_OP_NS or more, as thin spans at the
 * lane's top; neighbours within a px merged, so a stall of many retries is
 * one span. */
static void lane_long(FILE *f, const struct plot *p, int w, double y)
{
        const struct history *h = &p->history;
        struct long_run r = {.c = -1};
        size_t i;

        for (i = 0; i < h->n; i++) {
                const struct history_op *op = &h->ops[i];
                int64_t end = plot_op_end(p, op);
                double x0, x1;

                if (op->worker != w || !plot_op_drawn(p, i) ||
                    end - op->invoke_ns < LONG_OP_NS) {
                        continue;
                }
                x0 = plot_x(p, op->invoke_ns);
                x1 = plot_x(p, end);
                if (r.c >= 0 && x0 <= r.x1 + 1) {
                        r.c = op_class(op) > r.c ? op_class(op) : r.c;
                        r.x1 = x1 > r.x1 ? x1 : r.x1;
                        r.t1 = end > r.t1 ? end : r.t1;
                        r.n++;
                        continue;
                }
                long_flush(f, p, &r, y);
                r = (struct long_run){.c = op_class(op),
                                      .x0 = x0,
                                      .x1 = x1,
                                      .t0 = op->invoke_ns,
                                      .t1 = end,
                                      .n = 1};
        }
        long_flush(f, p, &r, y);
}

/* Worker `w`'s completions per column, stacked by outcome (ok at the
 * bottom, info on top, at least 1 px when there is one), scaled to the
 * lane's busiest column; and its long ops as thin spans on top. */
static void lane_aggregate(FILE *f, const struct plot *p, int w, double y)
{
        const struct history *h = &p->history;
        int nb = (p->width - PLOT_LEFT - PLOT_RIGHT) / BUCKET_PX + 1;
        unsigned *cnt = util_calloc((size_t)nb * N_CLASSES, sizeof *cnt);
        unsigned max = 1;
        size_t i;
        int b, c;

        for (i = 0; i < h->n; i++) {
                const struct history_op *op = &h->ops[i];

                if (op->worker != w || !plot_op_drawn(p, i)) {
                        continue;
                }
                b = (int)((plot_x(p, op->complete_ns == INT64_MAX
                                         ? op->invoke_ns
                                         : op->complete_ns) -
                           PLOT_LEFT) /
                          BUCKET_PX);
                cnt[b * N_CLASSES + op_class(op)]++;
        }
        for (b = 0; b < nb; b++) {
                unsigned t = cnt[b * N_CLASSES] + cnt[b * N_CLASSES + 1] +
                             cnt[b * N_CLASSES + 2];

                max = t > max ? t : max;
        }
        for (c = 0; c < N_CLASSES; c++) {
                fprintf(f, "<path class=\"agg %s\" d=\"", class_name[c]);
                for (b = 0; b < nb; b++) {
                        double below = 0, hgt;
                        int k;

                        if (cnt[b * N_CLASSES + c] == 0) {
                                continue;
                        }
                        for (k = 0; k < c; k++) {
                                below += (double)(LANE_H - 1) *
                                         cnt[b * N_CLASSES + k] / max;
                        }
                        hgt =
                            (double)(LANE_H - 1) * cnt[b * N_CLASSES + c] / max;
                        if (c == C_INFO && hgt < 1) {
                                hgt = 1;
                        }
                        fprintf(f, "M%d %.1fh%dv%.1fh-%dz",
                                PLOT_LEFT + b * BUCKET_PX,
                                y + LANE_H - below - hgt, BUCKET_PX, hgt,
                                BUCKET_PX);
                }
                fputs("\"/>\n", f);
        }
        free(cnt);
        lane_long(f, p, w, y);
}

static void write_lane(FILE *f, const struct plot *p, int nn, int w)
{
        const struct history *h = &p->history;
        unsigned n[N_CLASSES] = {0};
        double y = lane_y(nn, w);
        char key[32];
        const char *wl;
        size_t i, len;

        for (i = 0; i < h->n; i++) {
                if (h->ops[i].worker == w && plot_op_drawn(p, i)) {
                        n[op_class(&h->ops[i])]++;
                }
        }
        snprintf(key, sizeof key, "worker.w%d", w);
        wl = nemlog_plan_get(&p->nemlog, key);
        len = wl != NULL ? strcspn(wl, " ") : 0;
        fprintf(f,
                "<g class=\"lane\" data-worker=\"w%d\" data-ok=\"%u\" "
                "data-fail=\"%u\" data-info=\"%u\">\n"
                "<text class=\"row-label\" x=\"%d\" y=\"%.1f\">w%d %.*s</text>"
                "<rect class=\"lane-bg\" x=\"%d\" y=\"%.1f\" width=\"%d\" "
                "height=\"%d\"/>\n",
                w, n[C_OK], n[C_FAIL], n[C_INFO], PLOT_LEFT - 4, y + LANE_H - 3,
                w, (int)(len > 12 ? 12 : len), wl != NULL ? wl : "", PLOT_LEFT,
                y, p->width - PLOT_LEFT - PLOT_RIGHT, LANE_H);
        if (p->detail) {
                lane_detail(f, p, w, y);
        } else {
                lane_aggregate(f, p, w, y);
        }
        fputs("</g>\n", f);
}

void timeline_write(FILE *f, const struct plot *p)
{
        int nn = n_nodes(p), w;
        double y0 = node_y(1) - 2, y1 = lane_y(nn, p->n_workers + 1);

        fprintf(f,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" "
                "data-mode=\"%s\" width=\"%d\" height=\"%.0f\" "
                "viewBox=\"0 0 %d %.0f\">\n",
                p->detail ? "ops" : "aggregate", p->width, y1 + 4, p->width,
                y1 + 4);
        plot_ticks(f, p, TICK_Y, y0, y1);
        plot_faults(f, p, y0, y1, true);
        write_nodes(f, p, nn);
        for (w = 1; w <= p->n_workers; w++) {
                write_lane(f, p, nn, w);
        }
        fputs("</svg>\n", f);
}
