/* Integration scenarios on watches served by followers: a watch on a
 * follower that falls behind the leader's snapshots is ended
 * BATON_ECOMPACTED once the follower installs one, never left going on
 * past the events the snapshot skipped. */
#include "sc_watch.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"

/* Snapshots every 64 entries, 64 kept behind: a follower paused through
 * BEHIND_ENTRIES entries (more than the two together) finds those it
 * lacks gone from the leader's log and must install a snapshot, while
 * the follower g that is not paused may run up to 64 entries behind on a
 * loaded machine (under the sanitizers, on 5 nodes a majority can go on
 * without it) and still be sent entries: a snapshot would end its watch,
 * which the scenario keeps gapless. */
#define SNAPSHOT_EVERY 64
static const char *const small_snapshots[] = {"--snapshot-threshold", "64",
                                              "--snapshot-trailing", "64"};
#define BEHIND_ENTRIES 200
#define MAX_STEPS      160   /* more entries, to end where asked: 64 do */
#define MAX_EVENTS     1024  /* of the name, in the whole scenario */
#define WRITER_MS      30000 /* the writer's session outlives the scenario */
#define QUIET_MS       300 /* no frame comes within this: none is on its way */
#define PAUSE_TRIES    3   /* pauses until f must install a snapshot */

/* Where a watch stands: every event up to (index, ord) seen. */
struct wpos {
        uint64_t index;
        uint32_t ord;
};

/* One frame of a watch connection: an event, or the RESULT of a WATCH
 * (its start, or its end). The event's strings are borrowed until the
 * next receive on the connection. */
struct wframe {
        uint64_t id;
        bool is_event;
        struct proto_watch_event ev;
        struct proto_result res;
};

static int recv_frame(struct tclient *c, int ms, struct wframe *f)
{
        struct proto_header h;
        const uint8_t *body;
        int rv = tclient_raw_recv(c, ms, &h, &body);

        if (rv != 0) {
                return rv;
        }
        memset(f, 0, sizeof *f);
        f->id = h.id;
        if (h.type == PROTO_WATCH_EVENT) {
                f->is_event = true;
                return proto_read_watch_event(body, h.length, &f->ev) == 0
                           ? 0
                           : BATON_EMALFORMED;
        }
        if (h.type == PROTO_RESULT) {
                return proto_read_result(body, h.length, 0, &f->res) == 0
                           ? 0
                           : BATON_EMALFORMED;
        }
        return BATON_EMALFORMED; /* an ERROR, or anything else */
}

/* Connect `c` to node `id` alone. */
static bool connect_to(struct ctx *x, struct tclient *c, unsigned id, int line)
{
        if (tclient_connect(c, harness_client_address(&x->h, id), OP_MS) != 0) {
                fail_at(x, line, "connect to node %u: %s", id, c->errmsg);
                return false;
        }
        return true;
}

/* WATCH `name` (frame `id`) from `from` ({0, 0}: from now) on `c`,
 * answered `want`: when 0, a RESULT of kind WATCHING, whose position goes
 * to `*at`. */
static bool watch_open(struct ctx *x, struct tclient *c, uint64_t id,
                       const char *name, struct wpos from, int want,
                       struct wpos *at, int line)
{
        struct proto_watch req = {
            0, from.index, from.ord, {name, (uint8_t)strlen(name)}};
        uint8_t out[PROTO_HEADER_SIZE + 300];
        size_t len = proto_write_watch(out, sizeof out, id, &req);
        struct wframe f;
        int rv;

        rv = len == 0 ? BATON_ENAME : tclient_raw_send(c, out, len, OP_MS);
        if (rv == 0) {
                rv = recv_frame(c, OP_MS, &f);
        }
        if (rv != 0 || f.is_event || f.id != id || f.res.status != want ||
            (want == 0 && f.res.kind != PROTO_KIND_WATCHING)) {
                fail_at(x, line,
                        "WATCH %s from (%" PRIu64 ",%u): %d, status %d kind "
                        "%u, want %d (%s)",
                        name, from.index, from.ord, rv, f.res.status,
                        f.res.kind, want, c->errmsg);
                return false;
        }
        if (at != NULL) {
                *at = (struct wpos){f.res.index, (uint32_t)f.res.count};
        }
        return true;
}

