/* Seeded randomized simulation of a Baton cluster on raft_fixture, printing
 * TAP. */
#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/baton.h"
#include "../../src/fsm/entry.h"
#include "aclwork.h"
#include "batchcase.h"
#include "breaks.h"
#include "checker.h"
#include "digest.h"
#include "answers.h"
#include "faults.h"
#include "frames.h"
#include "leases.h"
#include "replay.h"
#include "sim.h"
#include "simhost.h"
#include "simpath.h"
#include "workload.h"

/*
 * One seed = one run: a 3- or 5-node cluster, batond's request core on
 * every node (simhost.h), and a few clients that speak to the cores in
 * frames only (frames.h), over the simulated network (simpath.h: delays,
 * split and joined frames, cuts, partitions, pauses; with --direct,
 * simhost's direct path): each sends its lock commands as COMMAND frames
 * to the node it believes leads, follows NOT_LEADER, and sends the same
 * frame (same session and seq) again after BATON_EUNKNOWN, a cut
 * connection or silence; a waiting ACQUIRE is answered once granted or
 * out of its queue. The serving leader's core proposes the clients'
 * commands, in batches, and EXPIRE (of sessions whose clients fell
 * silent: they send KEEPALIVEs to it, leases.h), TIMEOUT, UNBLOCK and
 * CLOCK from its deadlines, and an operator's REVOKE and REVOKE_LOCK
 * sent to it; random faults strike, for
 * RUN_MS of virtual time. The clients' commands include MULTIs (one
 * acquire in ten: 2 or 3 names, now and then a refused one), tries and
 * waits, released name by name and cancelled or timed out by any one of
 * their names, and campaigns in an election (its leaders now and then
 * proclaiming another value, or resigning). Then every fault is healed,
 * one more command is
 * committed, and the run is checked:
 *
 *  (a) every node's lockfsm_snapshot() bytes are identical, and each node's
 *      snapshot survives fsm->snapshot -> fsm->restore unchanged;
 *  (b) every node applied the same entries with the same outcomes and
 *      reported the same events; (b') a watch of every name is told the
 *      same events at the same positions on every node, byte for byte;
 *  (c) the applied event sequence keeps the lock invariants (one holder at a
 *      time, GRANT only when free and in FIFO order, token = index of the
 *      granting entry and strictly increasing per lock, nothing granted to
 *      an ended session, no (session, seq) granted or queued twice, no
 *      request executed twice, duplicates answered as the original; a
 *      multi-lock is granted all its names by one entry or none, and
 *      queues on and leaves all its names' queues in one entry; a
 *      session's id is its OPEN's stamp), and lockfsm_check() passes on
 *      every node;
 *  (d) every final answer a client was told is what node 0's final log
 *      says became of its request (answers.h): the RESULT of its
 *      (session, seq) at the answer's index, in an entry holding the
 *      client's bytes, or a wait's GRANT (token == index) or UNQUEUE;
 *      a GRANTED answer with token T is a GRANT to that session and seq
 *      at index T and at no other, a RELEASE, END or OPEN told as done
 *      is in the log;
 *  (e) the index raftfsm passed to the state machine for each entry a
 *      core proposed is the one raft gave it: the node applied the
 *      proposal's bytes there (simops.c; the host's failure fails the
 *      run), which is what proves raft_last_applied() + 1 right;
 *  (f) no (session, seq) runs twice in node 0's log (every node's, by
 *      (b));
 *  (g) raft itself never commits an entry that fewer than a majority of
 *      the nodes have stored, nor shuts a node down (simcluster watches
 *      every commit against what each node's raft_io stored);
 *  (h) every node had the same access list after each index, the one a
 *      model of the log's ACL entries gives, and so did each node's
 *      snapshot restored mid-run (aclcheck.h: an administrator changes
 *      rules and quotas all along, aclwork.h).
 *
 * Why the runs are short and the fixture is tuned the way it is (docs/
 * raft.md): raft_fixture copies the leader's whole log at every step, so
 * runs stay short (30 virtual seconds, a few hundred entries) and the
 * retained log small (snapshot threshold 32, trailing 96); and its
 * in-memory truncate (still in libraft 0.22.1's fixture) assumes the log
 * starts at index 1, so it overruns after a follower has installed a
 * snapshot and later truncates: no follower may ever be sent an
 * InstallSnapshot. Two things see to that:
 *
 * the cores' host refuses proposals (simcluster_may_append()) while the
 * leader is more than max_lag (64 < trailing - in flight) entries ahead
 * of where it may have to replicate some node from; with faults that heal
 * within seconds, every follower stays inside the leader's retained log.
 * (Without it, seeds 9 and 17 of the first 300 send InstallSnapshots, and the
 * fixture corrupts its heap.)
 *
 * The run fails if an InstallSnapshot is sent anyway. Raft still takes
 * snapshots through fsm->snapshot all along; fsm->restore is exercised by
 * (a), outside raft.
 *
 * Every failure is a failure: on libraft 0.15.0 this test met a raft bug
 * (a follower acknowledging entries it did not hold, so that a leader
 * committed them without a majority) in seeds 109, 463, 587, 887 and 971
 * of 1..1000 on 3 nodes; (g) is the check that found it.
 *
 * Negative controls (--break, and eight TAP lines of the default run):
 * drop-grant removes the GRANT event of a grant a client was told of from
 * every node,
 * reapply applies one entry a second time on one node, blind makes the
 * stores of all nodes but one record nothing (so every commit breaks
 * (g)), split-multi moves the GRANT of one name of a multi-lock into the
 * next entry on every node (which only the multi-lock check of (c) may
 * report), skip-watch drops one event from what one node's watchers are
 * told (which only the watch check of (b') may report), answer tells a
 * client another token (an OPEN another session) than the log gave
 * (which (d) must report), index has the host look for each proposal
 * one entry past the index raft acknowledged it at (which (e) must
 * report), acl-noop records a RULE_SET's change of the list as none on
 * every node (which (h)'s model must report); the checker must
 * report each, while the same run untouched
 * passes. The last comment line sums the MULTIs granted at once, after
 * waiting, and that left their queues; each TAP line has them as
 * multi=<at once>+<after waiting>/<left>, and (h)'s ACL entries as
 * acl=<changes of the list>/<ACL entries>/<changes sent>/<restores>,
 * summed in a TAP line that fails when they changed no list.
 *
 * Two more TAP lines check the checker on a log of batches written by
 * hand (batchcase.h), in which an entry's start hands on a lock: as
 * written it passes, and with that grant moved it must be reported.
 *
 * A seed names its run and nothing else: each TAP line ends with the
 * digest of the run's whole history (digest.h), and the replay check
 * runs the first REPLAY_SEEDS seeds of each node count again, each alone
 * in a fresh process (replay.h), which must give the same digest; with
 * --repeat, every seed run. It failed on libraft 0.22.1 until
 * tests/lib/simwire.h patched the two messages whose handling depended on
 * stack leftovers and heap addresses (seeds 95, 131, 224, 244, 245 and 264
 * of 1..300 on 3 nodes ran differently in different processes). Its
 * negative control (--break leak) delays the faults of a run by the runs
 * the process did before it: the replay must differ.
 *
 * This file runs the seeds, the negative controls and the replay check.
 * The clients' choices are in workload.c, their frames in frames.c, the
 * administrator's ACL changes in aclwork.c, the faults in faults.c, check
 * (d) in answers.c, (h) in aclcheck.c, the others in checker.c, and what
 * they share in sim.h.
 */

