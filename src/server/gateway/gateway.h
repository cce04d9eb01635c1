/* batond's request gateway: takes every client frame, and proposes lock
 * commands to raft in one batch entry per loop iteration (the write path). */
#ifndef SERVER_GATEWAY_H
#define SERVER_GATEWAY_H

#include <stdint.h>

#include <uv.h>

#include "../../fsm/lockfsm.h"
#include "../../proto/backup.h"
#include "../../proto/status.h"
#include "../base/log.h"
#include "../net/conn.h"
#include "../raft/node.h"
#include "core.h"

/*
 * Its inputs come from its host (src/server/host/corehost.h), which
 * registers itself with the node and the connections and calls these.
 */

/*
 * What the core asks of its host, which does it (batond: corehost.c).
 * Caller-allocated; the core borrows it for its life. No op calls an
 * input of the core before it returns.
 */
struct gateway_host {
        void *data; /* the host's */
        /* The SHA-256 of an ATTACH secret (ATTACH_SECRET_SIZE bytes, borrowed
         * for the call) into `hash` (ATTACH_HASH_SIZE bytes): 0, or
         * BATON_ENOMEM. */
        int (*hash_secret)(struct gateway_host *h, const uint8_t *secret,
                           uint8_t *hash);
        /*
         * Backups: the host pins the state and streams it; the core has
         * admitted the request (an admin's; a first one only on the
         * serving leader) and answers what the op returns when it is not
         * 0, for the op has then written nothing. `c` and `req` are borrowed
         * for the call; the host lets go of c's pins when c goes
         * (gateway_on_gone()). backup_start: request `id`, a first BACKUP
         * (backup 0, offset 0), whose read barrier has applied: pin the state,
         * which then holds everything acknowledged before it arrived, and
         * answer with its first chunk. backup_chunk: request `id` asks for the
         * chunk of pin req->backup (not 0) at req->offset.
         * 0 when answered (or c is closing), else a BATON_E* status.
         */
        int (*backup_start)(struct gateway_host *h, struct conn *c,
                            uint64_t id);
        int (*backup_chunk)(struct gateway_host *h, struct conn *c, uint64_t id,
                            const struct proto_backup *req);
        /* What is wrong with this node, for a STATUS that asks
         * (PROTO_FLAG_ALARMS): the alarms GET /ready would give as its
         * reason and that last until a restart, into `*out` (zeroed by
         * the core). */
        void (*alarms)(struct gateway_host *h, struct proto_alarms *out);
        /* One line of the core's log at `level`, which is the level
         * given to gateway_init() or more severe, about `f` (NULL:
         * nothing in particular): `message`, formatted. Both borrowed
         * for the call. */
        void (*log)(struct gateway_host *h, enum log_level level,
                    const struct log_fields *f, const char *message);
};

/* Set up on a started node (`host`, `node` and `cfg` borrowed for the
 * gateway's life), logging lines at `level` and more severe ones. 0 or
 * BATON_ENOMEM; on failure nothing is left to clean up. */
int gateway_init(struct gateway *g, struct gateway_host *host, uv_loop_t *loop,
                 struct node *node, const struct config *cfg,
                 enum log_level level);
/* Answer everything pending (NOT_LEADER, or outcome unknown for what was
 * proposed) and close the deadline timer. */
void gateway_close(struct gateway *g);

/* A frame from `c`: answer or queue the request. */
void gateway_on_frame(struct gateway *g, struct conn *c,
                      const struct proto_header *h, const uint8_t *body);
/* `c` is going away: requests of `c` already proposed still run; only
 * their answers are dropped. */
void gateway_on_gone(struct gateway *g, struct conn *c);

/* Leadership (node_callbacks). ready: restart the leader's clocks and
 * queue what was held for proposal or a barrier. lost: drop the clocks
 * and answer what this node holds, as gateway_close() does. */
void gateway_on_ready(struct gateway *g);
void gateway_on_lost(struct gateway *g);
/* The node installed a leader's snapshot; every watch that had not seen
 * everything up to it ends (watches_reset()) now, not at the next event
 * the node applies, which may be long in coming. */
void gateway_on_restored(struct gateway *g);

/* A state machine event, from inside the apply of its entry, on every
 * node, in log order (fanout.h); `ev` is borrowed for the call. */
void gateway_on_event(struct gateway *g, const struct lockfsm_event *ev);
/* An ACL entry at `index` was applied with `status`, after its events
 * (access_on_applied()); `c` is borrowed for the call. */
void gateway_on_acl(struct gateway *g, uint64_t index, const struct command *c,
                    int status);

/* End of a loop iteration: propose what arrived, start the read barrier. */
void gateway_flush(struct gateway *g);

#endif /* SERVER_GATEWAY_H */
