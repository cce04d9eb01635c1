/* The fixtures every unit test program of the lock state machine shares:
 * small limits, and a machine checked for consistency after each case. */
#ifndef BATON_TESTS_LOCKFSMCASE_H
#define BATON_TESTS_LOCKFSMCASE_H

#include "../lib/fsmtest.h"

/* Limits small enough that every limit is easy to reach. */
void lockfsmcase_small_limits(struct lockfsm_limits *l);

/* cmocka fixtures: a machine with the small limits in *state; teardown
 * asserts lockfsm_check() finds it consistent, then frees it. */
int lockfsmcase_setup(void **state);
int lockfsmcase_teardown(void **state);

/* Asserts the last recorded event is the RESULT of the last apply, with
 * `status`. */
void lockfsmcase_result_last(const struct fsmtest *t, int status);

/* A case run between lockfsmcase_setup() and lockfsmcase_teardown(). */
#define LOCKFSMCASE(name)                                                      \
        cmocka_unit_test_setup_teardown(name, lockfsmcase_setup,               \
                                        lockfsmcase_teardown)

#endif
