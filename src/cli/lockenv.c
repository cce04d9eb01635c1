/* The environment of a lock's command (lockenv.h). */
#include "lockenv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t realtime_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void lockenv_set(baton_client *c, const char *name, uint64_t token,
                 int64_t held_ms)
{
        int64_t left = baton_session_remaining_ms(c);
        char buf[32];

        setenv("BATON_LOCK", name, 1);
        snprintf(buf, sizeof buf, "%" PRIu64, token);
        setenv("BATON_TOKEN", buf, 1);
        if (held_ms >= 0 && held_ms < left) {
                left = held_ms;
        }
        snprintf(buf, sizeof buf, "%" PRId64, realtime_ms() + left);
        setenv("BATON_DEADLINE_MS", buf, 1);
}
