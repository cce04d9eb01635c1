/* The checkers of a chaos run (docs/chaos.md, "Checkers"): each reads the
 * loaded run and gives its own verdict with a one-line detail. */
#ifndef CHAOS_CHECK_CHECKS_H
#define CHAOS_CHECK_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"

/* The checkers, in report order. */
enum check_id {
        CHECK_S1 = 0,
        CHECK_S2,
        CHECK_S3,
        CHECK_S4,
        CHECK_S5,
        CHECK_S6,
        CHECK_S7,
        CHECK_S8,
        CHECK_S9,
        CHECK_S10,
        CHECK_S11,
        CHECK_S12,
        CHECK_S13,
        CHECK_S14,
        CHECK_S15,
        CHECK_S16,
        CHECK_S17,
        CHECK_L1,
        CHECK_L2,
        CHECK_L3,
        CHECK_L4,
        CHECK_COUNT,
};

enum check_verdict {
        CHECK_PASS = 0,
        CHECK_FAIL,
        CHECK_UNKNOWN, /* could not decide: a budget ran out or the
                          evidence is missing; never a pass */
};

struct check_result {
        int verdict;      /* enum check_verdict */
        char detail[512]; /* one line, no newline */
};

/* The counts the summary reports besides the verdicts. */
struct check_stats {
        size_t ops_ok, ops_fail, ops_info; /* info: also no completion */
        size_t faults;                     /* start lines of the nemesis log */
        size_t elections;       /* distinct terms in the apply logs - 1 */
        size_t fencing_saves;   /* S6 */
        int64_t longest_gap_ns; /* L2: -1 with fewer than two ok ops */
        int64_t longest_gap_at; /* its start */
        bool has_heal;
        int64_t recovery_ns; /* heal-all to the next ok completion; -1:
                                none */
};

struct check_options {
        uint64_t budget; /* S7: search states per lock */
};

/* Fill `o` with the defaults (budget: LINCHECK_DEFAULT_BUDGET). */
void checks_options_init(struct check_options *o);

/* Run every checker on `r`; `res` is indexed by enum check_id. */
void checks_run(const struct run *r, const struct check_options *o,
                struct check_result res[CHECK_COUNT], struct check_stats *st);

/* "S1".."S17", "L1".."L4", and back (-1 for an unknown id). */
const char *checks_name(int id);
int checks_parse_name(const char *s);

/* "PASS", "FAIL", "UNKNOWN", and back (-1 for anything else). */
const char *checks_verdict_name(int verdict);
int checks_parse_verdict(const char *s);

/* The exit status of chaos-check for these verdicts: 0 all passed, 1 a
 * safety (S) checker failed, 3 only liveness (L) checkers failed, else 2
 * when one could not decide. */
int checks_exit_status(const struct check_result res[CHECK_COUNT]);

#endif /* CHAOS_CHECK_CHECKS_H */
