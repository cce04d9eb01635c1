/* batond's request core on the simulated cluster: one real struct gateway
 * per fixture node, whose host maps its ops onto raft_fixture, and
 * in-process client connections to it. */
#ifndef TESTS_SIM_SIMHOST_H
#define TESTS_SIM_SIMHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/lib/queue.h"
#include "../../src/proto/proto.h"
#include "../../src/server/config/config.h"
#include "../../src/server/gateway/core.h"
#include "../../src/server/gateway/gateway.h"
#include "../lib/simcluster.h"

/*
 * What batond's host (src/server/host/) does with the raft node and its
 * sockets, simhost does with the fixture, in virtual time:
 *
 * - every input of the core gets `now` from the fixture's clock (ms, and
 *   ms * 10^6 as ns); the wall clock of a flush is that plus a fixed
 *   epoch, so runs replay;
 * - proposals and barriers are raft_apply() and raft_barrier() on the
 *   node (entries from raft_malloc()), answered into gateway_on_done()
 *   from raft's callbacks; a proposal while the leader runs further
 *   ahead of a follower than the fixture survives (simcluster's
 *   max_lag) is refused as raft refuses one, and the core answers
 *   NOT_LEADER; membership changes are raft_add(), raft_assign() and
 *   raft_remove() of the fixture's own nodes, refused as batond's node
 *   refuses them; a probe answers at a step whether the member's fixture
 *   node is up and its links to this node whole, or BATON_EUNREACHABLE
 *   once its time ran out; a transfer waits for a caught-up voter and
 *   calls raft_transfer() as batond's node does, and is answered when
 *   raft calls back or three election timeouts on (simops.c); backups
 *   are refused with BATON_EUNSUPPORTED;
 * - every event applied on a node goes into that node's core
 *   (simcluster's event hook, after it recorded the event), with its
 *   entry's term, and its ACL entries too;
 * - leadership: once a node leads in a term it has not tried yet, a
 *   barrier; when that applies while the node still leads in that term,
 *   gateway_on_ready(term); gateway_on_lost() the first step at which it
 *   no longer leads in that term (simhost_step());
 * - the core's timer is a due time that simhost_step() fires, and a
 *   serving core is flushed after every step;
 * - a killed node's core is dropped (its connections reported gone, then
 *   gateway_close()); its raft requests still out complete into it later
 *   and only free their records. A revived node gets a fresh core over
 *   the state machine the node kept.
 *
 * Client connections (struct simconn) are the direct path: a frame sent is
 * handed to the core at once; each frame the core commits goes to the
 * connection's inbox, its header checked then; a fail() queues the ERROR
 * frame, closes the connection and reports it gone once the core's input
 * returned; backlog is 0. Clients use only simhost_connect(),
 * simhost_send(), simhost_next(), simhost_closed() and
 * simhost_disconnect(), so that a network with delays and cuts can stand
 * in for these later.
 *
 * Everything runs on the caller's thread; a struct simhost must not move
 * once initialized (raft callbacks and connections point into it).
 */

struct simhost;
struct simcore;

/* One client's connection to one node's core. Owned by the client from
 * simhost_connect() to simhost_disconnect(). */
struct simconn {
        struct gateway_conn gw; /* the core's record of it */
        struct simhost *h;
        struct simcore *core; /* the core it talks to; NULL once gone */
        unsigned node;
        bool closed;         /* failed or dropped: nothing more goes in */
        uint8_t *inbox;      /* whole frames the core committed */
        size_t len, cap, at; /* bytes in `inbox`, room, read so far */
        struct queue link;   /* in its core's list */
};

/* Counts over a run, for the test's report. */
struct simhost_stats {
        uint64_t frames_in;  /* frames handed to cores */
        uint64_t frames_out; /* frames cores committed */
        uint64_t bad_frames; /* committed frames whose header did not decode */
        uint64_t readies;    /* gateway_on_ready() calls */
        uint64_t losts;
        uint64_t timers; /* gateway_on_timer() calls */
        uint64_t proposals;
        uint64_t refusals; /* proposals, barriers or changes refused */
        uint64_t fails;    /* connections the core failed */
        uint64_t kills;    /* cores dropped */
};

