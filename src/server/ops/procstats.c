/* The process's own figures, as Prometheus clients export them
 * (procstats.h). */
#include "procstats.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

bool procstats_parse_stat(const char *line, long ticks, long page,
                          uint64_t btime, struct procstats *p)
{
        /* The command name is in parentheses and may hold spaces and
         * parentheses itself: the fields start after the last ')'. */
        const char *r = strrchr(line, ')');
        unsigned long long utime, stime, start, vsize;
        long long rss;

        if (r == NULL || ticks <= 0 || page <= 0) {
                return false;
        }
        /* Fields 3 (state) on; 14 utime, 15 stime, 22 starttime, 23
         * vsize, 24 rss (proc(5)). */
        if (sscanf(r + 1,
                   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
                   "%*d %*d %*d %*d %*d %*d %llu %llu %lld",
                   &utime, &stime, &start, &vsize, &rss) != 5) {
                return false;
        }
        p->cpu_seconds = (double)(utime + stime) / (double)ticks;
        p->start_time = (double)btime + (double)start / (double)ticks;
        p->virtual_bytes = vsize;
        p->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
        return true;
}

/* The system's boot time, from /proc/stat's btime line; 0 when unknown. */
static uint64_t boot_time(void)
{
        FILE *f = fopen("/proc/stat", "r");
        char line[256];
        uint64_t btime = 0;

        if (f == NULL) {
                return 0;
        }
        while (fgets(line, sizeof line, f) != NULL) {
                if (sscanf(line, "btime %" SCNu64, &btime) == 1) {
                        break;
                }
        }
        fclose(f);
        return btime;
}

static void read_stat(struct procstats *p)
{
        FILE *f = fopen("/proc/self/stat", "r");
        char line[1024];

        if (f == NULL) {
                return;
        }
        if (fgets(line, sizeof line, f) != NULL) {
                p->known =
                    procstats_parse_stat(line, sysconf(_SC_CLK_TCK),
                                         sysconf(_SC_PAGESIZE), boot_time(), p);
        }
        fclose(f);
}

/* Open descriptors: the entries of /proc/self/fd but the one listing it. */
static void count_fds(struct procstats *p)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        uint64_t n = 0;

        if (d == NULL) {
                return;
        }
        while ((e = readdir(d)) != NULL) {
                if (e->d_name[0] != '.') {
                        n++;
                }
        }
        closedir(d);
        p->open_fds = n > 0 ? n - 1 : 0;
        p->fds_known = true;
}

void procstats_read(struct procstats *p)
{
        struct rlimit rl;

        memset(p, 0, sizeof *p);
        read_stat(p);
        count_fds(p);
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                p->max_fds = rl.rlim_cur == RLIM_INFINITY
                                 ? UINT64_MAX
                                 : (uint64_t)rl.rlim_cur;
        }
}
