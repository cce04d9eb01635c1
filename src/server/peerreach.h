/* Which raft peers this node cannot reach, and why: one log line when a
 * peer stops being reachable and one when it is reached again, for both
 * raft transports (rafttcp.h). No I/O but the log. */
#ifndef SERVER_PEERREACH_H
#define SERVER_PEERREACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/*
 * An episode begins with the first dial of a peer that fails (refused,
 * timed out, no route, a name that does not resolve, TLS refused either
 * way, closed during the handshake), whether the peer was ever reached or
 * not (a first start with a peer's port blocked is one), and ends when a
 * dial of that peer gets a working connection. Each beginning is logged
 * once as a warning, with the peer's id, its raft address and the first
 * reason; each end once at info level. Raft dials a lost peer again about
 * once a second, so logging every failure would flood the log, and logging
 * none (as before) left a blocked raft port unseen.
 */

#define PEERREACH_MAX     (2 * CONFIG_MAX_MEMBERS)
#define PEERREACH_WHY_MAX 160

/* Caller-allocated, zeroed. Loop thread. */
struct peerreach {
        unsigned n;
        struct peerreach_peer {
                uint64_t id;
                bool down; /* in an episode */
        } peers[PEERREACH_MAX];
};

/* A dial of node `id` at `address` failed for `why` ("refused: ...").
 * Logs when this begins an episode. */
void peerreach_failed(struct peerreach *r, uint64_t id, const char *address,
                      const char *why);

/* A dial of node `id` at `address` got a working connection. Logs when
 * this ends an episode. */
void peerreach_reached(struct peerreach *r, uint64_t id, const char *address);

/* Whether node `id` is in an episode. */
bool peerreach_down(const struct peerreach *r, uint64_t id);

/* The reason for a failed connect, from libuv's error `uverr`, into `buf`
 * ("refused (connection refused)", "no route (no route to host)", "timed
 * out (connection timed out)"). Returns `buf`. */
const char *peerreach_why(int uverr, char *buf, size_t size);

#endif /* SERVER_PEERREACH_H */
