/* test_simclient's client-view check, kind by kind (simview.h). */
#include "simview.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/client/core.h"

void simview_init(struct simview *v, const struct kprofile *profiles,
                  unsigned n)
{
        memset(v, 0, sizeof *v);
        v->profiles = profiles;
        v->n_clients = n < KINDS_CLIENTS ? n : KINDS_CLIENTS;
}

void simview_sent(struct simview *v, unsigned id, const struct command *k)
{
        struct simview_release *r, *slot = NULL;
        bool other = false; /* another token's RELEASE of the name is out */
        int i;

        if (k->type != COMMAND_RELEASE || id == 0 || id > v->n_clients ||
            (i = kinds_index(k->name, k->name_len)) < 0) {
                return;
        }
        r = v->released[id - 1][i];
        for (unsigned j = 0; j < SIMVIEW_RELEASES; j++) {
                if (r[j].seq == k->seq && r[j].token == k->token) {
                        return; /* sent again, on another connection */
                }
                if (r[j].seq == 0 && slot == NULL) {
                        slot = &r[j];
                }
                other |= r[j].seq != 0 && r[j].token != k->token;
        }
        if (slot == NULL) {
                fprintf(stderr,
                        "simview: client %u has more than %d RELEASEs "
                        "of one name out\n",
                        id, SIMVIEW_RELEASES);
                abort();
        }
        v->beside += other;
        slot->seq = k->seq;
        slot->token = k->token;
}

void simview_multi(struct simview *v, unsigned id, uint64_t token)
{
        if (id >= 1 && id <= v->n_clients) {
                v->multi[id - 1] = token;
        }
}

/* A hold that left the table: the oldest RELEASE sent of its token no
 * longer counts. */
void simview_hold(struct simview *v, unsigned id, const struct locks_hold *h,
                  uint32_t count)
{
        struct simview_release *r, *oldest = NULL;
        int i = kinds_index(h->name, h->name_len);

        if (count != 0 || i < 0 || id == 0 || id > v->n_clients) {
                return;
        }
        r = v->released[id - 1][i];
        for (unsigned j = 0; j < SIMVIEW_RELEASES; j++) {
                if (r[j].seq != 0 && r[j].token == h->token &&
                    (oldest == NULL || r[j].seq < oldest->seq)) {
                        oldest = &r[j];
                }
        }
        if (oldest != NULL) {
                oldest->seq = 0;
        }
}

/* RELEASEs client `id` has out of `token` on name `name`. */
static unsigned releases_of(const struct simview *v, unsigned id, int name,
                            uint64_t token)
{
        const struct simview_release *r = v->released[id - 1][name];
        unsigned n = 0;

        for (unsigned j = 0; j < SIMVIEW_RELEASES; j++) {
                n += r[j].seq != 0 && r[j].token == token;
        }
        return n;
}

/* One client's holds, looked at for one GRANT. */
struct look {
        struct simview *v;
        const struct simevent *ev;
        unsigned id;       /* the client's */
        int name;          /* the GRANT's, into kinds_names[] */
        uint32_t believed; /* a semaphore's permits the client holds */
        const struct locks_hold *clash;
        uint64_t writer_tokens[SIMVIEW_RELEASES]; /* its exclusive holds' */
        unsigned n_writers;
};

static const char *const mode_names[SIMVIEW_MODES] = {"exclusive", "shared",
                                                      "semaphore", "election"};

static const char *mode_name(uint8_t mode)
{
        return mode < SIMVIEW_MODES ? mode_names[mode] : "?";
}

/* The first pass over a client's holds: the tokens of its exclusive
 * holds of the name. */
static void look_writer(void *data, const struct locks_hold *h)
{
        struct look *lk = data;

        if (kinds_index(h->name, h->name_len) == lk->name &&
            h->mode == COMMAND_MODE_EXCLUSIVE &&
            lk->n_writers < SIMVIEW_RELEASES) {
                lk->writer_tokens[lk->n_writers++] = h->token;
        }
}

/* Whether the client sent the RELEASE that ends `h`: one of its token,
 * but for a reader's grant that shares it with a writer's, whose RELEASE
 * comes first. */
static bool release_sent(const struct look *lk, const struct locks_hold *h)
{
        unsigned n = releases_of(lk->v, lk->id, lk->name, h->token);

        if (n == 0 || h->mode != COMMAND_MODE_SHARED || n >= 2) {
                return n > 0;
        }
        for (unsigned j = 0; j < lk->n_writers; j++) {
                if (lk->writer_tokens[j] == h->token) {
                        return false;
                }
        }
        return true;
}

