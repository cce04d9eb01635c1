/* chaos-worker's command line (workerargs.h). */
#include "workerargs.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "history_out.h"

static const char *const workload_names[] = {
    "counter",   "mutex",     "fifo",     "session", "rwlock",
    "semaphore", "transfers", "election", "hold"};

const char *workload_name(enum workload wl)
{
        return workload_names[wl];
}

void workerargs_usage(FILE *f)
{
        fprintf(
            f, "usage: chaos-worker --id J --endpoints H:P,... --history FILE\n"
               "         --workload counter|mutex|fifo|session|rwlock|"
               "semaphore|transfers|election|hold\n"
               "         --keys N --ttl MS\n"
               "         --seed S [--register PATH] --final-file PATH "
               "[--epoch-ms MS]\n"
               "         [--epoch-base-ns T] [--request-timeout MS] "
               "[--bug-writer-shared]\n"
               "         [--bug-one-lock]\n");
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
        unsigned long long v;
        char *end;

        errno = 0;
        if (*s == '-' || *s == '\0') {
                return -1;
        }
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < lo || v > hi) {
                return -1;
        }
        *out = v;
        return 0;
}

/* The workload named `workload` into `c`, and whether the options fit
 * it: 0, or -1 after a message. */
static int check_config(struct config *c, const char *workload)
{
        size_t i;

        for (i = 0; i < sizeof workload_names / sizeof workload_names[0]; i++) {
                if (strcmp(workload, workload_names[i]) == 0) {
                        break;
                }
        }
        if (i == sizeof workload_names / sizeof workload_names[0]) {
                fprintf(stderr, "chaos-worker: unknown workload %s\n",
                        workload);
                return -1;
        }
        c->workload = (enum workload)i;
        if ((c->workload == WL_COUNTER || c->workload == WL_RWLOCK ||
             c->workload == WL_SEMAPHORE || c->workload == WL_TRANSFERS ||
             c->workload == WL_ELECTION || c->workload == WL_HOLD) &&
            c->register_path == NULL) {
                fprintf(stderr,
                        "chaos-worker: the %s workload needs --register\n",
                        workload_name(c->workload));
                return -1;
        }
        if (c->bug_writer_shared && c->workload != WL_RWLOCK) {
                fprintf(stderr, "chaos-worker: --bug-writer-shared is for the "
                                "rwlock workload\n");
                return -1;
        }
        if (c->bug_one_lock && c->workload != WL_TRANSFERS) {
                fprintf(stderr, "chaos-worker: --bug-one-lock is for the "
                                "transfers workload\n");
                return -1;
        }
        if (c->workload == WL_TRANSFERS && c->keys < 2) {
                fprintf(stderr, "chaos-worker: the transfers workload needs "
                                "--keys 2 or more (accounts)\n");
                return -1;
        }
        return 0;
}

/* What parse_args() learns besides the config. */
struct seen {
        const char *workload;
        bool id, base;
};

/* Option `ch` with argument `arg` into `c`: 0, -1 for a bad value, 1 for
 * an unknown option. */
static int set_option(struct config *c, struct seen *seen, int ch,
                      const char *arg)
{
        uint64_t v = 0;
        int bad = 0;

        switch (ch) {
        case 'i':
                bad = parse_u64(arg, 0, 1000000, &v);
                c->id = (int)v;
                seen->id = true;
                break;
        case 'e':
                c->endpoints = arg;
                break;
        case 'H':
                c->history = arg;
                break;
        case 'w':
                seen->workload = arg;
                break;
        case 'k':
                bad = parse_u64(arg, 1, 1000000, &v);
                c->keys = (uint32_t)v;
                break;
        case 't':
                bad = parse_u64(arg, 1, UINT32_MAX, &v);
                c->ttl_ms = (uint32_t)v;
                break;
        case 's':
                bad = parse_u64(arg, 0, UINT64_MAX, &c->seed);
                break;
        case 'r':
                c->register_path = arg;
                break;
        case 'f':
                c->final_file = arg;
                break;
        case 'E':
                bad = parse_u64(arg, 1, UINT32_MAX, &c->epoch_ms);
                break;
        case 'B':
                bad = parse_u64(arg, 0, UINT64_MAX, &c->epoch_base_ns);
                seen->base = true;
                break;
        case 'T':
                bad = parse_u64(arg, 1, INT32_MAX / 2, &v);
                c->request_timeout_ms = (uint32_t)v;
                break;
        case 'X':
                c->bug_writer_shared = true;
                break;
        case 'O':
                c->bug_one_lock = true;
                break;
        case 'h':
                workerargs_usage(stdout);
                exit(0);
        default:
                return 1;
        }
        return bad;
}

int workerargs_parse(int argc, char **argv, struct config *c)
{
        static const struct option opts[] = {
            {"id", required_argument, NULL, 'i'},
            {"endpoints", required_argument, NULL, 'e'},
            {"history", required_argument, NULL, 'H'},
            {"workload", required_argument, NULL, 'w'},
            {"keys", required_argument, NULL, 'k'},
            {"ttl", required_argument, NULL, 't'},
            {"seed", required_argument, NULL, 's'},
            {"register", required_argument, NULL, 'r'},
            {"final-file", required_argument, NULL, 'f'},
            {"epoch-ms", required_argument, NULL, 'E'},
            {"epoch-base-ns", required_argument, NULL, 'B'},
            {"request-timeout", required_argument, NULL, 'T'},
            {"bug-writer-shared", no_argument, NULL, 'X'},
            {"bug-one-lock", no_argument, NULL, 'O'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        struct seen seen = {NULL, false, false};
        int ch, li = 0, rv;

        while ((ch = getopt_long(argc, argv, "", opts, &li)) != -1) {
                rv = set_option(c, &seen, ch, optarg);
                if (rv > 0) {
                        return -1;
                }
                if (rv < 0) {
                        fprintf(stderr,
                                "chaos-worker: bad value for --%s: %s\n",
                                opts[li].name, optarg);
                        return -1;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "chaos-worker: unexpected argument %s\n",
                        argv[optind]);
                return -1;
        }
        if (!seen.id || c->endpoints == NULL || c->history == NULL ||
            seen.workload == NULL || c->final_file == NULL) {
                fprintf(stderr, "chaos-worker: --id, --endpoints, --history, "
                                "--workload and --final-file are required\n");
                return -1;
        }
        if (check_config(c, seen.workload) != 0) {
                return -1;
        }
        if (!seen.base) {
                c->epoch_base_ns = history_now_ns();
        }
        return 0;
}
