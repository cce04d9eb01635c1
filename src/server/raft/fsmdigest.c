/* Digests of the replicated state, compared through the log (fsmdigest.h). */
#include "fsmdigest.h"

#include <inttypes.h>
#include <string.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../proto/command.h"
#include "../base/fnv.h"
#include "../base/log.h"
#include "raftfsm.h"

/* The directory's or the access list's encoding (`enc` with a NULL buffer
 * sizes it), hashed into `*h`. 0 or BATON_ENOMEM. */
static int hash_part(uint64_t *h, const void *obj,
                     size_t (*enc)(const void *obj, uint8_t *buf, size_t cap))
{
        size_t len = enc(obj, NULL, 0);
        uint8_t *buf = raft_malloc(len > 0 ? len : 1);

        if (buf == NULL) {
                return BATON_ENOMEM;
        }
        enc(obj, buf, len);
        *h = fnv1a64(*h, buf, len);
        raft_free(buf);
        return 0;
}

static size_t enc_dir(const void *obj, uint8_t *buf, size_t cap)
{
        return directory_encode(obj, buf, cap);
}

static size_t enc_acl(const void *obj, uint8_t *buf, size_t cap)
{
        return acl_encode(obj, buf, cap);
}

int fsmdigest_compute(const struct raftfsm *rf, uint64_t *digest)
{
        const struct acl *acl = raftfsm_acl(rf);
        uint64_t h = FNV1A64_OFFSET;
        void *state;
        size_t len;
        int rv;

        rv = hash_part(&h, raftfsm_directory(rf), enc_dir);
        if (rv == 0 && acl->seeded) {
                rv = hash_part(&h, acl, enc_acl);
        }
        if (rv != 0) {
                return rv;
        }
        rv = lockfsm_snapshot(raftfsm_lockfsm_nowait(rf), &state, &len);
        if (rv != 0) {
                return rv;
        }
        h = fnv1a64(h, state, len);
        lockfsm_snapshot_free(raftfsm_lockfsm_nowait(rf), state);
        *digest = h;
        return 0;
}

/* The child's work (snapimage_encode_fn): the digest's 8 bytes. */
static int encode(void *data, void **buf, size_t *len)
{
        uint64_t h;
        int rv = fsmdigest_compute(data, &h);

        if (rv != 0) {
                return rv;
        }
        *buf = raft_malloc(sizeof h);
        if (*buf == NULL) {
                return BATON_ENOMEM;
        }
        memcpy(*buf, &h, sizeof h);
        *len = sizeof h;
        return 0;
}

void fsmdigest_init(struct fsmdigest *d, struct raftfsm *rf,
                    enum snapimage_mode mode, uint32_t every)
{
        memset(d, 0, sizeof *d);
        d->rf = rf;
        d->every = every;
        snapimage_init(&d->image, mode);
}

void fsmdigest_close(struct fsmdigest *d)
{
        snapimage_cancel(&d->image);
        snapimage_close(&d->image);
}

static struct fsmdigest_slot *find(struct fsmdigest *d, uint64_t index)
{
        unsigned i;

        for (i = 0; i < FSMDIGEST_RING && index != 0; i++) {
                if (d->ring[i].index == index) {
                        return &d->ring[i];
                }
        }
        return NULL;
}

/* A slot for `index`: the empty or oldest one, emptied. */
static struct fsmdigest_slot *claim(struct fsmdigest *d, uint64_t index)
{
        struct fsmdigest_slot *s = &d->ring[0];
        unsigned i;

        for (i = 1; i < FSMDIGEST_RING; i++) {
                if (d->ring[i].index < s->index) {
                        s = &d->ring[i];
                }
        }
        memset(s, 0, sizeof *s);
        s->index = index;
        return s;
}

/* Our digest of s->index against the leader's, carried by the DIGEST
 * entry `at`. */
