/* Crash points of batond-crashpoints (crashpoint.h). Compiled only into
 * that program; the hit counter below is its one mutable global besides
 * the log's: a point is process-wide by nature (a hit anywhere counts), as
 * the arming by the environment is. */
#include "crashpoint.h"

#ifdef BATON_CHAOS_CRASHPOINTS

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint hits;

/* The hit that kills, when BATON_CRASH_AT arms `name`; else 0. */
static unsigned armed_nth(const char *name)
{
        const char *at = getenv("BATON_CRASH_AT");
        size_t n = strlen(name);
        long nth;

        if (at == NULL || strncmp(at, name, n) != 0) {
                return 0;
        }
        if (at[n] == '\0') {
                return 1;
        }
        if (at[n] != ':') {
                return 0;
        }
        nth = strtol(at + n + 1, NULL, 10);
        return nth >= 1 ? (unsigned)nth : 1;
}

void crashpoint_hit(const char *name)
{
        unsigned nth = armed_nth(name), k;
        char line[160];
        int len;

        if (nth == 0) {
                return;
        }
        k = atomic_fetch_add(&hits, 1) + 1;
        if (k != nth) {
                return;
        }
        /* write(), not the log: the point may be in a forked child. */
        len = snprintf(line, sizeof line,
                       "crash point %s hit (%u) in pid %ld: SIGKILL\n", name, k,
                       (long)getpid());
        if (len > 0) {
                (void)!write(2, line, (size_t)len);
        }
        raise(SIGKILL);
}

#else
/* ISO C wants a translation unit to declare something. */
typedef int crashpoint_unused;
#endif
