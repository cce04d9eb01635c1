/* Rules on lock names (src/fsm/acl.h), applied to one client's requests:
 * whether it may read, lock or manage a name, and the filter of what it
 * may see in a listing, a holders' query and a watch. */
#ifndef SERVER_NAMES_H
#define SERVER_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/acl.h"
#include "gwconn.h"

struct gateway;

/*
 * A client of the admin role (and every client of a node without TLS) is
 * not subject to rules; nor is anyone while the applied list has no rule
 * on a prefix. Everyone else may act on a name with the permissions the
 * rules matching its identity or its certificate's groups give
 * (acl_name_perms()), decided from this node's applied list at the
 * request's arrival: a change takes effect on each node at the entry
 * that makes it, for every request that arrives after.
 */

/* Whether `c` sees and may touch every name (no filtering needed). */
bool names_open(struct gateway *g, const struct gateway_conn *c);

/* The enum acl_perm bits `c` has on `name` (`len` bytes). */
uint8_t names_perms(struct gateway *g, const struct gateway_conn *c,
                    const char *name, size_t len);

/* Whether `c` may `perm` something under `prefix` (`len` bytes; a
 * listing's or a watch's): acl_prefix_reaches(). */
bool names_reaches(struct gateway *g, const struct gateway_conn *c,
                   const char *prefix, size_t len, uint8_t perm);

/*
 * 0 when `c` may `perm` the name `name` (`len` bytes; `prefix`: anything
 * under it), else BATON_EPERM: logged as a warning with its identity and
 * written to the audit trail (action `action`, target the name, detail
 * the rule that was missing: `no rule gives lock on "team-b/job"`),
 * counted in the refusals.
 */
int names_admit(struct gateway *g, const struct gateway_conn *c,
                const char *action, const char *name, size_t len, bool prefix,
                uint8_t perm);

/* The refusal itself: BATON_EPERM, logged, audited (target `len` bytes
 * of `target`, detail `why`) and counted. */
int names_refuse(struct gateway *g, const struct gateway_conn *c,
                 const char *action, const char *target, size_t len,
                 const char *why);

/* The words of a refusal for want of `perm` on `name` into `buf`: `no
 * rule gives lock on "team-b/job"` (the name cut at 64 bytes). */
const char *names_missing(uint8_t perm, const char *name, size_t len,
                          bool prefix, char *buf, size_t size);

/* The room names_missing() needs. */
#define NAMES_MISSING_MAX 128

#endif /* SERVER_NAMES_H */
