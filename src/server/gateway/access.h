/* The cluster's access list on this node: the roles of clients from the
 * applied list, the first leader's seed, and administrators' ACL requests. */
#ifndef SERVER_ACCESS_H
#define SERVER_ACCESS_H

#include <stdint.h>

#include "../../proto/proto.h"
#include "../config/roles.h"
#include "gwconn.h"
#include "core.h"

/*
 * Roles are replicated state (src/fsm/acl.h): every node decides a
 * client's role from the list it applied (roles_decide()), and until the
 * cluster has one, from its config's role lines, which also seed it: the
 * leader of a cluster whose applied state has no list (new, restored,
 * recovered, upgraded) proposes them and default-role, once. From then on
 * the config's role lines are ignored; batond logs once when they differ
 * from the cluster's list.
 */

/* Build the config's list (the fallback and the seed) into g. */
void access_init(struct gateway *g);

/* An ACL entry at `index` was applied with `status` (gateway_on_acl()):
 * log what the list is now, and decide the SET or REMOVE waiting for it.
 * `c` is borrowed for the call. */
void access_on_applied(struct gateway *g, uint64_t index,
                       const struct command *c, int status);

/* The role `identity` (borrowed) has on this node now: from the applied
 * list, else the config's lines (roles_decide()). For any port that
 * authorizes clients (the metrics port's /metrics too). */
enum roles_role access_role(struct gateway *g, const char *identity);

/* Give a TLS connection the role its identity has now: recomputed when
 * the applied list may have changed since it was last decided. */
void access_refresh(struct gateway *g, struct gateway_conn *c);

/* On becoming the serving leader at `now_ms`: the seed is due when the
 * applied state still has no list ACCESS_SEED_DELAY_MS(cfg) later
 * (access_tick()). */
void access_seed(struct gateway *g, uint64_t now_ms);

/* The wait before a new leader seeds: a former leader of an older release
 * that handed over and is stopping (a rolling upgrade, leader last) is
 * gone by then, and never applies an entry it does not read. */
#define ACCESS_SEED_DELAY_MS(cfg)                                              \
        ((cfg)->election_timeout_ms * 2 > 1000                                 \
             ? (cfg)->election_timeout_ms * 2                                  \
             : 1000)

/* On every loop turn of a serving leader, at `now_ms`: propose the seed
 * once it is due (again each ACCESS_SEED_DELAY_MS while it has not been
 * applied: a later seed changes nothing). */
void access_tick(struct gateway *g, uint64_t now_ms);

/* Say, once, that the config's role lines differ from the cluster's list
 * (when one is applied). */
void access_compare(struct gateway *g);

/*
 * An ACL frame from `c` (an administrator's: the gateway checked the
 * role). LIST is answered with an ACL_REPLY of this node's applied list
 * (an error RESULT BATON_EBUSY while the cluster has none); SET and
 * REMOVE go into the log as an ACL entry carrying c's identity, and are
 * answered with a RESULT: 0, or BATON_EINVAL (the list would have no
 * admin left, or it is full), BATON_ENOTFOUND (REMOVE of an identity
 * without a rule), BATON_EBUSY (no list yet: retry), BATON_EUNKNOWN
 * (leadership lost on the way), BATON_EUNSUPPORTED (tls = off: no
 * identities, no list). A node that does not lead answers NOT_LEADER; a
 * malformed body fails the connection.
 */
void access_on_frame(struct gateway *g, struct gateway_conn *c,
                     const struct proto_header *h, const uint8_t *body);

#endif /* SERVER_ACCESS_H */
