/* The checks of one test_simhost run: node 0's log against what its
 * clients were told (hostrun.h). */
#include "hostrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"

const char *const hostrun_locks[N_LOCKS] = {"alpha", "beta", "gamma"};

static int lock_of(const struct simevent *ev)
{
        unsigned i;

        for (i = 0; i < N_LOCKS; i++) {
                if (ev->name_len == strlen(hostrun_locks[i]) &&
                    memcmp(ev->name, hostrun_locks[i], ev->name_len) == 0) {
                        return (int)i;
                }
        }
        return -1;
}

/* One holder at a time, tokens the entries' indexes and increasing. */
int hostcheck_log(struct run *r, char *reason, size_t cap)
{
        const struct simnode *n = &r->s.c.nodes[0];
        uint64_t holder[N_LOCKS] = {0};
        uint64_t last[N_LOCKS] = {0};
        size_t k;

        for (k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];
                int l = lock_of(ev);

                if (l < 0) {
                        continue;
                }
                if (ev->type == LOCKFSM_EV_GRANT) {
                        if (holder[l] != 0) {
                                return fail(reason, cap,
                                            "@%" PRIu64 ": %s granted to "
                                            "session %" PRIx64 " while %" PRIx64
                                            " holds it",
                                            ev->index, hostrun_locks[l],
                                            ev->session, holder[l]);
                        }
                        if (ev->token != ev->index || ev->token <= last[l]) {
                                return fail(reason, cap,
                                            "@%" PRIu64 ": %s granted with "
                                            "token %" PRIu64 " after %" PRIu64,
                                            ev->index, hostrun_locks[l],
                                            ev->token, last[l]);
                        }
                        holder[l] = ev->session;
                        last[l] = ev->token;
                } else if (ev->type == LOCKFSM_EV_RELEASE &&
                           holder[l] == ev->session) {
                        holder[l] = 0;
                }
        }
        return 0;
}

static bool granted_at(const struct simnode *n, const struct ack *a)
{
        size_t k;

        for (k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];

                if (ev->index == a->token && ev->type == LOCKFSM_EV_GRANT &&
                    ev->session == a->session && ev->seq == a->seq &&
                    lock_of(ev) == (int)a->lock) {
                        return true;
                }
        }
        return false;
}

/* Whether node 0 applied, at the answer's index, the event that decided
 * it for this request: its command's RESULT (an OPEN's by its nonce), or
 * the waiter's grant or departure, with the outcome the client was told. */
static bool answered_by_log(const struct simnode *n, const struct answer *a)
{
        const struct proto_result *res = &a->res;
        size_t k;

        for (k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];
                const struct lockfsm_result *x = &ev->result;

                if (ev->index != res->index) {
                        continue;
                }
                if (ev->type == LOCKFSM_EV_RESULT &&
                    (a->type == COMMAND_OPEN
                         ? ev->nonce == a->nonce
                         : ev->session == a->session && ev->seq == a->seq) &&
                    x->status == res->status && x->kind == res->kind &&
                    x->session == res->session && x->token == res->token) {
                        return true;
                }
                if (ev->type == LOCKFSM_EV_GRANT && res->status == 0 &&
                    res->kind == PROTO_KIND_GRANTED &&
                    ev->session == a->session && ev->seq == a->seq &&
                    ev->token == res->token) {
                        return true;
                }
                if (ev->type == LOCKFSM_EV_UNQUEUE &&
                    ev->session == a->session && ev->seq == a->seq &&
                    ev->status == res->status) {
                        return true;
                }
        }
        return false;
}

/* Every final answer a client was told came from the log (check (d) of
 * test_sim.c, with the requests of batches): the core routed each
 * entry's outcome to the request it belongs to. */
int hostcheck_answers(struct run *r, char *reason, size_t cap)
{
        unsigned i;

        for (i = 0; i < r->n_answers; i++) {
                const struct answer *a = &r->answers[i];

                if (a->res.index == 0 && a->res.status != 0) {
                        continue; /* refused before any proposal */
                }
                if (!answered_by_log(&r->s.c.nodes[0], a)) {
                        return fail(reason, cap,
                                    "%s of session %" PRIx64 " seq %" PRIu64
                                    " answered %s kind %u token %" PRIu64
                                    " at index %" PRIu64
                                    ", which node 0 did not apply",
                                    command_type_name(a->type), a->session,
                                    a->seq, baton_strerror(a->res.status),
                                    a->res.kind, a->res.token, a->res.index);
                }
        }
        return 0;
}

