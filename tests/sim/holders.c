/* The simulation checker's model of one lock's holders and queue, and of
 * a multi-lock across its locks. */
#include "holders.h"

#include <inttypes.h>
#include <string.h>

#include "sim.h"

bool holders_has_session(const struct lockmodel *l, uint64_t session)
{
        for (unsigned i = 0; i < l->nh; i++) {
                if (l->h[i].session == session) {
                        return true;
                }
        }
        return false;
}

void holders_created_by(struct lockmodel *l, const struct command *cmd)
{
        if (l->nh == 0 && l->nq == 0 &&
            (cmd->type == COMMAND_ACQUIRE || cmd->type == COMMAND_MULTI)) {
                /* A multi-lock's names are read/write locks. */
                l->semaphore = cmd->type == COMMAND_ACQUIRE &&
                               cmd->mode == COMMAND_MODE_SEMAPHORE;
                l->election = cmd->type == COMMAND_ACQUIRE &&
                              cmd->mode == COMMAND_MODE_ELECTION;
                l->limit = cmd->type == COMMAND_ACQUIRE ? cmd->limit : 0;
        }
}

/* A writer: a lock's, or an election's leader (one at a time). */
static bool writer_mode(uint8_t mode)
{
        return mode == COMMAND_MODE_EXCLUSIVE || mode == COMMAND_MODE_ELECTION;
}

static bool same_owner(const struct holder *h, const struct simevent *ev)
{
        return h->session == ev->session && h->owner == ev->owner;
}

/* Whom `l`'s holders leave room for: `ev`'s grant may join them. */
static int admissible(const struct lockmodel *l, const struct simevent *ev,
                      const char *text, char *reason, size_t cap)
{
        uint32_t used = 0;

        if (l->semaphore != (ev->mode == COMMAND_MODE_SEMAPHORE) ||
            l->election != (ev->mode == COMMAND_MODE_ELECTION)) {
                return fail(reason, cap, "%s: a grant of another kind", text);
        }
        for (unsigned i = 0; i < l->nh; i++) {
                const struct holder *h = &l->h[i];
                bool writer = writer_mode(h->mode) || writer_mode(ev->mode);
                used += h->permits;
                if (!l->semaphore && writer && !same_owner(h, ev)) {
                        return fail(reason, cap,
                                    "%s: granted while session %" PRIu64
                                    " holds it (token %" PRIu64 ", mode %u)",
                                    text, h->session, h->token, h->mode);
                }
                if (same_owner(h, ev) &&
                    (l->semaphore || h->mode == ev->mode)) {
                        return fail(reason, cap,
                                    "%s: granted again to its holder", text);
                }
        }
        if (l->semaphore && used + ev->permits > l->limit) {
                return fail(reason, cap,
                            "%s: %" PRIu32 " permits held of %" PRIu32
                            ", %" PRIu32 " more granted",
                            text, used, l->limit, ev->permits);
        }
        return 0;
}

/* Tokens per lock: the entry's index, never lower than the last grant's;
 * a writer shares its token with no other owner. */
static int token_ok(struct lockmodel *l, const struct simevent *ev,
                    uint64_t index, const char *text, char *reason, size_t cap)
{
        bool writer = writer_mode(ev->mode);
        bool other = ev->session != l->last_session ||
                     ev->owner != l->last_owner || l->last_shared;

        if (ev->token != index) {
                return fail(reason, cap,
                            "%s: token is not the index of the granting "
                            "entry %" PRIu64,
                            text, index);
        }
        if (ev->token < l->last_token ||
            (ev->token == l->last_token && (writer || l->last_writer) &&
             other)) {
                return fail(reason, cap,
                            "%s: token does not increase (last %" PRIu64 ")",
                            text, l->last_token);
        }
        if (ev->token > l->last_token) {
                l->last_token = ev->token;
                l->last_writer = false;
                l->last_session = ev->session;
                l->last_owner = ev->owner;
                l->last_shared = false;
        } else {
                l->last_shared |= ev->session != l->last_session ||
                                  ev->owner != l->last_owner;
        }
        l->last_writer |= writer;
        return 0;
}