/* The next frame on `c` must be an event of watch `id` (or of id 0, an
 * event for every watch of the connection), of `kind` with `token`, after
 * `*at`, which it then becomes. */
static bool expect_event(struct ctx *x, struct tclient *c, uint64_t id,
                         const char *what, uint8_t kind, uint64_t token,
                         struct wpos *at, int line)
{
        struct wframe f;
        int rv = recv_frame(c, OP_MS, &f);

        if (rv != 0 || !f.is_event || (f.id != id && f.id != 0)) {
                fail_at(x, line,
                        "%s: want an event of token %" PRIu64 ", got %d "
                        "%s status %d (%s)",
                        what, token, rv, f.is_event ? "event" : "RESULT",
                        f.res.status, c->errmsg);
                return false;
        }
        if (f.ev.kind != kind || f.ev.token != token ||
            f.ev.index < at->index ||
            (f.ev.index == at->index && f.ev.ord <= at->ord)) {
                fail_at(x, line,
                        "%s: event kind %u token %" PRIu64 " at (%" PRIu64
                        ",%u) after (%" PRIu64 ",%u); want kind %u token "
                        "%" PRIu64,
                        what, f.ev.kind, f.ev.token, f.ev.index, f.ev.ord,
                        at->index, at->ord, kind, token);
                return false;
        }
        *at = (struct wpos){f.ev.index, f.ev.ord};
        return true;
}

/* The scenario's clients and what the name went through. */
struct restore_run {
        struct tclient writer;
        struct tclient on_f; /* watches on the follower that falls behind */
        struct tclient on_g; /* a watch on a follower that keeps up */
        char name[64];
        unsigned leader;
        unsigned f; /* paused while the leader snapshots */
        unsigned g;
        bool paused;
        uint64_t held; /* the writer's grant, 0 when the name is free */
        /* Every event of the name since the watches opened, in log order;
         * the watch on g is told each (g_told of them so far). */
        uint8_t kind[MAX_EVENTS];
        uint64_t token[MAX_EVENTS];
        unsigned n_events;
        unsigned g_told;
        struct wpos g_at;
};

/* One entry: the writer acquires the name, or releases it if it holds it;
 * the event it makes is noted. */
static bool step(struct ctx *x, struct restore_run *r, int line)
{
        unsigned n = r->n_events;

        if (n == MAX_EVENTS) {
                fail_at(x, line, "more than %u events", MAX_EVENTS);
                return false;
        }
        if (r->held != 0) {
                if (!released(x, &r->writer, r->name, r->held, line)) {
                        return false;
                }
                r->kind[n] = PROTO_EVENT_RELEASED;
                r->token[n] = r->held;
                r->held = 0;
        } else {
                r->held = granted(x, &r->writer, r->name, 1000, line);
                if (r->held == 0) {
                        return false;
                }
                r->kind[n] = PROTO_EVENT_GRANTED;
                r->token[n] = r->held;
        }
        r->n_events++;
        return true;
}

/* Watch `id` on `c` is told the events from the `from`-th on, after
 * `*at`, which becomes the last one's position. */
static bool told(struct ctx *x, struct restore_run *r, struct tclient *c,
                 uint64_t id, unsigned from, struct wpos *at, int line)
{
        unsigned i;

        for (i = from; i < r->n_events; i++) {
                if (!expect_event(x, c, id, c == &r->on_g ? "on g" : "on f",
                                  r->kind[i], r->token[i], at, line)) {
                        return false;
                }
        }
        return true;
}

/* The follower that keeps up has been told every event so far. */
static bool g_caught_up(struct ctx *x, struct restore_run *r, int line)
{
        if (!told(x, r, &r->on_g, 1, r->g_told, &r->g_at, line)) {
                return false;
        }
        r->g_told = r->n_events;
        return true;
}

/* Entries until the leader's last snapshot is (`at_snapshot`) or is not
 * at its last index, so that the snapshot a follower installs has no
 * entry after it, or has some. Raft takes a snapshot after the entry that
 * made it due, on a later turn of the leader's loop: once one is due, no
 * entry is made until it is taken. */
