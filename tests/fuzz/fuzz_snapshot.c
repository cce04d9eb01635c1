/* Fuzz target of snapshot restores: arbitrary bytes as the snapshot raft
 * hands the state machine to restore (replay_open() and replay_restore(),
 * src/server/raft/fsmreplay.h, which raftfsm.c's fsm->restore runs: the
 * image-and-tail container, src/server/snap/snaptail.h; the lz4 packing,
 * snapzip.h; the member directory, the access list and the lock state,
 * snapshot_decode() in src/fsm/snapshot.c; then the tail's entries applied)
 * or as the lock state machine's own snapshot (lockfsm_restore()).
 *
 * Input: byte 0 picks how the rest is read (byte 0 % 3):
 *   0  as raft hands it over, untouched: what any damage meets first;
 *   1  a lock state snapshot alone, whose checksum (its last 8 bytes) the
 *      target rewrites to match, so that the fuzzer reaches every record
 *      behind it;
 *   2  as 0, with the checksums the target can rewrite rewritten: a
 *      version 2 container's CRCs, and in a plain image (not lz4-packed)
 *      the lock state's checksum. A packed image keeps its lz4 frame's.
 * The restore replaces a small fixed state (base() below).
 *
 * Asserted (a failure prints why and aborts):
 * - a refused snapshot is refused with BATON_ECORRUPT, BATON_EVERSION or
 *   BATON_ETOOMANYSESSIONS, and leaves the state it would have replaced
 *   as it was (the same snapshot bytes);
 * - a restored state passes lockfsm_check(), and an image taken of it as
 *   raftfsm.c takes one (directory, access list, lock state) restores to
 *   the same directory, access list and lock state snapshot bytes;
 * - a restored state can be gone on with: its walkers read it whole, and
 *   the entries after it (an empty batch, then an EXPIRE of each session)
 *   apply and leave states that pass lockfsm_check(), with nothing held
 *   or awaited once every session expired.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/fsm/acl.h"
#include "../../src/fsm/directory.h"
#include "../../src/fsm/entry.h"
#include "../../src/fsm/lockfsm.h"
#include "../../src/lib/mem.h"
#include "../../src/proto/command.h"
#include "../../src/server/raft/fsmreplay.h"
#include "replay.h"
#include "seal.h"

enum mode {
        MODE_RAW = 0,
        MODE_STATE = 1,
        MODE_SEALED = 2,
};

/* The restore's and the check's; static because each holds an access
 * list (about 170 KiB), and filled from zero by replay_open(). */
static struct replay rp, again;

/* The state every input's restore would replace: encoded once, the same
 * bytes for every input. */
static void *base_buf;
static size_t base_len;

_Noreturn static void fail(const char *why)
{
        fprintf(stderr, "fuzz_snapshot: %s\n", why);
        abort();
}

static void *take_snapshot(const struct lockfsm *f, size_t *len)
{
        void *buf;

        if (lockfsm_snapshot(f, &buf, len) != 0) {
                fail("no snapshot of the state");
        }
        return buf;
}

static void apply_command(struct lockfsm *f, uint64_t index,
                          const struct command *c)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        struct lockfsm_result res;
        size_t n = command_encode(c, buf, sizeof buf);

        if (n == 0 || lockfsm_apply(f, index, buf, n, &res) != 0 ||
            res.status != 0) {
                fail("the base state does not build");
        }
}

/* Two sessions, a lock held and one waiting for it, a reader. */
static void base(void)
{
        const struct command log[] = {
            {.type = COMMAND_OPEN,
             .nonce = 1,
             .ttl_ms = 5000,
             .name = "a",
             .name_len = 1},
            {.type = COMMAND_OPEN,
             .nonce = 2,
             .ttl_ms = 5000,
             .name = "b",
             .name_len = 1},
            {.type = COMMAND_ACQUIRE,
             .session = 1,
             .seq = 1,
             .ack = 1,
             .name = "base/x",
             .name_len = 6},
            {.type = COMMAND_ACQUIRE,
             .session = 2,
             .seq = 1,
             .ack = 1,
             .wait_ms = 1000,
             .name = "base/x",
             .name_len = 6},
            {.type = COMMAND_ACQUIRE,
             .session = 2,
             .seq = 2,
             .ack = 1,
             .mode = COMMAND_MODE_SHARED,
             .name = "base/r",
             .name_len = 6},
        };
        struct lockfsm *f = lockfsm_create(NULL, NULL);
        size_t i;

        if (f == NULL) {
                fail("no state machine");
        }
        for (i = 0; i < sizeof log / sizeof log[0]; i++) {
                apply_command(f, i + 1, &log[i]);
        }
        /* Allocated with libc, as lockfsm_snapshot_free() would free it:
         * kept for the life of the process. */
        base_buf = take_snapshot(f, &base_len);
        lockfsm_destroy(f);
}

