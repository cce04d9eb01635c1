/* The commands of the reference model of the lock state machine: what a
 * QUERY answers and what each decoded command does, as docs/fsm.md says. */
#ifndef TESTS_UNIT_MODELCMD_H
#define TESTS_UNIT_MODELCMD_H

#include "model.h"

/* What QUERY of `name` answers. */
struct lockfsm_result m_query(struct model *m, const char *name, size_t len);

/* Applies one decoded command at `index`, with its events to `log`. */
struct lockfsm_result m_apply(struct model *m, uint64_t index,
                              const struct command *c, struct evlog *log);

#endif /* TESTS_UNIT_MODELCMD_H */
