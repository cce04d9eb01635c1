/* A function run in a forked child of a unit test, for the cases that
 * expect it to abort or be killed: what it wrote on stderr, and how it
 * ended. */
#ifndef TESTS_FORKRUN_H
#define TESTS_FORKRUN_H

#include <stddef.h>

/* Run `fn(arg)` in a child whose stderr is a pipe; the child exits 0 if
 * `fn` returns. What it wrote goes to `said` (up to `cap` - 1 bytes, then
 * a NUL; `cap` >= 1), and its waitpid() status is returned; -1 when the
 * pipe, the fork or the wait failed. */
int forkrun(void (*fn)(void *arg), void *arg, char *said, size_t cap);

#endif /* TESTS_FORKRUN_H */
