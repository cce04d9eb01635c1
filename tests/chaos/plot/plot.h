/* What chaos-plot draws from: a chaos run's histories, faults and leaders
 * on one time axis, and the helpers its pictures share (scale, ticks,
 * colours, XML escaping). */
#ifndef CHAOS_PLOT_PLOT_H
#define CHAOS_PLOT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../check/history.h"
#include "../check/nemlog.h"
#include "../check/util.h"
#include "leaders.h"

/* Up to this many operations every one is drawn (a span, a point, a
 * tooltip); above it lanes become per-column counts and points are thinned
 * to one per occupied cell, so a 60-minute run stays a few MB. */
#define PLOT_DETAIL_MAX_OPS 5000

/* Left margin (labels) and the plotting width, in px. */
#define PLOT_LEFT  96
#define PLOT_RIGHT 16

/* The loaded run and the time axis. */
struct plot {
        const char *dir;
        struct util_strtab names;
        struct history history;
        struct nemlog nemlog;
        struct leaders leaders;
        int64_t t0, t1; /* the axis: the run's first to last event */
        int width;      /* the whole picture, px */
        int n_workers;  /* the highest w= seen */
        size_t n_drawn; /* operations (a multi-lock's call counts once) */
        bool detail;    /* n_drawn <= PLOT_DETAIL_MAX_OPS */
};

/*
 * Load RUN_DIR's histories, nemesis log, exits, plan and node logs into
 * `p` and fit the time axis to them; `width` is the picture's width in px.
 * 0, or -1 with a message in `errmsg` (then `p` holds nothing to free).
 */
int plot_load(struct plot *p, const char *dir, int width, char *errmsg,
              size_t cap);

/* Free what plot_load() allocated. */
void plot_free(struct plot *p);

/* The x (px) of monotonic time `t`, clamped to the axis. */
double plot_x(const struct plot *p, int64_t t);

/* Whether history op `i` is drawn: every op but the second and later names
 * of a multi-lock's call (history.c makes one op per name). */
bool plot_op_drawn(const struct plot *p, size_t i);

/* When an op ended on the axis: its completion, or the axis end when it
 * never completed. */
int64_t plot_op_end(const struct plot *p, const struct history_op *op);

/* "ok", "fail" or "info" (no completion counts as info): the class of the
 * op's shapes. */
const char *plot_op_class(const struct history_op *op);

/* Write `s` with &, <, >, " escaped. */
void plot_esc(FILE *f, const char *s);

/* Write the time axis's ticks (seconds from the start) as lines from y0
 * to y1, their labels at y = ylab. */
void plot_ticks(FILE *f, const struct plot *p, double ylab, double y0,
                double y1);

/* Rows of fault labels plot_faults() writes above its bands, and their
 * height in px. */
#define PLOT_LABEL_ROWS  3
#define PLOT_LABEL_ROW_H 11

/* Write one translucent band per fault between y0 and y1 (each with a
 * tooltip), and a dashed line at the final heal. `labels` adds each fault's
 * name and targets above y0, in PLOT_LABEL_ROWS staggered rows. */
void plot_faults(FILE *f, const struct plot *p, double y0, double y1,
                 bool labels);

/* The fill colour of node `node` (from 1). */
const char *plot_node_colour(int node);

#endif /* CHAOS_PLOT_PLOT_H */