/* --- Checking a restored state ------------------------------------------ */

/* An image of the restored state, as raftfsm.c's encode_image() takes it
 * (plain), into a buffer of its own. */
static uint8_t *image_of(const struct lockfsm *f, const struct directory *d,
                         const struct acl *a, size_t *len)
{
        size_t dir_len = directory_encode(d, NULL, 0);
        size_t acl_len = a->seeded ? acl_encode(a, NULL, 0) : 0;
        size_t head = 4 + dir_len + (a->seeded ? 8 + acl_len : 0);
        size_t state_len, i;
        void *state = take_snapshot(f, &state_len);
        uint8_t *p = malloc(head + state_len);

        if (p == NULL) {
                fail("out of memory");
        }
        for (i = 0; i < 4; i++) {
                p[i] = (uint8_t)(dir_len >> (8 * i));
        }
        directory_encode(d, p + 4, dir_len);
        if (a->seeded) {
                memcpy(p + 4 + dir_len, FSMREPLAY_ACL_MAGIC, 4);
                for (i = 0; i < 4; i++) {
                        p[8 + dir_len + i] = (uint8_t)(acl_len >> (8 * i));
                }
                acl_encode(a, p + 12 + dir_len, acl_len);
        }
        memcpy(p + head, state, state_len);
        lockfsm_snapshot_free(f, state);
        *len = head + state_len;
        return p;
}

/* The restored state (`f`, directory `d`, access list `a`) passes its
 * check, and an image of it restores to the same. */
static void check_restored(struct lockfsm *f, const struct directory *d,
                           const struct acl *a)
{
        struct mem mem = mem_libc;
        struct lockfsm *g;
        const char *why;
        uint8_t *image, *again_image;
        size_t len, again_len;

        if ((why = lockfsm_check(f)) != NULL) {
                fprintf(stderr, "fuzz_snapshot: restored: %s\n", why);
                abort();
        }
        image = image_of(f, d, a, &len);
        g = lockfsm_create(NULL, NULL);
        if (g == NULL) {
                fail("no state machine");
        }
        if (replay_open(image, len, &again) != 0 ||
            replay_restore(&mem, g, again.r.image, again.r.image_len, &again) !=
                0) {
                fail("the image of a restored state does not restore");
        }
        again_image = image_of(g, &again.dir, &again.acl, &again_len);
        if (again_len != len || memcmp(image, again_image, len) != 0) {
                fail("an image of a restored state restores otherwise");
        }
        free(again_image);
        free(image);
        lockfsm_destroy(g);
}

/* --- Using a restored state ------------------------------------------------
 */

/* What the walkers report is read, so that a record a restore linked
 * wrong shows under ASan. */
static volatile uint8_t walk_sink;

static void touch(const void *p, size_t len)
{
        const uint8_t *b = p;
        uint8_t x = 0;
        size_t i;

        for (i = 0; i < len; i++) {
                x ^= b[i];
        }
        walk_sink ^= x;
}

static bool on_lock(void *data, const char *name, size_t name_len,
                    const struct lockfsm_result *holder)
{
        (void)data;
        (void)holder;
        touch(name, name_len);
        return true;
}

static void on_waiter(void *data, uint64_t session, uint64_t seq,
                      const char *name, size_t name_len, uint32_t wait_ms)
{
        (void)data;
        (void)session;
        (void)seq;
        (void)wait_ms;
        touch(name, name_len);
}

static void on_blocked(void *data, const char *name, size_t name_len,
                       uint64_t created, uint32_t delay_ms)
{
        (void)data;
        (void)created;
        (void)delay_ms;
        touch(name, name_len);
}

static bool on_hold(void *data, const struct lockfsm_session_hold *h)
{
        (void)data;
        touch(h->name, h->name_len);
        return true;
}

/* The sessions to expire: at most SESSIONS_MAX of them. */
#define SESSIONS_MAX 64

struct sessions {
        uint64_t id[SESSIONS_MAX];
        unsigned n;
        bool all;
};

static bool on_session(void *data, const struct lockfsm_session_info *info)
{
        struct sessions *ss = data;

        touch(info->name, info->name_len);
        if (ss->n == SESSIONS_MAX) {
                ss->all = false;
                return false;
        }
        ss->id[ss->n++] = info->id;
        return true;
}

