/* The suite's own records of a chaos run: the nemesis log (faults and the
 * final heal), RUN/exits (process exits) and RUN/plan (the parameters). */
#ifndef CHAOS_CHECK_NEMLOG_H
#define CHAOS_CHECK_NEMLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nemlog_action_type {
        NEMLOG_START = 0,
        NEMLOG_END,
        NEMLOG_INFO,
};

/* t= action= fault= target= cmd=<the rest of the line> */
struct nemlog_action {
        int64_t t;
        int action; /* enum nemlog_action_type */
        char *fault;
        char *target; /* "" if absent */
        char *cmd;    /* "" if absent */
        unsigned line;
};

/* A fault active from its start to its end. */
struct nemlog_interval {
        int64_t start;
        int64_t end; /* INT64_MAX: never ended */
        const char *fault;
        const char *target;
};

/* t= proc= pid= status= expected=<0|1> */
struct nemlog_exit {
        int64_t t;
        char *proc;
        int64_t pid;
        int64_t status;
        bool expected;
        unsigned line;
};

struct nemlog_param {
        char *key;
        char *value;
};

/*
 * Faults become intervals: each `end` closes the earliest open `start` of
 * the same fault and target (else of the same fault). The final heal
 * (fault=heal-all) heals everything, so a start still open then ends there;
 * without a heal it never ends. heal-all itself is no fault.
 */
struct nemlog {
        bool present; /* nemesis.log exists */
        struct nemlog_action *actions;
        size_t n_actions, cap_actions;
        struct nemlog_interval *intervals;
        size_t n_intervals, cap_intervals;
        size_t n_faults; /* start lines, heal-all excepted */
        bool has_heal;
        int64_t heal_t; /* the last heal-all line */
        bool exits_present;
        struct nemlog_exit *exits;
        size_t n_exits, cap_exits;
        bool plan_present;
        struct nemlog_param *plan;
        size_t n_plan, cap_plan;
        size_t n_bad; /* malformed lines skipped, all three files */
        char first_bad[200];
};

/* Load RUN/nemesis.log, RUN/exits and RUN/plan from `run_dir`; missing files
 * are empty. 0, or -1 with a message in `errmsg`. */
int nemlog_load(struct nemlog *nl, const char *run_dir, char *errmsg,
                size_t cap);

/* Free what nemlog_load() allocated (accepts a zeroed struct). */
void nemlog_free(struct nemlog *nl);

/* The plan's value of `key`, or NULL. */
const char *nemlog_plan_get(const struct nemlog *nl, const char *key);

#endif /* CHAOS_CHECK_NEMLOG_H */
