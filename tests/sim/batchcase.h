/* A log of batches written by hand on a one-node cluster, in which one
 * entry grants a lock and frees it again, so that the next entry's start
 * hands it on (cause BATCH): the case of check_log() that batond's cores
 * seldom make in a run, checked as written and with that grant moved. */
#ifndef TESTS_SIM_BATCHCASE_H
#define TESTS_SIM_BATCHCASE_H

#include <stdbool.h>
#include <stddef.h>

/* Build the log and run check_log() over it; with `tamper`, the deferred
 * grant goes to the session that just released the lock instead of the
 * head of the queue. check_log()'s answer: 0, or -1 with the failure in
 * `reason` (`cap` bytes); -1 also when the log could not be built or
 * holds no deferred grant (said so in `reason`, after "batchcase: "). */
int batchcase_run(bool tamper, char *reason, size_t cap);

#endif /* TESTS_SIM_BATCHCASE_H */