static bool end_entries(struct ctx *x, struct restore_run *r, bool at_snapshot,
                        int line)
{
        int64_t due_since = 0;
        double snap, last;
        unsigned steps = 0;

        for (;;) {
                if (!metric(x, r->leader, "baton_snapshot_index", &snap,
                            line) ||
                    !metric(x, r->leader, "baton_raft_last_index", &last,
                            line)) {
                        return false;
                }
                if ((snap == last) == at_snapshot) {
                        return true;
                }
                if (at_snapshot && last - snap >= SNAPSHOT_EVERY) {
                        if (due_since == 0) {
                                due_since = tclient_now_ms();
                        }
                        if (tclient_now_ms() - due_since < OP_MS) {
                                poll_pause();
                                continue;
                        }
                        fail_at(x, line,
                                "the leader took no snapshot at %.0f (its "
                                "last, %.0f)",
                                last, snap);
                        return false;
                }
                if (steps++ == MAX_STEPS) {
                        fail_at(x, line,
                                "no snapshot of the leader's at its last "
                                "index after %u entries (%.0f, %.0f)",
                                MAX_STEPS, snap, last);
                        return false;
                }
                if (!step(x, r, line)) {
                        return false;
                }
        }
}

/* f has applied the leader's last entry and restores nothing: it may
 * have ended its watches after a first snapshot and install another (the
 * leader sent one while f was paused, and a newer one when f answered). */
static bool f_caught_up(struct ctx *x, struct restore_run *r, int line)
{
        int64_t deadline = tclient_now_ms() + HEALTHY_MS;
        double last, applied, restoring;

        if (!metric(x, r->leader, "baton_raft_last_index", &last, line)) {
                return false;
        }
        do {
                if (!metric(x, r->f, "baton_raft_applied_index", &applied,
                            line) ||
                    !metric(x, r->f, "baton_snapshot_restoring", &restoring,
                            line)) {
                        return false;
                }
                if (applied >= last && restoring == 0) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < deadline);
        fail_at(x, line, "node %u applied %.0f of the leader's %.0f", r->f,
                applied, last);
        return false;
}

/* What ended_compacted() saw. */
enum resumed { RESUMED_FAILED, RESUMED_COMPACTED, RESUMED_NO_SNAPSHOT };

/* After f resumed: its watch `id`, which had been told the events up to
 * the `next`-th (the last at `*at`), is told those f applied before its
 * first restore (the leader's messages f had received before it was
 * paused), each the next one, then the end, BATON_ECOMPACTED: never an
 * event past the gap. Or, when the leader had sent f every entry of the
 * pause before f stopped reading (raft sends a follower in pipeline mode
 * each entry as it is made, and a busy machine can make the whole pause
 * fit in f's socket), the watch is told them all and f installs no
 * snapshot: RESUMED_NO_SNAPSHOT, `*at` its last event, to pause again. */
