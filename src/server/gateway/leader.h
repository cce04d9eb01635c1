/* What the serving leader does on its own: keep the clocks of sessions,
 * waits, lock-delays and hold times, propose EXPIRE, TIMEOUT, UNBLOCK and
 * EXPIRE_HOLD when they run out, and record the bootstrap members in a new
 * cluster's directory. */
#ifndef SERVER_LEADER_H
#define SERVER_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"
#include "deadlines.h"

/*
 * This node has just started serving: seed the member directory if it is
 * empty, and restart every clock from `now`, since a new leader cannot
 * know its predecessor's: every session gets a full TTL, every waiter its
 * full wait and every grant with a hold time its full hold time (a grant
 * ends late rather than early). The proposals are queued on g->unsent.
 */
void leader_start(struct gateway *g, const struct gateway_now *now);

/* The deadlines key of a lock-delay: no session has id UINT64_MAX (ids
 * are stamps), and the seq is the lock's creation stamp. */
#define LEADER_LOCK_DELAY UINT64_MAX

/* The deadlines key of a grant's hold time: its session, and the seq of
 * the ACQUIRE that made it with this bit set (no client's seq reaches
 * it), apart from that ACQUIRE's wait, which its grant ended. */
#define LEADER_HOLD_SEQ (UINT64_C(1) << 63)

/* A grant of `session`'s ACQUIRE of `seq` on `name` was made, or its hold
 * time restarted (GRANT, EXTEND events), at `now_ms`: propose its
 * EXPIRE_HOLD `hold_ms` later. */
void leader_start_hold(struct gateway *g, uint64_t now_ms, uint64_t session,
                       uint64_t seq, const char *name, size_t name_len,
                       uint32_t hold_ms);

/* deadlines_fire_cb (`data` is the struct gateway): queue EXPIRE for a
 * session whose lease ran out (d->seq == 0), TIMEOUT for a wait, UNBLOCK
 * for a lock-delay (d->session == LEADER_LOCK_DELAY), or EXPIRE_HOLD for
 * a grant's hold time (LEADER_HOLD_SEQ in d->seq), naming the entry its
 * clock dates from as the state machine has it now. */
void leader_on_deadline(void *data, const struct deadline *d);

/*
 * Whether this core proposed EXPIRE for `session` and has not seen its
 * END applied since. Its client must then not be told that a keepalive
 * renewed the lease: the EXPIRE will end the session when it commits,
 * under this leader or the next, perhaps inside the lease the client
 * would date from that keepalive. A session whose EXPIRE never commits
 * (the entry lost with leadership) stays so here; no keepalive renews
 * it, so its lease runs out and EXPIRE is proposed again.
 */
bool leader_expiring(const struct gateway *g, uint64_t session);

/*
 * EXPIREs a leader has out at once, at most: queued or proposed, and not
 * yet applied or failed. Leases that run out beyond it wait, due, until
 * half of these are done (deadlines_run()), so a hundred thousand
 * sessions expiring together go out an entry's worth at a time, each
 * entry applied in a short turn of every node's loop, with clients'
 * requests in between; none of them is fired again while it waits. One
 * batch entry's worth (ENTRY_MAX_COMMANDS): against four, 100,000
 * expiries took 1.2 s rather than 1.0 (medians of six) and the other
 * clients' p99 during them was 1.8 times their p99 before rather than
 * 2.8 (docs/history/performance.md, "Storms").
 */
#ifndef LEADER_EXPIRIES_MAX /* test_simhost_tightroom sets 2 */
#define LEADER_EXPIRIES_MAX 256
#endif

/* How many more leases may fire now (deadlines_run()'s max_leases). */
uint32_t leader_expiry_room(const struct gateway *g);

/* An EXPIRE of this leader's was queued (`queued`) or is done: applied,
 * failed or dropped. Done, and with half the room free, the leases held
 * back may fire. */
void leader_expiry_count(struct gateway *g, bool queued);

/* `session` ended (its END event): forget that its EXPIRE was proposed. */
void leader_session_ended(struct gateway *g, uint64_t session);

/* A lock's lock-delay of `delay_ms` began (its BLOCK event) at `now_ms`:
 * propose its UNBLOCK that long after. */
void leader_start_delay(struct gateway *g, uint64_t now_ms, const char *name,
                        size_t name_len, uint64_t created, uint32_t delay_ms);

#endif /* SERVER_LEADER_H */
