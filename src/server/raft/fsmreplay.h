/* A snapshot's bytes into a state: the container (snaptail.h) opened, the
 * image decoded into a lock state, a member directory and an access list,
 * and the entries of its tail replayed on them, with what was refused as
 * a newer release's noted. raftfsm.c's restores, on the loop or on the
 * restore's worker. */
#ifndef SERVER_FSMREPLAY_H
#define SERVER_FSMREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../fsm/acl.h"
#include "../../fsm/directory.h"
#include "../../fsm/lockfsm.h"
#include "../../lib/mem.h"
#include "../snap/snaptail.h"

/* The access list's section of an image, after the member directory:
 * "BACL", u32 length, then acl_encode(); none while the list is not
 * seeded (an image without it is one of an older release, or of a
 * cluster not seeded yet). raftfsm.c writes it. */
#define FSMREPLAY_ACL_MAGIC "BACL"

/* Restoring: the directory being rebuilt, and the entries after the
 * image (MEMBER ones go to the directory, the rest to the lock state). */
struct replay {
        struct snaptail_reader r;
        struct directory dir;
        struct acl acl;
        bool tail;
        /* What a restore refused as newer than this node reads (0: none):
         * the container's version, the image's, or an entry's in the
         * tail (at newer_index). */
        uint32_t newer_container;
        unsigned newer_image;
        unsigned newer_entry;
        uint64_t newer_index;
};

/* The `len` bytes at `buf`, as raft hands them to a restore: a container
 * around an image (rp->tail set, rp->r ready to read its entries) or an
 * image alone. Fills `rp` from zero. 0, BATON_EVERSION (a container newer
 * than this build reads: rp->newer_container) or BATON_ECORRUPT. */
int replay_open(const void *buf, size_t len, struct replay *rp);

/* lockfsm_set_quota_cb()'s callback over an access list (`acl`, a struct
 * acl): acl_quota_of(). */
const uint32_t *replay_quotas(void *acl, uint64_t principal);

/* Replace `f`'s state with the image `p` (`len` bytes, packed or not) and
 * the entries after it, the directory into rp->dir and the access list
 * into rp->acl, checking everything before changing `f`. 0, or a BATON_E*
 * code (BATON_EVERSION: rp->newer_* says what was newer). Whatever the
 * outcome, `f`'s quota callback reads rp->acl afterwards (the tail's
 * entries met its quotas): the caller points it at its own list again. */
int replay_restore(struct mem *mem, struct lockfsm *f, const uint8_t *p,
                   size_t len, struct replay *rp);

#endif /* SERVER_FSMREPLAY_H */
