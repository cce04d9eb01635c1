/* Checker S11 of a chaos run: read/write exclusion at the register. */
#include "check_rw.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

/* A holder inside the register: from its accepted ENTER to its LEAVE (or a
 * refusal, or its worker's next ENTER of the key). */
struct presence {
        int key;
        int worker;
        uint64_t token;
        bool reader;
        unsigned line;      /* its ENTER's line in register.log */
        bool fenced;        /* a newer conflicting holder entered */
        int fenced_worker;  /* that holder's worker */
        uint64_t fenced_by; /* its token */
        unsigned fenced_at; /* and its ENTER's line */
};

struct rwcheck {
        const struct run *r;
        struct presence *in;
        size_t n_in, cap_in;
        size_t enters, reader_enters, fenced, most_readers;
        struct check_note bad, unknown;
};

static const char *who(bool reader)
{
        return reader ? "reader" : "writer";
}

static struct presence *find(struct rwcheck *c, int key, int worker)
{
        size_t i;

        for (i = 0; i < c->n_in; i++) {
                if (c->in[i].key == key && c->in[i].worker == worker) {
                        return &c->in[i];
                }
        }
        return NULL;
}

static void drop(struct rwcheck *c, struct presence *p)
{
        *p = c->in[--c->n_in];
}

/*
 * Holder `g` is inside when `l` (an accepted ENTER of a conflicting mode)
 * comes in. With the token of `l` above g's, the register now refuses g
 * (a fencing save) - fine if g's grant had ended when the grant of `l` was
 * made, as in S6; otherwise the lock service let the two overlap. With a
 * token not above g's the register let both in at once.
 */
static void meet(struct rwcheck *c, const struct reglog_line *l,
                 struct presence *g)
{
        const struct run *r = c->r;
        const struct applylog_event *live;
        int ended;

        if (g->token >= l->token) {
                check_note(&c->bad,
                           "register %s: w%d's %s enter with token %" PRIu64
                           " accepted while w%d's %s (token %" PRIu64
                           ", in since register.log:%u) was inside "
                           "(register.log:%u)",
                           run_name(r, l->key), l->worker, who(l->reader),
                           l->token, g->worker, who(g->reader), g->token,
                           g->line, l->line);
                return;
        }
        g->fenced = true;
        g->fenced_worker = l->worker;
        g->fenced_by = l->token;
        g->fenced_at = l->line;
        c->fenced++;
        ended = check_grants_ended(r, l->key, g->token, l->token, &live);
        if (ended < 0) {
                check_note(&c->unknown,
                           "register %s: no GRANT of token %" PRIu64
                           " in the apply logs (w%d's %s, turned out by "
                           "register.log:%u)",
                           run_name(r, l->key), g->token, g->worker,
                           who(g->reader), l->line);
        } else if (ended == 0) {
                check_note(&c->bad,
                           "register %s: w%d's %s enter with token %" PRIu64
                           " while w%d's %s (token %" PRIu64
                           ") was inside, whose grant (session %" PRIu64
                           ") had not ended when grant %" PRIu64
                           " was made: overlap (register.log:%u and %u)",
                           run_name(r, l->key), l->worker, who(l->reader),
                           l->token, g->worker, who(g->reader), g->token,
                           live->session, l->token, g->line, l->line);
        }
}

static void on_enter(struct rwcheck *c, const struct reglog_line *l)
{
        struct presence *p = find(c, l->key, l->worker);
        struct presence np = {.key = l->key,
                              .worker = l->worker,
                              .token = l->token,
                              .reader = l->reader,
                              .line = l->line,
                              .fenced_worker = -1};
        size_t i, readers = 0;

        if (p != NULL) {
                drop(c, p); /* its worker moved on without a LEAVE */
        }
        c->enters++;
        c->reader_enters += l->reader;
        for (i = 0; i < c->n_in; i++) {
                struct presence *g = &c->in[i];
                if (g->key != l->key || g->fenced) {
                        continue;
                }
                if (!l->reader || !g->reader) {
                        meet(c, l, g);
                }
                readers += !g->fenced && g->reader;
        }
        util_push((void **)&c->in, &c->n_in, &c->cap_in, &np, sizeof np);
        if (l->reader && readers + 1 > c->most_readers) {
                c->most_readers = readers + 1;
        }
}

static void on_line(struct rwcheck *c, const struct reglog_line *l)
{
        struct presence *p = find(c, l->key, l->worker);
        bool same = p != NULL && p->token == l->token;

        if (!l->ok) {
                if (same) {
                        drop(c, p); /* told it is out (S6 judges why) */
                }
                return;
        }
        if (same && p->fenced) {
                check_note(&c->bad,
                           "register %s: w%d's %s %s with token %" PRIu64
                           " accepted after w%d's enter with token %" PRIu64
                           " (register.log:%u) had turned it out: a stale "
                           "holder let in (register.log:%u)",
                           run_name(c->r, l->key), l->worker, who(p->reader),
                           reglog_op_name(l->op), l->token, p->fenced_worker,
                           p->fenced_by, p->fenced_at, l->line);
                p->fenced = false; /* it is inside again, as it acts */
        }
        if (l->op == REGLOG_ENTER) {
                on_enter(c, l);
        } else if (l->op == REGLOG_LEAVE && same) {
                drop(c, p);
        }
}

void check_s11(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        bool *rw = util_calloc(r->names.n, sizeof *rw);
        struct rwcheck c;
        size_t i, n_keys = 0;

        memset(&c, 0, sizeof c);
        c.r = r;
        /* The keys of the rwlock workload: those holders enter and leave
         * (a semaphore's holders are S12's). */
        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                if ((l->op == REGLOG_ENTER || l->op == REGLOG_LEAVE) &&
                    !l->sem && !rw[l->key]) {
                        rw[l->key] = true;
                        n_keys++;
                }
        }
        for (i = 0; i < rl->n; i++) {
                if (rw[rl->lines[i].key] && !rl->lines[i].sem) {
                        on_line(&c, &rl->lines[i]);
                }
        }
        if (c.bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu violations)", c.bad.first,
                          c.bad.count);
        } else if (c.unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN,
                          "%s (%zu of %zu turned-out holders unclassified)",
                          c.unknown.first, c.unknown.count, c.fenced);
        } else if (n_keys == 0) {
                check_set(res, CHECK_PASS,
                          "no read/write register keys (no rwlock workload)");
        } else {
                check_set(res, CHECK_PASS,
                          "%zu read/write keys, %zu enters (%zu readers', up "
                          "to %zu readers inside at once): never a reader with "
                          "a writer or two writers; %zu holders turned out by "
                          "a newer one, each after its grant ended",
                          n_keys, c.enters, c.reader_enters, c.most_readers,
                          c.fenced);
        }
        free(c.in);
        free(rw);
}