#define RUN_MS        30000 /* virtual time of the random phase */
#define CONVERGE_MS   30000
#define DEFAULT_SEEDS 100
#define REPLAY_SEEDS  10 /* of each node count, replayed in the default run */

/* ------------------------------------------------------------------------
 * One seed
 */

/* 0 if the run passes every check, else -1 with the first failure in
 * `reason`. (d) before (c): a lost grant a client was told of is named as
 * such, rather than by the invariant it happens to break next. */
static int check_run(struct sim *s, char *reason, size_t cap)
{
        if (check_replicas(s, reason, cap) != 0 ||
            check_acknowledged(s, reason, cap) != 0 ||
            check_log(s, reason, cap) != 0) {
                return -1;
        }
        return 0;
}

struct outcome {
        unsigned requests;  /* the clients started */
        unsigned answers;   /* final answers they were told */
        unsigned resends;   /* frames sent again */
        unsigned redirects; /* NOT_LEADERs followed */
        unsigned unknowns;  /* BATON_EUNKNOWN answers */
        unsigned faults;
        unsigned grants;
        unsigned multi_now;    /* MULTIs granted by their own entry */
        unsigned multi_waited; /* granted after waiting */
        unsigned multi_left;   /* that left their queues ungranted */
        unsigned leaderships;  /* GRANTs of the election */
        unsigned proclaims;
        uint64_t last_index;
        uint64_t snapshot_index;
        uint64_t steps;
        uint64_t digest;   /* of the whole run (digest.h) */
        unsigned hints;    /* messages simwire patched: 1. of simwire.h */
        unsigned lowered;  /* and 2. */
        unsigned batches;  /* entries the request cores proposed */
        unsigned timeouts; /* waits they timed out */
        unsigned unblocks; /* lock-delays they ended */
        unsigned expiries; /* sessions they expired */
        unsigned revokes;  /* the operator's, sent to a core */
        unsigned answered; /* of which the core answered */
        struct simpath_stats net; /* the clients' network's */
        /* ACL changes the administrator sent, ACL entries in the log, of
         * which changed the access list, snapshots restored to read it. */
        unsigned acl_sent, acl_entries, acl_changes, acl_samples;
};

