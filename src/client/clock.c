/* Monotonic time, deadlines and random numbers for libbaton. */
#include "clock.h"

#include <errno.h>
#include <pthread.h>

#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

#include "../../include/baton.h"

int64_t clock_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_after(int64_t now, int64_t ms)
{
        if (ms < 0 || now > CLOCK_NEVER - ms) {
                return CLOCK_NEVER;
        }
        return now + ms;
}

struct timespec clock_timespec(int64_t deadline_ms)
{
        struct timespec ts;

        /* Far deadlines are capped at a year: the caller loops anyway. */
        if (deadline_ms > clock_now_ms() + 365LL * 86400 * 1000) {
                deadline_ms = clock_now_ms() + 365LL * 86400 * 1000;
        }
        ts.tv_sec = (time_t)(deadline_ms / 1000);
        ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000;
        return ts;
}

/* splitmix64: spreads the fallback seed over all bits. */
static uint64_t mix(uint64_t x)
{
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

uint64_t clock_random(void)
{
        uint64_t v = 0;
        struct timespec ts;

        while (v == 0) {
                if (getrandom(&v, sizeof v, GRND_NONBLOCK) !=
                    (ssize_t)sizeof v) {
                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        v = mix(
                            (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
                            ((uint64_t)getpid() << 48) ^ (uint64_t)gettid());
                }
        }
        return v;
}

static uint64_t env_random(void *data)
{
        (void)data;
        return clock_random();
}

static int env_secret(void *data, uint8_t *buf, size_t n)
{
        size_t got = 0;
        ssize_t rv;

        (void)data;
        /* Blocking until the pool is ready: a guessable secret would let
         * anyone act in the session. */
        while (got < n) {
                rv = getrandom(buf + got, n - got, 0);
                if (rv < 0 && errno == EINTR) {
                        continue;
                }
                if (rv <= 0) {
                        return BATON_EIO;
                }
                got += (size_t)rv;
        }
        return 0;
}

const struct core_env *clock_env(void)
{
        static const struct core_env env = {NULL, env_random, env_secret, NULL};

        return &env;
}

uint64_t clock_unique_ns(void)
{
        static uint64_t last;
        static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        struct timespec ts;
        uint64_t seq;

        clock_gettime(CLOCK_REALTIME, &ts);
        seq = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
        pthread_mutex_lock(&mu);
        if (seq <= last) {
                seq = last + 1;
        }
        last = seq;
        pthread_mutex_unlock(&mu);
        return seq;
}
