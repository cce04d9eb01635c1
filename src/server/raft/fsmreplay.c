/* A snapshot's bytes into a state: the container opened, the image decoded
 * and the entries of its tail replayed (fsmreplay.h). */
#include "fsmreplay.h"

#include <string.h>

#include "../../../include/baton/errors.h"
#include "../../fsm/entry.h"
#include "../../fsm/snapshot.h"
#include "../../lib/cursor.h"
#include "../../proto/command.h"
#include "../snap/snapzip.h"

/* lockfsm_restore_with()'s source of the tail's entries for the lock
 * state: MEMBER entries go to the directory, ACL ones to the access list
 * too. */
static int next_lock_entry(void *it, uint64_t *index, const void **buf,
                           size_t *len)
{
        struct replay *rp = it;
        struct command c;
        int rv;

        while ((rv = snaptail_next(&rp->r, index, buf, len)) == 1) {
                unsigned version = entry_max_version(*buf, *len);
                int type = command_peek_type(*buf, *len);
                if (version > COMMAND_VERSION) {
                        /* Applied as malformed, it would change nothing
                         * here and something on the nodes that read it. */
                        rp->newer_entry = version;
                        rp->newer_index = *index;
                        return BATON_EVERSION;
                }
                if (type == COMMAND_ACL &&
                    command_decode(&c, *buf, *len) == 0) {
                        /* The access list's, and the lock state's too
                         * (apply_acl()). */
                        acl_apply(&rp->acl, &c);
                }
                if (type != COMMAND_MEMBER) {
                        break;
                }
                /* A refused change is an outcome too, as in apply. */
                if (command_decode(&c, *buf, *len) == 0) {
                        directory_apply(&rp->dir, &c);
                }
        }
        return rv;
}

/* The access list's section after the directory of the image `p` (`len`
 * bytes), if it has one, into `acl` (absent if not), adding its size to
 * `*skip` (the bytes from offset 4 to the lock state). 0 or
 * BATON_ECORRUPT. */
static int take_acl(struct acl *acl, const uint8_t *p, size_t len, size_t *skip)
{
        size_t at = 4 + *skip;
        struct rcursor r;
        size_t n;

        acl_init(acl);
        if (len - at < 8 || memcmp(p + at, FSMREPLAY_ACL_MAGIC, 4) != 0) {
                return 0;
        }
        rcursor_init(&r, p + at + 4, 4);
        n = rcursor_u32(&r);
        if (n > len - at - 8 || acl_decode(acl, p + at + 8, n) != 0) {
                return BATON_ECORRUPT;
        }
        *skip += 8 + n;
        return 0;
}

#ifdef BATON_CHAOS_TRUST_IMAGE
/*
 * batond-trustimage (BATON_CHAOS_TRUST_IMAGE, docs/chaos.md "Negative
 * controls"): an empty image, which it takes from an image child that died
 * before writing (snapimage.c), is read as the state of a node that has
 * applied nothing (no locks, members or access list), and the tail is
 * replayed on it, where batond refuses it as corrupt.
 */
static int restore_empty(struct mem *mem, struct lockfsm *f, struct replay *rp)
{
        struct lockfsm *empty = lockfsm_create(NULL, mem);
        void *buf;
        size_t len;
        int rv;

        if (empty == NULL) {
                return BATON_ENOMEM;
        }
        directory_init(&rp->dir);
        acl_init(&rp->acl);
        rv = lockfsm_snapshot(empty, &buf, &len);
        if (rv == 0) {
                rv = lockfsm_restore_with(
                    f, buf, len, rp->tail ? next_lock_entry : NULL, rp);
                lockfsm_snapshot_free(empty, buf);
        }
        lockfsm_destroy(empty);
        return rv;
}
#endif

const uint32_t *replay_quotas(void *acl, uint64_t principal)
{
        return acl_quota_of(acl, principal);
}

/* Runs on the loop, or on the restore's worker with a state of its own. */
int replay_restore(struct mem *mem, struct lockfsm *f, const uint8_t *p,
                   size_t len, struct replay *rp)
{
        struct rcursor r;
        size_t dir_len;
        void *raw = NULL;
        size_t raw_len;
        int rv;

        /* The tail's entries meet the quotas of the access list as it was
         * at each (next_lock_entry() applies its changes in order). */
        lockfsm_set_quota_cb(f, replay_quotas, &rp->acl);
#ifdef BATON_CHAOS_TRUST_IMAGE
        if (len == 0) {
                return restore_empty(mem, f, rp);
        }
#endif
        /* Packed or not, whatever compression is set to now: a node reads
         * the snapshots of nodes configured otherwise. */
        if (snapzip_is_packed(p, len)) {
                rv = snapzip_unpack(mem, p, len, &raw, &raw_len);
                if (rv != 0) {
                        return rv;
                }
                p = raw;
                len = raw_len;
        }
        rv = BATON_ECORRUPT;
        if (len >= 4) {
                rcursor_init(&r, p, 4);
                dir_len = rcursor_u32(&r);
                if (dir_len <= len - 4 &&
                    directory_decode(&rp->dir, p + 4, dir_len) == 0 &&
                    take_acl(&rp->acl, p, len, &dir_len) == 0) {
                        rv = lockfsm_restore_with(
                            f, p + 4 + dir_len, len - 4 - dir_len,
                            rp->tail ? next_lock_entry : NULL, rp);
                }
                if (rv == BATON_EVERSION && rp->newer_entry == 0 &&
                    dir_len <= len - 4) {
                        rp->newer_image = snapshot_peek_version(
                            p + 4 + dir_len, len - 4 - dir_len);
                }
        }
        mem_free(mem, raw);
        return rv;
}

int replay_open(const void *buf, size_t len, struct replay *rp)
{
        int rv;

        memset(rp, 0, sizeof *rp);
        if (snaptail_is(buf, len)) {
                rp->tail = true;
                rv = snaptail_open(&rp->r, buf, len);
                if (rv == BATON_EVERSION) {
                        rp->newer_container = snaptail_peek_version(buf, len);
                }
                return rv;
        }
        rp->r.image = buf;
        rp->r.image_len = len;
        return 0;
}
