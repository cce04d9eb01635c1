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
#include "simacl.h"

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

/* Restore node i's snapshot in `bufs` (as raft stores them, back to
 * back) into `into` through fsm->restore, as raft does. 0, or -1 with the
 * reason in c->errmsg. */
static int restore_into(struct simcluster *c, unsigned i,
                        const struct raft_buffer *bufs, unsigned n_bufs,
                        struct raftfsm *into)
{
        struct raft_buffer whole = {NULL, 0};
        unsigned k;
        size_t off;
        int rv;

        for (k = 0; k < n_bufs; k++) {
                whole.len += bufs[k].len;
        }
        whole.base = raft_malloc(whole.len);
        if (whole.base == NULL) {
                snprintf(c->errmsg, sizeof c->errmsg, "out of memory");
                return -1;
        }
        for (k = 0, off = 0; k < n_bufs; k++) {
                memcpy((char *)whole.base + off, bufs[k].base, bufs[k].len);
                off += bufs[k].len;
        }
        /* On success restore owns whole.base. */
        rv = into->fsm.restore(&into->fsm, &whole);
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: fsm->restore of its own snapshot: %d: %s", i,
                         rv, raftfsm_errmsg(into));
                raft_free(whole.base);
                return -1;
        }
        return 0;
}

int simsnap_fresh(struct simcluster *c, struct raftfsm *fresh)
{
        if (raftfsm_init(fresh, &c->cfg.limits) != 0) {
                snprintf(c->errmsg, sizeof c->errmsg, "raftfsm_init: %s",
                         raftfsm_errmsg(fresh));
                return -1;
        }
        return 0;
}

int simsnap_roundtrip(struct simcluster *c, unsigned i)
{
        struct raftfsm *rf = &c->nodes[i].rf;
        struct raftfsm fresh;
        struct raft_buffer *bufs = NULL;
        unsigned n_bufs = 0;
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
        if (simsnap_fresh(c, &fresh) != 0) {
                goto out_bufs;
        }
        if (restore_into(c, i, bufs, n_bufs, &fresh) != 0) {
                goto out_fresh;
        }
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
        /* The access list travels in the snapshot beside the locks. */
        if (simacl_digest(raftfsm_acl(&fresh)) !=
            simacl_digest(raftfsm_acl(rf))) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: snapshot -> restore changed the access "
                         "list (%u rules on names, %u quotas restored of %u "
                         "and %u)",
                         i, raftfsm_acl(&fresh)->n_prefix,
                         raftfsm_acl(&fresh)->n_quota,
                         raftfsm_acl(rf)->n_prefix, raftfsm_acl(rf)->n_quota);
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
        rf->fsm.snapshot_finalize(&rf->fsm, &bufs, &n_bufs);
        return result;
}

int simsnap_restore_acl(struct simcluster *c, unsigned i, struct raftfsm *into,
                        uint64_t *index, uint64_t *digest)
{
        struct raftfsm *rf = &c->nodes[i].rf;
        struct raft_buffer *bufs = NULL;
        unsigned n_bufs = 0;
        int rv;

        rv = raftfsm_backup(rf, &bufs, &n_bufs, index);
        if (rv == BATON_EBUSY) {
                return 1; /* an image still being made: not now */
        }
        if (rv != 0) {
                snprintf(c->errmsg, sizeof c->errmsg,
                         "node %u: raftfsm_backup: %s: %s", i,
                         baton_strerror(rv), raftfsm_errmsg(rf));
                return -1;
        }
        rv = restore_into(c, i, bufs, n_bufs, into);
        raftfsm_backup_release(bufs, n_bufs);
        if (rv != 0) {
                return -1;
        }
        *digest = simacl_digest(raftfsm_acl(into));
        return 0;
}
