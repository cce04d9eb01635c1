/* What a harness's nodes wrote: apply logs compared across nodes, log
 * lines counted, and reports of sanitizers and failed assertions found;
 * part of the harness (harness.h includes it). */
#ifndef TESTS_INTEGRATION_HARNESSLOGS_H
#define TESTS_INTEGRATION_HARNESSLOGS_H

#include <stdbool.h>
#include <stddef.h>

struct harness;

/*
 * docs/chaos.md S9: every pair of nodes' apply logs agree on every index both
 * applied (a node's replay after a restart must repeat itself too). 0 with
 * `*compared` = (pair of nodes, index) comparisons made, or -1 with the
 * first difference in h->errmsg.
 */
int harness_check_apply_logs(struct harness *h, unsigned *compared);

/* The whole file at `path`, NUL-terminated (its length in `*len`; may
 * be NULL), for the caller to free(); NULL when it cannot be read. */
char *harness_read_file(const char *path, size_t *len);

/* Whether some node's apply log has a line with `needle` in it. */
bool harness_apply_log_has(struct harness *h, const char *needle);

/*
 * Apply-log RESULT lines of committed entries that did not decode as a
 * command (BATON_EVERSION or BATON_EMALFORMED with cause UNKNOWN), over all
 * nodes. The gateway proposes only commands that decode, so each one is an
 * entry corrupted between the leader's proposal and a node's apply.
 * `*node` (may be NULL) gets the first node that has one.
 */
unsigned harness_undecodable_entries(struct harness *h, unsigned *node);

/* Lines of node `id`'s log with `needle` in them (0 when it has no log). */
unsigned harness_log_count(const struct harness *h, unsigned id,
                           const char *needle);

/*
 * docs/chaos.md L4: lines of the nodes' logs that report a sanitizer error or a
 * failed assertion. `first` (may be NULL) gets the first, with its node; the
 * lines after it (a sanitizer's stack) are printed as TAP comments, so that a
 * run that cannot be repeated still says where it broke.
 */
unsigned harness_scan_logs(struct harness *h, char *first, size_t cap);

#endif /* TESTS_INTEGRATION_HARNESSLOGS_H */
