/* Fuzz target of backup files: arbitrary bytes as the file `batond
 * --restore` reads (src/proto/backupfile.h, src/server/offline/restore.h).
 *
 * backupfile_check() refuses the bytes with a named error (BATON_EVERSION,
 * BATON_ECORRUPT, BATON_ENOMEM) or accepts them. An input whose header is
 * right but for its size or digest is sealed again (its size, SHA-256 and
 * the snapshot's own checksums put right, as a hand-edited backup would
 * be), so that mutations of the snapshot reach the decoders behind them;
 * the sealed copy must then be accepted.
 *
 * An accepted backup goes through what restore_backup() does before it
 * touches a data dir, in memory: its snapshot restored inline into a
 * state machine with the default config's limits, refused with a message
 * or loaded; a loaded state keeps every invariant (lockfsm_check()), and
 * is refused unless it is at or below its header's index
 * (restore_check_state()), which is what the new log starts above; its
 * re-encoded image (what seed_write() hands to raft as the new cluster's
 * first snapshot) restores again on a fresh node to a state that keeps
 * them too, with the same counts, and encodes to the same bytes. Nothing
 * is written to disk. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/proto/backupfile.h"
#include "../../src/server/config/config.h"
#include "../../src/server/offline/restore.h"
#include "../../src/server/offline/seed.h"
#include "../../src/server/raft/raftfsm.h"
#include "replay.h"
#include "seal.h"

/* Too large for the stack, and must not move once initialized: the two
 * nodes of one input, closed before it returns. */
static struct raftfsm node_a;
static struct raftfsm node_b;
static struct config cfg;

static void fail(const char *why, const char *detail)
{
        fprintf(stderr, "fuzz_backup: %s%s%s\n", why,
                detail != NULL ? ": " : "", detail != NULL ? detail : "");
        abort();
}

/* Every layer has a checksum, which a fuzzer could never forge: when the
 * header would pass but for its size or digest, put them right in a copy,
 * and the snapshot's own checksums first (NULL: leave the input as it
 * is). */
static uint8_t *reseal(const uint8_t *data, size_t size)
{
        struct baton_backup_info info;
        struct backupfile_digest *d;
        uint8_t *copy;

        if (size < BACKUPFILE_HEADER ||
            memcmp(data, BACKUPFILE_MAGIC, 8) != 0 ||
            seal_le(data + 8, 4) != BACKUPFILE_FORMAT ||
            seal_le(data + 12, 4) != BACKUPFILE_HEADER) {
                return NULL;
        }
        info.index = seal_le(data + 16, 8);
        info.term = seal_le(data + 24, 8);
        info.made_ms = seal_le(data + 32, 8);
        info.size = size - BACKUPFILE_HEADER;
        info.sessions = seal_le(data + 48, 8);
        info.locks = seal_le(data + 56, 8);
        info.grants = seal_le(data + 64, 8);
        info.waiters = seal_le(data + 72, 8);
        copy = malloc(size);
        d = backupfile_digest_new(&info);
        if (copy == NULL || d == NULL) {
                fail("out of memory", NULL);
        }
        memcpy(copy, data, size);
        seal_snapshot(copy + BACKUPFILE_HEADER, (size_t)info.size);
        if (backupfile_digest_add(d, copy + BACKUPFILE_HEADER, info.size) !=
                0 ||
            backupfile_digest_finish(d, &info, copy) != 0) {
                fail("out of memory", NULL);
        }
        return copy;
}

struct counts {
        uint64_t max_token;
        struct lockfsm_stats st;
};

static bool max_holder(void *data, const struct lockfsm_holder *h)
{
        uint64_t *max = data;

        *max = h->token > *max ? h->token : *max;
        return true;
}

struct walk {
        const struct lockfsm *f;
        uint64_t max;
};

static bool max_lock(void *data, const char *name, size_t name_len,
                     const struct lockfsm_result *holder)
{
        struct walk *w = data;

        (void)holder;
        lockfsm_foreach_holder(w->f, name, name_len, max_holder, &w->max);
        return true;
}

/* A loaded state: its invariants, and what seed_write() reports of it. */
static void inspect(struct raftfsm *rf, struct counts *c)
{
        struct walk w = {raftfsm_lockfsm(rf), 0};
        const char *broken = lockfsm_check(w.f);

        if (broken != NULL) {
                fail("a restored state breaks an invariant", broken);
        }
        lockfsm_foreach_lock(w.f, "", 0, max_lock, &w);
        lockfsm_stats(w.f, &c->st);
        c->max_token = w.max;
}

