/* Snapshots in a simulated cluster: InstallSnapshots counted and traced,
 * and a node's snapshot taken and restored through the raft glue. */
#include "simsnap.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

void simsnap_trace_install(struct simcluster *c)
{
        unsigned n = simsnap_n_install(c);
        unsigned i;

        if (n == c->n_install_snapshot) {
                return;
        }
        c->n_install_snapshot = n;
        simcluster_trace(c, "InstallSnapshot sent (%u so far)", n);
        for (i = 0; i < c->cfg.n; i++) {
                struct raft *r = simcluster_raft(c, i);
                raft_index match;
                unsigned j;

                simcluster_trace(
                    c,
                    "  n%u state=%d term=%llu last=%llu applied=%llu "
                    "stored=%llu",
                    i, raft_state(r), (unsigned long long)raft_current_term(r),
                    (unsigned long long)raft_last_index(r),
                    (unsigned long long)raft_last_applied(r),
                    (unsigned long long)simstore_last(&c->nodes[i].store));
                for (j = 0; j < c->cfg.n; j++) {
                        if (raft_match_index(r, j + 1, &match) == 0) {
                                simcluster_trace(c, "    match n%u=%llu", j,
                                                 (unsigned long long)match);
                        }
                }
        }
}

unsigned simsnap_n_install(struct simcluster *c)
{
        unsigned n = 0;
        unsigned i;

        for (i = 0; i < c->cfg.n; i++) {
                n += raft_fixture_n_send(&c->f, i, RAFT_INSTALL_SNAPSHOT);
        }
        return n;
}

int simsnap_roundtrip(struct simcluster *c, unsigned i)
{
        struct raftfsm *rf = &c->nodes[i].rf;
        struct raftfsm fresh;
        struct raft_buffer *bufs = NULL;
        struct raft_buffer whole = {NULL, 0};
        unsigned n_bufs = 0, k;
        size_t off;
        void *a = NULL;
        void *b = NULL;
        size_t alen = 0;
        size_t blen = 0;
        int result = -1;
        int rv;

        rv = rf->fsm.snapshot(&rf->fsm, &bufs, &n_bufs);
        if (rv != 0 || n_bufs == 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: fsm->snapshot: %d (%u buffers): %s", i, rv,
                         n_bufs, raftfsm_errmsg(rf));
                return -1;
        }
        /* Raft stores the buffers back to back and restores them as one. */
        for (k = 0; k < n_bufs; k++) {
                whole.len += bufs[k].len;
        }
        whole.base = raft_malloc(whole.len);
        if (whole.base == NULL) {
                snprintf(c->errmsg, sizeof c->errmsg, "out of memory");
                goto out_bufs;
        }
        for (k = 0, off = 0; k < n_bufs; k++) {
                memcpy((char *)whole.base + off, bufs[k].base, bufs[k].len);
                off += bufs[k].len;
        }
        if (raftfsm_init(&fresh, &c->cfg.limits) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "raftfsm_init: %s",
                         raftfsm_errmsg(&fresh));
                goto out_bufs;
        }
        /* On success restore owns whole.base. */
        rv = fresh.fsm.restore(&fresh.fsm, &whole);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: fsm->restore of its own snapshot: %d: %s", i,
                         rv, raftfsm_errmsg(&fresh));
                goto out_fresh;
        }
        whole.base = NULL;
        if (lockfsm_snapshot(raftfsm_lockfsm(rf), &a, &alen) != 0 ||
            lockfsm_snapshot(raftfsm_lockfsm(&fresh), &b, &blen) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: lockfsm_snapshot failed", i);
                goto out_snapshots;
        }
        if (alen != blen || memcmp(a, b, alen) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: snapshot -> restore -> snapshot changed "
                         "the bytes (%zu vs %zu)",
                         i, alen, blen);
                goto out_snapshots;
        }
        if (lockfsm_check(raftfsm_lockfsm(&fresh)) != NULL) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: restored state: %s", i,
                         lockfsm_check(raftfsm_lockfsm(&fresh)));
                goto out_snapshots;
        }
        result = 0;
out_snapshots:
        /* lockfsm_snapshot() buffers come from the machines' allocator,
         * which is raft's heap. */
        raft_free(a);
        raft_free(b);
out_fresh:
        raftfsm_close(&fresh);
out_bufs:
        raft_free(whole.base);
        rf->fsm.snapshot_finalize(&rf->fsm, &bufs, &n_bufs);
        return result;
}