static void apply_checked(struct lockfsm *f, uint64_t index, const void *p,
                          size_t len)
{
        struct lockfsm_result res;
        const char *why;

        if (lockfsm_apply(f, index, p, len, &res) != 0) {
                fail("lockfsm_apply() failed on a restored state");
        }
        if ((why = lockfsm_check(f)) != NULL) {
                fprintf(stderr, "fuzz_snapshot: after a restore: %s\n", why);
                abort();
        }
}

/* A restored state is one a node goes on with: every walker reads it,
 * an empty batch hands on what it deferred, and every session can expire
 * (with a lock-delay), each entry leaving a state that passes the check;
 * once all did, nothing is held or awaited. */
static void use_restored(struct lockfsm *f)
{
        static const uint8_t empty[ENTRY_HEADER_SIZE] = {ENTRY_VERSION,
                                                         COMMAND_BATCH};
        struct sessions ss = {.n = 0, .all = true};
        struct lockfsm_stats st;
        uint64_t index = lockfsm_last_index(f);
        uint8_t buf[COMMAND_MAX_SIZE];
        unsigned i;
        size_t n;

        /* An index raft cannot reach: no entry comes after it. */
        if (index > UINT64_MAX - SESSIONS_MAX - 2) {
                return;
        }
        lockfsm_foreach_lock(f, NULL, 0, on_lock, NULL);
        lockfsm_foreach_waiter(f, on_waiter, NULL);
        lockfsm_foreach_blocked(f, on_blocked, NULL);
        lockfsm_foreach_session_from(f, 0, on_session, &ss);
        for (i = 0; i < ss.n; i++) {
                lockfsm_foreach_session_hold(f, ss.id[i], on_hold, NULL);
        }
        apply_checked(f, ++index, empty, sizeof empty);
        for (i = 0; i < ss.n; i++) {
                struct command c = {.type = COMMAND_EXPIRE,
                                    .session = ss.id[i],
                                    .delay_ms = 100 * (i % 2)};
                n = command_encode(&c, buf, sizeof buf);
                if (n == 0) {
                        fail("an EXPIRE does not encode");
                }
                apply_checked(f, ++index, buf, n);
        }
        lockfsm_stats(f, &st);
        if (ss.all && (st.sessions != 0 || st.grants != 0 || st.waiters != 0)) {
                fail("holds outlive every session's expiry");
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mem mem = mem_libc;
        struct directory no_dir;
        struct lockfsm *f;
        enum mode mode;
        uint8_t *buf;
        void *now;
        size_t len, now_len;
        int rv;

        if (base_buf == NULL) {
                base();
        }
        if (size == 0) {
                return 0;
        }
        mode = (enum mode)(data[0] % 3);
        /* A copy of the exact size, which the checksums are rewritten
         * in, and past whose end ASan sees any read. */
        len = size - 1;
        buf = malloc(len > 0 ? len : 1);
        if (buf == NULL) {
                fail("out of memory");
        }
        memcpy(buf, data + 1, len);
        f = lockfsm_create(NULL, NULL);
        if (f == NULL || lockfsm_restore(f, base_buf, base_len) != 0) {
                fail("the base state does not restore");
        }
        if (mode == MODE_STATE) {
                seal_state(buf, len);
                rv = lockfsm_restore(f, buf, len);
        } else {
                if (mode == MODE_SEALED) {
                        seal_snapshot(buf, len);
                }
                rv = replay_open(buf, len, &rp);
                if (rv == 0) {
                        rv = replay_restore(&mem, f, rp.r.image, rp.r.image_len,
                                            &rp);
                }
        }
        if (rv == 0 && mode == MODE_STATE) {
                directory_init(&no_dir);
                acl_init(&rp.acl);
                check_restored(f, &no_dir, &rp.acl);
                use_restored(f);
        } else if (rv == 0) {
                check_restored(f, &rp.dir, &rp.acl);
                use_restored(f);
        } else if (rv != BATON_ECORRUPT && rv != BATON_EVERSION &&
                   rv != BATON_ETOOMANYSESSIONS) {
                fprintf(stderr, "fuzz_snapshot: refused with %d\n", rv);
                abort();
        } else {
                now = take_snapshot(f, &now_len);
                if (now_len != base_len || memcmp(now, base_buf, now_len)) {
                        fail("a refused snapshot changed the state");
                }
                lockfsm_snapshot_free(f, now);
        }
        lockfsm_destroy(f);
        free(buf);
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "snapshot");
}
#endif