static enum resumed ended_compacted(struct ctx *x, struct restore_run *r,
                                    uint64_t id, unsigned next, struct wpos *at,
                                    bool at_snapshot, double restores, int line)
{
        unsigned prefix = 0;
        struct wframe fr;
        double now;
        int rv;

        while ((rv = recv_frame(
                    &r->on_f, next == r->n_events ? QUIET_MS * 10 : HEALTHY_MS,
                    &fr)) == 0 &&
               fr.is_event) {
                if (next == r->n_events ||
                    !(fr.ev.kind == r->kind[next] &&
                      fr.ev.token == r->token[next] &&
                      (fr.ev.index > at->index ||
                       (fr.ev.index == at->index && fr.ev.ord > at->ord)))) {
                        fail_at(x, line,
                                "watch %" PRIu64 " on node %u: told kind %u "
                                "token %" PRIu64 " at (%" PRIu64 ",%u) after "
                                "%u events of the pause; the next is kind %u "
                                "token %" PRIu64 ": a gap",
                                id, r->f, fr.ev.kind, fr.ev.token, fr.ev.index,
                                fr.ev.ord, prefix, r->kind[next],
                                r->token[next]);
                        return RESUMED_FAILED;
                }
                *at = (struct wpos){fr.ev.index, fr.ev.ord};
                next++;
                prefix++;
        }
        if (rv == BATON_ENOANSWER && next == r->n_events) {
                if (!metric(x, r->f, "baton_snapshot_restores_total", &now,
                            line)) {
                        return RESUMED_FAILED;
                }
                if (now == restores) {
                        printf("# watch %" PRIu64 " on node %u: told all %u "
                               "events of the pause, no snapshot needed; "
                               "pausing again\n",
                               id, r->f, prefix);
                        return RESUMED_NO_SNAPSHOT;
                }
        }
        if (rv != 0 || fr.id != id || fr.res.status != BATON_ECOMPACTED) {
                fail_at(x, line,
                        "watch %" PRIu64 " on node %u after it installed "
                        "the leader's snapshot (%s): want RESULT "
                        "ECOMPACTED after %u events, got %s (id %" PRIu64
                        ", status %d)",
                        id, r->f,
                        at_snapshot ? "no entry after it" : "entries after it",
                        prefix, rv != 0 ? "nothing" : "a RESULT", fr.id,
                        fr.res.status);
                return RESUMED_FAILED;
        }
        printf("# watch %" PRIu64 " on node %u: %u of the %u events made "
               "while it was paused, then ECOMPACTED\n",
               id, r->f, prefix, r->n_events - r->g_told);
        return RESUMED_COMPACTED;
}

/* Pause f while the leader makes BEHIND_ENTRIES entries and more (see
 * end_entries()), then resume it. */
static bool pause_through(struct ctx *x, struct restore_run *r,
                          bool at_snapshot, int line)
{
        if (harness_pause(&x->h, r->f) != 0) {
                fail_at(x, line, "%s", x->h.errmsg);
                return false;
        }
        r->paused = true;
        for (unsigned i = 0; i < BEHIND_ENTRIES; i++) {
                if (!step(x, r, line)) {
                        return false;
                }
        }
        if (!end_entries(x, r, at_snapshot, line)) {
                return false;
        }
        if (harness_resume(&x->h, r->f) != 0) {
                fail_at(x, line, "%s", x->h.errmsg);
                return false;
        }
        r->paused = false;
        return true;
}

/*
 * Pause f while the leader makes BEHIND_ENTRIES entries and more (see
 * end_entries()), snapshotting every 64, then resume it: it must install
 * a snapshot, and its watch `id` (told everything before the pause, the
 * last at `at`) ends BATON_ECOMPACTED after what f applied in order; also
 * when no entry follows the snapshot for f to apply (`at_snapshot`). A
 * pause that f came through on the entries already in its socket, its
 * watch told every one, is tried again, up to PAUSE_TRIES times.
 */
static bool fall_behind(struct ctx *x, struct restore_run *r, uint64_t id,
                        struct wpos at, bool at_snapshot, int line)
{
        enum resumed how = RESUMED_NO_SNAPSHOT;
        double before, now;
        unsigned next;

        for (unsigned tries = 0; how == RESUMED_NO_SNAPSHOT; tries++) {
                if (tries == PAUSE_TRIES) {
                        fail_at(x, line,
                                "node %u needed no snapshot after %u pauses",
                                r->f, tries);
                        return false;
                }
                next = r->n_events;
                if (!metric(x, r->f, "baton_snapshot_restores_total", &before,
                            line) ||
                    !pause_through(x, r, at_snapshot, line)) {
                        return false;
                }
                how = ended_compacted(x, r, id, next, &at, at_snapshot, before,
                                      line);
                if (how == RESUMED_FAILED ||
                    (how == RESUMED_NO_SNAPSHOT && !g_caught_up(x, r, line))) {
                        return false;
                }
        }
        if (!metric(x, r->f, "baton_snapshot_restores_total", &now, line)) {
                return false;
        }
        if (now <= before) {
                fail_at(x, line, "node %u installed no snapshot", r->f);
                return false;
        }
        return f_caught_up(x, r, line) && g_caught_up(x, r, line);
}

/* Watch `id` on f from now, and two events it must be told. */
static bool fresh_watch(struct ctx *x, struct restore_run *r, uint64_t id,
                        struct wpos *at, int line)
{
        unsigned from = r->n_events;

