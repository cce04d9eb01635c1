/* The state machine's events fanned out on this node: each answers the
 * requests it settles, and starts or stops a leader's deadline. */
#include "fanout.h"

#include <string.h>

#include "gateway.h"
#include "leader.h"
#include "pending.h"

/* Settle every request waiting for (a, b) with this outcome. */
static void settle_key(struct gateway *g, const struct gateway_now *now,
                       uint64_t a, uint64_t b, uint64_t index,
                       const struct lockfsm_result *res)
{
        struct pending *p = pending_find(g, a, b);

        while (p != NULL) {
                struct pending *next = pending_find_next(p);
                if (p->applied_ns == 0) {
                        /* The first event for a request is its own
                         * entry's; a grant after a wait comes later. */
                        p->applied_ns = now->ns;
                }
                if (res->status != 0 || res->kind != PROTO_KIND_QUEUED) {
                        pending_settle(p, now, index, res);
                } else {
                        p->queued = true; /* its grant or timeout answers */
                }
                p = next;
        }
}

/* An OPEN succeeded: the connections that sent it (once, or again with the
 * same nonce) own the session, if their OPEN carried its hash; a repeated
 * OPEN with another hash gets the answer but not the session. */
static void attach_openers(struct gateway *g, const struct lockfsm_event *ev)
{
        const uint8_t *hash;
        struct pending *p;

        if (ev->result->status != 0 || ev->result->kind != PROTO_KIND_OPENED) {
                return;
        }
        hash = lockfsm_session_hash(g->host->lockfsm(g->host),
                                    ev->result->session);
        for (p = pending_find(g, 0, ev->nonce); p != NULL;
             p = pending_find_next(p)) {
                if (p->to.conn != NULL && hash != NULL && p->cmd.hash != NULL &&
                    memcmp(p->cmd.hash, hash, COMMAND_HASH_SIZE) == 0) {
                        gateway_conn_attach(p->to.conn, ev->result->session);
                }
        }
}

/* The lock a waiter was handed by another session's entry: its ACQUIRE
 * is answered now. */
static void granted(struct gateway *g, const struct gateway_now *now,
                    const struct lockfsm_event *ev)
{
        struct lockfsm_result res;

        memset(&res, 0, sizeof res);
        res.kind = PROTO_KIND_GRANTED;
        res.session = ev->session;
        res.owner = ev->owner;
        res.token = ev->token;
        res.count = 1;
        settle_key(g, now, ev->session, ev->seq, ev->index, &res);
}

/* A waiter taken out of its queue (timed out, cancelled, or its session
 * ended): its ACQUIRE is answered with why. */
static void unqueued(struct gateway *g, const struct gateway_now *now,
                     const struct lockfsm_event *ev)
{
        struct lockfsm_result res;

        memset(&res, 0, sizeof res);
        res.status = ev->status;
        res.session = ev->session;
        res.owner = ev->owner;
        settle_key(g, now, ev->session, ev->seq, ev->index, &res);
}

/* A grant ended (released, its session ended, revoked): how long it was
 * held, by the log's clock (CLOCK entries, to the second), and whether
 * an operator's REVOKE or REVOKE_LOCK ended it. */
static void ended(struct gateway *g, const struct lockfsm_event *ev)
{
        uint64_t from = (uint64_t)ev->granted_s * 1000;

        if (ev->cause == COMMAND_REVOKE || ev->cause == COMMAND_REVOKE_LOCK) {
                g->stats.grants_revoked++;
        }
        if (ev->granted_s != 0 && ev->clock_ms >= from) {
                histogram_add_long(&g->stats.hold,
                                   (ev->clock_ms - from) * 1000000);
        }
}

/* A grant with a hold time was made, or its hold time restarted (GRANT,
 * EXTEND): a serving leader times it. */
