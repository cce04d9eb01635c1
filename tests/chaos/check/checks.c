/*
 * The checkers of a chaos run. How each decides ("the log" is the merged
 * apply log of struct applylog, read in index order and, within an entry,
 * in event order; a verdict is FAIL on the first proof, UNKNOWN when the
 * evidence is missing, PASS otherwise; the detail names the first problem
 * and counts the rest):
 *
 * S1  Per lock, a GRANT while an earlier grant is live fails, but a
 *     reader's while only readers hold (applylog_shared(): mode shared, or
 *     in a log without modes the owner tag APPLYLOG_OWNER_READER), and a
 *     semaphore's (mode 2) while only the semaphore's holders hold, unless
 *     its permits and theirs exceed the limit the history's acquires name
 *     (check_sem_limits()). A grant ends at the RELEASE of its token and
 *     session or at the END of its session.
 * S2  Per lock, for ok acquires A and B with A completed before B was
 *     invoked, token(A) < token(B); equal tokens of one session are a
 *     reentrant acquire.
 * S3  Each ok acquire's token is the index of a GRANT of that lock to that
 *     session (unless the history has no session for it). An index inside
 *     the logged range that no node logged cannot be a grant (every command
 *     leaves a RESULT); one outside it is UNKNOWN. Two processes (or two
 *     named sessions) told the same token of a lock fail, unless both
 *     acquired it shared (readers admitted together) or both acquired
 *     permits of it (a semaphore's holders admitted together).
 * S4  Each ok release has a RELEASE command of that lock and token in the
 *     log (its RELEASE event, or for a reentrant hold its successful
 *     RESULT); each ok close an END of its session; each ok write an
 *     accepted register write of that worker, key, value and base version;
 *     and each register key ends at value = its number of accepted writes
 *     (each write is the value read + 1). Missing logs make it UNKNOWN.
 * S5  Per register key, in log order: accepted tokens never go down (a
 *     reader's only never below a writer's: readers hold together), and
 *     each accepted write's base version is the version current then
 *     (else a lost update, reported with the writer it overwrote). A
 *     semaphore holder's requests (mode s) are S12's.
 * S6  Each refusal (token t below the bound m: the highest token for a
 *     writer's request, the highest writer's for a reader's) is a fencing
 *     save when every grant of that lock made at index t ended (its
 *     RELEASE, or its session's END) at an index <= m: a handoff releases
 *     and grants in one entry, release first. Otherwise the two grants
 *     overlapped: FAIL. Grants not found: UNKNOWN. A semaphore holder's
 *     refusal (the register read the grant's end in an apply log) is a
 *     fencing save when the log holds that grant (token, session) and its
 *     end; else FAIL; the grant not found: UNKNOWN.
 * S7  Per lock, lincheck_run() over the operations of linops.h; locks the
 *     history acquired shared are left to S1 and S11, semaphores to S1 and
 *     S12 (the model is a mutex).
 * S8  Per lock, replaying QUEUE, UNQUEUE and GRANT: a handoff (a GRANT
 *     made by another command than the waiter's own ACQUIRE) goes to the
 *     head of the queue; a GRANT made by the acquirer's own ACQUIRE finds
 *     the queue empty; no GRANT or QUEUE for a session after its END.
 * S9  Every index two nodes logged has the same events (all fields but
 *     mono_ns; a term of 0 matches any); an entry cut short compares as a
 *     prefix; a node that applied an index twice (a restart) applied it
 *     the same way.
 * S10 (a) Unless the plan ran a clock fault: an END by EXPIRE, applied
 *     first at mono_ns T, fails if its session's worker reported, on a
 *     completion before T, a lease end after T. (b) After a session's END
 *     only refusals happen to it: UNQUEUE, a RESULT with an error, or a
 *     retried CLOSE answered CLOSED again.
 * S11 Per register key that holders ENTER and LEAVE (the rwlock workload),
 *     in log order: a holder is inside from its accepted ENTER to its LEAVE
 *     or a refusal. An accepted ENTER of a writer while anyone is inside,
 *     or of a reader while a writer is, fails when the one inside has a
 *     token not below the newcomer's (the register let both in); with a
 *     lower token the one inside is turned out (the register refuses it
 *     from now on), which is a fencing save when its grant ended by the
 *     newcomer's (as S6), else FAIL; grants not found: UNKNOWN. A holder
 *     turned out whose request is accepted later fails (a stale holder let
 *     in: fencing off).
 * S12 Per register pool that holders ENTER and LEAVE in mode s (the
 *     semaphore workload), in log order: a holder is inside from its
 *     accepted ENTER to its LEAVE, a refusal or its worker's next ENTER.
 *     After each accepted ENTER, if those inside hold more permits than
 *     the semaphore's limit (the history's), their grants are looked up:
 *     each current from its token to its end (RELEASE, or its session's
 *     END). More than the limit current at one index fails; otherwise the
 *     surplus are stale holders (their grants had ended), counted. A
 *     holder the register refused whose request is accepted later fails.
 *     A grant not found, or a pool without a limit: UNKNOWN.
 * S13 The accounts of the transfers workload (the register's init keys),
 *     replayed in log order: every accepted read of an account sees them
 *     sum to the starting total (plus the reader's own writes, plus the
 *     transfers judged before); else each other transfer half done (one
 *     of its two writes accepted) is judged against the reader's token: a
 *     torn transfer, counted, when every grant of its accounts at its
 *     token had ended by then (as S6); FAIL when one had not, or when its
 *     entry granted the account to no one; UNKNOWN when the entry is not
 *     logged. A holder that read every account before writing saw them
 *     sum to the total. Transfers half done at the end are judged too.
 * S14 The observers' lines (f=observe, the election workload's), per
 *     observer in the order it wrote them: events in strictly increasing
 *     (index, ord); each the event of the watched name at that position of
 *     the merged apply log, where a position's ord counts the entry's
 *     GRANTs, RELEASEs and PROCLAIMs of any name from 1 (as
 *     src/server/gateway/watchfeed.c does), with the same kind, session, owner,
 *     token, mode and value; and, after the first event of a watch opened
 *     from now (the start, or after a compacted marker), each the next of
 *     the name in the log (else a gap; a watch resumed after an end goes
 *     on). The first event after an open from now is not preceded by one
 *     first applied after the open returned (unless a clock fault ran).
 *     An entry no node logged in full where it matters: UNKNOWN.
 * S15 The unfenced register's log (the supervise workload's commands,
 *     run by batonctl lock -- CMD, writing without tokens), per lock: in
 *     log order tokens never go down (two holders' writes interleaved);
 *     unless a clock fault ran, no write's time (taken before it) is after
 *     the first apply of its grant's end (RELEASE, or its session's END)
 *     or of the lock's next GRANT. A grant not in the logs: UNKNOWN.
 * S16 No node.log holds "state machine digest MISMATCH": every replica's
 *     state digest equals the leader's at each DIGEST entry it applied.
 * S17 Grants with a hold time end on time: an EXPIRE_HOLD never before the
 *     hold ran out, and every end within hold + 1 s of the later of its
 *     clock's start (GRANT or last EXTEND) and the latest term's first
 *     entry, where no fault that slows a live leader overlaps
 *     (check_hold.h).
 * L1  After the last heal-all, every worker has an ok acquire and an ok
 *     release marked phase=final completing within 15 s of it.
 * L2  Between successive ok completions (all workers, all operations) a
 *     gap of 2 s or more fails unless a fault interval, extended by the
 *     plan's TTL plus two election timeouts, overlaps it.
 * L3  At the end of the log no lock is held and no waiter queued.
 * L4  Every exit in RUN/exits was expected, and no node.log or worker
 *     stderr holds "AddressSanitizer", "runtime error", "Assertion" or
 *     "LeakSanitizer".
 *
 * The checkers are in check_replay.c (S1, S8, L3), check_tokens.c (S2, S3,
 * S6), check_writes.c (S4, S5), check_nodes.c (S9, S10), check_rw.c
 * (S11), check_sem.c (S12), check_transfers.c (S13), check_observe.c
 * (S14), check_unfenced.c (S15), check_digest.c (S16), check_hold.c (S17)
 * and check_live.c (L1,
 * L2, L4); S7 is here, a
 * call of lincheck.c.
 */
