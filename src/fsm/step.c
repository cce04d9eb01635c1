/* One command's apply in the lock state machine: its context, and the events
 * and results it reports. */
#include "step.h"

#include <string.h>

#include "../proto/proto.h"

/* Start `ev` as an event of `type` of the command being applied; false
 * when no one listens (then nothing is to be reported). */
static bool event_begin(const struct step *st, uint8_t type,
                        struct lockfsm_event *ev)
{
        if (st->f->cb == NULL) {
                return false;
        }
        memset(ev, 0, sizeof *ev);
        ev->type = type;
        ev->cause = st->c->type;
        ev->index = st->index;
        ev->clock_ms = st->f->clock_ms;
        return true;
}

void step_emit(const struct step *st, uint8_t type, const struct hold *h,
               int status)
{
        struct lockfsm_event ev;

        if (!event_begin(st, type, &ev)) {
                return;
        }
        ev.status = status;
        if (h != NULL) {
                ev.session = hold_session(h)->id;
                ev.seq = h->seq;
                ev.owner = h->owner;
                ev.token = h->waiting ? 0 : h->token;
                /* A grant that began as a waiter still holds its wait_ms,
                 * which snapshots drop: report it only while waiting, so a
                 * restored replica emits the same events. */
                ev.wait_ms = h->waiting ? h->wait_ms : 0;
                /* An election's candidates are writers inside; outside,
                 * their mode says what they are. */
                ev.mode = hold_lock(h)->mode == COMMAND_MODE_ELECTION
                              ? COMMAND_MODE_ELECTION
                              : h->mode;
                ev.permits = h->permits;
                ev.granted_s = h->waiting ? 0 : h->granted_s;
                if (type == LOCKFSM_EV_GRANT || type == LOCKFSM_EV_QUEUE ||
                    type == LOCKFSM_EV_PROCLAIM) {
                        ev.value = h->value;
                        ev.value_len = h->value_len;
                }
                if (!h->waiting) {
                        ev.hold_ms = hold_clock(h).hold_ms;
                }
                ev.name = hold_lock(h)->name;
                ev.name_len = hold_lock(h)->name_len;
        }
        if (st->c->type == COMMAND_REVOKE_LOCK) {
                ev.by = st->c->address; /* who asked */
                ev.by_len = st->c->address_len;
        }
        st->f->cb(st->f->cb_data, &ev);
}

void step_emit_lock(const struct step *st, uint8_t type, const struct lock *l)
{
        struct lockfsm_event ev;

        if (!event_begin(st, type, &ev)) {
                return;
        }
        ev.seq = l->created;
        ev.wait_ms = l->blocked ? l->delay_ms : 0;
        ev.name = l->name;
        ev.name_len = l->name_len;
        st->f->cb(st->f->cb_data, &ev);
}

void step_emit_session(const struct step *st, uint8_t type,
                       const struct session *s)
{
        struct lockfsm_event ev;

        if (!event_begin(st, type, &ev)) {
                return;
        }
        ev.session = s->id;
        ev.nonce = s->nonce;
        if (st->c->type == COMMAND_REVOKE) {
                ev.by = st->c->name;
                ev.by_len = st->c->name_len;
        }
        st->f->cb(st->f->cb_data, &ev);
}

void step_emit_result(const struct step *st, const struct lockfsm_result *r)
{
        const struct command *c = st->c;
        struct lockfsm_event ev;

        if (!event_begin(st, LOCKFSM_EV_RESULT, &ev)) {
                return;
        }
        ev.session = c->type == COMMAND_OPEN ? r->session : c->session;
        ev.seq = c->seq;
        ev.owner = c->owner;
        ev.token = r->token;
        ev.nonce = c->nonce;
        ev.status = r->status;
        if (c->type != COMMAND_OPEN) {
                ev.name = c->name;
                ev.name_len = c->name_len;
        }
        ev.result = r;
        st->f->cb(st->f->cb_data, &ev);
}

void step_reject(struct lockfsm_result *res, int status)
{
        memset(res, 0, sizeof *res);
        res->status = status;
        res->kind = PROTO_KIND_REJECTED;
}

/* Fill the result describing a grant (or a waiter) as its owner sees it. */
void step_describe(struct lockfsm_result *res, uint8_t kind,
                   const struct hold *h)
{
        memset(res, 0, sizeof *res);
        res->kind = kind;
        res->session = hold_session(h)->id;
        res->owner = h->owner;
        res->token = h->waiting ? 0 : h->token;
        res->count = h->waiting ? 0 : h->count;
}