static void timed(struct gateway *g, const struct gateway_now *now,
                  const struct lockfsm_event *ev, bool serving)
{
        if (serving && ev->hold_ms > 0) {
                leader_start_hold(g, now->ms, ev->session, ev->seq, ev->name,
                                  ev->name_len, ev->hold_ms);
        }
}

/* Every event to the watches; the first after this node restored a
 * leader's snapshot tells them that what came before it is not theirs.
 * `term`: the entry's (gateway_on_event()). */
static void fanout_watches(struct gateway *g, uint64_t term,
                           const struct lockfsm_event *ev)
{
        struct gateway_host *h = g->host;
        uint64_t started;
        bool pending;

        h->restores(h, &started, &pending);
        if (started != g->watches.restores) {
                watches_reset(&g->watches, started, ev->index - 1);
        }
#ifdef BATON_CHAOS_BUG_LEADERSKIP
        watches_bug_term(&g->watches, term);
#else
        (void)term;
#endif
        watches_on_event(&g->watches, ev);
}

void fanout_event(struct gateway *g, const struct gateway_now *now,
                  uint64_t term, const struct lockfsm_event *ev)
{
        bool serving = g->serving;

        fanout_watches(g, term, ev);
        switch (ev->type) {
        case LOCKFSM_EV_RESULT:
                g->stats.applied++;
                if (ev->cause == COMMAND_OPEN) {
                        attach_openers(g, ev);
                        settle_key(g, now, 0, ev->nonce, ev->index, ev->result);
                } else {
                        settle_key(g, now, ev->session, ev->seq, ev->index,
                                   ev->result);
                }
                break;
        case LOCKFSM_EV_GRANT:
                deadlines_drop(&g->deadlines, ev->session, ev->seq);
                timed(g, now, ev, serving);
                /* An ACQUIRE or MULTI granted by its own entry is
                 * answered by its RESULT. */
                if (ev->cause != COMMAND_ACQUIRE &&
                    ev->cause != COMMAND_MULTI) {
                        granted(g, now, ev);
                }
                break;
        case LOCKFSM_EV_RELEASE:
                if (ev->hold_ms > 0) {
                        deadlines_drop(&g->deadlines, ev->session,
                                       ev->seq | LEADER_HOLD_SEQ);
                }
                ended(g, ev);
                break;
        case LOCKFSM_EV_EXTEND:
                timed(g, now, ev, serving);
                break;
        case LOCKFSM_EV_UNQUEUE:
                deadlines_drop(&g->deadlines, ev->session, ev->seq);
                unqueued(g, now, ev);
                break;
        case LOCKFSM_EV_QUEUE:
                /* A try queues only behind a lock its own entry freed, and
                 * the next entry grants it: no deadline to keep. */
                if (serving && ev->wait_ms != COMMAND_WAIT_FOREVER &&
                    ev->wait_ms != COMMAND_WAIT_TRY) {
                        deadlines_set(&g->deadlines, ev->session, ev->seq,
                                      ev->name, ev->name_len,
                                      now->ms + ev->wait_ms);
                }
                break;
        case LOCKFSM_EV_OPEN:
                if (serving) {
                        deadlines_set(&g->deadlines, ev->session, 0, NULL, 0,
                                      now->ms + lockfsm_session_ttl(
                                                    g->host->lockfsm(g->host),
                                                    ev->session));
                }
                break;
        case LOCKFSM_EV_END:
                g->stats.sessions_expired += ev->cause == COMMAND_EXPIRE;
                deadlines_drop(&g->deadlines, ev->session, 0);
                leader_session_ended(g, ev->session);
                break;
        case LOCKFSM_EV_BLOCK:
                if (serving) {
                        leader_start_delay(g, now->ms, ev->name, ev->name_len,
                                           ev->seq, ev->wait_ms);
                }
                break;
        case LOCKFSM_EV_UNBLOCK:
                deadlines_drop(&g->deadlines, LEADER_LOCK_DELAY, ev->seq);
                break;
        default:
                break;
        }
}