static void look_hold(void *data, const struct locks_hold *h)
{
        struct look *lk = data;
        uint8_t mode = lk->ev->mode;

        if (kinds_index(h->name, h->name_len) != lk->name ||
            release_sent(lk, h)) {
                return; /* another name, or it sent the RELEASE */
        }
        if (mode == COMMAND_MODE_SEMAPHORE) {
                lk->believed +=
                    lk->v->profiles[lk->id - 1].permits[lk->name - KINDS_SEM];
        } else if (lk->clash == NULL && (mode != COMMAND_MODE_SHARED ||
                                         h->mode != COMMAND_MODE_SHARED)) {
                lk->clash = h;
        }
}

static const char *state_name(const struct core_belief *b)
{
        return b->state == BATON_SESSION_LIVE ? "LIVE" : "in JEOPARDY";
}

/* A clash: counted by its mode (and as a multi-lock's), the first of
 * each kept, and the first of the run. */
static void clash(struct simview *v, const struct simevent *ev, bool multi,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void clash(struct simview *v, const struct simevent *ev, bool multi,
                  const char *fmt, ...)
{
        unsigned m = ev->mode % SIMVIEW_MODES;
        char text[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        v->caught[m]++;
        if (v->first[m][0] == '\0') {
                memcpy(v->first[m], text, sizeof text);
        }
        if (multi && v->caught[SIMVIEW_MULTI]++ == 0) {
                memcpy(v->first[SIMVIEW_MULTI], text, sizeof text);
        }
        if (v->clash[0] == '\0') {
                memcpy(v->clash, text, sizeof text);
        }
}

/* The permits the entry granted so far, this GRANT's included. */
static uint32_t sem_granted(struct simview *v, const struct simevent *ev,
                            unsigned s)
{
        if (v->sem_index[s] != ev->index) {
                v->sem_index[s] = ev->index;
                v->sem_granted[s] = 0;
        }
        v->sem_granted[s] += ev->permits;
        return v->sem_granted[s];
}

/* A grant of this entry that the entry ended too (an EXPIRE of several
 * sessions, a batch): its permits are free again for the entry's next
 * grants. Only the leader whose GRANTs are being checked counts. */
static void sem_freed(struct simview *v, unsigned node,
                      const struct simevent *ev, unsigned s)
{
        if (ev->token == ev->index && v->sem_index[s] == ev->index &&
            v->checked == ev->index && v->checked_node == node &&
            v->sem_granted[s] >= ev->permits) {
                v->sem_granted[s] -= ev->permits;
        }
}

void simview_event(struct simview *v, struct simclients *sc, unsigned node,
                   const struct simevent *ev, uint64_t now)
{
        int name = kinds_index(ev->name, ev->name_len);
        uint32_t granted = 0, believed = 0;
        char who[200] = "";
        size_t used = 0;

        if (ev->type == LOCKFSM_EV_RELEASE &&
            ev->mode == COMMAND_MODE_SEMAPHORE && name >= 0) {
                sem_freed(v, node, ev, (unsigned)name - KINDS_SEM);
                return;
        }
        if (ev->type != LOCKFSM_EV_GRANT || name < 0 ||
            ev->index < v->checked ||
            (ev->index == v->checked && node != v->checked_node)) {
                return; /* a later leader applying it again */
        }
        v->checked = ev->index;
        v->checked_node = node;
        v->checks[ev->mode % SIMVIEW_MODES]++;
        if (ev->mode == COMMAND_MODE_SEMAPHORE) {
                granted = sem_granted(v, ev, (unsigned)name - KINDS_SEM);
        }
        for (unsigned i = 0; i < sc->n && i < v->n_clients; i++) {
                struct simclient *cl = &sc->cl[i];
                int64_t t = simclient_clock(cl, now);
                struct look lk = {v, ev, cl->id, name, 0, NULL, {0}, 0};
                struct core_belief b;

                core_belief(&cl->core, t, &b);
                if (b.session == 0 || b.session == ev->session ||
                    (b.state != BATON_SESSION_LIVE &&
                     b.state != BATON_SESSION_JEOPARDY)) {
                        continue;
                }
                core_holds(&cl->core, look_writer, &lk);
                core_holds(&cl->core, look_hold, &lk);
                if (lk.clash != NULL) {
                        bool multi = ev->cause == COMMAND_MULTI ||
                                     lk.clash->token == v->multi[i];

                        clash(v, ev, multi,
                              "index %" PRIu64 " grants %.*s (%s) to session "
                              "%" PRIu64 " at t=%" PRIu64 " while client %u "
                              "(session %" PRIu64 ", token %" PRIu64
                              ") believes its %s hold %s at its t=%" PRId64
                              " (lease expires at %" PRId64 ")",
                              ev->index, (int)ev->name_len, ev->name,
                              mode_name(ev->mode), ev->session, now, cl->id,
                              lk.clash->session, lk.clash->token,
                              mode_name(lk.clash->mode), state_name(&b), t,
                              b.expires_at);
                }
                if (lk.believed > 0 && used < sizeof who) {
                        used += (size_t)snprintf(
                            who + used, sizeof who - used,
                            " client %u (%u, %s to %" PRId64 ")", cl->id,
                            lk.believed, state_name(&b), b.expires_at);
                }
                believed += lk.believed;
        }
        if (ev->mode == COMMAND_MODE_SEMAPHORE &&
            believed + granted > kinds_sem_limit((unsigned)name)) {
                clash(v, ev, false,
                      "index %" PRIu64 " grants %u permits of %.*s to session "
                      "%" PRIu64 " at t=%" PRIu64 " (%u by this entry) while "
                      "other clients believe they hold %u of its %u:%s",
                      ev->index, ev->permits, (int)ev->name_len, ev->name,
                      ev->session, now, granted, believed,
                      kinds_sem_limit((unsigned)name), who);
        }
}

void simview_format(const struct simview *v, const struct kinds_run *kr,
                    char *buf, size_t cap)
{
        snprintf(buf, cap,
                 "exclusive %u, shared %u, semaphore %u, multi %u, election %u"
                 " (%u proclaimed); GRANTs checked: exclusive %u, shared %u, "
                 "semaphore %u, election %u",
                 kr->grants[KIND_EXCLUSIVE], kr->grants[KIND_SHARED],
                 kr->grants[KIND_SEMAPHORE], kr->grants[KIND_MULTI],
                 kr->grants[KIND_ELECTION], kr->proclaimed,
                 v->checks[COMMAND_MODE_EXCLUSIVE],
                 v->checks[COMMAND_MODE_SHARED],
                 v->checks[COMMAND_MODE_SEMAPHORE],
                 v->checks[COMMAND_MODE_ELECTION]);
}

void simview_caught(const unsigned caught[SIMVIEW_MODES + 1], char *buf,
                    size_t cap)
{
        snprintf(buf, cap,
                 "GRANTs found believed taken: exclusive %u, shared %u, "
                 "semaphore %u, election %u, of a multi-lock %u",
                 caught[COMMAND_MODE_EXCLUSIVE], caught[COMMAND_MODE_SHARED],
                 caught[COMMAND_MODE_SEMAPHORE], caught[COMMAND_MODE_ELECTION],
                 caught[SIMVIEW_MULTI]);
}

void simview_add(struct simview_totals *t, const struct simview *v,
                 const struct kinds_run *kr)
{
        for (unsigned i = 0; i < N_KINDS; i++) {
                t->grants[i] += kr->grants[i];
        }
        for (unsigned i = 0; i < SIMVIEW_MODES; i++) {
                t->checks[i] += v->checks[i];
        }
}

bool simview_covered(const struct simview_totals *t, char *buf, size_t cap)
{
        for (unsigned i = 0; i < N_KINDS; i++) {
                if (t->grants[i] == 0) {
                        snprintf(buf, cap, "no %s grant", kinds_kind_names[i]);
                        return false;
                }
        }
        for (unsigned i = 0; i < SIMVIEW_MODES; i++) {
                if (t->checks[i] == 0) {
                        snprintf(buf, cap, "no %s GRANT checked",
                                 mode_names[i]);
                        return false;
                }
        }
        snprintf(buf, cap,
                 "grants: exclusive %u, shared %u, semaphore %u, multi %u, "
                 "election %u",
                 t->grants[KIND_EXCLUSIVE], t->grants[KIND_SHARED],
                 t->grants[KIND_SEMAPHORE], t->grants[KIND_MULTI],
                 t->grants[KIND_ELECTION]);
        return true;
}
