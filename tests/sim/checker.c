/* The checker of a simulated run. */
#include "checker.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/simformat.h"
#include "../lib/simsnap.h"
#include "../../src/fsm/entry.h"
#include "aclcheck.h"
#include "holders.h"

/* ------------------------------------------------------------------------
 * The checker
 */

static bool res_equal(const struct lockfsm_result *a,
                      const struct lockfsm_result *b)
{
        return a->status == b->status && a->kind == b->kind &&
               a->duplicate == b->duplicate && a->session == b->session &&
               a->owner == b->owner && a->token == b->token &&
               a->count == b->count && a->waiters == b->waiters;
}

static bool ev_equal(const struct simevent *a, const struct simevent *b)
{
        return a->type == b->type && a->cause == b->cause &&
               a->index == b->index && a->session == b->session &&
               a->seq == b->seq && a->owner == b->owner &&
               a->token == b->token && a->nonce == b->nonce &&
               a->wait_ms == b->wait_ms && a->status == b->status &&
               a->name_len == b->name_len &&
               memcmp(a->name, b->name, a->name_len) == 0 &&
               a->has_result == b->has_result &&
               (!a->has_result || res_equal(&a->result, &b->result));
}

/* What the checker knows about one session (seq 0) or one request. */
struct kv {
        uint64_t key; /* 0: empty slot */
        bool opened;
        bool ended;
        uint8_t end_cause;
        bool succeeded; /* a non-duplicate success was applied */
        bool queued;
        bool granted;
        bool has_memo; /* the outcome a duplicate must repeat */
        uint8_t kind;
        int status;
        uint64_t token;
        bool multi; /* a MULTI's request, whose locks are in `ml` */
        struct multilock ml;
};

struct kvmap {
        struct kv *slots;
        size_t cap; /* a power of two */
};

static int kv_init(struct kvmap *m, size_t n)
{
        m->cap = 64;
        while (m->cap < 2 * n) {
                m->cap *= 2;
        }
        m->slots = calloc(m->cap, sizeof *m->slots);
        return m->slots != NULL ? 0 : -1;
}

/* Find or insert; the table is sized for every key the log can hold. */
static struct kv *kv_get(struct kvmap *m, uint64_t session, uint64_t seq)
{
        uint64_t key = (session << 32) | (seq & 0xffffffffu);
        size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (m->cap - 1);

        while (m->slots[i].key != 0 && m->slots[i].key != key) {
                i = (i + 1) & (m->cap - 1);
        }
        m->slots[i].key = key;
        return &m->slots[i];
}

#define MAX_LOCKS   16 /* the bits of a uint16_t: struct kv's names */
#define MAX_TOUCHED 32 /* multi-locks that one entry moves */
/* Sessions live at once: test_simclient's clients leave many behind. */
#define MAX_LIVE 1024

struct model {
        struct lockmodel locks[MAX_LOCKS];
        unsigned n_locks;
        struct kvmap kv;
        struct kv *touched[MAX_TOUCHED]; /* multi-locks this entry moved */
        unsigned n_touched;
        unsigned multi[4]; /* by HOLDERS_MULTI_*, for struct sim */
        /* The bounds of the stamp of the command being checked: each takes
         * max(last + 1, index), and a MULTI one more for each lock it
         * creates but the first (docs/fsm.md, "Stamps"), which the model
         * does not know: an OPEN's stamp, its session id, says. */
        uint64_t stamp_lo, stamp_hi, stamp_extra;
        struct {
                uint64_t nonce;
                uint64_t session;
        } live[MAX_LIVE]; /* live sessions by nonce */
        unsigned n_live;
};

static struct lockmodel *lock_of(struct model *m, const char *name, uint8_t len)
{
        unsigned i;

        for (i = 0; i < m->n_locks; i++) {
                if (m->locks[i].len == len &&
                    memcmp(m->locks[i].name, name, len) == 0) {
                        return &m->locks[i];
                }
        }
        if (m->n_locks == MAX_LOCKS) {
                return NULL;
        }
        memset(&m->locks[m->n_locks], 0, sizeof m->locks[0]);
        m->locks[m->n_locks].len = len;
        memcpy(m->locks[m->n_locks].name, name, len);
        return &m->locks[m->n_locks++];
}

