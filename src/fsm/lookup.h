/* Reads of the lock state machine: QUERY, CHECK and the walks over locks and
 * waiters, answered from local state or applied as log entries. */
#ifndef FSM_LOOKUP_H
#define FSM_LOOKUP_H

#include "../proto/command.h"
#include "types.h"

struct lockfsm;

/* Apply a QUERY or CHECK entry: fill `res` as lockfsm_query() or
 * lockfsm_check_token() would; nothing changes. */
void lookup_apply(const struct lockfsm *f, const struct command *c,
                  struct lockfsm_result *res);

#endif /* FSM_LOOKUP_H */
