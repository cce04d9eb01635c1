/* The start and end of a seeded run of batond's request cores on the
 * simulated cluster, which test_simhost and test_simclient share
 * (hostrun.h). */
#include "hostrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int hostrun_start(struct run *r, uint64_t seed, unsigned nodes, bool verbose,
                  char *reason, size_t cap)
{
        struct simcluster_config cfg;

        r->s.n = nodes;
        r->s.verbose = verbose;
        r->s.rng.s = seed * 0x9E3779B97F4A7C15ULL + 1;
        simcluster_config_default(&cfg);
        cfg.n = r->s.n;
        cfg.seed = seed;
        if (simcluster_init(&r->s.c, &cfg) != 0) {
                return fail(reason, cap, "simcluster_init: %s", r->s.c.errmsg);
        }
        r->s.c.verbose = verbose;
        if (simhost_init(&r->h, &r->s.c, verbose) != 0) {
                simcluster_close(&r->s.c);
                return fail(reason, cap, "simhost_init: out of memory");
        }
        return 0;
}

int hostrun_converge(struct run *r, char *reason, size_t cap)
{
        struct command final;
        struct simprop *last;

        memset(&final, 0, sizeof final);
        final.type = COMMAND_QUERY;
        final.name = hostrun_locks[0];
        final.name_len = (uint8_t)strlen(hostrun_locks[0]);
        if (simcluster_converge(&r->s.c, &final, CONVERGE_MS, &last) != 0) {
                return fail(reason, cap, "%s", r->s.c.errmsg);
        }
        if (r->h.errmsg[0] != '\0') {
                return fail(reason, cap, "host: %s", r->h.errmsg);
        }
        return 0;
}

int hostrun_stop(struct run *r, int rv, char *reason, size_t cap)
{
        simhost_shutdown(&r->h);
        simcluster_close(&r->s.c);
        simhost_free(&r->h);
        if (rv == 0 && r->h.errmsg[0] != '\0') {
                rv = fail(reason, cap, "host: %s", r->h.errmsg);
        }
        return rv;
}

void hostrun_rate(const struct timespec *t0, unsigned runs)
{
        struct timespec t1;
        double secs;

        clock_gettime(CLOCK_MONOTONIC, &t1);
        secs = (double)(t1.tv_sec - t0->tv_sec) +
               (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
        printf("# %u runs in %.2f s: %.2f seeds/s\n", runs, secs,
               secs > 0 ? (double)runs / secs : 0.0);
}
