/*
 * Baton: a Raft-replicated distributed lock service.
 *
 * The public API, one header: it includes every topic header under baton/,
 * where each function is declared and documented. A program may include
 * this header, or only the topic headers it uses:
 *
 *   baton/api.h        BATON_API and baton_version()
 *   baton/errors.h     the BATON_E* codes that every Baton component reports
 *                      (the server, the client library and the command line
 *                      tool), baton_strerror(), baton_errname(),
 *                      baton_errmsg()
 *   baton/client.h     the libbaton handle: options, create and destroy,
 *                      its session, owner tags and wait values
 *   baton/locks.h      locks, read/write locks, semaphores, multi-locks,
 *                      their release, holder queries, the fence
 *   baton/elections.h  leader elections
 *   baton/watch.h      watches of a name or a prefix
 *   baton/cluster.h    what a cluster reports of itself: roles, status,
 *                      versions, what a backup holds
 *   baton/admin.h      status, backups, members, leadership transfer,
 *                      revoking, the access list
 */
#ifndef BATON_H
#define BATON_H

#include "baton/api.h"
#include "baton/errors.h"
#include "baton/client.h"
#include "baton/locks.h"
#include "baton/elections.h"
#include "baton/watch.h"
#include "baton/cluster.h"
#include "baton/admin.h"
#include "baton/sessions.h"

#endif /* BATON_H */