        return watch_open(x, &r->on_f, id, r->name, (struct wpos){0, 0}, 0, at,
                          line) &&
               step(x, r, line) && step(x, r, line) &&
               told(x, r, &r->on_f, id, from, at, line) &&
               g_caught_up(x, r, line);
}

static void watch_restore_run(struct ctx *x, struct restore_run *r)
{
        struct tclient_result res;
        struct wpos at, mid;
        struct wframe fr;
        unsigned from;

        EXPECT(x, restart_all(x, small_snapshots, 4, __LINE__),
               "small snapshots");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &r->leader) == 0,
               "%s", x->h.errmsg);
        r->f = a_follower(x, r->leader);
        for (r->g = 1; r->g == r->leader || r->g == r->f; r->g++) {
        }
        EXPECT(x,
               tclient_session_open(&r->writer, WRITER_MS, "integration", OP_MS,
                                    &res) == 0 &&
                   res.kind == PROTO_KIND_OPENED,
               "OPEN: %s (%s)", rs(x, &res), r->writer.errmsg);
        EXPECT(x,
               connect_to(x, &r->on_f, r->f, __LINE__) &&
                   connect_to(x, &r->on_g, r->g, __LINE__) &&
                   watch_open(x, &r->on_g, 1, r->name, (struct wpos){0, 0}, 0,
                              &r->g_at, __LINE__),
               "watch on node %u", r->g);
        /* A snapshot with nothing after it: only its restore can end the
         * watch; then one with entries after it, which the node applies
         * before it says it has restored. */
        EXPECT(x, fresh_watch(x, r, 1, &at, __LINE__), "watch 1");
        EXPECT(x, fall_behind(x, r, 1, at, true, __LINE__),
               "snapshot at the end");
        /* Its client reads again: from where it was, refused. */
        EXPECT(x,
               watch_open(x, &r->on_f, 2, r->name, at, BATON_ECOMPACTED, NULL,
                          __LINE__),
               "resume from before the snapshot");
        EXPECT(x, fresh_watch(x, r, 3, &at, __LINE__), "watch 3");
        EXPECT(x, fall_behind(x, r, 3, at, false, __LINE__),
               "snapshot with entries after it");
        /* From now on the restored node, and resumed from an event it
         * applied itself: gapless. */
        EXPECT(x, fresh_watch(x, r, 4, &at, __LINE__), "watch 4");
        mid = at;
        from = r->n_events;
        EXPECT(
            x,
            step(x, r, __LINE__) &&
                told(x, r, &r->on_f, 4, from, &at, __LINE__) &&
                watch_open(x, &r->on_f, 5, r->name, mid, 0, NULL, __LINE__) &&
                told(x, r, &r->on_f, 5, from, &mid, __LINE__),
            "resumed on node %u from an event it applied", r->f);
        from = r->n_events;
        EXPECT(x,
               step(x, r, __LINE__) &&
                   told(x, r, &r->on_f, 4, from, &at, __LINE__) &&
                   g_caught_up(x, r, __LINE__),
               "the last release");
        EXPECT(x, recv_frame(&r->on_f, QUIET_MS, &fr) == BATON_ENOANSWER,
               "an extra frame on node %u's connection", r->f);
}

void sc_watch_restore(struct ctx *x)
{
        struct restore_run *r = calloc(1, sizeof *r);

        EXPECT(x, r != NULL, "out of memory");
        lock_name(x, r->name, sizeof r->name, "restore");
        /* Every client on every endpoint; the watches' connect to one. */
        if (tclient_init(&r->writer, x->h.endpoints) != 0 ||
            tclient_init(&r->on_f, x->h.endpoints) != 0 ||
            tclient_init(&r->on_g, x->h.endpoints) != 0) {
                fail_at(x, __LINE__, "tclient_init(%s)", x->h.endpoints);
                free(r);
                return;
        }
        watch_restore_run(x, r);
        if (r->paused) {
                (void)harness_resume(&x->h, r->f);
        }
        tclient_close(&r->on_f);
        tclient_close(&r->on_g);
        tclient_close(&r->writer);
        free(r);
        /* The next scenarios run with the default snapshots. */
        (void)restart_all(x, NULL, 0, __LINE__);
}
