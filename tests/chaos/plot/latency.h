/* The latency of a chaos run's operations over time: one point per
 * operation (thinned on long runs), by outcome, on a log scale. */
#ifndef CHAOS_PLOT_LATENCY_H
#define CHAOS_PLOT_LATENCY_H

#include <stdio.h>

#include "plot.h"

/* Write the latency scatter as one <svg> element, on the timeline's time
 * axis. */
void latency_write(FILE *f, const struct plot *p);

#endif /* CHAOS_PLOT_LATENCY_H */