int holders_grant(struct lockmodel *l, const struct simevent *ev,
                  const struct command *cmd, uint64_t index, bool queued,
                  const char *text, char *reason, size_t cap)
{
        bool second = false; /* an owner's other mode: downgrade, upgrade */
        struct holder *h;

        for (unsigned i = 0; i < l->nh; i++) {
                second |= same_owner(&l->h[i], ev);
        }
        if (l->blocked) {
                return fail(reason, cap, "%s: granted in its lock-delay", text);
        }
        if (admissible(l, ev, text, reason, cap) != 0 ||
            token_ok(l, ev, index, text, reason, cap) != 0) {
                return -1;
        }
        if ((ev->cause == COMMAND_ACQUIRE || ev->cause == COMMAND_MULTI) &&
            !queued) {
                /* At once: to the sender, and past no one queued unless
                 * it is an owner's second grant (never a multi-lock's:
                 * it takes no name its owner holds). */
                if ((l->nq != 0 && !second) || ev->session != cmd->session ||
                    ev->seq != cmd->seq) {
                        return fail(reason, cap,
                                    "%s: immediate grant to someone else "
                                    "than the ACQUIRE's sender, or past "
                                    "its queue",
                                    text);
                }
        } else {
                if (l->nq == 0 || l->q[0].session != ev->session ||
                    l->q[0].seq != ev->seq || l->q[0].owner != ev->owner) {
                        return fail(reason, cap,
                                    "%s: handover not to the head of the "
                                    "FIFO queue",
                                    text);
                }
                memmove(&l->q[0], &l->q[1], --l->nq * sizeof l->q[0]);
        }
        if (l->nh == HOLDERS_MAX) {
                return fail(reason, cap, "%s: more holders than modelled",
                            text);
        }
        h = &l->h[l->nh++];
        h->session = ev->session;
        h->owner = ev->owner;
        h->token = ev->token;
        h->mode = ev->mode;
        h->permits = ev->permits;
        return 0;
}

int holders_release(struct lockmodel *l, const struct simevent *ev,
                    const char *text, char *reason, size_t cap)
{
        for (unsigned i = 0; i < l->nh; i++) {
                if (same_owner(&l->h[i], ev) && l->h[i].token == ev->token &&
                    l->h[i].mode == ev->mode) {
                        l->h[i] = l->h[--l->nh];
                        return 0;
                }
        }
        return fail(reason, cap, "%s: released, but no such grant holds it",
                    text);
}

int holders_queue(struct lockmodel *l, const struct simevent *ev, bool multi,
                  const char *text, char *reason, size_t cap)
{
        bool empty = l->nh == 0 && l->nq == 0 && !l->blocked;
        /* Granted and freed by this very entry: between holders until the
         * next (docs/fsm.md, "One grant per lock per entry"), so that even
         * a try queues. */
        bool between = l->last_token == ev->index;

        if ((empty && !multi && !between) || l->nq == HOLDERS_QUEUE_MAX) {
                return fail(reason, cap, "%s: queued on a free lock", text);
        }
        if (empty && multi) {
                /* A multi-lock waits on its free names too, as a
                 * read/write lock's waiter, whatever the name was
                 * before it was last freed. */
                l->semaphore = false;
                l->election = false;
                l->limit = 0;
        }
        l->q[l->nq].session = ev->session;
        l->q[l->nq].seq = ev->seq;
        l->q[l->nq++].owner = ev->owner;
        return 0;
}

int holders_unqueue(struct lockmodel *l, const struct simevent *ev,
                    const char *text, char *reason, size_t cap)
{
        for (unsigned k = 0; k < l->nq; k++) {
                if (l->q[k].session == ev->session && l->q[k].seq == ev->seq) {
                        memmove(&l->q[k], &l->q[k + 1],
                                (--l->nq - k) * sizeof l->q[0]);
                        return 0;
                }
        }
        return fail(reason, cap, "%s: not waiting", text);
}

