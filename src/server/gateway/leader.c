/* What the serving leader does on its own: keep the clocks of sessions,
 * waits, lock-delays and hold times, propose EXPIRE, TIMEOUT, UNBLOCK and
 * EXPIRE_HOLD when they run out, and record the bootstrap members in a new
 * cluster's directory. */
#include "leader.h"

#include <string.h>

#include "gwlog.h"
#include "access.h"
#include "gateway.h"
#include "pending.h"

void leader_on_deadline(void *data, const struct deadline *d)
{
        struct gateway *g = data;
        struct command c;

        memset(&c, 0, sizeof c);
        c.session = d->session;
        if (d->session != LEADER_LOCK_DELAY && (d->seq & LEADER_HOLD_SEQ)) {
                uint32_t hold_ms;
                uint64_t armed;
                if (!lockfsm_hold_clock(g->host->lockfsm(g->host), d->session,
                                        d->seq & ~LEADER_HOLD_SEQ, d->name,
                                        d->name_len, &hold_ms, &armed) ||
                    hold_ms == 0) {
                        /* Ended meanwhile: its RELEASE event drops it too. */
                        deadlines_drop(&g->deadlines, d->session, d->seq);
                        return;
                }
                c.type = COMMAND_EXPIRE_HOLD;
                c.session = d->session;
                c.delay_ms = g->cfg->lock_delay_ms; /* written in the log */
                c.token = armed;
                c.target = d->seq & ~LEADER_HOLD_SEQ;
                c.name = d->name;
                c.name_len = d->name_len;
                gwlog(g, LOG_INFO, &(struct log_fields){.session = d->session},
                      "session %llu: hold time of %.*s ran out, proposing "
                      "EXPIRE_HOLD",
                      (unsigned long long)d->session, (int)d->name_len,
                      d->name);
        } else if (d->session == LEADER_LOCK_DELAY) {
                /* A lock-delay, keyed by the lock's creation stamp. */
                c.type = COMMAND_UNBLOCK;
                c.session = 0;
                c.target = d->seq;
                c.name = d->name;
                c.name_len = d->name_len;
        } else if (d->seq == 0) {
#ifdef BATON_CHAOS_BUG_SKIPDEADLINE
                /* A deliberate bug for test_simhost_skipdeadline, a
                 * negative control of the simulation: a lease that runs
                 * out is never expired (no EXPIRE proposed; the deadline
                 * only fires again after retry_ms), so a dead client's
                 * session and locks live forever. Never built into
                 * batond. */
                return;
#endif
                /* Marked before it is proposed; without memory the mark
                 * is not kept, and a keepalive may then be answered OK:
                 * the retry after retry_ms marks it again. */
                if (leases_find(&g->expiring, d->session) == NULL) {
                        (void)leases_set(&g->expiring, d->session, d->at);
                }
                c.type = COMMAND_EXPIRE;
                c.delay_ms = g->cfg->lock_delay_ms; /* written in the log */
                g->stats.expirations++;
                gwlog(g, LOG_INFO, &(struct log_fields){.session = d->session},
                      "session %llu: lease expired, proposing EXPIRE",
                      (unsigned long long)d->session);
        } else {
                c.type = COMMAND_TIMEOUT;
                c.target = d->seq;
                c.name = d->name;
                c.name_len = d->name_len;
                g->stats.timeouts++;
        }
        pending_queue_own(g, &c);
}

uint32_t leader_expiry_room(const struct gateway *g)
{
        return g->expiries_out < LEADER_EXPIRIES_MAX
                   ? LEADER_EXPIRIES_MAX - g->expiries_out
                   : 0;
}

void leader_expiry_count(struct gateway *g, bool queued)
{
        if (queued) {
                g->expiries_out++;
                return;
        }
        g->expiries_out--;
        if (g->expiries_out <= LEADER_EXPIRIES_MAX / 2) {
                deadlines_kick(&g->deadlines);
        }
}

bool leader_expiring(const struct gateway *g, uint64_t session)
{
        return leases_find(&g->expiring, session) != NULL;
}

void leader_session_ended(struct gateway *g, uint64_t session)
{
        leases_drop(&g->expiring, session);
}

