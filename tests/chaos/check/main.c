/*
 * chaos-check: checks a chaos run directory (docs/chaos.md) and reports.
 *
 *     chaos-check [--budget STATES] RUN_DIR
 *
 * Runs every checker (S1-S17, L1-L4) on the run's histories, apply logs,
 * register logs, nemesis log and exits, writes RUN/results and RUN/summary,
 * and prints the summary. Exit status: 0 every checker passed, 1 a safety
 * checker failed, 2 a checker could not decide (or the run directory could
 * not be read), 3 only liveness checkers failed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "lincheck.h"
#include "report.h"
#include "run.h"
#include "util.h"

/* A run that cannot be checked is undecided, like a search out of budget. */
#define EXIT_UNREADABLE 2

static void usage(FILE *f)
{
        fprintf(f,
                "usage: chaos-check [--budget STATES] RUN_DIR\n"
                "  --budget STATES  linearizability search states per "
                "lock (default %llu)\n",
                (unsigned long long)LINCHECK_DEFAULT_BUDGET);
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"budget", required_argument, NULL, 'b'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        struct check_result res[CHECK_COUNT];
        struct check_options o;
        struct check_stats st;
        struct run r;
        char errmsg[512];
        int c, status;

        checks_options_init(&o);
        while ((c = getopt_long(argc, argv, "b:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'b':
                        if (!util_parse_u64(optarg, &o.budget) ||
                            o.budget == 0) {
                                fprintf(stderr,
                                        "chaos-check: --budget: a positive "
                                        "number of states\n");
                                return EXIT_UNREADABLE;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return EXIT_UNREADABLE;
                }
        }
        if (optind + 1 != argc) {
                usage(stderr);
                return EXIT_UNREADABLE;
        }
        if (run_load(&r, argv[optind], errmsg, sizeof errmsg) != 0) {
                fprintf(stderr, "chaos-check: %s\n", errmsg);
                return EXIT_UNREADABLE;
        }
        checks_run(&r, &o, res, &st);
        if (report_write(&r, res, &st, errmsg, sizeof errmsg) != 0) {
                /* The verdicts still stand: print them and say why the
                 * files are missing. */
                fprintf(stderr, "chaos-check: %s\n", errmsg);
        }
        report_summary(stdout, &r, res, &st);
        status = checks_exit_status(res);
        run_free(&r);
        return status;
}