static void configure(struct sim *s, struct simcluster_config *cfg)
{
        simcluster_config_default(cfg);
        cfg->n = s->n;
        cfg->seed = rng_next(&s->rng);
        /* Small limits, so that refusals (too many locks, waiters, requests
         * in flight) and forgotten tombstones happen too. */
        cfg->limits.max_sessions = 8;
        cfg->limits.max_locks_per_session = 3;
        cfg->limits.max_waiters_per_lock = 3;
        cfg->limits.max_inflight = 6;
        cfg->limits.max_tombstones = 8;
        cfg->limits.max_names_per_acquire = SIM_MULTI_NAMES;
}

/* What the run did, for its TAP line. */
static void summarize(struct sim *s, struct outcome *out)
{
        size_t k;

        out->requests = s->requests;
        out->answers = (unsigned)s->n_answers;
        out->resends = s->resends;
        out->redirects = s->redirects;
        out->unknowns = s->unknowns;
        for (k = 0; k < s->c.nodes[0].n_events; k++) {
                const struct simevent *e = &s->c.nodes[0].events[k];
                out->grants += e->type == LOCKFSM_EV_GRANT;
                out->leaderships += e->type == LOCKFSM_EV_GRANT &&
                                    e->mode == COMMAND_MODE_ELECTION;
                out->proclaims += e->type == LOCKFSM_EV_PROCLAIM;
                out->timeouts += e->type == LOCKFSM_EV_UNQUEUE &&
                                 e->cause == COMMAND_TIMEOUT;
                out->unblocks += e->type == LOCKFSM_EV_UNBLOCK;
                out->expiries +=
                    e->type == LOCKFSM_EV_END && e->cause == COMMAND_EXPIRE;
        }
        for (k = 0; k < s->c.nodes[0].n_entries; k++) {
                const struct simentry *e = &s->c.nodes[0].entries[k];
                out->batches += entry_is_batch(e->bytes, e->len);
        }
        out->multi_now = s->multi_now;
        out->multi_waited = s->multi_waited;
        out->multi_left = s->multi_left;
        out->faults = s->faults_total;
        out->revokes = s->revokes_sent;
        out->answered = s->revokes_answered;
        out->net = *simpath_stats(s->path);
        out->acl_sent = aclwork_sent(s);
        out->acl_entries = s->acl_entries;
        out->acl_changes = s->acl_changes;
        out->acl_samples = (unsigned)s->n_acl_samples;
        out->steps = s->c.n_steps;
        out->digest = digest_run(s);
        out->last_index = raft_last_applied(simcluster_raft(&s->c, 0));
        for (unsigned i = 0; i < s->n; i++) {
                out->hints += s->c.nodes[i].wire.hints;
                out->lowered += s->c.nodes[i].wire.lowered;
                if (s->c.nodes[i].store.latest > out->snapshot_index) {
                        out->snapshot_index = s->c.nodes[i].store.latest;
                }
        }
}

/* The seed's latencies, clients and first deadlines; `brk`'s blind
 * stores and leak. */
static void setup(struct sim *s, const struct simcluster_config *cfg,
                  enum brk brk)
{
        static unsigned runs_before; /* only BREAK_LEAK reads it */
        unsigned i;

        for (i = 1; i < s->n && brk == BREAK_BLIND; i++) {
                s->c.nodes[i].store.blind = true;
        }
        for (i = 0; i < s->n; i++) {
                raft_fixture_set_network_latency(&s->c.f, i,
                                                 rng_range(&s->rng, 5, 40));
                raft_fixture_set_disk_latency(&s->c.f, i,
                                              rng_range(&s->rng, 2, 20));
                raft_fixture_set_randomized_election_timeout(
                    &s->c.f, i,
                    rng_range(&s->rng, cfg->election_timeout,
                              2 * cfg->election_timeout));
        }
        s->n_clients = rng_range(&s->rng, 3, MAX_CLIENTS);
        for (i = 0; i < s->n_clients; i++) {
                s->clients[i].id = i;
                s->clients[i].next_at = rng_range(&s->rng, 0, 500);
                /* The node it believes leads, at first. */
                s->clients[i].node = rng_below(&s->rng, s->n);
        }
        s->next_fault_at = rng_range(&s->rng, 1500, 3000);
        /* BREAK_LEAK's bug on purpose: state kept from one run to the
         * next, as a static of the harness or a library would be. */
        s->next_fault_at += brk == BREAK_LEAK ? 10 * runs_before : 0;
        runs_before++;
        s->next_server_at = rng_range(&s->rng, 1000, 3000);
}