/* ------------------------------------------------------------------------
 * Multi-locks: held wholly or not at all
 */

static uint16_t lock_bit(const struct model *m, const struct lockmodel *l)
{
        return (uint16_t)(1u << (unsigned)(l - m->locks));
}

/* The locks MULTI `cmd` names, as bits; 0 when more than modelled. */
static uint16_t multi_names(struct model *m, const struct command *cmd)
{
        const char *name;
        uint8_t mode, len;
        size_t at = 0;
        uint16_t bits = 0;

        while (command_list_next(cmd, &at, &mode, &name, &len)) {
                struct lockmodel *l = lock_of(m, name, len);

                if (l == NULL) {
                        return 0;
                }
                bits |= lock_bit(m, l);
        }
        return bits;
}

/* A QUEUE, GRANT or UNQUEUE event `ev` of lock `l` for request `req`:
 * when the request is a multi-lock's, note which of its names the entry
 * moves, for multi_entry_end(). A MULTI shows itself as one in its own
 * entry, where it queues or is granted. */
static int multi_event(struct model *m, const struct command *cmd,
                       const struct simevent *ev, struct kv *req,
                       const struct lockmodel *l, const char *text,
                       char *reason, size_t cap)
{
        bool own = cmd->type == COMMAND_MULTI && cmd->session == ev->session &&
                   cmd->seq == ev->seq;

        if (own && !req->multi && ev->type != LOCKFSM_EV_UNQUEUE) {
                req->multi = true;
                req->ml.names = multi_names(m, cmd);
        }
        if (!req->multi || holders_multi_event(&req->ml, lock_bit(m, l), ev,
                                               own, text, reason, cap) != 0) {
                return req->multi ? -1 : 0;
        }
        for (unsigned k = 0; k < m->n_touched; k++) {
                if (m->touched[k] == req) {
                        return 0;
                }
        }
        if (m->n_touched == MAX_TOUCHED) {
                return fail(reason, cap, "%s: more multi-locks than modelled",
                            text);
        }
        m->touched[m->n_touched++] = req;
        return 0;
}

/* After the events of entry `e`: each multi-lock it moved is held wholly
 * or not at all (holders_multi_end()). */
static int multi_entry_end(struct model *m, const struct simentry *e,
                           char *reason, size_t cap)
{
        for (unsigned k = 0; k < m->n_touched; k++) {
                struct kv *req = m->touched[k];
                int rv = holders_multi_end(&req->ml, e->index, req->key >> 32,
                                           req->key & 0xffffffffu, reason, cap);

                if (rv < 0) {
                        return -1;
                }
                req->granted |=
                    rv == HOLDERS_MULTI_NOW || rv == HOLDERS_MULTI_WAITED;
                m->multi[rv]++;
        }
        m->n_touched = 0;
        return 0;
}

/* Outcomes that the state machine remembers for duplicates (docs/fsm.md:
 * everything but a dead session, a bad or forgotten seq, and EINFLIGHT). */
static bool remembered(int status)
{
        return status != BATON_ENOSESSION && status != BATON_EEXPIRED &&
               status != BATON_ECLOSED && status != BATON_EINVAL &&
               status != BATON_ESEQ && status != BATON_EINFLIGHT &&
               status != BATON_EMALFORMED && status != BATON_EVERSION &&
               status != BATON_ENAME;
}

/* An OPEN event: the session's id is its OPEN's stamp, its nonce names
 * no other live session. */
static int check_open(struct model *m, const struct command *cmd,
                      const struct simevent *ev, struct kv *sess,
                      const char *text, char *reason, size_t cap)
{
        unsigned k;

        if (cmd->type != COMMAND_OPEN || ev->session < m->stamp_lo ||
            ev->session > m->stamp_hi || sess == NULL || sess->opened) {
                return fail(reason, cap,
                            "%s: a session's id must be the stamp "
                            "of its one OPEN entry (%" PRIu64 "..%" PRIu64 ")",
                            text, m->stamp_lo, m->stamp_hi);
        }
        m->stamp_lo = m->stamp_hi = ev->session;
        sess->opened = true;
        for (k = 0; k < m->n_live; k++) {
                if (m->live[k].nonce == ev->nonce && ev->nonce != 0) {
                        return fail(reason, cap,
                                    "%s: nonce already names live "
                                    "session %" PRIu64,
                                    text, m->live[k].session);
                }
        }
        if (m->n_live == MAX_LIVE) {
                return fail(reason, cap, "%s: more live sessions than modelled",
                            text);
        }
        m->live[m->n_live].nonce = ev->nonce;
        m->live[m->n_live++].session = ev->session;
        return 0;
}

