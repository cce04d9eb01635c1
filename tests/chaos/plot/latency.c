/* The latency scatter: x the completion time, y how long the op took. */
#include "latency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOP    8
#define HEIGHT 240
/* Thinned points: one per occupied cell of this many px, per outcome. */
#define CELL_PX 2
/* Columns of the quantile lines, px. */
#define QUANT_PX 8
/* The scale's floor: faster ops sit on it. */
#define FLOOR_NS 10000.0

enum { C_OK = 0, C_FAIL, C_INFO, N_CLASSES };

static const char *const class_name[N_CLASSES] = {"ok", "fail", "info"};

struct scale {
        double lo, hi; /* log10 of ns */
};

static double lat_y(const struct scale *s, int64_t ns)
{
        double v = log10(ns < FLOOR_NS ? FLOOR_NS : (double)ns);

        return TOP + HEIGHT * (1.0 - (v - s->lo) / (s->hi - s->lo));
}

static int op_class(const struct history_op *op)
{
        return op->type == HISTORY_OK     ? C_OK
               : op->type == HISTORY_FAIL ? C_FAIL
                                          : C_INFO;
}

/* Whether op `i` gets a point: drawn, and completed. */
static bool has_point(const struct plot *p, size_t i)
{
        return plot_op_drawn(p, i) &&
               p->history.ops[i].complete_ns != INT64_MAX;
}

static void grid(FILE *f, const struct plot *p, const struct scale *s)
{
        static const char *const names[] = {"10 µs", "100 µs", "1 ms",
                                            "10 ms", "100 ms", "1 s",
                                            "10 s",  "100 s",  "1000 s"};
        int d;

        fputs("<g class=\"grid\">\n", f);
        for (d = 0; d < 9 && 4 + d <= s->hi + 1e-9; d++) {
                double y = lat_y(s, (int64_t)pow(10, 4 + d));

                fprintf(f,
                        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                        "<text x=\"%d\" y=\"%.1f\">%s</text>\n",
                        PLOT_LEFT, y, p->width - PLOT_RIGHT, y, PLOT_LEFT - 4,
                        y + 3, names[d]);
        }
        fputs("</g>\n", f);
}

/* A point is an empty subpath its round cap makes a dot of: a dozen bytes
 * where a <circle> takes forty. */
static void point(FILE *f, double x, double y, bool whole)
{
        fprintf(f, whole ? "M%.0f %.0fh0" : "M%.1f %.1fh0", x, y);
}

/* One class's points: every op's, or one per occupied cell. */
static size_t points(FILE *f, const struct plot *p, const struct scale *s,
                     int c)
{
        const struct history *h = &p->history;
        int nx = p->width / CELL_PX + 1, ny = (HEIGHT + TOP) / CELL_PX + 2;
        unsigned char *seen =
            p->detail ? NULL : util_calloc((size_t)nx * ny, 1);
        size_t i, n = 0;

        fprintf(f, "<path class=\"pts %s\" d=\"", class_name[c]);
        for (i = 0; i < h->n; i++) {
                const struct history_op *op = &h->ops[i];
                double x, y;
                int cx, cy;

                if (!has_point(p, i) || op_class(op) != c) {
                        continue;
                }
                x = plot_x(p, op->complete_ns);
                y = lat_y(s, op->complete_ns - op->invoke_ns);
                if (seen != NULL) {
                        cx = (int)(x / CELL_PX);
                        cy = (int)(y / CELL_PX);
                        if (seen[(size_t)cy * nx + cx]) {
                                continue;
                        }
                        seen[(size_t)cy * nx + cx] = 1;
                        x = (cx + 0.5) * CELL_PX;
                        y = (cy + 0.5) * CELL_PX;
                }
                point(f, x, y, seen != NULL);
                n++;
        }
        fputs("\"/>\n", f);
        free(seen);
        return n;
}

/* A completed op's latency in its quantile column. */
struct sample {
        int col;
        int64_t ns;
};

static int cmp_sample(const void *a, const void *b)
{
        const struct sample *x = a, *y = b;

        if (x->col != y->col) {
                return x->col < y->col ? -1 : 1;
        }
        return (x->ns > y->ns) - (x->ns < y->ns);
}

/* The median and the 99th percentile of every completed op's latency per
 * QUANT_PX column, as lines (broken where a column has none): where the
 * thinned points hide how many there are, these show where most lie. */
static void quantiles(FILE *f, const struct plot *p, const struct scale *s)
{
        static const int pct[] = {50, 99};
        const struct history *h = &p->history;
        struct sample *v = util_malloc((h->n + 1) * sizeof *v);
        size_t i, j, n = 0;
        unsigned q;

        for (i = 0; i < h->n; i++) {
                if (has_point(p, i)) {
                        const struct history_op *op = &h->ops[i];

                        v[n].col =
                            (int)((plot_x(p, op->complete_ns) - PLOT_LEFT) /
                                  QUANT_PX);
                        v[n++].ns = op->complete_ns - op->invoke_ns;
                }
        }
        util_sort(v, n, sizeof *v, cmp_sample);
        for (q = 0; q < sizeof pct / sizeof pct[0]; q++) {
                int last = -2;

                fprintf(f, "<path class=\"q%d\" d=\"", pct[q]);
                for (i = 0; i < n; i = j) {
                        for (j = i; j < n && v[j].col == v[i].col; j++) {
                        }
                        fprintf(f, "%c%.1f %.1f",
                                v[i].col == last + 1 ? 'L' : 'M',
                                PLOT_LEFT + (v[i].col + 0.5) * QUANT_PX,
                                lat_y(s, v[i + (j - i - 1) * pct[q] / 100].ns));
                        last = v[i].col;
                }
                fputs("\"/>\n", f);
        }
        free(v);
}

void latency_write(FILE *f, const struct plot *p)
{
        const struct history *h = &p->history;
        struct scale s = {.lo = log10(FLOOR_NS), .hi = 9}; /* at least 1 s */
        size_t i, n_ops = 0;
        int c;

        for (i = 0; i < h->n; i++) {
                if (has_point(p, i)) {
                        double v = log10(
                            fmax(FLOOR_NS, (double)(h->ops[i].complete_ns -
                                                    h->ops[i].invoke_ns)));

                        n_ops++;
                        s.hi = v > s.hi ? ceil(v) : s.hi;
                }
        }
        fprintf(f,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"latency\" "
                "data-mode=\"%s\" data-ops=\"%zu\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
                p->detail ? "ops" : "thinned", n_ops, p->width,
                TOP + HEIGHT + 18, p->width, TOP + HEIGHT + 18);
        plot_faults(f, p, TOP, TOP + HEIGHT, false);
        plot_ticks(f, p, TOP + HEIGHT + 14, TOP, TOP + HEIGHT);
        grid(f, p, &s);
        /* The common outcome last, so the rare ones show where ok ops
         * are rare: as outliers. */
        for (c = N_CLASSES - 1; c >= 0; c--) {
                points(f, p, &s, c);
        }
        if (!p->detail) {
                quantiles(f, p, &s);
        }
        fputs("</svg>\n", f);
}
