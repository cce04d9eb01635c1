/* test_sim's administrator of the access list: rule and quota changes
 * sent as ACL frames to the request core of the node it believes leads,
 * and the nodes' snapshots restored now and then to read their lists. */
#ifndef TESTS_SIM_ACLWORK_H
#define TESTS_SIM_ACLWORK_H

#include <stdint.h>

#include "sim.h"

/*
 * Every 0.4 to 1.6 virtual seconds the administrator sends one change,
 * as `batonctl rule` and `batonctl quota` do, to the core it believes
 * leads (following NOT_LEADER; never sent again): a RULE_SET (40%) of a
 * rule of one of a few subjects, an identity's or a group's, on a prefix
 * of the run's lock names ("" is every name), with permissions 1 to 7; a
 * RULE_REMOVE (25%), mostly of a rule it set; a QUOTA_SET (20%) of an
 * identity or of "*" with one to five limits; a QUOTA_REMOVE (15%). The
 * cores seed the list themselves (simhost_acl_on()), so the first changes
 * may find none (BATON_EBUSY). It draws from a stream of its own, so
 * that the clients', the operator's and the faults' draws are those of
 * the seed without it. Its answers go to s->acl_answers (RESULTs only).
 *
 * Every eighth change, one node, picked at random, has its snapshot
 * restored into a state machine of its own (simsnap_restore_acl()), whose
 * list goes to s->acl_samples, to be checked against the list the nodes
 * had at the snapshot's index (aclcheck.h).
 *
 * What goes wrong on its side (a node's snapshot that does not restore,
 * an ERROR frame) goes to s->acl_error.
 */

/* Start it for seed `seed` of `s` (s->aclw); false when out of memory. */
bool aclwork_start(struct sim *s, uint64_t seed);

/* Read the answers that came, and send the next change when it is due. */
void aclwork_drive(struct sim *s, raft_time now);

/* Hang up its connection, before the cores shut down, and free it, its
 * samples and its answers. Accepts a run without it. */
void aclwork_close(struct sim *s);

/* The changes it sent so far. */
unsigned aclwork_sent(const struct sim *s);

#endif /* TESTS_SIM_ACLWORK_H */
