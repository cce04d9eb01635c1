/* Watching a simulated cluster for what libraft must never do. */
#include "raftcheck.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

static void violation(struct simcluster *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void violation(struct simcluster *c, const char *fmt, ...)
{
        va_list ap;

        if (c->violations++ == 0) {
                va_start(ap, fmt);
                vsnprintf(c->violation, sizeof c->violation, fmt, ap);
                va_end(ap);
                simcluster_trace(c, "libraft did what it must not: %s",
                                 c->violation);
        }
}

/* Whether node j has stored entry `index` of term `term`. */
static bool holds(struct simcluster *c, unsigned j, raft_index index,
                  raft_term term)
{
        return simstore_holds(&c->nodes[j].store, index, term);
}

static bool majority_holds(struct simcluster *c, raft_index index,
                           raft_term term)
{
        unsigned n = 0;
        unsigned j;

        for (j = 0; j < c->cfg.n; j++) {
                n += holds(c, j, index, term);
        }
        return n > c->cfg.n / 2;
}

/* Record that leader i committed (from, to] with fewer than a majority
 * holding the top of that range. */
static void check_commit(struct simcluster *c, unsigned i, raft_index from,
                         raft_index to)
{
        struct raft *r = simcluster_raft(c, i);
        const struct simstore *own = &c->nodes[i].store;
        raft_term term = simstore_term(own, to);
        raft_index h = to;

        if (term == 0 || majority_holds(c, to, term)) {
                return;
        }
        while (h > from) {
                raft_term t = simstore_term(own, h);

                if (t == 0 || majority_holds(c, h, t)) {
                        break;
                }
                h--;
        }
        if (c->n_bogus < SIMCLUSTER_MAX_BOGUS) {
                c->bogus[c->n_bogus].from = h;
                c->bogus[c->n_bogus].to = to;
                c->bogus[c->n_bogus].term = raft_current_term(r);
                c->bogus[c->n_bogus].leader = i;
                c->n_bogus++;
        }
        violation(c,
                  "leader n%u (term %llu) committed up to index %llu while "
                  "fewer than a majority held index %llu",
                  i, (unsigned long long)raft_current_term(r),
                  (unsigned long long)to, (unsigned long long)h + 1);
        if (c->verbose) {
                unsigned j;

                for (j = 0; j < c->cfg.n; j++) {
                        struct raft *f = simcluster_raft(c, j);

                        simcluster_trace(
                            c,
                            "  n%u term %llu last %llu stored %llu..%llu: "
                            "entry %llu has term %llu (leader's: %llu; "
                            "the fixture's io holds term %llu there)",
                            j, (unsigned long long)raft_current_term(f),
                            (unsigned long long)raft_last_index(f),
                            (unsigned long long)c->nodes[j].store.first,
                            (unsigned long long)simstore_last(
                                &c->nodes[j].store),
                            (unsigned long long)h + 1,
                            (unsigned long long)simstore_term(
                                &c->nodes[j].store, h + 1),
                            (unsigned long long)simstore_term(own, h + 1),
                            (unsigned long long)simstore_io_term(
                                &c->nodes[j].store, h + 1));
                }
        }
}

void raftcheck_step(struct simcluster *c)
{
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);

                if (raft_state(r) == RAFT_UNAVAILABLE && !c->unavailable[i]) {
                        c->unavailable[i] = true;
                        c->n_unavailable++;
                        violation(c, "libraft shut n%u down (RAFT_UNAVAILABLE)",
                                  i);
                }
                if (raft_state(r) == RAFT_LEADER &&
                    raft_commit_index(r) > c->seen_commit[i]) {
                        check_commit(c, i, c->seen_commit[i],
                                     raft_commit_index(r));
                }
                c->seen_commit[i] = raft_commit_index(r);
        }
}
