/* What every baton-bench JSON line begins and ends with: which system,
 * how many nodes, the variant and the driver (the peer harness's result
 * format, baton-bench(1)); and for the workloads that speak the wire
 * protocol themselves, the leadership around the run. */
#ifndef BENCH_LABEL_H
#define BENCH_LABEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct bench_label {
        const char *system;
        int nodes;
        const char *variant;
        const char *driver;
};

/* Who led, and in which term, before the run and after it (0: not
 * known). */
struct bench_leadership {
        uint64_t leader_before, leader_after;
        uint64_t term_before, term_after;
};

/* ",\"leader_before\":N,...,\"term_after\":N" onto `f`. */
void bench_print_leadership(FILE *f, const struct bench_leadership *b);

/* The end of a one-line workload's JSON line, after its own fields: the
 * first error's name ("" for none), the leadership, whether the run
 * broke, the variant and the driver, the closing brace and newline. */
void bench_label_end(FILE *f, const struct bench_label *l, int first_error,
                     const struct bench_leadership *b, bool broken);

#endif /* BENCH_LABEL_H */
