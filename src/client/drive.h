/* A short-lived link driven on the caller's thread until its work is done,
 * no node can be reached, or a deadline: baton_status()'s probes of one
 * node and baton_backup_save()'s transfer. */
#ifndef CLIENT_DRIVE_H
#define CLIENT_DRIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "linkio.h"

/*
 * Drive `io` and its link on the calling thread while *rv is 1: connect,
 * call `turn` (NULL: none; it may put frames, and returns when it next
 * wants a turn, CLOCK_NEVER for no time of its own), write, and wait in
 * poll() for the socket or the next event. The link's callbacks set *rv when
 * the work is done. When a pass over the endpoints fails everywhere, or at
 * `deadline` (CLOCK_MONOTONIC ms), *rv becomes what reach_answer() says, with
 * the detail recorded for the calling thread (baton_errmsg()): for work the
 * cluster never applies (a STATUS, a BACKUP: `sent` NULL) or a request
 * not written yet (`*sent` false), BATON_ECONNECT or BATON_ETLS at once;
 * for a request that went out (`*sent` true, read at each turn), whose
 * outcome is then unknown, BATON_ENOANSWER at the deadline. A failed
 * poll() makes it BATON_EIO.
 */
void drive_link(struct linkio *io, int *rv, int64_t deadline,
                int64_t (*turn)(void *data, int64_t now), void *data,
                const bool *sent);

#endif /* CLIENT_DRIVE_H */