static void compare(struct fsmdigest *d, const struct fsmdigest_slot *s,
                    uint64_t leader, uint64_t at)
{
        d->n_checked++;
        if (s->digest == leader) {
                return;
        }
        d->n_mismatch++;
        if (d->diverged) {
                /* Said once, loudly; the rest are counted. */
                log_debug("state machine digest at %" PRIu64
                          " differs from the leader's too",
                          s->index);
                return;
        }
        log_error("state machine digest MISMATCH at index %" PRIu64
                  ": this node's is %016" PRIx64 ", the leader's %016" PRIx64
                  " (DIGEST entry %" PRIu64
                  "): this replica's state is not the leader's; stop it, "
                  "wipe its data directory and let it rejoin "
                  "(docs/operations.md, \"Diverged replicas\")",
                  s->index, s->digest, leader, at);
        d->diverged = true;
        d->diverged_index = s->index;
        d->diverged_own = s->digest;
        d->diverged_leader = leader;
        d->diverged_at = at;
}

/* A DIGEST entry at `at`: compare now, when our digest is made, or never
 * (not in the ring). */
static void check(struct fsmdigest *d, uint64_t at, const void *buf, size_t len)
{
        struct fsmdigest_slot *s;
        struct command c;

        if (command_decode(&c, buf, len) != 0) {
                return;
        }
        s = find(d, c.target);
        if (s == NULL) {
                d->n_unknown++;
        } else if (s->made) {
                compare(d, s, c.token, at);
        } else {
                s->awaited = true;
                s->expected = c.token;
                s->expected_at = at;
        }
}

void fsmdigest_poll(struct fsmdigest *d)
{
        enum snapimage_state st;
        struct snapimage_bytes b;
        struct fsmdigest_slot *s;
        uint64_t failed = d->image.n_failed;

        st = snapimage_poll(&d->image);
        if (d->image.n_failed != failed) {
                d->n_failed++;
                log_warn("state machine digest: %s", d->image.errmsg);
        }
        if (st != SNAPIMAGE_READY) {
                return;
        }
        b = snapimage_take(&d->image);
        s = find(d, d->image.index);
        if (s != NULL && b.len == sizeof s->digest) {
                memcpy(&s->digest, b.base, sizeof s->digest);
                s->made = true;
                d->n_made++;
                d->latest = s->index > d->latest ? s->index : d->latest;
                if (s->awaited) {
                        compare(d, s, s->expected, s->expected_at);
                }
        }
        snapimage_bytes_free(&b);
}

/* Start the digest of the state at `index`, unless the last one still
 * runs (that index is then never compared here). */
static void start(struct fsmdigest *d, uint64_t index)
{
        fsmdigest_poll(d);
        if (d->image.state != SNAPIMAGE_NONE) {
                d->n_missed++;
                return;
        }
        claim(d, index);
        if (snapimage_start(&d->image, index, encode, d->rf) != 0) {
                d->n_failed++;
                return;
        }
        fsmdigest_poll(d); /* inline mode: made already */
}

#ifdef BATON_CHAOS_BUG_DIVERGE
/* batond-diverge: node 2 alters one grant's holder in its own
 * memory once, at the first entry from 100 on that finds a lock held,
 * which no other replica does: the negative control of the digests
 * (docs/chaos.md, "Negative controls"). After a restart it does so
 * again. */
#define DIVERGE_NODE  2
#define DIVERGE_AFTER 100

static void diverge(struct fsmdigest *d, uint64_t index)
{
        if (d->chaos_done || d->rf->raft == NULL ||
            d->rf->raft->id != DIVERGE_NODE || index < DIVERGE_AFTER) {
                return;
        }
        d->chaos_done = lockfsm_chaos_diverge(d->rf->lockfsm);
}
#endif

void fsmdigest_applied(void *data, uint64_t index, const void *buf, size_t len)
{
        struct fsmdigest *d = data;

#ifdef BATON_CHAOS_BUG_DIVERGE
        diverge(d, index);
#endif
        if (command_peek_type(buf, len) == COMMAND_DIGEST) {
                check(d, index, buf, len);
        }
        if (d->every != 0 && index % d->every == 0) {
                start(d, index);
        }
}

bool fsmdigest_to_propose(struct fsmdigest *d, uint64_t *index,
                          uint64_t *digest)
{
        const struct fsmdigest_slot *s;

        if (d->latest <= d->proposed || (s = find(d, d->latest)) == NULL ||
            !s->made) {
                return false;
        }
        d->proposed = d->latest;
        *index = s->index;
        *digest = s->digest;
        return true;
}
