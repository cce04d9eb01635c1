/* Quotas per identity in test_model (docs/security.md, "Quotas per
 * identity"): the reference model's quotas and refusals, the generator's
 * identities and quota changes, and the access lists that the machine and
 * its restored replica read their limits from, as batond's nodes do. */
#ifndef TESTS_UNIT_MODELQUOTA_H
#define TESTS_UNIT_MODELQUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/fsm/acl.h"
#include "../../src/fsm/lockfsm.h"
#include "model.h"
#include "modelgen.h"

/* ------------------------------------------------------------------------ */
/* The reference model. */

/* An OPEN of `principal` past its identity's sessions quota: true, with
 * the refusal in `*r` (BATON_EQUOTA, the quota's kind in `waiters`, its
 * limit in `count`). */
bool m_quota_open(const struct model *m, uint64_t principal,
                  struct lockfsm_result *r);

/* The same for `holds` more grants and waits of the live session `sid`,
 * `waits` of them waits: an ACQUIRE's one, a MULTI's one per name. */
bool m_quota_holds(const struct model *m, uint64_t sid, uint32_t holds,
                   uint32_t waits, struct lockfsm_result *r);

/* What the live sessions of `principal` have: used[0] sessions, used[1]
 * grants and waits, used[2] waits; zeros for principal 0. */
void m_quota_use(const struct model *m, uint64_t principal,
                 uint32_t used[ACL_QUOTA_COUNTED]);

/* The entry `buf` (`len` bytes), after the model answered it: one ACL
 * command, QUOTA_SET or QUOTA_REMOVE, changes the model's quotas. */
void m_quota_entry(struct model *m, const uint8_t *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* The generator. */

/* The principal of the team `i` (1..CAP_QUOTAS - 1). */
uint64_t gen_team(unsigned i);

/* An OPEN's principal: a team's, or now and then none. */
uint64_t gen_principal(struct gen *g);

/* An administrator's QUOTA_SET or QUOTA_REMOVE of a team or of the
 * default into `c`, its limits in `g`. */
void gen_quota(struct gen *g, struct command *c);

/* ------------------------------------------------------------------------ */
/* The machine's side. */

/* `f` asks `a` for its limits, as batond's state machine asks the node's
 * access list. */
void modelquota_machine(struct lockfsm *f, struct acl *a);

/* The entry `buf` (`len` bytes), after the machine applied it: one ACL
 * command goes to the access list `a` too. */
void modelquota_apply(struct acl *a, const uint8_t *buf, size_t len);

/* The access list of a replica restored from a snapshot: `from`, through
 * its encoding. 0, or an error of acl_decode(). */
int modelquota_carry(struct acl *to, const struct acl *from);

/* Whether lockfsm_quota_use() of `f` gives the model's counts for every
 * team and every live session's principal; false with why in `why`. */
bool modelquota_use_agrees(const struct lockfsm *f, const struct model *m,
                           char *why, size_t cap);

#endif /* TESTS_UNIT_MODELQUOTA_H */
