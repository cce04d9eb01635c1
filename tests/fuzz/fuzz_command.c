/* Fuzz target of the command and log entry decoders (command_decode(),
 * src/proto/command.h; entry_reader_init() and entry_reader_next(),
 * src/fsm/entry.h) and of what applies what they decode: the input is a
 * run of log entries, applied to a small lock state machine
 * (src/fsm/lockfsm.h) as raftfsm.c's apply_entry() applies committed
 * entries: a MEMBER entry to the member directory only, any other to the
 * lock state, an ACL entry then to the access list too, whose quotas the
 * lock state meets.
 *
 * Input: byte 0 picks the start. Bit 0 set: an empty state, the first
 * entry at index 1. Clear: a fixed state built by applying well-formed
 * entries (setup() below: four sessions, a lock held with a writer and a
 * multi-lock queued behind it, readers, a semaphore, an election with a
 * candidate queued, a grant with a value and a hold time, an access list
 * with a quota, a member), the first entry at index SETUP_NEXT. Then up to
 * FUZZ_MAX_ENTRIES entries, each a u16 little-endian length and that many
 * bytes (the last one cut short by the end of the input), applied at
 * consecutive indexes.
 *
 * Asserted (a failure prints why and aborts):
 * - a command that decodes re-encodes, in the version it was read in, to
 *   the very bytes it came from (one encoding per command), or it was read
 *   in an older version than the one it is written in now;
 * - lockfsm_apply() returns 0 (no allocation fails here), every event is
 *   of the entry being applied, and lockfsm_check() passes after every
 *   entry;
 * - an entry that does not decode (a single command, or a batch whose
 *   framing is wrong) is answered with the decoder's error and changes
 *   nothing but the state's stamp and last index, whenever no lock waited
 *   for that entry to hand it on (lockfsm_deferred(): any entry does that);
 * - at the end the state's snapshot restores into a fresh machine whose
 *   own snapshot is the same bytes, and the two still are after both apply
 *   the same empty batch: a replica that restored stays in step with one
 *   that applied the log.
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
#include "../../src/proto/command.h"
#include "replay.h"

/* Enough for the tests the fuzzer makes; every entry costs an apply, and
 * a malformed one two snapshots. */
#define FUZZ_MAX_ENTRIES 64

/* The first index after the fixed state. Its sessions are 1, 2, 3 and 16
 * (ids are their OPENs' stamps, and the batch at 7 took two), its grants'
 * tokens 5, 7, 8, 9 and 11 (the indexes of the entries that made them):
 * the seeds and the dictionary name them. */
#define SETUP_NEXT 17

/* What every entry is applied to. Static because the access list is
 * large (about 170 KiB); reset at the start of every input. */
static struct acl acl;
static struct directory dir;

_Noreturn static void fail(const char *why)
{
        fprintf(stderr, "fuzz_command: %s\n", why);
        abort();
}

/* Small limits, so that a few entries reach each of them. */
static void limits(struct lockfsm_limits *l)
{
        lockfsm_limits_default(l);
        l->max_sessions = 16;
        l->max_locks_per_session = 8;
        l->max_waiters_per_lock = 4;
        l->max_inflight = 4;
        l->max_tombstones = 4;
        l->max_permits = 16;
        l->max_holders_per_lock = 8;
        l->max_names_per_acquire = 4;
}

static const uint32_t *quotas(void *data, uint64_t principal)
{
        return acl_quota_of(data, principal);
}

/* What the events say is read, so that a name, value or `by` borrowed
 * from freed or out-of-range memory shows under ASan. */
static volatile uint8_t event_sink;

