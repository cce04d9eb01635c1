/* The access list's check of a simulated run: every node had the same
 * list after each index, the one the log's ACL entries make. */
#ifndef TESTS_SIM_ACLCHECK_H
#define TESTS_SIM_ACLCHECK_H

#include <stddef.h>

#include "sim.h"

/*
 * Once the run converged and the replicas applied the same entries
 * (check_replicas() calls it after (b)), over what simcluster recorded
 * with each ACL entry a node applied, the digest of its whole access list
 * then (tests/lib/simacl.h):
 *
 * - every node that applied index i had the same list after it;
 * - node 0's ACL entries, read in order, follow a model of the list kept
 *   here and not by acl_apply(): the first SEED sets it and a later one
 *   changes nothing, nothing changes before it (BATON_EBUSY), a
 *   RULE_SET puts its rule (its permissions, with read), a RULE_REMOVE
 *   takes one away or is BATON_ENOTFOUND, and likewise QUOTA_SET and
 *   QUOTA_REMOVE: each entry's outcome is the model's, and the list
 *   after it, built from the model, is the one every node had;
 * - each node's list now is the one it had after its last ACL entry (no
 *   other entry changed it);
 * - each list restored from a node's snapshot during the run
 *   (s->acl_samples) is the one the nodes had at the snapshot's index;
 * - each change the administrator was told applied (0) or found nothing
 *   to remove (BATON_ENOTFOUND) is an ACL entry of the log, as it asked
 *   it, with that outcome;
 * - and nothing went wrong on the administrator's side (s->acl_error).
 *
 * Counts the ACL entries and the changes of the list into s->acl_entries
 * and s->acl_changes. 0, or -1 with the first failure in `reason`.
 */
int check_acl(struct sim *s, char *reason, size_t cap);

/* The negative control of the model (test_sim --break acl-noop): on
 * every node alike, the list recorded after the first RULE_SET that
 * changed it is the one before, as if that entry changed nothing
 * anywhere, which only the model can see. 0, or -1 with the reason in
 * `reason` when no RULE_SET changed the list. */
int aclcheck_break(struct sim *s, char *reason, size_t cap);

#endif /* TESTS_SIM_ACLCHECK_H */
