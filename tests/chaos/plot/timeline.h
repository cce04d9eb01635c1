/* The timeline of a chaos run: who led when, each node's downtime, one lane
 * per worker with its operations by outcome, and the faults as bands. */
#ifndef CHAOS_PLOT_TIMELINE_H
#define CHAOS_PLOT_TIMELINE_H

#include <stdio.h>

#include "plot.h"

/* Write the timeline as one <svg> element. */
void timeline_write(FILE *f, const struct plot *p);

#endif /* CHAOS_PLOT_TIMELINE_H */