#include "checks.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_live.h"
#include "check_nodes.h"
#include "check_observe.h"
#include "check_replay.h"
#include "check_rw.h"
#include "check_sem.h"
#include "check_tokens.h"
#include "check_digest.h"
#include "check_hold.h"
#include "check_transfers.h"
#include "check_unfenced.h"
#include "check_util.h"
#include "check_writes.h"
#include "lincheck.h"
#include "linops.h"
#include "util.h"

static const char *const names[CHECK_COUNT] = {
    "S1",  "S2",  "S3",  "S4",  "S5",  "S6",  "S7", "S8", "S9", "S10", "S11",
    "S12", "S13", "S14", "S15", "S16", "S17", "L1", "L2", "L3", "L4",
};

static const char *const verdicts[] = {"PASS", "FAIL", "UNKNOWN"};

const char *checks_name(int id)
{
        return id >= 0 && id < CHECK_COUNT ? names[id] : "?";
}

int checks_parse_name(const char *s)
{
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                if (strcmp(s, names[i]) == 0) {
                        return i;
                }
        }
        return -1;
}

const char *checks_verdict_name(int verdict)
{
        return verdict >= 0 && verdict <= CHECK_UNKNOWN ? verdicts[verdict]
                                                        : "?";
}

int checks_parse_verdict(const char *s)
{
        int i;

        for (i = 0; i <= CHECK_UNKNOWN; i++) {
                if (strcmp(s, verdicts[i]) == 0) {
                        return i;
                }
        }
        return -1;
}