int holders_proclaim(const struct lockmodel *l, const struct simevent *ev,
                     const char *text, char *reason, size_t cap)
{
        if (l == NULL) {
                return 0;
        }
        /* PROCLAIM is an election's; SET_VALUE any grant's. */
        if (!l->election && ev->cause == COMMAND_PROCLAIM) {
                return fail(reason, cap, "%s: a proclaim of no election", text);
        }
        for (unsigned i = 0; i < l->nh; i++) {
                if (same_owner(&l->h[i], ev) && l->h[i].token == ev->token) {
                        return 0;
                }
        }
        return fail(reason, cap, "%s: changed by no holder of it", text);
}

int holders_delay(struct lockmodel *l, const struct simevent *ev,
                  const struct command *cmd, const char *text, char *reason,
                  size_t cap)
{
        if (l == NULL ||
            (ev->type == LOCKFSM_EV_BLOCK
                 ? cmd->type != COMMAND_EXPIRE && cmd->type != COMMAND_REVOKE &&
                       cmd->type != COMMAND_REVOKE_LOCK &&
                       cmd->type != COMMAND_EXPIRE_HOLD
                 : cmd->type != COMMAND_UNBLOCK || !l->blocked)) {
                return fail(reason, cap,
                            "%s: a lock-delay that no expiry began, or no "
                            "UNBLOCK ended",
                            text);
        }
        l->blocked = ev->type == LOCKFSM_EV_BLOCK;
        return 0;
}

int holders_multi_event(struct multilock *ml, uint16_t bit,
                        const struct simevent *ev, bool own, const char *text,
                        char *reason, size_t cap)
{
        bool ok;

        if (ev->type == LOCKFSM_EV_QUEUE) {
                ok = own && !(ml->waits & bit);
                ml->waits |= bit;
        } else if (ev->type == LOCKFSM_EV_GRANT) {
                ok = !(ml->granted_now & bit) &&
                     (ml->waits == 0 || (ml->waits & bit));
                ml->granted_now |= bit;
        } else {
                ok = (ml->waits & bit) && !(ml->left_now & bit);
                ml->left_now |= bit;
        }
        if (!ok || !(ml->names & bit)) {
                return fail(reason, cap,
                            "%s: a multi-lock queued, granted or left a "
                            "name twice, or one it does not name or wait for",
                            text);
        }
        return 0;
}

int holders_multi_end(struct multilock *ml, uint64_t index, uint64_t session,
                      uint64_t seq, char *reason, size_t cap)
{
        uint16_t got = ml->granted_now ? ml->granted_now
                       : ml->left_now  ? ml->left_now
                                       : ml->waits;
        uint16_t want =
            ml->left_now && !ml->granted_now ? ml->waits : ml->names;
        int what = ml->granted_now ? (ml->waits != 0 ? HOLDERS_MULTI_WAITED
                                                     : HOLDERS_MULTI_NOW)
                   : ml->left_now  ? HOLDERS_MULTI_LEFT
                                   : HOLDERS_MULTI_QUEUED;

        if ((ml->granted_now && ml->left_now) || got != want) {
                return fail(reason, cap,
                            "@%" PRIu64 ": multi-lock s=%" PRIu64 " q=%" PRIu64
                            " %s %d of its %d names in this entry: a "
                            "multi-lock is held wholly or not at all, and "
                            "leaves every queue together",
                            index, session, seq,
                            ml->granted_now ? "granted"
                            : ml->left_now  ? "left the queues of"
                                            : "queued on",
                            __builtin_popcount(got), __builtin_popcount(want));
        }
        if (what != HOLDERS_MULTI_QUEUED) {
                ml->waits = 0;
        }
        ml->granted_now = 0;
        ml->left_now = 0;
        return what;
}
