/*
 * chaos-worker: one client worker process of the chaos suite
 * (docs/chaos.md). It runs one workload against the cluster through
 * libbaton and records every operation in its history file; it never
 * gives up on the cluster, however long it is away.
 *
 *     chaos-worker --id J --endpoints E --history FILE
 *         --workload counter|mutex|fifo|session|rwlock|semaphore|transfers|
 *                    election|hold
 *         --keys N --ttl MS
 *         --seed S [--register PATH] --final-file PATH [--epoch-ms 10000]
 *         [--epoch-base-ns T] [--request-timeout MS] [--bug-writer-shared]
 *         [--bug-one-lock]
 *
 * --bug-writer-shared breaks the rwlock workload on purpose, for a negative
 * control: its writers take the read lock (baton_acquire_shared()) and
 * still enter the register as writers, so readers are inside with them.
 * --bug-one-lock breaks the transfers workload the same way: each transfer
 * takes only its source account's lock (baton_acquire()) and still writes
 * both accounts, so two transfers in opposite directions overlap.
 *
 * The election workload's workers campaign for election-K (K = id mod
 * KEYS) and, while leading, write their leadership's token to the
 * register; each also runs an observer (observe.h), a thread with a
 * handle of its own that watches election-K and records every event.
 *
 * The hold workload's workers run the counter's round on hold-K with a hold
 * time (HOLD_MIN_MS to HOLD_MAX_MS): now and then one extends it halfway,
 * and one round in four the holder stalls past its hold before it
 * writes, so that the cluster ends its grant (EXPIRE_HOLD) and the
 * register must refuse its write once a successor has used the lock.
 *
 * Once --final-file exists it releases what it holds, does one acquire and
 * release of its key marked phase=final (retrying for up to 15 s), closes
 * its session and exits 0. SIGTERM: stop after the current operation,
 * close, exit 0.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "history_out.h"
#include "observe.h"
#include "ops.h"
#include "workerargs.h"

#define NS_PER_MS         UINT64_C(1000000)
#define FINAL_BUDGET_MS   15000 /* L1: acquire + release within 15 s */
#define FINAL_WAIT_MS     10000
#define COUNTER_WAIT_MS   2000
#define FIFO_WAIT_MS      8000
#define SESSION_WAIT_MS   2000
#define SESSION_POLL_MS   200
#define RWLOCK_WAIT_MS    2000
#define RWLOCK_WRITERS    4 /* one operation in this many is a writer's */
#define SEMAPHORE_WAIT_MS 2000
/* The permits of each semaphore of the semaphore workload: the pool's
 * slots, of which a holder takes one. With its default of 4 workers, two
 * wait while two hold; batond-overgrant lets a third in. */
#define SEMAPHORE_PERMITS 2
#define TRANSFERS_WAIT_MS 2000
#define TRANSFERS_MAX                                                          \
        100 /* moved at most per transfer (and at most                         \
               the source's balance) */
#define ELECTION_WAIT_MS 2000
#define ELECTION_PROCLAIMS                                                     \
        2 /* one leadership in this many proclaims a                           \
             new value */
#define HOLD_WAIT_MS 3000
#define HOLD_MIN_MS  400
#define HOLD_MAX_MS  1500
/* A stalled holder outlives its hold by at least this much, past
 * chaos-check's bound (CHECK_HOLD_SLACK_MS, 1 s) with room to spare: a
 * cluster that does not end the grant then fails S17. */
#define HOLD_STALL_MIN_MS  1500
#define HOLD_STALL_MAX_MS  2500
#define REGISTER_TIMEOUT   5000 /* ms for one register answer */
#define MUTEX_THINK_MIN_MS 5    /* pause between mutex operations */
#define MUTEX_THINK_MAX_MS 25