void checks_options_init(struct check_options *o)
{
        o->budget = LINCHECK_DEFAULT_BUDGET;
}

int checks_exit_status(const struct check_result res[CHECK_COUNT])
{
        bool safety = false, liveness = false, unknown = false;
        int i;

        for (i = 0; i < CHECK_COUNT; i++) {
                if (res[i].verdict == CHECK_FAIL) {
                        if (i < CHECK_L1) {
                                safety = true;
                        } else {
                                liveness = true;
                        }
                } else if (res[i].verdict == CHECK_UNKNOWN) {
                        unknown = true;
                }
        }
        if (safety) {
                return 1;
        }
        if (liveness) {
                return 3;
        }
        return unknown ? 2 : 0;
}

/* --- S7 ------------------------------------------------------------------- */

/* The read/write locks and the semaphores: those the history acquired
 * shared, or acquired permits of; and the supervise workload's locks,
 * acquired by batonctl lock -- CMD (mode=cmd), whose releases the history
 * cannot confirm (S1 and S15 check them). */
static bool *shared_locks(const struct run *r)
{
        bool *shared = util_calloc(r->names.n, sizeof *shared);
        size_t i;

        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->f == HISTORY_ACQUIRE &&
                    (h->shared || h->sem || h->cmd) && h->key >= 0) {
                        shared[h->key] = true;
                }
        }
        return shared;
}

static void check_s7(const struct run *r, const struct check_options *o,
                     struct check_result *res)
{
        struct linops lo;
        struct check_note bad = {0, ""}, unknown = {0, ""};
        bool *shared = shared_locks(r);
        size_t i, fast = 0, n_rw = 0, n_ops = 0;
        uint64_t explored = 0;

