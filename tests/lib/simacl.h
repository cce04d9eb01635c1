/* The access list in a simulated cluster: one digest of a node's whole
 * list, which simcluster records with each ACL entry a node applies and
 * the simulation's checker compares between nodes and with its model. */
#ifndef TESTS_SIMACL_H
#define TESTS_SIMACL_H

#include <stdint.h>

#include "../../src/fsm/acl.h"
#include "../../src/server/base/fnv.h"

/* The digest of an absent list (no seed applied yet): FNV-1a of no
 * bytes, which no encoded list has (an encoding is never empty). */
#define SIMACL_ABSENT FNV1A64_OFFSET

/* FNV-1a of the list's own encoding (acl_encode(): every rule, quota and
 * the default role, in the order every replica keeps them), or
 * SIMACL_ABSENT. 0 never: a digest of 0 would read as "no ACL entry"
 * (struct simentry). */
uint64_t simacl_digest(const struct acl *a);

#endif /* TESTS_SIMACL_H */
