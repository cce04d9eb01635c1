/* The environment of the command batonctl runs while it holds a lock
 * (`batonctl lock NAME -- CMD`): BATON_LOCK, BATON_TOKEN and
 * BATON_DEADLINE_MS, the same for every way of supervising the command. */
#ifndef CLI_LOCKENV_H
#define CLI_LOCKENV_H

#include <stdint.h>

#include "../../include/baton.h"

/* Set BATON_LOCK to `name`, BATON_TOKEN to `token` and BATON_DEADLINE_MS to
 * the wall-clock ms (CLOCK_REALTIME) until which the lock is held even if
 * no further keepalive succeeds (now plus what is left of `c`'s local
 * lease, or of its hold time, `held_ms`, when that is less; -1: none), in
 * batonctl's own environment, which the command inherits. */
void lockenv_set(baton_client *c, const char *name, uint64_t token,
                 int64_t held_ms);

#endif /* CLI_LOCKENV_H */