/* RUN_MS of clients, the operator and faults. */
static void random_phase(struct sim *s)
{
        raft_time end = simcluster_now(&s->c) + RUN_MS;

        while (simcluster_now(&s->c) < end) {
                raft_time now = simcluster_now(&s->c);

                simpath_run(s->path, true);
                for (unsigned i = 0; i < s->n_clients; i++) {
                        drive_client(s, &s->clients[i], now);
                        leases_drive(s, &s->clients[i], now);
                }
                drive_operator(s, now);
                aclwork_drive(s, now);
                drive_faults(s, now);
                simhost_sync(s->h);
                simcluster_step(&s->c);
                simhost_step(s->h);
        }
}

/* Heal, converge on one more command, break as `brk` says, and check
 * ((h) within check_replicas()). */
static int converge(struct sim *s, enum brk brk, char *reason, size_t cap)
{
        struct command final;
        struct simprop *last = NULL;

        while (s->n_faults > 0) {
                fault_undo(s, &s->faults[--s->n_faults]);
        }
        simhost_sync(s->h);
        simpath_heal(s->path);
        memset(&final, 0, sizeof final);
        final.type = COMMAND_QUERY;
        final.name = lock_names[0];
        final.name_len = (uint8_t)strlen(lock_names[0]);
        say(s, "converge");
        if (simcluster_converge(&s->c, &final, CONVERGE_MS, &last) != 0) {
                return s->c.violations > 0
                           ? fail(reason, cap, "%s; raft: %s", s->c.errmsg,
                                  s->c.violation)
                           : fail(reason, cap, "%s", s->c.errmsg);
        }
        s->final_index = last->raft_index;
        if (breaks_apply(s, brk, reason, cap) != 0) {
                return -1;
        }
        return check_run(s, reason, cap);
}

/* A run of `seed`; its clients over simnet, or (`direct`) simhost's
 * direct path. */
static int run_seed(unsigned nodes, uint64_t seed, enum brk brk, bool verbose,
                    bool direct, struct outcome *out, char *reason, size_t cap)
{
        struct simcluster_config cfg;
        struct simhost *h;
        struct sim *s;
        int rv;

        memset(out, 0, sizeof *out);
        s = calloc(1, sizeof *s);
        if (s == NULL) {
                return fail(reason, cap, "out of memory");
        }
        s->n = nodes;
        s->verbose = verbose;
        s->rng.s = seed * 0x2545f4914f6cdd1dULL + nodes;
        configure(s, &cfg);
        rv = simcluster_init(&s->c, &cfg);
        if (rv != 0) {
                fail(reason, cap, "simcluster_init: %s", s->c.errmsg);
                free(s);
                return -1;
        }
        s->c.verbose = verbose;
        /* batond's request core on every node, which the clients talk to
         * and whose serving leader proposes. */
        h = calloc(1, sizeof *h);
        s->h = h;
        if (h == NULL || simhost_init(h, &s->c, verbose) != 0) {
                fail(reason, cap, "simhost_init: out of memory");
                simcluster_close(&s->c);
                free(h);
                free(s);
                return -1;
        }
        /* The clients' connections to the cores. */
        s->path = simpath_create(h, &s->c, direct, seed);
        if (s->path == NULL) {
                rv = fail(reason, cap, "simpath_create: out of memory");
                simhost_shutdown(h);
                simcluster_close(&s->c);
                simhost_free(h);
                free(h);
                free(s);
                return rv;
        }
        h->index_skew = brk == BREAK_INDEX ? 1 : 0;
        /* The cores seed the access list and take an administrator's
         * changes of it (aclwork.h), sent as the clients' requests are. */
        simhost_acl_on(h);
        s->oom = !aclwork_start(s, seed);
        setup(s, &cfg, brk);
        random_phase(s);
        rv = converge(s, brk, reason, cap);
        /* A failure of the nodes' side of the network comes first: what
         * the checks then found follows from it. */
        if (simpath_error(s->path) != NULL) {
                rv = fail(reason, cap, "network: %s", simpath_error(s->path));
        }
        summarize(s, out);
        operator_close(s);
        aclwork_close(s);
        leases_close(s);
        for (unsigned i = 0; i < s->n_clients; i++) {
                frames_close(&s->clients[i]);
        }
        simpath_destroy(s->path);
        simhost_shutdown(h);
        simcluster_close(&s->c);
        simhost_free(h);
        if (rv == 0 && h->errmsg[0] != '\0') {
                rv = fail(reason, cap, "host: %s", h->errmsg);
        }
        free(h);
        answers_free(s);
        free(s);
        return rv;
}