struct simhost {
        struct simcluster *c;
        bool verbose;
        struct config cfg[SIMCLUSTER_MAX_NODES];
        struct simcore *cores[SIMCLUSTER_MAX_NODES]; /* NULL: killed */
        struct simcore *dropped; /* closed cores with requests still out */
        unsigned depth;          /* inputs of a core under way */
        struct queue gone;       /* connections to report after them */
        uint8_t *scratch;        /* what reserve() hands out */
        size_t scratch_cap;
        uint64_t next_conn_id;
        struct simhost_stats stats;
        char errmsg[256]; /* the first broken promise of the core's host */
        /* A negative control of its check that raft's index of each
         * acknowledged proposal holds it on its node (simops.c): the
         * check looks this many entries further. 0 but in the control. */
        unsigned index_skew;
};

/* A core on every node of the started cluster `c` (borrowed until
 * simhost_free()), which must have no event hook yet; `verbose` prints the
 * cores' log lines. 0 or BATON_ENOMEM. */
int simhost_init(struct simhost *h, struct simcluster *c, bool verbose);

/* Have the cores seed the cluster's access list and take an
 * administrator's ACL changes, as batond's do with tls on (access.h):
 * their config says tls, while every connection stays plain, an
 * administrator whose names are open and who has no quota, so that the
 * list changes and what the clients may do does not. Call after
 * simhost_init(), before the run. */
void simhost_acl_on(struct simhost *h);

/* After every simcluster_step(): simhost_sync(), then leadership,
 * restores and timers into the cores, then a flush of every serving
 * core. */
void simhost_step(struct simhost *h);

/* Bring the cores in line with the nodes simlinks killed and revived
 * (simcluster's `killed` counts): a core dropped for each node killed, a
 * fresh one for each node revived. simhost_step() does it first, so
 * faults may kill and revive with simlinks alone; call it right after
 * them where a client might reach a killed node's core before the next
 * step. */
void simhost_sync(struct simhost *h);

/* Kill node `i` (simlinks_kill()), revive it (simlinks_revive()), and
 * simhost_sync(). */
void simhost_kill(struct simhost *h, unsigned i);
void simhost_revive(struct simhost *h, unsigned i);

/* The node whose core serves as leader (the highest term), or c->cfg.n. */
unsigned simhost_serving(const struct simhost *h);

/* Drop every core, before simcluster_close(), whose closing raft
 * completes their requests still out; then simhost_free(). */
void simhost_shutdown(struct simhost *h);
void simhost_free(struct simhost *h);

/* A connection to node `i`'s core; NULL when the node is down or out of
 * memory. */
struct simconn *simhost_connect(struct simhost *h, unsigned i);
/* Hand one whole frame (`len` bytes, borrowed) to the core; dropped when
 * the connection is closed. */
void simhost_send(struct simconn *conn, const uint8_t *frame, size_t len);
/* The next frame the core wrote to `conn`, if any: its header, and its
 * body, valid until the next call on `conn`. */
bool simhost_next(struct simconn *conn, struct proto_header *hdr,
                  const uint8_t **body);
/* The frame at *at of `buf`, whole frames laid end to end up to *len, each
 * decoded when it was put there: its header and body, *at moved past it.
 * False once all are read, with *at and *len set to 0 (an inbox read this
 * way: simhost's connections, simpath's). */
bool simhost_frames_next(const uint8_t *buf, size_t *at, size_t *len,
                         struct proto_header *hdr, const uint8_t **body);
/* Whether `conn` closed (its node failed it or went down): what is left
 * in its inbox is all it will get. */
static inline bool simhost_closed(const struct simconn *conn)
{
        return conn->closed;
}
/* The client closes `conn` (NULL is fine): the core is told, if it was
 * not yet, and `conn` is freed. */
void simhost_disconnect(struct simconn *conn);

#endif /* TESTS_SIM_SIMHOST_H */
