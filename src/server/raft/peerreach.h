/* Which raft peers this node cannot reach, and why: one log line when a
 * peer stops being reachable and one when it is reached again, for both
 * raft transports (rafttcp.h). No I/O but the log. */
#ifndef SERVER_PEERREACH_H
#define SERVER_PEERREACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../config/config.h"

/*
 * An episode begins with the first dial of a peer that fails (refused,
 * timed out, no route, a name that does not resolve, TLS refused either
 * way, closed during the handshake), whether the peer was ever reached or
 * not (a first start with a peer's port blocked is one), and ends when a
 * dial of that peer gets a working connection. An episode that has lasted
 * PEERREACH_GRACE_MS since its first dial began is logged once as a
 * warning, with the peer's id, its raft address and the reason of the
 * failure that found it so; its end is then logged once at info level.
 * Shorter ones are not: the nodes of a cluster starting together, or a
 * peer restarting, refuse each other for a moment. Raft dials a lost peer
 * again about once a second, so logging every failure would flood the
 * log, and logging none (as before) left a blocked raft port unseen.
 */

#define PEERREACH_GRACE_MS 2000

#define PEERREACH_MAX     (2 * CONFIG_MAX_MEMBERS)
#define PEERREACH_WHY_MAX 160

/* Caller-allocated, zeroed. Loop thread. */
struct peerreach {
        unsigned n;
        struct peerreach_peer {
                uint64_t id;
                bool down;      /* in an episode */
                bool said;      /* ... and it was logged */
                uint64_t since; /* when its first failed dial began */
        } peers[PEERREACH_MAX];
};

/* A dial of node `id` at `address`, begun at `started`, failed for `why`
 * ("refused (...)") at `now` (ms, one monotonic clock). Logs when the
 * episode has lasted PEERREACH_GRACE_MS and was not logged yet. */
void peerreach_failed(struct peerreach *r, uint64_t id, const char *address,
                      const char *why, uint64_t started, uint64_t now);

/* A dial of node `id` at `address` got a working connection. Logs when
 * this ends an episode that was logged. */
void peerreach_reached(struct peerreach *r, uint64_t id, const char *address);

/* Whether node `id` is in an episode. */
bool peerreach_down(const struct peerreach *r, uint64_t id);

/* The reason for a failed connect, from libuv's error `uverr`, into `buf`
 * ("refused (connection refused)", "no route (no route to host)", "timed
 * out (connection timed out)"). Returns `buf`. */
const char *peerreach_why(int uverr, char *buf, size_t size);

#endif /* SERVER_PEERREACH_H */