/* ------------------------------------------------------------------------
 * main
 */

/* One TAP line. */
static void report(unsigned k, unsigned nodes, uint64_t seed, enum brk brk,
                   int rv, const char *reason, const struct outcome *out)
{
        if (rv == 0) {
                printf("ok %u - nodes=%u seed=%" PRIu64 " requests=%u "
                       "answers=%u resends=%u redirects=%u unknown=%u "
                       "faults=%u grants=%u multi=%u+%u/%u "
                       "core=%u/%u/%u/%u revokes=%u/%u net=%u/%u/%u "
                       "acl=%u/%u/%u/%u "
                       "last_index=%" PRIu64 " snapshot_index=%" PRIu64
                       " steps=%" PRIu64 " digest=%016" PRIx64 "\n",
                       k, nodes, seed, out->requests, out->answers,
                       out->resends, out->redirects, out->unknowns, out->faults,
                       out->grants, out->multi_now, out->multi_waited,
                       out->multi_left, out->batches, out->timeouts,
                       out->unblocks, out->expiries, out->answered,
                       out->revokes, out->net.faults, out->net.closes,
                       out->net.refused, out->acl_changes, out->acl_entries,
                       out->acl_sent, out->acl_samples, out->last_index,
                       out->snapshot_index, out->steps, out->digest);
                return;
        }
        printf("not ok %u - nodes=%u seed=%" PRIu64 ": %s (digest=%016" PRIx64
               "; reproduce: tests/sim/test_sim --nodes %u --seed %" PRIu64
               "%s%s --verbose)",
               k, nodes, seed, reason, out->digest, nodes, seed,
               brk != BREAK_NONE ? " --break " : "",
               brk != BREAK_NONE ? breaks_names[brk] : "");
        printf("\n");
}

static void usage(FILE *f)
{
        fprintf(f,
                "usage: test_sim [--nodes N] [--seed S | --seeds COUNT] "
                "[--repeat] [--direct] [--verbose]\n"
                "                [--break drop-grant|reapply|blind|"
                "split-multi|skip-watch|answer|index|leak|\n"
                "                 acl-noop]\n"
                "  default: seeds 1..%d on 3 and on 5 nodes, the first %d "
                "of each replayed alone, plus the negative controls\n"
                "  --repeat: replay every seed alone in a fresh process; "
                "its digest must not change\n"
                "  --direct: the clients on simhost's direct path, not "
                "the simulated network (no controls, no replays)\n",
                DEFAULT_SEEDS, REPLAY_SEEDS);
}

#if defined(BATON_CHAOS_BUG_OVERGRANT) || defined(BATON_CHAOS_BUG_ACLSKIP)
/* Built as test_sim_overgrant, with a state machine whose semaphores
 * grant one permit too many (the chaos suite's batond-overgrant bug), or
 * as test_sim_aclskip, on a raft glue whose node 2 answers a RULE_REMOVE
 * as every node does but keeps the rule (raftfsm.c): the checker must
 * catch the bug within the default seeds, with a reason that has
 * `expect` in it (the permits; the index where node 2's access list
 * parts from the others'). */
static int chaos_control(const char *name, const char *expect, const char *bug)
{
        char reason[1024];
        struct outcome out;

        printf("1..1\n");
        for (uint64_t seed = 1; seed <= DEFAULT_SEEDS; seed++) {
                if (run_seed(3, seed, BREAK_NONE, false, false, &out, reason,
                             sizeof reason) != 0 &&
                    strstr(reason, expect) != NULL) {
                        printf("ok 1 - negative control %s (nodes=3 "
                               "seed=%" PRIu64 ") caught: %s\n",
                               name, seed, reason);
                        return 0;
                }
        }
        printf("not ok 1 - negative control %s: the checker missed %s in %d "
               "seeds\n",
               name, bug, DEFAULT_SEEDS);
        return 1;
}
#endif

/* The negative controls, on 3 nodes, each on the first seed from 1 on
 * (at most CONTROL_SEEDS) where its corruption applies: it must be caught
 * (the split multi-lock by the multi-lock check itself), while the same
 * run untouched passes, so that what the checker reports is the
 * corruption and nothing else. TAP lines from *k + 1; the failures. */
