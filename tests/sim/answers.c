/* The final answers test_sim's clients were told, checked against the
 * final log. */
#include "answers.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../lib/simformat.h"

void answers_add(struct sim *s, const struct client *cl,
                 const struct command *cmd, const struct proto_result *res)
{
        uint8_t bytes[COMMAND_ANY_MAX_SIZE];
        struct simanswer *a;
        size_t len;

        if (cmd->type == COMMAND_QUERY || cmd->type == COMMAND_CHECK) {
                return;
        }
        if (s->n_answers == s->cap_answers) {
                size_t cap = s->cap_answers ? s->cap_answers * 2 : 256;
                a = realloc(s->answers, cap * sizeof *a);
                if (a == NULL) {
                        s->oom = true;
                        return;
                }
                s->answers = a;
                s->cap_answers = cap;
        }
        len = command_encode(cmd, bytes, sizeof bytes);
        a = &s->answers[s->n_answers];
        *a = (struct simanswer){cmd->type,       cmd->session, cmd->seq,
                                cmd->nonce,      cl->id,       *res,
                                malloc(len + 1), len};
        if (a->bytes == NULL) {
                s->oom = true;
                return;
        }
        memcpy(a->bytes, bytes, len);
        s->n_answers++;
}

void answers_free(struct sim *s)
{
        for (size_t k = 0; k < s->n_answers; k++) {
                free(s->answers[k].bytes);
        }
        free(s->answers);
        s->answers = NULL;
        s->n_answers = 0;
        s->cap_answers = 0;
}

/* The first event at `index` with this type, session and (if non-zero) seq
 * and owner; NULL if none. */
static const struct simevent *event_at(const struct simnode *n, uint64_t index,
                                       int type, uint64_t session, uint64_t seq,
                                       uint64_t owner)
{
        for (size_t k = sim_first_event(n, index);
             k < n->n_events && n->events[k].index == index; k++) {
                const struct simevent *ev = &n->events[k];

                if (ev->type == type && ev->session == session &&
                    (seq == 0 || ev->seq == seq) &&
                    (owner == 0 || ev->owner == owner)) {
                        return ev;
                }
        }
        return NULL;
}

/* Whether `session` was opened: by the entry at `index`, or (0) by any,
 * at most the session's id (its stamp, never below the entry's index). */
static bool opened(const struct simnode *n, uint64_t index, uint64_t session)
{
        if (index != 0) {
                return event_at(n, index, LOCKFSM_EV_OPEN, session, 0, 0) !=
                       NULL;
        }
        for (size_t k = 0; k < n->n_events && n->events[k].index <= session;
             k++) {
                if (n->events[k].type == LOCKFSM_EV_OPEN &&
                    n->events[k].session == session) {
                        return true;
                }
        }
        return false;
}

/* Whether entry `e` holds `len` bytes `b` (the whole entry, or one of a
 * batch's commands). */
static bool holds(const struct simentry *e, const uint8_t *b, size_t len)
{
        for (size_t at = 0; e != NULL && len > 0 && at + len <= e->len; at++) {
                if (memcmp(e->bytes + at, b, len) == 0) {
                        return true;
                }
        }
        return false;
}

static bool same_result(const struct lockfsm_result *x,
                        const struct proto_result *r)
{
        return x->status == r->status && x->kind == r->kind &&
               x->session == r->session && x->owner == r->owner &&
               x->token == r->token && x->count == r->count &&
               x->waiters == r->waiters;
}

/* The event of node `n` at the answer's index that decided its request
 * with the outcome told; NULL if none. */
static const struct simevent *decided(const struct simnode *n,
                                      const struct simanswer *a)
{
        const struct proto_result *res = &a->res;
        bool waited = a->type == COMMAND_ACQUIRE || a->type == COMMAND_MULTI;

        for (size_t k = sim_first_event(n, res->index);
             k < n->n_events && n->events[k].index == res->index; k++) {
                const struct simevent *ev = &n->events[k];
                bool mine =
                    a->type == COMMAND_OPEN
                        ? ev->nonce == a->nonce
                        : ev->session == a->session && ev->seq == a->seq;

                if (!mine) {
                        continue;
                }
                if (ev->type == LOCKFSM_EV_RESULT &&
                    same_result(&ev->result, res) &&
                    holds(simnode_entry_at(n, res->index), a->bytes, a->len)) {
                        return ev;
                }
                if (waited && ev->type == LOCKFSM_EV_GRANT &&
                    res->status == 0 && res->kind == PROTO_KIND_GRANTED &&
                    ev->token == res->token) {
                        return ev;
                }
                if (waited && ev->type == LOCKFSM_EV_UNQUEUE &&
                    res->kind == 0 && ev->status == res->status) {
                        return ev;
                }
        }
        return NULL;
}