/* fsm->restore inline, as restore.c's load() does: 0, or the refusal
 * (with a message). The buffer is raft's: the restore frees it when it
 * succeeds, and leaves it to us when it fails. */
static int load(struct raftfsm *rf, const void *snap, size_t len)
{
        struct raft_buffer buf;
        int rv;

        if (seed_fsm(rf, &cfg) != 0) {
                fail("cannot create a state machine", NULL);
        }
        buf.len = len;
        buf.base = raft_malloc(len > 0 ? len : 1);
        if (buf.base == NULL) {
                fail("out of memory", NULL);
        }
        memcpy(buf.base, snap, len);
        rv = rf->fsm.restore(&rf->fsm, &buf);
        if (rv != 0) {
                raft_free(buf.base);
                if (rv != RAFT_CORRUPT && rv != RAFT_NOMEM) {
                        fail("restore answers neither CORRUPT nor NOMEM",
                             raftfsm_errmsg(rf));
                }
                if (raftfsm_errmsg(rf)[0] == '\0') {
                        fail("a refused restore says nothing", NULL);
                }
        }
        return rv;
}

static void restore(const struct baton_backup_info *info, const uint8_t *snap)
{
        char errmsg[256];
        struct counts a, b;
        void *image_a = NULL, *image_b = NULL;
        size_t len_a = 0, len_b = 0;

        /* restore_backup() refuses a backup whose new log would start
         * beyond 2^63 before it loads anything. */
        if (restore_start(&cfg, info->index) == 0) {
                return;
        }
        if (load(&node_a, snap, (size_t)info->size) != 0) {
                raftfsm_close(&node_a);
                return;
        }
        inspect(&node_a, &a);
        /* restore_backup() refuses a state past its header's index: the
         * new log starts above that index (restore_start()), and must
         * start above every entry and token of the state. */
        errmsg[0] = '\0';
        if (restore_check_state(info, &node_a, errmsg, sizeof errmsg) != 0) {
                if (errmsg[0] == '\0') {
                        fail("a refused state says nothing", NULL);
                }
                raftfsm_close(&node_a);
                return;
        }
        if (lockfsm_last_index(raftfsm_lockfsm(&node_a)) > info->index ||
            a.max_token > info->index) {
                fail("a restored state is past its backup's index", NULL);
        }
        /* seed_write(): the new cluster's first snapshot holds the state
         * without the old directory. */
        directory_init(&node_a.dir);
        if (raftfsm_encode(&node_a, &image_a, &len_a) != 0) {
                fail("a restored state does not encode", NULL);
        }
        /* The new node's start restores that snapshot inline: it must
         * load, to the same state. */
        if (load(&node_b, image_a, len_a) != 0) {
                fail("the restored state's image does not restore",
                     raftfsm_errmsg(&node_b));
        }
        inspect(&node_b, &b);
        if (a.max_token != b.max_token || a.st.sessions != b.st.sessions ||
            a.st.locks != b.st.locks || a.st.grants != b.st.grants ||
            a.st.waiters != b.st.waiters ||
            a.st.tombstones != b.st.tombstones) {
                fail("the image restores to other counts", NULL);
        }
        if (raftfsm_encode(&node_b, &image_b, &len_b) != 0) {
                fail("a restored image does not encode", NULL);
        }
        if (len_a != len_b || memcmp(image_a, image_b, len_a) != 0) {
                fail("a restored image encodes to other bytes", NULL);
        }
        raft_free(image_a);
        raft_free(image_b);
        raftfsm_close(&node_a);
        raftfsm_close(&node_b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct baton_backup_info info;
        const uint8_t *snap = NULL;
        uint8_t *sealed = NULL;
        int rv;

        config_defaults(&cfg);
        rv = backupfile_check(data, size, &info, &snap);
        if (rv != 0 && rv != BATON_EVERSION && rv != BATON_ECORRUPT &&
            rv != BATON_ENOMEM) {
                fail("backupfile_check: an unnamed error", NULL);
        }
        if (rv == BATON_ECORRUPT) {
                sealed = reseal(data, size);
                if (sealed != NULL) {
                        rv = backupfile_check(sealed, size, &info, &snap);
                        if (rv != 0) {
                                fail("a sealed backup is refused",
                                     baton_strerror(rv));
                        }
                }
        }
        if (rv == 0) {
                if (snap !=
                        (sealed != NULL ? sealed : data) + BACKUPFILE_HEADER ||
                    info.size != size - BACKUPFILE_HEADER) {
                        fail("an accepted backup's snapshot is elsewhere",
                             NULL);
                }
                restore(&info, snap);
        }
        free(sealed);
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "backup");
}
#endif
