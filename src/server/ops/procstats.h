/* The process's own figures, as Prometheus clients export them
 * (process_cpu_seconds_total and the rest), read from /proc/self. */
#ifndef SERVER_PROCSTATS_H
#define SERVER_PROCSTATS_H

#include <stdbool.h>
#include <stdint.h>

struct procstats {
        double cpu_seconds; /* user + system */
        uint64_t resident_bytes;
        uint64_t virtual_bytes;
        double start_time; /* seconds since the Unix epoch */
        uint64_t open_fds;
        uint64_t max_fds; /* RLIMIT_NOFILE's soft limit */
        bool known;       /* /proc/self/stat read */
        bool fds_known;   /* /proc/self/fd listed */
};

/* Read the calling process's figures now. What cannot be read (no /proc)
 * is left out: `known` and `fds_known` say which part is there. */
void procstats_read(struct procstats *p);

/* Parse a /proc/PID/stat line (`line`, NUL-terminated) with the system's
 * clock ticks per second `ticks`, page size `page` and boot time `btime`
 * (seconds since the epoch): false when it does not parse. */
bool procstats_parse_stat(const char *line, long ticks, long page,
                          uint64_t btime, struct procstats *p);

#endif /* SERVER_PROCSTATS_H */