/* An END event: the session holds and awaits nothing any more. */
static int check_end(struct model *m, const struct simevent *ev,
                     struct kv *sess, const char *text, char *reason,
                     size_t cap)
{
        unsigned k;

        if (sess == NULL || !sess->opened || sess->ended) {
                return fail(reason, cap, "%s: not a live session", text);
        }
        for (k = 0; k < m->n_locks; k++) {
                unsigned w;

                if (holders_has_session(&m->locks[k], ev->session)) {
                        return fail(reason, cap,
                                    "%s: the session still holds "
                                    "'%.*s'",
                                    text, (int)m->locks[k].len,
                                    m->locks[k].name);
                }
                for (w = 0; w < m->locks[k].nq; w++) {
                        if (m->locks[k].q[w].session == ev->session) {
                                return fail(reason, cap,
                                            "%s: the session still "
                                            "waits",
                                            text);
                        }
                }
        }
        sess->ended = true;
        sess->end_cause = ev->cause;
        for (k = 0; k < m->n_live; k++) {
                if (m->live[k].session == ev->session) {
                        m->live[k] = m->live[--m->n_live];
                        break;
                }
        }
        return 0;
}

/* A GRANT event of lock `l` to request `req`, by entry `e`. */
static int check_grant(struct model *m, const struct simentry *e,
                       const struct command *cmd, const struct simevent *ev,
                       struct kv *req, struct lockmodel *l, const char *text,
                       char *reason, size_t cap)
{
        if (req == NULL || req->granted) {
                return fail(reason, cap, "%s: (session, seq) granted twice",
                            text);
        }
        if (multi_event(m, cmd, ev, req, l, text, reason, cap) != 0) {
                return -1;
        }
        if ((ev->cause == COMMAND_ACQUIRE || ev->cause == COMMAND_MULTI) &&
            !req->queued) {
                holders_created_by(l, cmd);
        }
        if (holders_grant(l, ev, cmd, e->index, req->queued, text, reason,
                          cap) != 0) {
                return -1;
        }
        if (req->queued && req->has_memo && req->kind == PROTO_KIND_QUEUED) {
                req->kind = PROTO_KIND_GRANTED;
                req->status = 0;
                req->token = ev->token;
        }
        /* A multi-lock's, once its entry granted every name. */
        req->granted = !req->multi;
        return 0;
}