static void on_event(void *data, const struct lockfsm_event *ev)
{
        const uint64_t *index = data;
        uint8_t x = ev->type;
        size_t i;

        if (ev->index != *index) {
                fail("an event of another entry than the one applied");
        }
        if (ev->type == LOCKFSM_EV_RESULT && ev->result == NULL) {
                fail("a RESULT event without its result");
        }
        for (i = 0; i < ev->name_len; i++) {
                x ^= (uint8_t)ev->name[i];
        }
        for (i = 0; i < ev->by_len; i++) {
                x ^= (uint8_t)ev->by[i];
        }
        for (i = 0; i < ev->value_len; i++) {
                x ^= (uint8_t)ev->value[i];
        }
        event_sink = x;
}

/* --- Decoding ------------------------------------------------------------ */

/* A command decoded from `len` bytes at `p`: encoded again, it must be
 * those bytes, unless the input's version is older than the one its
 * encoder picks (version 1 OPENs, version 2 semaphore ACQUIREs). */
static void check_canonical(const struct command *c, const uint8_t *p,
                            size_t len)
{
        size_t want = command_size(c);
        uint8_t *again;

        if (want == 0 || (again = malloc(want)) == NULL) {
                fail("a decoded command has no encoding");
        }
        if (command_encode(c, again, want) != want) {
                fail("a decoded command does not encode");
        }
        if (again[0] == p[0] && (want != len || memcmp(again, p, len) != 0)) {
                fail("a command decoded from other bytes than its encoding");
        }
        if (again[0] < p[0]) {
                fail("a command decoded from a newer version than it has");
        }
        free(again);
}

/* Decode the entry as the state machine will, checking what decodes: 0,
 * or the error a single command or a batch's framing is answered with. */
static int decode_entry(const uint8_t *p, size_t len)
{
        struct entry_reader r;
        struct command c;
        const uint8_t *cmd;
        size_t n;
        int rv;

        if (!entry_is_batch(p, len)) {
                rv = command_decode(&c, p, len);
                if (rv == 0) {
                        check_canonical(&c, p, len);
                }
                return rv;
        }
        rv = entry_reader_init(&r, p, len);
        if (rv != 0) {
                return rv;
        }
        while (entry_reader_next(&r, &cmd, &n)) {
                if (command_decode(&c, cmd, n) == 0) {
                        check_canonical(&c, cmd, n);
                }
        }
        if (r.left != 0) {
                fail("a batch's records do not add up to its length");
        }
        return 0;
}

/* --- Applying ------------------------------------------------------------ */

struct machine {
        struct lockfsm *f;
        uint64_t index; /* of the entry being applied, or the last one */
};

static void *take_snapshot(const struct lockfsm *f, size_t *len)
{
        void *buf;

        if (lockfsm_snapshot(f, &buf, len) != 0) {
                fail("no snapshot of the state");
        }
        return buf;
}

/* Two snapshots of states that differ at most in their last index and
 * stamp: the header's bytes 8..23 (snapshot.c, put_state()) and the
 * checksum after everything. */
static bool same_but_stamp(const uint8_t *a, size_t alen, const uint8_t *b,
                           size_t blen)
{
        return alen == blen && alen >= 32 && memcmp(a, b, 8) == 0 &&
               memcmp(a + 24, b + 24, alen - 32) == 0;
}

/* Apply one entry at the next index, as raftfsm.c's apply_entry() does. */
static void apply(struct machine *m, const uint8_t *p, size_t len)
{
        struct lockfsm_result res;
        struct command c;
        void *before = NULL;
        size_t before_len = 0;
        const char *why;
        int type = command_peek_type(p, len);
        int rv = decode_entry(p, len);

        m->index++;
        if (type == COMMAND_MEMBER) {
                /* The directory's alone; the lock state never sees it. */
                if (command_decode(&c, p, len) == 0) {
                        directory_apply(&dir, &c);
                }
                return;
        }
        /* An entry that does not decode changes nothing, but a lock an
         * earlier entry could not hand on is handed on by any entry. */
        if (rv != 0 && lockfsm_deferred(m->f) == 0) {
                before = take_snapshot(m->f, &before_len);
        }
        if (lockfsm_apply(m->f, m->index, p, len, &res) != 0) {
                fail("lockfsm_apply() failed");
        }
        if (rv != 0 && res.status != rv) {
                fail("an undecodable entry answered with another error");
        }
        if (before != NULL) {
                size_t after_len;
                void *after = take_snapshot(m->f, &after_len);
                if (!same_but_stamp(before, before_len, after, after_len)) {
                        fail("an undecodable entry changed the state");
                }
                lockfsm_snapshot_free(m->f, after);
                lockfsm_snapshot_free(m->f, before);
        }
        if ((why = lockfsm_check(m->f)) != NULL) {
                fprintf(stderr, "fuzz_command: entry %llu: %s\n",
                        (unsigned long long)m->index, why);
                abort();
        }
        if (type == COMMAND_ACL && command_decode(&c, p, len) == 0) {
                acl_apply(&acl, &c);
        }
}

