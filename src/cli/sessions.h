/* batonctl session list and info: the cluster's sessions, and one. */
#ifndef CLI_SESSIONS_H
#define CLI_SESSIONS_H

#include "../../include/baton.h"
#include "args.h"

/*
 * session list [--after ID] [--limit N]: the live sessions by id, a line
 * (or, with --json, one object) each, paging through the cluster's pages;
 * at most N of them, after session ID. session info ID: one session with
 * its locks and waits. Exit 0; 1 when info names a session that is not
 * live; 3 when the cluster could not be asked.
 */
int cli_session(baton_client *c, const struct args *o);

/*
 * The time the leader leaves each of the `n` sessions in `ids` before it
 * expires it, into `left` (-1: not known: the session ended, or the
 * leader could not be asked), for `holder`: one SESSIONS request per
 * session for a few of them, a walk through every page for more.
 */
void cli_sessions_left(baton_client *c, const uint64_t *ids, size_t n,
                       int64_t *left);

#endif /* CLI_SESSIONS_H */