#define N_CONTROLS    8
#define CONTROL_SEEDS 20
static unsigned run_controls(unsigned *k)
{
        static const enum brk controls[N_CONTROLS] = {
            BREAK_DROP_GRANT, BREAK_REAPPLY, BREAK_BLIND, BREAK_SPLIT_MULTI,
            BREAK_SKIP_WATCH, BREAK_ANSWER,  BREAK_INDEX, BREAK_ACL_NOOP};
        static const char *const expect[N_CONTROLS] = {
            "was told",          "",         "",       "multi-lock s=",
            "watchers are told", "was told", "host: ", "is not the model's"};
        char base[1024] = "";
        char reason[1024];
        struct outcome out;
        unsigned failed = 0;

        for (unsigned a = 0; a < N_CONTROLS; a++) {
                const char *name = breaks_names[controls[a]];
                uint64_t seed = 1;
                int base_rv, rv;

                for (;; seed++) {
                        base_rv = run_seed(3, seed, BREAK_NONE, false, false,
                                           &out, base, sizeof base);
                        rv = run_seed(3, seed, controls[a], false, false, &out,
                                      reason, sizeof reason);
                        if (seed == CONTROL_SEEDS || base_rv != 0 ||
                            strstr(reason, "no multi-lock granted") == NULL) {
                                break; /* else: nothing here to break */
                        }
                }
                ++*k;
                if (base_rv == 0 && rv != 0 &&
                    strstr(reason, expect[a]) != NULL) {
                        printf("ok %u - negative control %s "
                               "(nodes=3 seed=%" PRIu64 ") caught: %s\n",
                               *k, name, seed, reason);
                } else {
                        failed++;
                        printf("not ok %u - negative control %s "
                               "(nodes=3 seed=%" PRIu64 "): %s%s (reproduce: "
                               "tests/sim/test_sim --nodes 3 --seed %" PRIu64
                               " --break %s --verbose)\n",
                               *k, name, seed,
                               base_rv != 0 ? "the unbroken run fails: "
                               : rv != 0    ? "caught by another check: "
                                            : "the checker missed the "
                                              "corruption",
                               base_rv != 0 ? base
                               : rv != 0    ? reason
                                            : "",
                               seed, name);
                }
                fflush(stdout);
        }
        return failed;
}

/* The replay check's negative control, one TAP line at *k + 1: seed 1 on
 * 3 nodes with BREAK_LEAK, run here after other runs, must replay alone
 * (replay.h) to another digest, as the replay check would then report.
 * 1 if it does not, else 0. */
static unsigned leak_control(unsigned *k)
{
        char reason[1024];
        struct outcome out;
        uint64_t again = 0;

        ++*k;
        run_seed(3, 1, BREAK_LEAK, false, false, &out, reason, sizeof reason);
        if (replay_digest(3, 1, "leak", &again, reason, sizeof reason) != 0) {
                printf("not ok %u - negative control leak: %s\n", *k, reason);
                return 1;
        }
        if (again == out.digest) {
                printf("not ok %u - negative control leak (nodes=3 seed=1): "
                       "digest %016" PRIx64 " here and alone: the replay "
                       "check cannot see a run that depends on more than "
                       "its seed (reproduce: tests/sim/test_sim --nodes 3 "
                       "--seeds 1 --break leak --repeat)\n",
                       *k, again);
                return 1;
        }
        printf("ok %u - negative control leak (nodes=3 seed=1) caught: "
               "digest %016" PRIx64 " here, %016" PRIx64 " alone in a fresh "
               "process\n",
               *k, out.digest, again);
        return 0;
}

/* The checker on a log of batches in which an entry's start hands on a
 * lock (batchcase.h): it passes as written, and the grant moved to the
 * session that released the lock must be reported. Two TAP lines from
 * *k + 1; the failures. */
static unsigned batch_controls(unsigned *k)
{
        char reason[1024];
        unsigned failed = 0;
        int rv = batchcase_run(false, reason, sizeof reason);

        ++*k;
        failed += rv != 0;
        printf("%sok %u - a grant deferred to the next entry's start "
               "checks%s%s\n",
               rv != 0 ? "not " : "", *k, rv != 0 ? ": " : "",
               rv != 0 ? reason : "");
        rv = batchcase_run(true, reason, sizeof reason);
        ++*k;
        if (rv != 0 && strstr(reason, "batchcase:") == NULL) {
                printf("ok %u - negative control deferred grant moved "
                       "caught: %s\n",
                       *k, reason);
        } else {
                failed++;
                printf("not ok %u - negative control deferred grant moved: "
                       "%s\n",
                       *k, rv != 0 ? reason : "the checker missed it");
        }
        return failed;
}

/* What to run, from the command line. */
struct plan {
        unsigned node_counts[2];
        unsigned n_counts;
        uint64_t one_seed;
        bool have_seed;
        unsigned n_seeds;
        bool verbose;
        bool repeat;
        bool direct; /* the clients on simhost's direct path */
        enum brk brk;
};

