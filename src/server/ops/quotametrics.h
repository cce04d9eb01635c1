/* The metrics of quotas per identity (src/fsm/acl.h): each quota's limits
 * and what the identity it names uses now, for the identities the access
 * list names alone, so the series are bounded by its ACL_QUOTA_MAX. */
#ifndef SERVER_QUOTAMETRICS_H
#define SERVER_QUOTAMETRICS_H

#include "../../fsm/acl.h"
#include "../../fsm/lockfsm.h"
#include "promtext.h"

/*
 * baton_quota_limit{identity,quota}: every quota's non-zero limits (the
 * default's as identity "*"); baton_quota_used{identity,quota}: the
 * sessions, locks (held and awaited) and waiters of each identity a quota
 * names, cluster-wide in this node's applied state; both only while the
 * list has a quota. baton_quota_refused_total{quota}: the requests this
 * node answered BATON_EQUOTA (`refused`, by kind), always.
 */
void quotametrics_render(struct promtext *o, const struct acl *a,
                         const struct lockfsm *f,
                         const uint64_t refused[ACL_QUOTA_KINDS]);

#endif /* SERVER_QUOTAMETRICS_H */