        linops_build(&lo, r);
        for (i = 0; i < lo.n_keys; i++) {
                const struct linops_key *k = &lo.keys[i];
                struct lincheck_result out;
                int rv;

                /* The model is a mutex: S1 and S11 check read/write
                 * locks, S1 and S12 semaphores, S1 and S15 the supervise
                 * workload's. */
                if (shared[k->key]) {
                        n_rw++;
                        continue;
                }
                n_ops += k->n;
                memset(&out, 0, sizeof out);
                rv = lincheck_run(lo.ops + k->first, k->n, o->budget, &out);
                explored += out.explored;
                if (rv != 0) {
                        check_note(&unknown, "lock %s: the search failed (%d)",
                                   run_name(r, k->key), rv);
                } else if (out.verdict == LINCHECK_INVALID) {
                        check_note(&bad, "lock %s: %s", run_name(r, k->key),
                                   out.detail);
                } else if (out.verdict != LINCHECK_VALID) {
                        check_note(&unknown, "lock %s: %s", run_name(r, k->key),
                                   out.detail);
                } else if (out.fast) {
                        fast++;
                }
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL,
                          "%s (%zu of %zu locks not linearizable)", bad.first,
                          bad.count, lo.n_keys - n_rw);
        } else if (unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu of %zu locks undecided)",
                          unknown.first, unknown.count, lo.n_keys - n_rw);
        } else if (n_rw > 0 && n_rw == lo.n_keys) {
                check_set(res, CHECK_PASS,
                          "no exclusive lock: %zu read/write locks, "
                          "semaphores and commands' locks left to S1, S11, "
                          "S12 and S15",
                          n_rw);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu locks, %zu ops linearizable (%zu locks by the index "
                    "fast path, %" PRIu64 " search states; %zu synthetic "
                    "ops, %zu unknown acquires placed by the apply logs)%s",
                    lo.n_keys - n_rw, n_ops, fast, explored, lo.n_synthetic,
                    lo.n_attributed,
                    n_rw > 0 ? "; read/write locks, semaphores and commands' "
                               "locks left to S1, S11, S12 and S15"
                             : "");
        }
        linops_free(&lo);
        free(shared);
}

/* --- all ------------------------------------------------------------------ */

static int cmp_u64s(const void *p, const void *q)
{
        uint64_t x = *(const uint64_t *)p, y = *(const uint64_t *)q;

        return x < y ? -1 : x > y;
}

static void count(const struct run *r, struct check_stats *st)
{
        const struct applylog *a = &r->applylog;
        uint64_t *terms = util_calloc(a->n_merged, sizeof *terms);
        size_t i, n = 0, distinct = 0;

        for (i = 0; i < r->history.n; i++) {
                switch (r->history.ops[i].type) {
                case HISTORY_OK:
                        st->ops_ok++;
                        break;
                case HISTORY_FAIL:
                        st->ops_fail++;
                        break;
                default:
                        st->ops_info++;
                        break;
                }
        }
        st->faults = r->nemlog.n_faults;
        for (i = 0; i < a->n_merged; i++) {
                size_t m;
                const struct applylog_event *ev =
                    applylog_events(a, &a->merged[i], &m);
                if (m > 0 && ev[0].term != 0) {
                        terms[n++] = ev[0].term;
                }
        }
        util_sort(terms, n, sizeof *terms, cmp_u64s);
        for (i = 0; i < n; i++) {
                distinct += i == 0 || terms[i] != terms[i - 1];
        }
        st->elections = distinct > 0 ? distinct - 1 : 0;
        free(terms);
}

void checks_run(const struct run *r, const struct check_options *o,
                struct check_result res[CHECK_COUNT], struct check_stats *st)
{
        memset(res, 0, CHECK_COUNT * sizeof *res);
        memset(st, 0, sizeof *st);
        count(r, st);
        check_replay(r, &res[CHECK_S1], &res[CHECK_S8], &res[CHECK_L3]);
        check_s2(r, &res[CHECK_S2]);
        check_s3(r, &res[CHECK_S3]);
        check_s4(r, &res[CHECK_S4]);
        check_s5(r, &res[CHECK_S5]);
        check_s6(r, &res[CHECK_S6], st);
        check_s7(r, o, &res[CHECK_S7]);
        check_s9(r, &res[CHECK_S9]);
        check_s10(r, &res[CHECK_S10]);
        check_s11(r, &res[CHECK_S11]);
        check_s12(r, &res[CHECK_S12]);
        check_s13(r, &res[CHECK_S13]);
        check_s14(r, &res[CHECK_S14]);
        check_s15(r, &res[CHECK_S15]);
        check_s16(r, &res[CHECK_S16]);
        check_s17(r, &res[CHECK_S17]);
        check_l1(r, &res[CHECK_L1], st);
        check_l2(r, &res[CHECK_L2], st);
        check_l4(r, &res[CHECK_L4]);
}
