/* chaos-plot's loaded run and the pieces its pictures share. */
#include "plot.h"

#include <inttypes.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NS_PER_S 1000000000LL

/* Label rows above the bands, and the px per character of their 10px
 * text (an estimate: the page fixes no font). */
#define LABEL_ROWS  PLOT_LABEL_ROWS
#define LABEL_ROW_H PLOT_LABEL_ROW_H
#define CHAR_W      5.6

static void fit_axis(struct plot *p)
{
        const struct history *h = &p->history;
        const struct nemlog *nl = &p->nemlog;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        size_t i;

        for (i = 0; i < h->n; i++) {
                const struct history_op *op = &h->ops[i];

                lo = op->invoke_ns < lo ? op->invoke_ns : lo;
                hi = op->invoke_ns > hi ? op->invoke_ns : hi;
                if (op->complete_ns != INT64_MAX && op->complete_ns > hi) {
                        hi = op->complete_ns;
                }
                if (op->worker > p->n_workers) {
                        p->n_workers = op->worker;
                }
        }
        for (i = 0; i < nl->n_actions; i++) {
                lo = nl->actions[i].t < lo ? nl->actions[i].t : lo;
                hi = nl->actions[i].t > hi ? nl->actions[i].t : hi;
        }
        if (lo == INT64_MAX) {
                lo = 0;
                hi = NS_PER_S;
        }
        if (hi <= lo) {
                hi = lo + NS_PER_S;
        }
        p->t0 = lo;
        p->t1 = hi;
}

int plot_load(struct plot *p, const char *dir, int width, char *errmsg,
              size_t cap)
{
        char path[4096];
        struct stat st;
        size_t i;

        memset(p, 0, sizeof *p);
        if (stat(dir, &st) != 0) {
                snprintf(errmsg, cap, "%s: %s", dir, strerror(errno));
                return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
                snprintf(errmsg, cap, "%s: not a directory", dir);
                return -1;
        }
        p->dir = dir;
        p->width = width;
        util_strtab_init(&p->names);
        snprintf(path, sizeof path, "%s/history", dir);
        if (history_load(&p->history, path, &p->names, errmsg, cap) != 0 ||
            nemlog_load(&p->nemlog, dir, errmsg, cap) != 0) {
                plot_free(p);
                return -1;
        }
        fit_axis(p);
        if (leaders_load(&p->leaders, dir, &p->nemlog, p->t1, errmsg, cap) !=
            0) {
                plot_free(p);
                return -1;
        }
        for (i = 0; i < p->history.n; i++) {
                p->n_drawn += plot_op_drawn(p, i);
        }
        p->detail = p->n_drawn <= PLOT_DETAIL_MAX_OPS;
        return 0;
}

void plot_free(struct plot *p)
{
        history_free(&p->history);
        nemlog_free(&p->nemlog);
        leaders_free(&p->leaders);
        util_strtab_close(&p->names);
}

double plot_x(const struct plot *p, int64_t t)
{
        double w = p->width - PLOT_LEFT - PLOT_RIGHT;

        if (t < p->t0) {
                t = p->t0;
        }
        if (t > p->t1) {
                t = p->t1;
        }
        return PLOT_LEFT + w * (double)(t - p->t0) / (double)(p->t1 - p->t0);
}

bool plot_op_drawn(const struct plot *p, size_t i)
{
        const struct history_op *op = &p->history.ops[i], *prev;

        if (!op->multi || i == 0) {
                return true;
        }
        prev = &p->history.ops[i - 1];
        /* history.c sorts by invoke time, then file, then line: a call's
         * ops are neighbours. */
        return !(prev->multi && prev->file == op->file &&
                 prev->line == op->line);
}

int64_t plot_op_end(const struct plot *p, const struct history_op *op)
{
        return op->complete_ns == INT64_MAX ? p->t1 : op->complete_ns;
}

const char *plot_op_class(const struct history_op *op)
{
        switch (op->type) {
        case HISTORY_OK:
                return "ok";
        case HISTORY_FAIL:
                return "fail";
        default:
                return "info";
        }
}

void plot_esc(FILE *f, const char *s)
{
        for (; *s != '\0'; s++) {
                switch (*s) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                default:
                        fputc(*s, f);
                }
        }
}