/* What the clocks a new leader restarts are restarted with. */
struct restart {
        struct gateway *g;
        uint64_t now_ms;
};

static void start_session_clock(void *data, uint64_t session, uint32_t ttl_ms)
{
        struct restart *r = data;

#ifdef BATON_CHAOS_BUG_SHORT_TTL
        /* A deliberate bug for the chaos suite's negative control
         * (tests/chaos/batond-bug): a new leader expires every session at
         * once instead of giving it a full TTL, so it expires sessions
         * whose clients still hold a valid lease. (An eighth of the TTL
         * went unnoticed once libbaton found a new leader within tens of
         * milliseconds: its clients renewed in time.) Never built into
         * batond. */
        ttl_ms = 0;
#endif
        deadlines_set(&r->g->deadlines, session, 0, NULL, 0,
                      r->now_ms + ttl_ms);
}

static void start_wait_clock(void *data, uint64_t session, uint64_t seq,
                             const char *name, size_t name_len,
                             uint32_t wait_ms)
{
        struct restart *r = data;

        if (wait_ms != COMMAND_WAIT_FOREVER && wait_ms != COMMAND_WAIT_TRY) {
                deadlines_set(&r->g->deadlines, session, seq, name, name_len,
                              r->now_ms + wait_ms);
        }
}

void leader_start_delay(struct gateway *g, uint64_t now_ms, const char *name,
                        size_t name_len, uint64_t created, uint32_t delay_ms)
{
        deadlines_set(&g->deadlines, LEADER_LOCK_DELAY, created, name, name_len,
                      now_ms + delay_ms);
}

void leader_start_hold(struct gateway *g, uint64_t now_ms, uint64_t session,
                       uint64_t seq, const char *name, size_t name_len,
                       uint32_t hold_ms)
{
#ifdef BATON_CHAOS_BUG_HOLDSKIP
        /* A deliberate bug for the chaos suite's negative control
         * (tests/chaos/batond-holdskip): the leader never starts a hold's
         * clock, so a grant with a hold time lasts until its holder lets
         * go, as if it had none. Never built into batond. */
        return;
#endif
        deadlines_set(&g->deadlines, session, seq | LEADER_HOLD_SEQ, name,
                      name_len, now_ms + hold_ms);
}

static void start_hold_clock(void *data, uint64_t session, uint64_t seq,
                             const char *name, size_t name_len,
                             uint32_t hold_ms)
{
        struct restart *r = data;

        leader_start_hold(r->g, r->now_ms, session, seq, name, name_len,
                          hold_ms);
}

static void start_delay_clock(void *data, const char *name, size_t name_len,
                              uint64_t created, uint32_t delay_ms)
{
        struct restart *r = data;

        leader_start_delay(r->g, r->now_ms, name, name_len, created, delay_ms);
}

/* The first leader of a new cluster records the bootstrap members'
 * addresses, so nodes added later learn them from the log. */
static void seed_directory(struct gateway *g)
{
        const struct directory *d = g->host->directory(g->host);
        struct command c;
        unsigned i;

        if (d->n > 0) {
                return;
        }
        for (i = 0; i < g->cfg->n_members; i++) {
                const struct config_member *m = &g->cfg->members[i];
                memset(&c, 0, sizeof c);
                c.type = COMMAND_MEMBER;
                c.mode = COMMAND_MEMBER_SET;
                c.target = m->id;
                c.name = m->raft_address;
                c.name_len = (uint8_t)strlen(m->raft_address);
                c.address = m->client_address;
                c.address_len = (uint8_t)strlen(m->client_address);
                pending_queue_own(g, &c);
        }
}

void leader_start(struct gateway *g, const struct gateway_now *now)
{
        const struct lockfsm *f = g->host->lockfsm(g->host);
        struct restart r = {g, now->ms};

        seed_directory(g);
        access_seed(g, now->ms);
        deadlines_clear(&g->deadlines);
        lockfsm_foreach_session(f, start_session_clock, &r);
        lockfsm_foreach_waiter(f, start_wait_clock, &r);
        lockfsm_foreach_timed(f, start_hold_clock, &r);
        /* A delay a former leader had started runs in full again: a lock
         * is freed late rather than early. */
        lockfsm_foreach_blocked(f, start_delay_clock, &r);
}
