/* Monotonic time, deadlines and random numbers for libbaton. */
#ifndef CLIENT_CLOCK_H
#define CLIENT_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "coreenv.h"

/* A deadline that never comes (BATON_WAIT_FOREVER). */
#define CLOCK_NEVER INT64_MAX

/* CLOCK_MONOTONIC in milliseconds. */
int64_t clock_now_ms(void);

/* `now + ms`, saturating at CLOCK_NEVER. */
int64_t clock_after(int64_t now, int64_t ms);

/* A deadline in ms as an absolute CLOCK_MONOTONIC timespec, for
 * pthread_cond_timedwait() on a condition variable set to that clock. */
struct timespec clock_timespec(int64_t deadline_ms);

/* A random non-zero 64-bit number (getrandom, else time and pid mixed). */
uint64_t clock_random(void);

/* libbaton's environment for its deciding code, shared by every handle
 * (it holds no state): clock_random() for random numbers, and for a
 * session's secret the kernel's random bytes, waiting for its pool to be
 * ready rather than settling for guessable ones. */
const struct core_env *clock_env(void);

/*
 * The realtime clock in ns, strictly increasing within the process (in
 * case the clock steps back): the seq of a command for another session.
 * The detached process numbered its commands from 1 and is gone, so
 * anything this large is above every seq it used and above the session's
 * acknowledged floor; seqs need only be unique and at or above the floor.
 * Thread-safe.
 */
uint64_t clock_unique_ns(void);

#endif /* CLIENT_CLOCK_H */