/* Check one event against the model and advance the model. */
static int check_event(struct model *m, const struct simentry *e,
                       const struct command *cmd, const struct simevent *ev,
                       char *reason, size_t cap)
{
        char text[400];
        struct lockmodel *l = NULL;
        struct kv *sess =
            ev->session != 0 ? kv_get(&m->kv, ev->session, 0) : NULL;
        struct kv *req = ev->session != 0 && ev->seq != 0
                             ? kv_get(&m->kv, ev->session, ev->seq)
                             : NULL;

        simformat_event(text, sizeof text, ev);
        if (ev->type == LOCKFSM_EV_GRANT || ev->type == LOCKFSM_EV_RELEASE ||
            ev->type == LOCKFSM_EV_QUEUE || ev->type == LOCKFSM_EV_UNQUEUE) {
                l = lock_of(m, ev->name, ev->name_len);
                if (l == NULL || sess == NULL) {
                        return fail(reason, cap, "unexpected event %s", text);
                }
                if (!sess->opened || sess->ended) {
                        return fail(reason, cap,
                                    "%s: session %" PRIu64 " is not live", text,
                                    ev->session);
                }
        }
        switch (ev->type) {
        case LOCKFSM_EV_OPEN:
                return check_open(m, cmd, ev, sess, text, reason, cap);
        case LOCKFSM_EV_END:
                return check_end(m, ev, sess, text, reason, cap);
        case LOCKFSM_EV_GRANT:
                return check_grant(m, e, cmd, ev, req, l, text, reason, cap);
        case LOCKFSM_EV_QUEUE:
                if ((cmd->type != COMMAND_ACQUIRE &&
                     cmd->type != COMMAND_MULTI) ||
                    req == NULL || req->granted ||
                    (req->queued && cmd->type != COMMAND_MULTI)) {
                        return fail(reason, cap,
                                    "%s: queued twice or not by an ACQUIRE "
                                    "or MULTI",
                                    text);
                }
                if (multi_event(m, cmd, ev, req, l, text, reason, cap) != 0 ||
                    holders_queue(l, ev, req->multi, text, reason, cap) != 0) {
                        return -1;
                }
                req->queued = true;
                break;
        case LOCKFSM_EV_RELEASE:
                if (holders_release(l, ev, text, reason, cap) != 0) {
                        return -1;
                }
                break;
        case LOCKFSM_EV_UNQUEUE:
                if (req == NULL ||
                    multi_event(m, cmd, ev, req, l, text, reason, cap) != 0 ||
                    holders_unqueue(l, ev, text, reason, cap) != 0) {
                        return req == NULL
                                   ? fail(reason, cap, "%s: not waiting", text)
                                   : -1;
                }
                if (req->has_memo && (ev->status == BATON_ETIMEDOUT ||
                                      ev->status == BATON_ECANCELLED)) {
                        req->kind = PROTO_KIND_REJECTED;
                        req->status = ev->status;
                        req->token = 0;
                }
                break;
        case LOCKFSM_EV_BLOCK:
        case LOCKFSM_EV_UNBLOCK:
                return holders_delay(lock_of(m, ev->name, ev->name_len), ev,
                                     cmd, text, reason, cap);
        case LOCKFSM_EV_PROCLAIM:
        case LOCKFSM_EV_EXTEND:
                return holders_proclaim(lock_of(m, ev->name, ev->name_len), ev,
                                        text, reason, cap);
        default:
                return fail(reason, cap, "unknown event %s", text);
        }
        return 0;
}

/* Exactly once: a request runs at most once; a duplicate repeats it. */
static int check_result(struct model *m, uint64_t index,
                        const struct command *cmd,
                        const struct lockfsm_result *res, char *reason,
                        size_t cap)
{
        char text[200];
        char rtext[200];
        struct kv *req;
        unsigned k;

        if (cmd->type == COMMAND_OPEN && res->kind == PROTO_KIND_OPENED &&
            res->duplicate) {
                for (k = 0; k < m->n_live; k++) {
                        if (m->live[k].nonce == cmd->nonce &&
                            m->live[k].session == res->session) {
                                return 0;
                        }
                }
                return fail(reason, cap,
                            "@%" PRIu64 " OPEN retry answered session %" PRIu64
                            ", not the live session of its nonce",
                            index, res->session);
        }
        if (cmd->type != COMMAND_ACQUIRE && cmd->type != COMMAND_MULTI &&
            cmd->type != COMMAND_RELEASE && cmd->type != COMMAND_CANCEL &&
            cmd->type != COMMAND_CLOSE) {
                return 0;
        }
        req = kv_get(&m->kv, cmd->session, cmd->seq);
        simformat_command(text, sizeof text, cmd);
        simformat_result(rtext, sizeof rtext, res);
        if (!res->duplicate && res->status == 0) {
                if (req->succeeded) {
                        return fail(reason, cap,
                                    "@%" PRIu64 " %s executed twice: %s", index,
                                    text, rtext);
                }
                req->succeeded = true;
        }
        if (cmd->type == COMMAND_CLOSE) {
                return 0; /* its memory is the tombstone */
        }
        if (!res->duplicate && remembered(res->status)) {
                if (req->has_memo) {
                        return fail(reason, cap,
                                    "@%" PRIu64 " %s ran again although "
                                    "its outcome is remembered: %s",
                                    index, text, rtext);
                }
                req->has_memo = true;
                req->kind = res->kind;
                req->status = res->status;
                req->token = res->token;
        } else if (res->duplicate) {
                if (!req->has_memo) {
                        return fail(reason, cap,
                                    "@%" PRIu64 " %s answered as a duplicate "
                                    "of a request that never ran: %s",
                                    index, text, rtext);
                }
                if (req->kind != res->kind || req->status != res->status ||
                    req->token != res->token) {
                        return fail(reason, cap,
                                    "@%" PRIu64 " duplicate %s answered %s, "
                                    "but the request's outcome is kind %u "
                                    "status %d token %" PRIu64,
                                    index, text, rtext, req->kind, req->status,
                                    req->token);
                }
        }
        return 0;
}