/* Encode `c` as an entry of its own and apply it. */
static void apply_command(struct machine *m, const struct command *c)
{
        uint8_t buf[COMMAND_MAX_SIZE];
        size_t n = command_encode(c, buf, sizeof buf);

        if (n == 0) {
                fail("a setup command does not encode");
        }
        apply(m, buf, n);
}

/* An empty batch: what the leader proposes to hand deferred locks on. */
static size_t empty_batch(uint8_t *buf, size_t cap)
{
        struct entry_writer w;

        entry_writer_init(&w, buf, cap, 1);
        return entry_writer_finish(&w);
}

/* --- The fixed state ------------------------------------------------------ */

#define NAME(s)  .name = (s), .name_len = sizeof(s) - 1
#define VALUE(s) .value = (s), .value_len = sizeof(s) - 1
#define BY(s)    .address = (s), .address_len = sizeof(s) - 1

/* Entries 1..SETUP_NEXT-1 of the fixed state, applied in order; the
 * comments give what each does (tokens are entry indexes). Long because
 * the fixed state is one table of commands, read top to bottom as the log
 * it is; split, its entries' order would be spread over functions. */
static void setup(struct machine *m)
{
        uint8_t table[64], quota[COMMAND_ACL_QUOTA_TABLE];
        uint8_t list[2 * (2 + 8)], batch[2 * COMMAND_MAX_SIZE];
        uint8_t one[COMMAND_MAX_SIZE];
        const uint32_t limit[ACL_QUOTA_KINDS] = {8, 6, 3, 0, 0};
        struct entry_writer w;
        size_t list_len = 0, n, i;
        const struct command open[3] = {
            {.type = COMMAND_OPEN,
             .nonce = 0x101,
             .ttl_ms = 10000,
             NAME("alpha")}, /* session 1 */
            {.type = COMMAND_OPEN,
             .nonce = 0x102,
             .ttl_ms = 10000,
             .delay_ms = 500,
             NAME("beta")}, /* session 2, lock-delay */
            {.type = COMMAND_OPEN,
             .nonce = 0x103,
             .ttl_ms = 20000,
             NAME("gamma")}, /* session 3 */
        };
        const struct command clock = {.type = COMMAND_CLOCK,
                                      .time_ms = 1700000000000ULL};
        const struct command acquire[] = {
            /* 5: session 1 holds lock/x (token 5)... */
            {.type = COMMAND_ACQUIRE,
             .session = 1,
             .seq = 1,
             .ack = 1,
             .owner = 7,
             NAME("lock/x")},
            /* 6: ...and session 2 waits for it. */
            {.type = COMMAND_ACQUIRE,
             .session = 2,
             .seq = 1,
             .ack = 1,
             .owner = 8,
             .wait_ms = 5000,
             NAME("lock/x")},
        };
        const struct command readers[2] = {
            /* 7, one batch: sessions 2 and 3 read lock/r (token 7). */
            {.type = COMMAND_ACQUIRE,
             .session = 2,
             .seq = 2,
             .ack = 1,
             .owner = 8,
             .mode = COMMAND_MODE_SHARED,
             NAME("lock/r")},
            {.type = COMMAND_ACQUIRE,
             .session = 3,
             .seq = 1,
             .ack = 1,
             .owner = 9,
             .mode = COMMAND_MODE_SHARED,
             NAME("lock/r")},
        };
        const struct command more[] = {
            /* 8: 2 of the 3 permits of sem/pool to session 1. */
            {.type = COMMAND_ACQUIRE,
             .session = 1,
             .seq = 2,
             .ack = 1,
             .owner = 7,
             .mode = COMMAND_MODE_SEMAPHORE,
             .permits = 2,
             .limit = 3,
             NAME("sem/pool")},
            /* 9: session 3 leads elect/leader (token 9)... */
            {.type = COMMAND_ACQUIRE,
             .session = 3,
             .seq = 2,
             .ack = 1,
             .owner = 9,
             .mode = COMMAND_MODE_ELECTION,
             NAME("elect/leader"),
             VALUE("node-c")},
            /* 10: ...with session 2 a candidate. */
            {.type = COMMAND_ACQUIRE,
             .session = 2,
             .seq = 3,
             .ack = 1,
             .owner = 8,
             .mode = COMMAND_MODE_ELECTION,
             .wait_ms = COMMAND_WAIT_FOREVER,
             NAME("elect/leader"),
             VALUE("node-b")},
            /* 11: lock/timed with a value, held 30 s at most. */
            {.type = COMMAND_ACQUIRE,
             .session = 1,
             .seq = 3,
             .ack = 1,
             .owner = 7,
             .hold_ms = 30000,
             NAME("lock/timed"),
             VALUE("data")},
        };
        struct command multi = {.type = COMMAND_MULTI,
                                .session = 3,
                                .seq = 3,
                                .ack = 1,
                                .owner = 9,
                                .wait_ms = 10000,
                                .n_names = 2};
        struct command seed = {
            .type = COMMAND_ACL, .mode = COMMAND_ACL_SEED, BY("admin")};
        const struct command quota_set = {.type = COMMAND_ACL,
                                          .mode = COMMAND_ACL_QUOTA_SET,
                                          NAME("*"),
                                          BY("admin"),
                                          .list = quota,
                                          .list_len = sizeof quota};
        struct command delta = {.type = COMMAND_OPEN,
                                .nonce = 0x104,
                                .ttl_ms = 10000,
                                NAME("delta")};
        const struct command member = {.type = COMMAND_MEMBER,
                                       .target = 1,
                                       NAME("10.0.0.1:7001"),
                                       BY("10.0.0.1:7101")};

        for (i = 0; i < 3; i++) { /* 1, 2, 3 */
                apply_command(m, &open[i]);
        }
        apply_command(m, &clock); /* 4 */
        for (i = 0; i < 2; i++) { /* 5, 6 */
                apply_command(m, &acquire[i]);
        }
        entry_writer_init(&w, batch, sizeof batch, 1);
        for (i = 0; i < 2; i++) {
                n = command_encode(&readers[i], one, sizeof one);
                if (n == 0 || !entry_writer_add(&w, one, n)) {
                        fail("the setup's batch does not encode");
                }
        }
        n = entry_writer_finish(&w);
        apply(m, batch, n);                                  /* 7 */
        for (i = 0; i < sizeof more / sizeof more[0]; i++) { /* 8..11 */
                apply_command(m, &more[i]);
        }
        /* 12: session 3 waits for lock/x and lock/m at once. */
        if (command_list_add(list, sizeof list, &list_len, 0, "lock/x", 6) ||
            command_list_add(list, sizeof list, &list_len, 0, "lock/m", 6)) {
                fail("the setup's multi-lock does not encode");
        }
        multi.list = list;
        multi.list_len = (uint16_t)list_len;
        multi.name = "lock/x";
        multi.name_len = 6;
        apply_command(m, &multi);
        /* 13: the access list's seed, an empty table... The table is
         * started here rather than decoded from the entry, which the list
         * then ignores (the first seed stands): a seed's decode, of a
         * fresh 170 KiB table, costs more than the rest of the setup. */
        acl_start(&acl, ACL_LOCK);
        seed.list = table;
        seed.list_len = (uint16_t)acl_encode(&acl, table, sizeof table);
        apply_command(m, &seed);
        /* 14: ...with a quota for everyone (sessions, locks, waiters)... */
        for (i = 0; i < ACL_QUOTA_KINDS; i++) {
                quota[4 * i] = (uint8_t)limit[i];
                quota[4 * i + 1] = (uint8_t)(limit[i] >> 8);
                quota[4 * i + 2] = (uint8_t)(limit[i] >> 16);
                quota[4 * i + 3] = (uint8_t)(limit[i] >> 24);
        }
        apply_command(m, &quota_set);
        /* 15: ...which the session of delta, opened by that principal,
         * counts in. */
        delta.principal = acl_principal("delta", 5);
        apply_command(m, &delta);
        apply_command(m, &member); /* 16 */
        if (m->index != SETUP_NEXT - 1 || !acl.seeded || acl.n_quota != 1 ||
            dir.n != 1) {
                fail("the setup did not apply as planned");
        }
}