int hostcheck_acks(struct run *r, char *reason, size_t cap)
{
        unsigned i;

        for (i = 0; i < r->n_acks; i++) {
                const struct ack *a = &r->acks[i];

                if (!granted_at(&r->s.c.nodes[0], a)) {
                        return fail(reason, cap,
                                    "grant of %s to session %" PRIx64
                                    " seq %" PRIu64 " token %" PRIu64
                                    " acknowledged, not in the log",
                                    hostrun_locks[a->lock], a->session, a->seq,
                                    a->token);
                }
        }
        return 0;
}

/* BREAK_ACK: a grant a client was told of with a token the log never
 * gave it. BREAK_HOLDER: node 0 forgets a RELEASE after which the lock
 * was granted again. BREAK_ANSWER: a client is told another's OPEN
 * answer (its own nonce changed). */
void hostcheck_break(struct run *r)
{
        struct simnode *n = &r->s.c.nodes[0];
        size_t k, j;

        if (r->brk == BREAK_ACK && r->n_acks > 0) {
                r->acks[0].token++;
        }
        for (k = 0; r->brk == BREAK_ANSWER && k < r->n_answers; k++) {
                if (r->answers[k].type == COMMAND_OPEN) {
                        r->answers[k].nonce ^= 2;
                        break;
                }
        }
        for (k = 0; r->brk == BREAK_HOLDER && k < n->n_events; k++) {
                struct simevent *ev = &n->events[k];

                if (ev->type != LOCKFSM_EV_RELEASE || lock_of(ev) < 0) {
                        continue;
                }
                for (j = k + 1; j < n->n_events; j++) {
                        if (n->events[j].type == LOCKFSM_EV_GRANT &&
                            lock_of(&n->events[j]) == lock_of(ev)) {
                                ev->type = LOCKFSM_EV_QUEUE;
                                return;
                        }
                }
        }
}

/* Whether a RESULT that ran no command only refused it: its seq below the
 * session's floor (an old copy of a request in flight), or its session
 * gone. */
static bool refused(int status)
{
        return status == BATON_ESEQ || status == BATON_EINVAL ||
               status == BATON_ENOSESSION || status == BATON_EEXPIRED ||
               status == BATON_ECLOSED || status == BATON_EINFLIGHT;
}

int hostcheck_once(struct run *r, char *reason, size_t cap)
{
        const struct simnode *n = &r->s.c.nodes[0];
        size_t k, j;

        for (k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];

                if (ev->type != LOCKFSM_EV_RESULT || ev->seq == 0 ||
                    ev->result.duplicate || refused(ev->result.status)) {
                        continue;
                }
                for (j = 0; j < k; j++) {
                        const struct simevent *e = &n->events[j];
                        if (e->type == LOCKFSM_EV_RESULT &&
                            !e->result.duplicate && e->session == ev->session &&
                            e->seq == ev->seq && e->index < ev->index) {
                                return fail(reason, cap,
                                            "session %" PRIx64 " seq %" PRIu64
                                            " ran at index %" PRIu64
                                            " and again at %" PRIu64,
                                            ev->session, ev->seq, e->index,
                                            ev->index);
                        }
                }
        }
        return 0;
}

int hostcheck_ended(struct run *r, char *reason, size_t cap)
{
        const struct simnode *n = &r->s.c.nodes[0];
        size_t k, j;

        for (k = 0; k < n->n_events; k++) {
                const struct simevent *ev = &n->events[k];
                bool ended = false;

                if (ev->type != LOCKFSM_EV_OPEN) {
                        continue;
                }
                for (j = k + 1; j < n->n_events && !ended; j++) {
                        ended = n->events[j].type == LOCKFSM_EV_END &&
                                n->events[j].session == ev->session;
                }
                if (!ended) {
                        return fail(reason, cap,
                                    "session %" PRIx64 " opened at index "
                                    "%" PRIu64 " never ended, %u ms after "
                                    "its client fell silent",
                                    ev->session, ev->index, HOST_QUIET_MS);
                }
        }
        return 0;
}

/* A request's sends on one connection, not answered yet. */
void hostcheck_sent(struct rclient *cl, uint64_t id)
{
        struct owed *o = &cl->owed[id % HOST_OWED];

        if (o->id != id || o->conn != cl->conn_no) {
                *o = (struct owed){id, cl->conn_no, 0};
        }
        o->n++;
}

void hostcheck_answered(struct run *r, struct rclient *cl, uint64_t id,
                        raft_time now)
{
        struct owed *o = &cl->owed[id % HOST_OWED];

        if (o->id != id || o->conn != cl->conn_no) {
                return; /* a request of long ago: not followed */
        }
        if (o->n > 0) {
                o->n--;
        } else if (r->twice[0] == '\0') {
                snprintf(r->twice, sizeof r->twice,
                         "t=%" PRIu64 ": client %u's request %" PRIu64
                         " answered more often than it was sent",
                         (uint64_t)now, cl->id, id);
        }
}