/* The bounds of the stamp of `cmd`, applied at `index`. */
static void next_stamp(struct model *m, uint64_t index,
                       const struct command *cmd)
{
        m->stamp_lo = m->stamp_lo + 1 > index ? m->stamp_lo + 1 : index;
        m->stamp_hi += 1 + m->stamp_extra;
        m->stamp_hi = m->stamp_hi > index ? m->stamp_hi : index;
        m->stamp_extra = cmd->type == COMMAND_MULTI ? cmd->n_names - 1u : 0;
}

/* The events of command `cmd` of the entry at `e->index`, from `*iv` up to
 * and including its RESULT, which must be `want` when given (an entry of
 * one command: apply's own result); then its outcome, exactly once. */
static int check_command(struct model *m, const struct simnode *n, size_t *iv,
                         const struct simentry *e, const struct command *cmd,
                         const struct lockfsm_result *want, char *reason,
                         size_t cap)
{
        char text[200];

        next_stamp(m, e->index, cmd);
        for (; *iv < n->n_events && n->events[*iv].index == e->index; (*iv)++) {
                const struct simevent *ev = &n->events[*iv];

                if (ev->type != LOCKFSM_EV_RESULT) {
                        if (check_event(m, e, cmd, ev, reason, cap) != 0) {
                                return -1;
                        }
                        continue;
                }
                (*iv)++;
                if (!ev->has_result ||
                    (want != NULL && !res_equal(&ev->result, want))) {
                        return fail(reason, cap,
                                    "@%" PRIu64 ": RESULT event differs "
                                    "from apply's result",
                                    e->index);
                }
                return check_result(m, e->index, cmd, &ev->result, reason, cap);
        }
        simformat_command(text, sizeof text, cmd);
        return fail(reason, cap, "@%" PRIu64 ": %s without a RESULT", e->index,
                    text);
}

/* The commands of batch `e` in order, each with its own RESULT; apply's
 * result counts them. */
static int check_batch(struct model *m, const struct simnode *n, size_t *iv,
                       const struct simentry *e, char *reason, size_t cap)
{
        struct entry_reader r;
        struct command cmd;
        const uint8_t *p;
        size_t len;

        if (entry_reader_init(&r, e->bytes, e->len) != 0 ||
            e->res.kind != PROTO_KIND_APPLIED || e->res.status != 0 ||
            e->res.count != r.count) {
                return fail(reason, cap,
                            "@%" PRIu64 ": a batch not applied as one (kind "
                            "%u status %d count %" PRIu32 ")",
                            e->index, e->res.kind, e->res.status, e->res.count);
        }
        while (entry_reader_next(&r, &p, &len)) {
                if (command_decode(&cmd, p, len) != 0) {
                        /* Answered with an error status; it changes
                         * nothing but takes a stamp. */
                        memset(&cmd, 0, sizeof cmd);
                }
                if (check_command(m, n, iv, e, &cmd, NULL, reason, cap) != 0) {
                        return -1;
                }
        }
        return 0;
}

/* Entry `e` and its events from `*iv`: first the grants deferred to its
 * start (cause BATCH, lockfsm.h), then its one command or each command of
 * its batch; after them, every multi-lock it moved is held wholly or not
 * at all. */
