/* What every baton-bench JSON line begins and ends with: which system,
 * how many nodes, the variant and the driver (the peer harness's result
 * format, baton-bench(1)). */
#ifndef BENCH_LABEL_H
#define BENCH_LABEL_H

struct bench_label {
        const char *system;
        int nodes;
        const char *variant;
        const char *driver;
};

#endif /* BENCH_LABEL_H */