/* Whether node `n` granted lock `ev` names to (session, seq) at `index`. */
static bool granted_name_at(const struct simnode *n, const struct simevent *ev,
                            uint64_t index)
{
        for (size_t k = sim_first_event(n, index);
             k < n->n_events && n->events[k].index == index; k++) {
                const struct simevent *g = &n->events[k];

                if (g->type == LOCKFSM_EV_GRANT && g->session == ev->session &&
                    g->seq == ev->seq && g->name_len == ev->name_len &&
                    memcmp(g->name, ev->name, ev->name_len) == 0) {
                        return true;
                }
        }
        return false;
}

/* A lock granted to (session, seq) at `token` granted to it again at
 * another index: the request ran twice. (A MULTI's names are granted by
 * one entry, which the checker of the log sees to.) */
static bool granted_again(const struct simnode *n, const struct simanswer *a)
{
        for (size_t k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];

                if (ev->type == LOCKFSM_EV_GRANT && ev->session == a->session &&
                    ev->seq == a->seq && ev->index != a->res.token &&
                    granted_name_at(n, ev, a->res.token)) {
                        return true;
                }
        }
        return false;
}

/* What a success told says happened, given the event that decided it
 * (`dup`: its RESULT was a duplicate's). Why not in `why`, or NULL. */
static const char *happened(const struct simnode *n, const struct simanswer *a,
                            bool dup)
{
        const struct proto_result *r = &a->res;

        switch (r->status != 0 ? 0 : r->kind) {
        case PROTO_KIND_GRANTED:
                if (event_at(n, r->token, LOCKFSM_EV_GRANT, a->session, a->seq,
                             0) == NULL) {
                        return "no GRANT to it at index == token";
                }
                return granted_again(n, a) ? "its lock granted to it at "
                                             "another index too"
                                           : NULL;
        case PROTO_KIND_REENTERED:
                return event_at(n, r->token, LOCKFSM_EV_GRANT, a->session, 0,
                                r->owner) == NULL
                           ? "no GRANT to its owner at index == token"
                           : NULL;
        case PROTO_KIND_OPENED:
                return !opened(n, dup ? 0 : r->index, r->session)
                           ? "no OPEN of the session"
                           : NULL;
        case PROTO_KIND_RELEASED:
                return !dup && r->count == 0 &&
                               event_at(n, r->index, LOCKFSM_EV_RELEASE,
                                        a->session, 0, r->owner) == NULL
                           ? "no RELEASE in its entry"
                           : NULL;
        case PROTO_KIND_CLOSED:
                return !dup && event_at(n, r->index, LOCKFSM_EV_END, r->session,
                                        0, 0) == NULL
                           ? "no END in its entry"
                           : NULL;
        default:
                return NULL;
        }
}

static int told(char *reason, size_t cap, const struct simanswer *a,
                const char *why)
{
        struct command cmd;
        char text[200];

        if (command_decode(&cmd, a->bytes, a->len) == 0) {
                simformat_command(text, sizeof text, &cmd);
        } else {
                snprintf(text, sizeof text, "an undecodable command");
        }
        return fail(reason, cap,
                    "client %u was told %s kind %u session %" PRIu64
                    " token %" PRIu64 " count %" PRIu32 " at index %" PRIu64
                    " for %s: %s",
                    a->client, baton_errname(a->res.status), a->res.kind,
                    a->res.session, a->res.token, a->res.count, a->res.index,
                    text, why);
}

int check_acknowledged(struct sim *s, char *reason, size_t cap)
{
        const struct simnode *n = &s->c.nodes[0];

        for (size_t k = 0; k < s->n_answers; k++) {
                const struct simanswer *a = &s->answers[k];
                const struct simevent *ev;
                const char *why;

                if (a->res.index == 0 && a->res.status != 0) {
                        continue; /* refused before any proposal */
                }
                s->fail_index = a->res.index;
                ev = a->res.index == 0 ? NULL : decided(n, a);
                if (ev == NULL) {
                        return told(reason, cap, a,
                                    "no such outcome of it in the final log");
                }
                why = happened(n, a,
                               ev->type == LOCKFSM_EV_RESULT &&
                                   ev->result.duplicate);
                if (why != NULL) {
                        return told(reason, cap, a, why);
                }
        }
        s->fail_index = 0;
        return 0;
}

int answers_break(struct sim *s, char *reason, size_t cap)
{
        for (size_t k = s->n_answers / 2; k < s->n_answers; k++) {
                struct simanswer *a = &s->answers[k];

                /* One whose token (or session) the check reads: a grant
                 * or an OPEN told as done. */
                if (a->res.index == 0 || a->res.status != 0 ||
                    (a->res.kind != PROTO_KIND_GRANTED &&
                     a->res.kind != PROTO_KIND_OPENED)) {
                        continue;
                }
                if (a->type == COMMAND_OPEN) {
                        a->res.session++;
                } else {
                        a->res.token++;
                }
                say(s, "break: client %u told another outcome at %" PRIu64,
                    a->client, a->res.index);
                return 0;
        }
        return fail(reason, cap, "break answer: no answer to falsify");
}