struct worker {
        struct config cfg;
        struct ops_worker ops;
        uint64_t rng;
        uint64_t next_release_ns; /* session workload */
        uint64_t campaigns;       /* election workload: for the values */
        struct observer observer; /* election workload */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

/* splitmix64: one seed, one sequence. */
static uint64_t rnd(struct worker *w)
{
        uint64_t z = (w->rng += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* Uniform enough in [lo, hi]. */
static uint64_t rnd_in(struct worker *w, uint64_t lo, uint64_t hi)
{
        return lo + rnd(w) % (hi - lo + 1);
}

/* Sleep `ms`, cut short by SIGTERM. */
static void nap(uint64_t ms)
{
        struct timespec ts = {.tv_sec = (time_t)(ms / 1000),
                              .tv_nsec = (long)(ms % 1000) * 1000000};

        while (!stop && nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
}

static bool final_requested(const struct worker *w)
{
        return access(w->cfg.final_file, F_OK) == 0;
}

static uint64_t epoch_now(const struct worker *w)
{
        uint64_t now = history_now_ns();

        if (now < w->cfg.epoch_base_ns) {
                return 0;
        }
        return (now - w->cfg.epoch_base_ns) / (w->cfg.epoch_ms * NS_PER_MS);
}

/* The pause after a failure or an unknown outcome: the cluster may be
 * away for long, so retry, but not in a tight loop. */
static void back_off(struct worker *w, enum ops_outcome o)
{
        if (o == OPS_INFO) {
                nap(rnd_in(w, 50, 150));
        } else if (o == OPS_FAIL) {
                nap(rnd_in(w, 5, 30));
        }
}

static void release_held(struct worker *w)
{
        if (w->ops.holding) {
                back_off(w, ops_release(&w->ops, false));
        }
}

/* The lock each worker acquires and releases in the final phase. */
static void final_key(struct worker *w, char *key, size_t cap)
{
        const struct config *c = &w->cfg;

        switch (c->workload) {
        case WL_COUNTER:
                snprintf(key, cap, "counter-%u", (unsigned)c->id % c->keys);
                break;
        case WL_MUTEX:
                snprintf(key, cap, "mutex-%u-%" PRIu64,
                         (unsigned)c->id % c->keys, epoch_now(w));
                break;
        case WL_FIFO:
                snprintf(key, cap, "fifo-%" PRIu64, epoch_now(w));
                break;
        case WL_SESSION:
                snprintf(key, cap, "session-%d", c->id);
                break;
        case WL_RWLOCK:
                snprintf(key, cap, "rwlock-%u", (unsigned)c->id % c->keys);
                break;
        case WL_SEMAPHORE:
                snprintf(key, cap, "sem-%u", (unsigned)c->id % c->keys);
                break;
        case WL_TRANSFERS:
                snprintf(key, cap, "acct-%u", (unsigned)c->id % c->keys);
                break;
        case WL_ELECTION:
                snprintf(key, cap, "election-%u", (unsigned)c->id % c->keys);
                break;
        case WL_HOLD:
                snprintf(key, cap, "hold-%u", (unsigned)c->id % c->keys);
                break;
        }
}

/* The end of a counter round: the fenced write of `value` + 1 based on
 * `version`, then the release (after a write of unknown outcome, the
 * close that follows releases). */
static void write_then_release(struct worker *w, const char *key,
                               uint64_t value, uint64_t version)
{
        if (ops_write(&w->ops, key, value + 1, version) == OPS_INFO) {
                back_off(w, OPS_INFO);
                return;
        }
        if (!stop) {
                release_held(w);
        }
}

/* acquire → fenced read → sleep → fenced write (+1) → release. */
static void counter_step(struct worker *w)
{
        char key[OPS_KEY_CAP];
        uint64_t value = 0, version = 0;
        enum ops_outcome o;

        snprintf(key, sizeof key, "counter-%u",
                 (unsigned)w->cfg.id % w->cfg.keys);
        o = ops_acquire(&w->ops, key, COUNTER_WAIT_MS, false);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        if (stop) {
                return; /* the close at exit releases it */
        }
        o = ops_read(&w->ops, key, OPS_PLAIN, &value, &version);
        if (o == OPS_INFO) {
                back_off(w, o); /* the close released the lock */
                return;
        }
        if (o != OPS_OK || stop) {
                if (!stop) {
                        release_held(w);
                }
                return;
        }
        nap(rnd_in(w, 0, 20));
        write_then_release(w, key, value, version);
}

/* The counter's round with a hold time: acquire with a hold → fenced
 * read → (one round in four) stall past the hold, or (one in four) extend
 * halfway, else a short nap → fenced write (+1) → release, which fails
 * when the cluster ended the grant. */
static void hold_step(struct worker *w)
{
        char key[OPS_KEY_CAP];
        uint64_t value = 0, version = 0, hold, kind;
        enum ops_outcome o;

        snprintf(key, sizeof key, "hold-%u", (unsigned)w->cfg.id % w->cfg.keys);
        hold = rnd_in(w, HOLD_MIN_MS, HOLD_MAX_MS);
        o = ops_acquire_hold(&w->ops, key, HOLD_WAIT_MS, (uint32_t)hold);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        o = stop ? OPS_FAIL
                 : ops_read(&w->ops, key, OPS_PLAIN, &value, &version);
        if (o != OPS_OK) {
                if (o == OPS_INFO) {
                        back_off(w, o); /* the close released the lock */
                } else if (!stop) {
                        release_held(w);
                }
                return;
        }
        kind = rnd(w) % 4;
        if (kind == 0) {
                nap(hold + rnd_in(w, HOLD_STALL_MIN_MS, HOLD_STALL_MAX_MS));
        } else if (kind == 1) {
                nap(hold / 2);
                hold = rnd_in(w, HOLD_MIN_MS, HOLD_MAX_MS);
                if (stop || ops_extend(&w->ops, (uint32_t)hold) == OPS_INFO) {
                        return;
                }
                nap(rnd_in(w, 0, hold / 4));
        } else {
                nap(rnd_in(w, 0, hold / 4));
        }
        if (!stop) {
                write_then_release(w, key, value, version);
        }
}

/* The value a candidate advertises: "wJ.I.N" (worker, incarnation, its
 * Nth campaign), one per leadership, so that an observer's event names
 * which one it is; `suffix` (a proclaim's ".p") appended. */
static void candidate_value(struct worker *w, char *out, size_t cap,
                            const char *suffix)
{
        snprintf(out, cap, "w%d.%u.%" PRIu64 "%s", w->cfg.id,
                 w->ops.incarnation, w->campaigns, suffix);
}

/* campaign → fenced READ → sleep 0–20 ms → fenced WRITE of the
 * leadership's token → now and then a proclaim → resign: the counter's
 * round with a leadership for the lock. A refusal (STALE) skips to the
 * resignation. */
static void election_step(struct worker *w)
{
        char key[OPS_KEY_CAP], value[64];
        uint64_t v = 0, version = 0;
        enum ops_outcome o;

        final_key(w, key, sizeof key);
        w->campaigns++;
        candidate_value(w, value, sizeof value, "");
        o = ops_campaign(&w->ops, key, ELECTION_WAIT_MS, value, false);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        if (stop) {
                return; /* the close at exit ends the leadership */
        }
        o = ops_read(&w->ops, key, OPS_PLAIN, &v, &version);
        if (o == OPS_INFO) {
                back_off(w, o); /* the close ended the leadership */
                return;
        }
        if (o == OPS_OK && !stop) {
                nap(rnd_in(w, 0, 20));
                o = ops_write(&w->ops, key, w->ops.token, version);
                if (o == OPS_INFO) {
                        back_off(w, o);
                        return;
                }
        }
        if (o == OPS_OK && !stop && rnd_in(w, 1, ELECTION_PROCLAIMS) == 1) {
                candidate_value(w, value, sizeof value, ".p");
                o = ops_proclaim(&w->ops, value);
                if (o == OPS_INFO) {
                        back_off(w, o);
                        return;
                }
        }
        if (!stop) {
                release_held(w);
        }
}

/* A reader (most of the time) or a writer on a random key: acquire in the
 * mode → enter the register → a writer sleeps and writes (+1), a reader
 * reads and sleeps → leave → release. A refusal by the register (the
 * holder was fenced out) skips to the release. */
static void rwlock_step(struct worker *w)
{
        bool writer = rnd_in(w, 0, RWLOCK_WRITERS - 1) == 0;
        enum ops_mode mode = writer ? OPS_WRITER : OPS_READER;
        char key[OPS_KEY_CAP];
        uint64_t value = 0, version = 0;
        enum ops_outcome o;

        snprintf(key, sizeof key, "rwlock-%" PRIu64,
                 rnd_in(w, 0, w->cfg.keys - 1));
        /* The negative control: a writer holding only the read lock. */
        o = ops_acquire_rw(&w->ops, key, RWLOCK_WAIT_MS,
                           writer && w->cfg.bug_writer_shared ? OPS_READER
                                                              : mode);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        if (stop) {
                return; /* the close at exit releases it */
        }
        o = ops_enter(&w->ops, key, mode, &value, &version);
        if (o == OPS_OK && !stop) {
                if (writer) {
                        nap(rnd_in(w, 0, 20));
                        o = ops_write(&w->ops, key, value + 1, version);
                } else {
                        o = ops_read(&w->ops, key, mode, &value, &version);
                        if (o == OPS_OK) {
                                nap(rnd_in(w, 0, 20));
                        }
                }
                if (o == OPS_OK && !stop) {
                        o = ops_leave(&w->ops, key, mode);
                }
        }
        if (o == OPS_INFO) {
                back_off(w, o); /* the close released the lock */
                return;
        }
        if (!stop) {
                release_held(w);
        }
}

/* A holder of one permit of a semaphore on a random key, using a pool of
 * SEMAPHORE_PERMITS slots: acquire → enter the register → sleep → read →
 * leave → release. The holders inside share the pool, so none writes: a
 * read-modify-write of one value by two legitimate holders would lose
 * updates by design. A refusal by the register (the holder's grant
 * ended) skips to the release. */
static void semaphore_step(struct worker *w)
{
        char key[OPS_KEY_CAP];
        uint64_t value = 0, version = 0;
        enum ops_outcome o;

        snprintf(key, sizeof key, "sem-%" PRIu64,
                 rnd_in(w, 0, w->cfg.keys - 1));
        o = ops_acquire_sem(&w->ops, key, SEMAPHORE_WAIT_MS, SEMAPHORE_PERMITS,
                            1, false);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        if (stop) {
                return; /* the close at exit releases it */
        }
        o = ops_enter(&w->ops, key, OPS_SEM, &value, &version);
        if (o == OPS_OK && !stop) {
                nap(rnd_in(w, 0, 20));
                o = ops_read(&w->ops, key, OPS_SEM, &value, &version);
                if (o == OPS_OK && !stop) {
                        o = ops_leave(&w->ops, key, OPS_SEM);
                }
        }
        if (o == OPS_INFO) {
                back_off(w, o); /* the close released the permit */
                return;
        }
        if (!stop) {
                release_held(w);
        }
}

/* One transfer inside its locks, between the accounts `names` (in the
 * order the multi-lock named them; `src` is the source's index): enter
 * both (their balances, fenced by the token) → sleep → write both (the
 * amount moved from the source to the destination) → leave both. Stops at
 * the first refusal (STALE) or unknown outcome; once it has written one
 * account it writes the other even after a SIGTERM, so that only a
 * refusal leaves a transfer half done. */
static enum ops_outcome transfer(struct worker *w, const char *const *names,
                                 int src)
{
        uint64_t value[2] = {0, 0}, version[2] = {0, 0}, amount;
        enum ops_outcome o = OPS_OK;
        int i;

        for (i = 0; i < 2 && o == OPS_OK; i++) {
                o = ops_enter(&w->ops, names[i], OPS_WRITER, &value[i],
                              &version[i]);
        }
        if (o != OPS_OK) {
                return o;
        }
        nap(rnd_in(w, 0, 20));
        if (stop) {
                return OPS_OK; /* the close at exit releases the locks */
        }
        amount = rnd_in(w, 1, TRANSFERS_MAX);
        if (amount > value[src]) {
                amount = value[src];
        }
        value[src] -= amount;
        value[1 - src] += amount;
        for (i = 0; i < 2 && o == OPS_OK; i++) {
                o = ops_write(&w->ops, names[i], value[i], version[i]);
        }
        for (i = 0; i < 2 && o == OPS_OK && !stop; i++) {
                o = ops_leave(&w->ops, names[i], OPS_WRITER);
        }
        return o;
}

/* A transfer between two random accounts acct-I (I < KEYS): a multi-lock
 * of both, named in a random order (a deadlock between transfers in
 * opposite directions would show), then transfer() → release. With
 * --bug-one-lock it takes only the source's lock. */
static void transfers_step(struct worker *w)
{
        char key[2][OPS_KEY_CAP];
        const char *names[2];
        uint64_t a = rnd_in(w, 0, w->cfg.keys - 1);
        uint64_t b = rnd_in(w, 0, w->cfg.keys - 2);
        int src = (int)rnd_in(w, 0, 1); /* the source's index in names */
        enum ops_outcome o;

        b += b >= a; /* another account than a */
        snprintf(key[0], sizeof key[0], "acct-%" PRIu64, a);
        snprintf(key[1], sizeof key[1], "acct-%" PRIu64, b);
        names[0] = key[0];
        names[1] = key[1];
        o = w->cfg.bug_one_lock
                ? ops_acquire(&w->ops, names[src], TRANSFERS_WAIT_MS, false)
                : ops_acquire_multi(&w->ops, names, 2, TRANSFERS_WAIT_MS,
                                    false);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        if (stop) {
                return; /* the close at exit releases it */
        }
        o = transfer(w, names, src);
        if (o == OPS_INFO) {
                back_off(w, o); /* the close released the locks */
                return;
        }
        if (!stop) {
                release_held(w);
        }
}

/* The final phase's acquire of `key`: a semaphore's permit for the
 * semaphore workload (its name is no lock), a multi-lock of `key` and the
 * next account for the transfers workload, a campaign for the election
 * workload, else the lock. */
static enum ops_outcome final_acquire(struct worker *w, const char *key,
                                      int64_t wait_ms)
{
        char next[OPS_KEY_CAP];
        const char *names[2] = {key, next};

        if (w->cfg.workload == WL_SEMAPHORE) {
                return ops_acquire_sem(&w->ops, key, wait_ms, SEMAPHORE_PERMITS,
                                       1, true);
        }
        if (w->cfg.workload == WL_TRANSFERS) {
                snprintf(next, sizeof next, "acct-%u",
                         ((unsigned)w->cfg.id + 1) % w->cfg.keys);
                return ops_acquire_multi(&w->ops, names, 2, wait_ms, true);
        }
        if (w->cfg.workload == WL_ELECTION) {
                w->campaigns++;
                candidate_value(w, next, sizeof next, "");
                return ops_campaign(&w->ops, key, wait_ms, next, true);
        }
        return ops_acquire(&w->ops, key, wait_ms, true);
}

/* Try and blocking acquires, holder queries, releases and now and then a
 * session close, on the keys of the current epoch. */
static void mutex_step(struct worker *w)
{
        struct ops_worker *ops = &w->ops;
        uint64_t epoch, r;
        char key[OPS_KEY_CAP];
        enum ops_outcome o;

        /* A pause between operations keeps the ops per key modest, so
         * that each key's history stays checkable. */
        nap(rnd_in(w, MUTEX_THINK_MIN_MS, MUTEX_THINK_MAX_MS));
        if (stop) {
                return;
        }
        epoch = epoch_now(w);
        r = rnd_in(w, 0, 99);
        if (ops->holding && ops->held_epoch != epoch) {
                release_held(w); /* before moving to the new epoch's keys */
                return;
        }
        if (rnd_in(w, 0, 49) == 0) {
                ops_close(ops, history_now_ns(), false);
                return;
        }
        if (ops->holding) {
                if (r < 30) {
                        back_off(w, ops_holder(ops, ops->held, NULL));
                } else {
                        release_held(w);
                }
                return;
        }
        snprintf(key, sizeof key, "mutex-%" PRIu64 "-%" PRIu64,
                 rnd_in(w, 0, w->cfg.keys - 1), epoch);
        if (r < 80) {
                o = ops_acquire(ops, key, r < 45 ? 0 : rnd_in(w, 500, 1500),
                                false);
                if (o == OPS_OK) {
                        ops->held_epoch = epoch;
                        nap(rnd_in(w, 0, 30));
                } else {
                        back_off(w, o);
                }
        } else {
                back_off(w, ops_holder(ops, key, NULL));
        }
}

/* Many waiters queued on one lock per epoch. */
static void fifo_step(struct worker *w)
{
        char key[OPS_KEY_CAP];
        enum ops_outcome o;

        snprintf(key, sizeof key, "fifo-%" PRIu64, epoch_now(w));
        o = ops_acquire(&w->ops, key, FIFO_WAIT_MS, false);
        if (o != OPS_OK) {
                back_off(w, o);
                return;
        }
        nap(rnd_in(w, 5, 30));
        if (!stop) {
                release_held(w);
        }
}

/* Hold session-J, checking every ~200 ms that it is still ours; release
 * and re-acquire it every few seconds. */
static void session_step(struct worker *w)
{
        struct ops_worker *ops = &w->ops;
        struct baton_holder hd;
        char key[OPS_KEY_CAP];
        enum ops_outcome o;

        snprintf(key, sizeof key, "session-%d", w->cfg.id);
        if (!ops->holding) {
                o = ops_acquire(ops, key, SESSION_WAIT_MS, false);
                if (o == OPS_OK) {
                        w->next_release_ns = history_now_ns() +
                                             rnd_in(w, 2000, 5000) * NS_PER_MS;
                } else {
                        back_off(w, o);
                }
                return;
        }
        nap(rnd_in(w, SESSION_POLL_MS - 50, SESSION_POLL_MS + 50));
        if (stop) {
                return;
        }
        if (history_now_ns() >= w->next_release_ns) {
                release_held(w);
                return;
        }
        o = ops_holder(ops, key, &hd);
        if (o == OPS_OK && (!hd.held || hd.session != ops->held_session ||
                            hd.token != ops->token)) {
                fprintf(stderr,
                        "chaos-worker %d: %s lost: holder %" PRIu64
                        " token %" PRIu64 ", ours %" PRIu64 " token %" PRIu64
                        "\n",
                        w->cfg.id, key, hd.held ? hd.session : 0,
                        hd.held ? hd.token : 0, ops->held_session, ops->token);
                ops_close(ops, history_now_ns(), false);
        } else if (o != OPS_OK) {
                back_off(w, o);
        }
}

/* Release what is held, then one acquire and release of the worker's key
 * marked phase=final, retried within FINAL_BUDGET_MS. */
static void final_phase(struct worker *w)
{
        struct ops_worker *ops = &w->ops;
        uint64_t deadline;
        char key[OPS_KEY_CAP];

        release_held(w);
        final_key(w, key, sizeof key);
        deadline = history_now_ns() + FINAL_BUDGET_MS * NS_PER_MS;
        while (!stop) {
                uint64_t now = history_now_ns(), left_ms;
                enum ops_outcome o;
                if (now >= deadline) {
                        fprintf(stderr,
                                "chaos-worker %d: final acquire and release "
                                "of %s did not complete within %d ms\n",
                                w->cfg.id, key, FINAL_BUDGET_MS);
                        return;
                }
                left_ms = (deadline - now) / NS_PER_MS;
                o = final_acquire(w, key,
                                  left_ms < FINAL_WAIT_MS
                                      ? (int64_t)(left_ms > 500 ? left_ms : 500)
                                      : FINAL_WAIT_MS);
                if (o == OPS_OK) {
                        o = ops_release(ops, true);
                        if (o == OPS_OK) {
                                return;
                        }
                }
                back_off(w, o);
        }
}

/* One operation (or one round) of the worker's workload. */
static void step(struct worker *w)
{
        switch (w->cfg.workload) {
        case WL_COUNTER:
                counter_step(w);
                break;
        case WL_MUTEX:
                mutex_step(w);
                break;
        case WL_FIFO:
                fifo_step(w);
                break;
        case WL_SESSION:
                session_step(w);
                break;
        case WL_RWLOCK:
                rwlock_step(w);
                break;
        case WL_SEMAPHORE:
                semaphore_step(w);
                break;
        case WL_TRANSFERS:
                transfers_step(w);
                break;
        case WL_ELECTION:
                election_step(w);
                break;
        case WL_HOLD:
                hold_step(w);
                break;
        }
}

int main(int argc, char **argv)
{
        static struct worker w;
        struct config *c = &w.cfg;
        struct sigaction sa;
        uint64_t t_start, ops_done;
        double secs;
        int rv;

        c->keys = 2;
        c->ttl_ms = 10000;
        c->epoch_ms = 10000;
        c->request_timeout_ms = 5000;
        if (workerargs_parse(argc, argv, c) != 0) {
                workerargs_usage(stderr);
                return 2;
        }
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal; /* no SA_RESTART: sleeps end early */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        w.rng = c->seed ^ ((uint64_t)c->id * UINT64_C(0xd1342543de82ef95));
        w.ops.id = c->id;
        w.ops.endpoints = c->endpoints;
        w.ops.ttl_ms = c->ttl_ms;
        w.ops.request_timeout_ms = c->request_timeout_ms;
        w.ops.hist_fd = history_open(c->history);
        if (w.ops.hist_fd < 0) {
                fprintf(stderr, "chaos-worker: %s: %s\n", c->history,
                        strerror(errno));
                return 1;
        }
        if (c->register_path != NULL) {
                regclient_init(&w.ops.reg, c->register_path, c->id,
                               REGISTER_TIMEOUT);
        }
        rv = ops_start(&w.ops);
        if (rv != 0) {
                fprintf(stderr, "chaos-worker: baton_client_create: %s\n",
                        baton_strerror(rv));
                return 1;
        }
        if (c->workload == WL_ELECTION) {
                w.observer.id = c->id;
                w.observer.endpoints = c->endpoints;
                w.observer.request_timeout_ms = c->request_timeout_ms;
                w.observer.hist_fd = w.ops.hist_fd;
                final_key(&w, w.observer.name, sizeof w.observer.name);
                rv = observer_start(&w.observer);
                if (rv != 0) {
                        fprintf(stderr,
                                "chaos-worker: observer: "
                                "baton_client_create: %s\n",
                                baton_strerror(rv));
                        return 1;
                }
        }
        t_start = history_now_ns();
        while (!stop) {
                if (final_requested(&w)) {
                        final_phase(&w);
                        break;
                }
                step(&w);
                if (!stop) {
                        ops_check_session(&w.ops);
                }
        }
        /* The last close releases whatever a SIGTERM left held. */
        ops_close(&w.ops, history_now_ns(), true);
        observer_stop(&w.observer);
        regclient_close(&w.ops.reg);
        close(w.ops.hist_fd);
        secs = (double)(history_now_ns() - t_start) / 1e9;
        ops_done = w.ops.n_ok + w.ops.n_fail + w.ops.n_info;
        fprintf(stderr,
                "chaos-worker %d: %s: %" PRIu64 " ops (ok %" PRIu64
                " fail %" PRIu64 " info %" PRIu64 "), %" PRIu64
                " closes, %u incarnations, %.1f s, %.1f ok/s%s\n",
                c->id, workload_name(c->workload), ops_done, w.ops.n_ok,
                w.ops.n_fail, w.ops.n_info, w.ops.n_closes,
                w.ops.incarnation + 1, secs,
                secs > 0 ? (double)w.ops.n_ok / secs : 0.0,
                stop ? " (SIGTERM)" : "");
        if (c->workload == WL_ELECTION) {
                fprintf(stderr,
                        "chaos-worker %d: observer of %s: %" PRIu64
                        " events, %" PRIu64 " watches opened (%" PRIu64
                        " open errors), %" PRIu64 " compacted, %" PRIu64
                        " ended otherwise\n",
                        c->id, w.observer.name, w.observer.n_events,
                        w.observer.n_opens, w.observer.n_open_errors,
                        w.observer.n_compacted, w.observer.n_ended);
        }
        return 0;
}