static int check_entry(struct model *m, const struct simnode *n, size_t *iv,
                       const struct simentry *e, char *reason, size_t cap)
{
        static const struct command start = {.type = COMMAND_BATCH};
        struct command cmd;

        if (*iv < n->n_events && n->events[*iv].index < e->index) {
                return fail(reason, cap,
                            "event at index %" PRIu64 " without an entry",
                            n->events[*iv].index);
        }
        for (; *iv < n->n_events && n->events[*iv].index == e->index &&
               n->events[*iv].cause == COMMAND_BATCH &&
               n->events[*iv].type != LOCKFSM_EV_RESULT;
             (*iv)++) {
                if (check_event(m, e, &start, &n->events[*iv], reason, cap) !=
                    0) {
                        return -1;
                }
        }
        if (entry_is_batch(e->bytes, e->len)) {
                if (check_batch(m, n, iv, e, reason, cap) != 0) {
                        return -1;
                }
        } else if (simentry_command(e, &cmd) != 0) {
                return fail(reason, cap, "@%" PRIu64 ": undecodable entry",
                            e->index);
        } else if (cmd.type == COMMAND_MEMBER) {
                /* The directory's (raftfsm.c): no stamp, no event. */
        } else if (check_command(m, n, iv, e, &cmd,
                                 cmd.type == COMMAND_ACL ? NULL : &e->res,
                                 reason, cap) != 0) {
                /* An ACL entry's result is the access list's; the lock
                 * state machine answered it as a command not its own. */
                return -1;
        }
        if (*iv < n->n_events && n->events[*iv].index == e->index) {
                return fail(reason, cap, "@%" PRIu64 ": event after the RESULT",
                            e->index);
        }
        return multi_entry_end(m, e, reason, cap);
}

int check_log(struct sim *s, char *reason, size_t cap)
{
        const struct simnode *n = &s->c.nodes[0];
        struct model *m;
        size_t ie = 0;
        size_t iv = 0;
        int rv = 0;

        m = calloc(1, sizeof *m);
        if (m == NULL || kv_init(&m->kv, n->n_events + n->n_entries) != 0) {
                free(m);
                return fail(reason, cap, "out of memory in the checker");
        }
        for (ie = 0; ie < n->n_entries && rv == 0; ie++) {
                const struct simentry *e = &n->entries[ie];

                if (ie > 0 && e->index <= n->entries[ie - 1].index) {
                        rv = fail(reason, cap,
                                  "entry index %" PRIu64 " after %" PRIu64,
                                  e->index, n->entries[ie - 1].index);
                        break;
                }
                rv = check_entry(m, n, &iv, e, reason, cap);
        }
        if (rv == 0 && iv != n->n_events) {
                rv = fail(reason, cap, "%zu events after the last entry",
                          n->n_events - iv);
        }
        s->multi_now = m->multi[HOLDERS_MULTI_NOW];
        s->multi_waited = m->multi[HOLDERS_MULTI_WAITED];
        s->multi_left = m->multi[HOLDERS_MULTI_LEFT];
        free(m->kv.slots);
        free(m);
        return rv;
}

/* (b'): a watch of every name on any node is told the same events, at
 * the same positions, with the same values: every node's WATCH_EVENT
 * frames are node 0's, byte for byte. */
static int check_same_watches(struct sim *s, char *reason, size_t cap)
{
        const struct simnode *n0 = &s->c.nodes[0];
        unsigned i;

        for (i = 1; i < s->n; i++) {
                const struct simnode *n = &s->c.nodes[i];
                size_t k = 0;

                while (k < n->n_watched && k < n0->n_watched &&
                       n->watched[k] == n0->watched[k]) {
                        k++;
                }
                if (k != n->n_watched || k != n0->n_watched) {
                        return fail(reason, cap,
                                    "node %u's watchers are told %zu events "
                                    "(%zu bytes), node 0's %zu (%zu bytes); "
                                    "they differ from byte %zu",
                                    i, n->n_watch_events, n->n_watched,
                                    n0->n_watch_events, n0->n_watched, k);
                }
        }
        if (n0->n_watch_events == 0) {
                return fail(reason, cap, "no watch event at all");
        }
        return 0;
}

/* (b): every node applied the same entries, with the same outcomes, and
 * reported the same events. */