/* --- The target ------------------------------------------------------------
 */

/* The state's snapshot must restore to the same bytes, and the restored
 * machine hand deferred locks on as the live one does. */
static void check_restore(struct machine *m, const struct lockfsm_limits *l)
{
        uint8_t empty[ENTRY_HEADER_SIZE + 8];
        size_t n = empty_batch(empty, sizeof empty);
        struct lockfsm_result res;
        struct lockfsm *g = lockfsm_create(l, NULL);
        void *a, *b;
        size_t alen, blen;
        int round;

        if (g == NULL) {
                fail("no state machine");
        }
        lockfsm_set_quota_cb(g, quotas, &acl);
        for (round = 0; round < 2; round++) {
                a = take_snapshot(m->f, &alen);
                if (round == 0 && lockfsm_restore(g, a, alen) != 0) {
                        fail("the state's snapshot does not restore");
                }
                b = take_snapshot(g, &blen);
                if (alen != blen || memcmp(a, b, alen) != 0) {
                        fail(round == 0 ? "a restored state differs"
                                        : "a restored state applies an "
                                          "entry otherwise");
                }
                lockfsm_snapshot_free(m->f, a);
                lockfsm_snapshot_free(g, b);
                if (round == 0) {
                        m->index++;
                        lockfsm_set_event_cb(m->f, NULL, NULL);
                        if (lockfsm_apply(m->f, m->index, empty, n, &res) ||
                            lockfsm_apply(g, m->index, empty, n, &res)) {
                                fail("lockfsm_apply() failed");
                        }
                }
        }
        lockfsm_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct lockfsm_limits l;
        struct machine m = {NULL, 0};
        size_t at = 1, n;
        unsigned entries = 0;

        if (size == 0) {
                return 0;
        }
        limits(&l);
        acl_init(&acl);
        directory_init(&dir);
        m.f = lockfsm_create(&l, NULL);
        if (m.f == NULL) {
                fail("no state machine");
        }
        lockfsm_set_event_cb(m.f, on_event, &m.index);
        lockfsm_set_quota_cb(m.f, quotas, &acl);
        if (!(data[0] & 1)) {
                setup(&m);
        }
        while (at < size && entries++ < FUZZ_MAX_ENTRIES) {
                n = data[at];
                if (at + 1 < size) {
                        n |= (size_t)data[at + 1] << 8;
                }
                at += 2;
                if (at > size) {
                        at = size;
                }
                if (n > size - at) {
                        n = size - at;
                }
                apply(&m, data + at, n);
                at += n;
        }
        check_restore(&m, &l);
        lockfsm_destroy(m.f);
        return 0;
}

#ifndef BATON_LIBFUZZER
int main(int argc, char **argv)
{
        return fuzz_replay_main(argc, argv, "command");
}
#endif
