/* What libbaton's deciding code asks of its environment: random numbers and
 * a session's secret bytes, so that a simulation can draw them from a seed
 * and replay a run exactly, while libbaton draws them from the kernel. */
#ifndef CLIENT_COREENV_H
#define CLIENT_COREENV_H

#include <stddef.h>
#include <stdint.h>

/*
 * Both are called in the middle of a decision (a backoff, a retry, an
 * OPEN), which needs the answer at once, with the handle's mutex held: a
 * call, not an effect left for the host. libbaton's is clock_env().
 */
struct core_env {
        void *data;
        /* A random non-zero number: the jitter of backoffs and retries, the
         * nonce of an OPEN. */
        uint64_t (*random)(void *data);
        /* `n` unguessable bytes into `buf`: a session's secret, whose hash
         * alone goes out. 0, or BATON_EIO when none can be had. */
        int (*secret)(void *data, uint8_t *buf, size_t n);
};

/* `ms` scaled by a random factor in [0.5, 1.5) drawn from `env`, so that
 * clients retrying after the same event do not move in step; 0 (and no
 * draw) for `ms` <= 0. */
int64_t coreenv_jitter(const struct core_env *env, int64_t ms);

#endif /* CLIENT_COREENV_H */
