/* Prints CLOCK_MONOTONIC in nanoseconds, the one clock of every chaos-suite
 * log (docs/chaos.md), for scripts/chaos, which has no other way to read it. */
#include <stdio.h>
#include <time.h>

int main(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
                perror("monotime: clock_gettime");
                return 1;
        }
        printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
        return 0;
}