/* Fills `p`; 0, or the exit status (0 after --help, 2 on bad usage). */
static int parse_args(int argc, char **argv, struct plan *p)
{
        int i;
        unsigned b;

        memset(p, 0, sizeof *p);
        p->node_counts[0] = 3;
        p->node_counts[1] = 5;
        p->n_counts = 2;
        p->n_seeds = DEFAULT_SEEDS;
        for (i = 1; i < argc; i++) {
                const char *arg = argv[i];
                const char *val = i + 1 < argc ? argv[i + 1] : NULL;

                if (strcmp(arg, "--verbose") == 0) {
                        p->verbose = true;
                } else if (strcmp(arg, "--repeat") == 0) {
                        p->repeat = true;
                } else if (strcmp(arg, "--direct") == 0) {
                        p->direct = true;
                } else if (strcmp(arg, "--nodes") == 0 && val != NULL) {
                        p->node_counts[0] = (unsigned)strtoul(val, NULL, 10);
                        p->n_counts = 1;
                        i++;
                        if (p->node_counts[0] < 1 ||
                            p->node_counts[0] > SIMCLUSTER_MAX_NODES) {
                                fprintf(stderr, "--nodes: 1..%d\n",
                                        SIMCLUSTER_MAX_NODES);
                                return 2;
                        }
                } else if (strcmp(arg, "--seed") == 0 && val != NULL) {
                        p->one_seed = strtoull(val, NULL, 10);
                        p->have_seed = true;
                        i++;
                } else if (strcmp(arg, "--seeds") == 0 && val != NULL) {
                        p->n_seeds = (unsigned)strtoul(val, NULL, 10);
                        i++;
                } else if (strcmp(arg, "--break") == 0 && val != NULL) {
                        for (b = 1;
                             b < sizeof breaks_names / sizeof *breaks_names &&
                             strcmp(val, breaks_names[b]) != 0;
                             b++) {
                        }
                        if (b == sizeof breaks_names / sizeof *breaks_names) {
                                usage(stderr);
                                return 2;
                        }
                        p->brk = (enum brk)b;
                        i++;
                } else {
                        usage(strcmp(arg, "--help") == 0 ? stdout : stderr);
                        return strcmp(arg, "--help") == 0 ? 0 : 2;
                }
        }
        if (p->have_seed) {
                p->n_seeds = 1;
        }
        return -1;
}

/* Sums over the seeds, for the closing comment lines. */
struct totals {
        unsigned runs;
        unsigned multi[3]; /* at once, after waiting, left */
        unsigned elections[2];
        unsigned wire[2];
        unsigned answers;
        unsigned acl[4]; /* changes of the list, entries, sent, restores */
        struct simpath_stats net; /* the clients' network's, summed */
        double seconds;           /* of the seeds' runs alone */
};

/* Seeds 1..p->n_seeds (or the one seed) on each node count, a TAP line
 * each from *k + 1, their digests in `digests`; the failures. */