void plot_ticks(FILE *f, const struct plot *p, double ylab, double y0,
                double y1)
{
        static const int64_t steps[] = {1,  2,   5,   10,  15,   30,
                                        60, 120, 300, 600, 1200, 1800};
        int64_t span = (p->t1 - p->t0) / NS_PER_S, step = 3600, s;
        size_t i;

        for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
                if (span / steps[i] <= 12) {
                        step = steps[i];
                        break;
                }
        }
        fputs("<g class=\"ticks\">\n", f);
        for (s = 0; s * NS_PER_S <= p->t1 - p->t0; s += step) {
                double x = plot_x(p, p->t0 + s * NS_PER_S);

                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\"/>",
                        x, y0, x, y1);
                if (step >= 60) {
                        fprintf(f,
                                "<text x=\"%.1f\" y=\"%.1f\">%" PRId64
                                ":%02" PRId64 "</text>\n",
                                x, ylab, s / 60, s % 60);
                } else {
                        fprintf(f,
                                "<text x=\"%.1f\" y=\"%.1f\">%" PRId64
                                " s</text>\n",
                                x, ylab, s);
                }
        }
        fputs("</g>\n", f);
}

/* The fault's label, placed in the first row where it does not run into
 * the one before; none when every row is taken there (the tooltip still
 * names it). */
static void fault_label(FILE *f, const struct nemlog_interval *iv, double x,
                        double y0, double *row_end)
{
        double w =
            CHAR_W * (double)(strlen(iv->fault) + 1 + strlen(iv->target));
        int r;

        for (r = 0; r < LABEL_ROWS; r++) {
                if (x >= row_end[r]) {
                        break;
                }
        }
        if (r == LABEL_ROWS) {
                return;
        }
        row_end[r] = x + w + 4;
        fprintf(f, "<text class=\"fault-label\" x=\"%.1f\" y=\"%.1f\">", x + 1,
                y0 - 2 - (LABEL_ROWS - 1 - r) * LABEL_ROW_H);
        plot_esc(f, iv->fault);
        fputc(' ', f);
        plot_esc(f, iv->target);
        fputs("</text>\n", f);
}

void plot_faults(FILE *f, const struct plot *p, double y0, double y1,
                 bool labels)
{
        const struct nemlog *nl = &p->nemlog;
        double row_end[LABEL_ROWS] = {0};
        char a[32], b[32];
        size_t i;

        fputs("<g class=\"faults\">\n", f);
        for (i = 0; i < nl->n_intervals; i++) {
                const struct nemlog_interval *iv = &nl->intervals[i];
                int64_t end = iv->end == INT64_MAX ? p->t1 : iv->end;
                double x0 = plot_x(p, iv->start), x1 = plot_x(p, end);

                fputs("<rect class=\"fault\" data-fault=\"", f);
                plot_esc(f, iv->fault);
                fputs("\" data-target=\"", f);
                plot_esc(f, iv->target);
                fprintf(f,
                        "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\"><title>",
                        x0, y0, x1 - x0 < 1 ? 1 : x1 - x0, y1 - y0);
                plot_esc(f, iv->fault);
                fputc(' ', f);
                plot_esc(f, iv->target);
                fprintf(f, ": %s to %s%s</title></rect>\n",
                        util_fmt_secs(a, sizeof a, iv->start - p->t0),
                        util_fmt_secs(b, sizeof b, end - p->t0),
                        iv->end == INT64_MAX ? " (never ended)" : "");
                if (labels) {
                        fault_label(f, iv, x0, y0, row_end);
                }
        }
        if (nl->has_heal) {
                double x = plot_x(p, nl->heal_t);

                fprintf(f,
                        "<line class=\"heal\" x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\"><title>heal-all at "
                        "%s</title></line>\n",
                        x, y0, x, y1,
                        util_fmt_secs(a, sizeof a, nl->heal_t - p->t0));
        }
        fputs("</g>\n", f);
}

const char *plot_node_colour(int node)
{
        /* Apart from the outcomes' green, red and amber. */
        static const char *const c[] = {"#1f77b4", "#9467bd", "#17becf",
                                        "#8c564b", "#e377c2", "#7f7f7f",
                                        "#bcbd22", "#393b79"};

        return c[(node - 1 + 8) % 8];
}