static int check_same_history(struct sim *s, char *reason, size_t cap)
{
        struct simcluster *c = &s->c;
        const struct simnode *n0 = &c->nodes[0];
        unsigned i;
        size_t k;

        for (i = 1; i < s->n; i++) {
                const struct simnode *n = &c->nodes[i];
                char a[400];
                char b[400];

                for (k = 0; k < n->n_entries && k < n0->n_entries; k++) {
                        const struct simentry *x = &n0->entries[k];
                        const struct simentry *y = &n->entries[k];

                        if (x->index != y->index || x->len != y->len ||
                            memcmp(x->bytes, y->bytes, x->len) != 0 ||
                            !res_equal(&x->res, &y->res)) {
                                s->fail_index =
                                    x->index < y->index ? x->index : y->index;
                                return fail(reason, cap,
                                            "node %u applied entry %" PRIu64
                                            " differently from node 0 "
                                            "(entry %" PRIu64 ")",
                                            i, y->index, x->index);
                        }
                }
                if (n->n_entries != n0->n_entries) {
                        s->fail_index = n->n_entries > n0->n_entries
                                            ? n->entries[k].index
                                            : n0->entries[k].index;
                        return fail(reason, cap,
                                    "node %u applied %zu entries, node 0 %zu",
                                    i, n->n_entries, n0->n_entries);
                }
                for (k = 0; k < n->n_events && k < n0->n_events; k++) {
                        if (!ev_equal(&n0->events[k], &n->events[k])) {
                                s->fail_index = n0->events[k].index;
                                simformat_event(a, sizeof a, &n0->events[k]);
                                simformat_event(b, sizeof b, &n->events[k]);
                                return fail(reason, cap,
                                            "event %zu differs: node 0 %s, "
                                            "node %u %s",
                                            k, a, i, b);
                        }
                }
                if (n->n_events != n0->n_events) {
                        return fail(reason, cap,
                                    "node %u reported %zu events, node 0 %zu",
                                    i, n->n_events, n0->n_events);
                }
        }
        return 0;
}

/* (a): identical state bytes on every node, each surviving fsm->snapshot
 * and fsm->restore, and every node's invariants hold. */
static int check_same_state(struct sim *s, char *reason, size_t cap)
{
        struct simcluster *c = &s->c;
        void *base = NULL;
        size_t base_len = 0;
        unsigned i;
        size_t k;
        int rv = 0;

        for (i = 0; i < s->n && rv == 0; i++) {
                struct lockfsm *f = simcluster_lockfsm(c, i);
                const char *bad = lockfsm_check(f);
                void *buf;
                size_t len;

                if (bad != NULL) {
                        rv = fail(reason, cap, "node %u: lockfsm_check: %s", i,
                                  bad);
                        break;
                }
                if (lockfsm_snapshot(f, &buf, &len) != 0) {
                        rv = fail(reason, cap, "node %u: snapshot failed", i);
                        break;
                }
                if (i == 0) {
                        base = buf;
                        base_len = len;
                        continue;
                }
                if (len != base_len || memcmp(buf, base, len) != 0) {
                        for (k = 0; k < len && k < base_len &&
                                    ((uint8_t *)buf)[k] == ((uint8_t *)base)[k];
                             k++) {
                        }
                        rv = fail(reason, cap,
                                  "node %u's snapshot (%zu bytes) differs "
                                  "from node 0's (%zu bytes) at byte %zu",
                                  i, len, base_len, k);
                }
                lockfsm_snapshot_free(f, buf);
        }
        lockfsm_snapshot_free(simcluster_lockfsm(c, 0), base);
        if (rv != 0) {
                return rv;
        }
        for (i = 0; i < s->n; i++) {
                if (simsnap_roundtrip(c, i) != 0) {
                        return fail(reason, cap, "%s", c->errmsg);
                }
        }
        return 0;
}

int check_replicas(struct sim *s, char *reason, size_t cap)
{
        unsigned n;

        if (s->c.failed || s->oom) {
                return fail(reason, cap, "out of memory while recording");
        }
        if (s->c.anomalies > 0) {
                return fail(reason, cap, "raft anomaly: %s", s->c.errmsg);
        }
        if (s->c.violations > 0) {
                return fail(reason, cap, "raft: %s", s->c.violation);
        }
        n = simsnap_n_install(&s->c);
        if (n > 0) {
                return fail(reason, cap,
                            "%u InstallSnapshot sent: outside what the "
                            "fixture survives (raise trailing or max_lag)",
                            n);
        }
        /* (b) before (a), for the index where replicas part; the access
         * lists after (b), whose entries they are recorded with. */
        if (check_same_history(s, reason, cap) != 0 ||
            check_acl(s, reason, cap) != 0 ||
            check_same_watches(s, reason, cap) != 0 ||
            check_same_state(s, reason, cap) != 0) {
                return -1;
        }
        return 0;
}