static unsigned run_seeds(const struct plan *p, uint64_t *digests, unsigned *k,
                          struct totals *t)
{
        char reason[1024];
        struct outcome out;
        struct timespec t0, t1;
        unsigned failed = 0;
        int rv;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (unsigned a = 0; a < p->n_counts; a++) {
                for (unsigned s = 0; s < p->n_seeds; s++) {
                        uint64_t seed = p->have_seed ? p->one_seed : s + 1;
                        unsigned nodes = p->node_counts[a];

                        rv = run_seed(nodes, seed, p->brk, p->verbose,
                                      p->direct, &out, reason, sizeof reason);
                        report(++*k, nodes, seed, p->brk, rv, reason, &out);
                        digests[a * p->n_seeds + s] = out.digest;
                        failed += rv != 0;
                        t->runs++;
                        t->multi[0] += out.multi_now;
                        t->multi[1] += out.multi_waited;
                        t->multi[2] += out.multi_left;
                        t->elections[0] += out.leaderships;
                        t->elections[1] += out.proclaims;
                        t->wire[0] += out.hints;
                        t->wire[1] += out.lowered;
                        t->answers += out.answers;
                        t->acl[0] += out.acl_changes;
                        t->acl[1] += out.acl_entries;
                        t->acl[2] += out.acl_sent;
                        t->acl[3] += out.acl_samples;
                        t->net.cuts += out.net.cuts;
                        t->net.partitions += out.net.partitions;
                        t->net.isolations += out.net.isolations;
                        t->net.pauses += out.net.pauses;
                        t->net.spikes += out.net.spikes;
                        t->net.closes += out.net.closes;
                        t->net.refused += out.net.refused;
                        fflush(stdout);
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        t->seconds = (double)(t1.tv_sec - t0.tv_sec) +
                     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        return failed;
}

/* One TAP line at *k + 1: the seeds changed the access list and
 * restored lists from snapshots, so that its check (aclcheck.h) checked
 * something. 1 if they did not, else 0. */
static unsigned acl_covered(const struct totals *t, unsigned *k)
{
        bool ok = t->acl[0] > 0 && t->acl[3] > 0;

        printf("%sok %u - the access list: %u of %u ACL entries changed it, "
               "%u lists restored from snapshots%s\n",
               ok ? "" : "not ", ++*k, t->acl[0], t->acl[1], t->acl[3],
               ok ? "" : ": its check had nothing to check");
        return ok ? 0 : 1;
}

static void print_totals(const struct totals *t)
{
        printf("# MULTI: %u granted at once, %u after waiting, %u left "
               "their queues ungranted\n",
               t->multi[0], t->multi[1], t->multi[2]);
        printf("# elections: %u leaderships, %u proclaims\n", t->elections[0],
               t->elections[1]);
        printf("# libraft's messages patched (tests/lib/simwire.h): %u "
               "stale-term rejections given a last_log_index, %u vote "
               "results lowered to a follower's term\n",
               t->wire[0], t->wire[1]);
        printf("# the clients' network: %u cuts, %u partitions of a client "
               "from a node, %u nodes isolated from their clients, %u "
               "clients paused, %u latency spikes; %u connections closed "
               "under a client, %u attempts refused or given up\n",
               t->net.cuts, t->net.partitions, t->net.isolations, t->net.pauses,
               t->net.spikes, t->net.closes, t->net.refused);
        printf("# the access list: %u ACL changes sent, %u ACL entries "
               "applied, %u of which changed the list; %u lists restored "
               "from a node's snapshot\n",
               t->acl[2], t->acl[1], t->acl[0], t->acl[3]);
        printf("# %u seeds in %.2f s: %.1f seeds/s; %u client answers "
               "checked\n",
               t->runs, t->seconds, t->seconds > 0 ? t->runs / t->seconds : 0.0,
               t->answers);
}

int main(int argc, char **argv)
{
        struct plan p;
        bool controls;
        unsigned replays, planned, k = 0, failed = 0, a;
        uint64_t *digests;
        int rv;
        struct timespec t0, t1;
        struct totals tot;

        rv = parse_args(argc, argv, &p);
        if (rv >= 0) {
                return rv;
        }
        assert(strlen(lock_names[SEM_NAME - 1]) == COMMAND_NAME_MAX);
#ifdef BATON_CHAOS_BUG_OVERGRANT
        return chaos_control("overgrant", "permits held of",
                             "a semaphore granting one permit too many");
#endif
#ifdef BATON_CHAOS_BUG_ACLSKIP
        return chaos_control("aclskip", "node 1's access list after entry",
                             "a node keeping the rules RULE_REMOVE takes "
                             "away");
#endif
        /* The negative controls and the replay check of the first seeds
         * run with the default plan only (a run narrowed to one seed is
         * for reproducing that seed); --repeat replays every seed. */
        controls = !p.have_seed && p.brk == BREAK_NONE && !p.direct;
        replays = p.direct   ? 0
                  : p.repeat ? p.n_seeds
                  : controls
                      ? (p.n_seeds < REPLAY_SEEDS ? p.n_seeds : REPLAY_SEEDS)
                      : 0;
        planned = p.n_counts * (p.n_seeds + replays) + 1 +
                  (controls ? N_CONTROLS + 3 : 0);
        digests = calloc((size_t)p.n_counts * p.n_seeds + 1, sizeof *digests);
        if (digests == NULL) {
                return 1;
        }
        printf("1..%u\n", planned);
        fflush(stdout);
        memset(&tot, 0, sizeof tot);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        failed += run_seeds(&p, digests, &k, &tot);
        failed += acl_covered(&tot, &k);
        if (controls) {
                failed += run_controls(&k);
        }
        for (a = 0; a < p.n_counts; a++) {
                failed += replay_check(
                    p.node_counts[a], p.have_seed ? p.one_seed : 1, replays,
                    digests + a * p.n_seeds,
                    p.brk != BREAK_NONE ? breaks_names[p.brk] : NULL, &k);
        }
        if (controls) {
                failed += leak_control(&k);
                failed += batch_controls(&k);
        }
        free(digests);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        print_totals(&tot);
        printf("# %u tests, %u failed, %.2f s\n", k, failed,
               (double)(t1.tv_sec - t0.tv_sec) +
                   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
        return failed > 0 ? 1 : 0;
}
