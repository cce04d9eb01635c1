/* Checkers S4 and S5 of a chaos run: completions in the logs. */
#include "check_writes.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "check_util.h"

/* --- S4, S5 --------------------------------------------------------------- */

/* An accepted write of the register log, for matching the history's. */
struct wr {
        int key;
        int worker;
        uint64_t value;
        uint64_t based;
};

static int cmp_wr(const void *p, const void *q)
{
        const struct wr *x = p, *y = q;

        if (x->key != y->key) {
                return x->key < y->key ? -1 : 1;
        }
        if (x->worker != y->worker) {
                return x->worker < y->worker ? -1 : 1;
        }
        if (x->value != y->value) {
                return x->value < y->value ? -1 : 1;
        }
        return x->based < y->based ? -1 : x->based > y->based;
}

/* Per register key: the accepted writes, the last value and version. */
struct regkey {
        size_t writes;
        uint64_t value;
        uint64_t version;
        uint64_t token;  /* the highest accepted */
        uint64_t wtoken; /* the highest accepted of a writer's request */
        bool any;
        bool account;  /* has an init line: its value is a balance (S13) */
        bool election; /* an election's: leaders write their tokens */
        int last_worker;
        uint64_t last_token;
};

/* Each accepted write wrote the value it read plus one: with no lost
 * update a key's final value is its number of writes (but an account's
 * is a balance: S13's; and an election's leaders write their tokens: a
 * lost update there is S5's broken chain of versions). */
static void final_values(const struct run *r, const struct regkey *keys,
                         struct check_note *lost)
{
        size_t i;

        for (i = 0; i < r->names.n; i++) {
                if (keys[i].any && !keys[i].account && !keys[i].election &&
                    keys[i].value != keys[i].writes) {
                        check_note(lost,
                                   "register %s ends at value %" PRIu64
                                   " after %zu accepted writes",
                                   run_name(r, (int)i), keys[i].value,
                                   keys[i].writes);
                }
        }
}

void check_s4(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        struct regkey *keys = util_calloc(r->names.n, sizeof *keys);
        struct wr *wrs = NULL;
        size_t n_wrs = 0, cap = 0, i, checked = 0;
        struct check_note lost = {0, ""}, unknown = {0, ""};
        bool have_log = r->applylog.n_merged > 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                keys[l->key].account |= l->op == REGLOG_INIT;
                if (l->write && l->ok) {
                        struct wr w = {l->key, l->worker, l->value, l->based};
                        util_push((void **)&wrs, &n_wrs, &cap, &w, sizeof w);
                        keys[l->key].writes++;
                        keys[l->key].value = l->value;
                        keys[l->key].any = true;
                }
        }
        util_sort(wrs, n_wrs, sizeof *wrs, cmp_wr);
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                if (h->leader && h->key >= 0) {
                        keys[h->key].election = true;
                }
        }
        for (i = 0; i < r->history.n; i++) {
                const struct history_op *h = &r->history.ops[i];
                size_t n, k;
                const struct applylog_fact *f;
                bool found = false;

                if (h->type != HISTORY_OK) {
                        continue;
                }
                if (h->f == HISTORY_RELEASE && h->key >= 0 && h->has_token) {
                        checked++;
                        if (!have_log) {
                                check_note(&unknown, "no apply logs");
                                continue;
                        }
                        f = applylog_releases(&r->applylog, h->key, h->token,
                                              &n);
                        for (k = 0; k < n && !found; k++) {
                                found = f[k].cause == APPLYLOG_C_RELEASE;
                        }
                        if (!found) {
                                check_note(
                                    &lost,
                                    "w%d's release of lock %s token %" PRIu64
                                    " (ok at %" PRId64 ") is in no apply log",
                                    h->worker, run_name(r, h->key), h->token,
                                    h->complete_ns);
                        }
                } else if (h->f == HISTORY_CLOSE &&
                           !(h->session_eff & HISTORY_SESSION_UNKNOWN)) {
                        checked++;
                        if (!have_log) {
                                check_note(&unknown, "no apply logs");
                        } else if (applylog_end(&r->applylog, h->session_eff) ==
                                   NULL) {
                                check_note(&lost,
                                           "w%d's close of session %" PRIu64
                                           " (ok at %" PRId64 ") has no END",
                                           h->worker, h->session_eff,
                                           h->complete_ns);
                        }
                } else if (h->f == HISTORY_WRITE && h->key >= 0 &&
                           h->has_value && h->has_version) {
                        struct wr w = {h->key, h->worker, h->value, h->version};
                        checked++;
                        if (!rl->log.present) {
                                check_note(&unknown, "no register log");
                        } else if (util_bsearch(&w, wrs, n_wrs, sizeof *wrs,
                                                cmp_wr) == NULL) {
                                check_note(&lost,
                                           "w%d's write of %" PRIu64
                                           " to %s (based on version %" PRIu64
                                           ", ok at %" PRId64
                                           ") was not accepted by the register",
                                           h->worker, h->value,
                                           run_name(r, h->key), h->version,
                                           h->complete_ns);
                        }
                }
        }
        final_values(r, keys, &lost);
        if (lost.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu lost)", lost.first,
                          lost.count);
        } else if (unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN,
                          "%s: %zu acknowledged operations "
                          "unchecked",
                          unknown.first, unknown.count);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu acknowledged releases, closes and writes all found; "
                    "%zu accepted writes",
                    checked, n_wrs);
        }
        free(keys);
        free(wrs);
}

void check_s5(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        struct regkey *keys = util_calloc(r->names.n, sizeof *keys);
        struct check_note bad = {0, ""};
        size_t i, writes = 0, n_keys = 0;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                struct regkey *k = &keys[l->key];

                /* A semaphore's tokens do not order its holders (S12). */
                if (!l->ok || l->sem) {
                        continue;
                }
                if (!k->any) {
                        n_keys++;
                }
                /* A writer's request after any higher token, a reader's
                 * after a writer's higher one (readers hold together). */
                if (k->any && l->token < (l->reader ? k->wtoken : k->token)) {
                        check_note(&bad,
                                   "register %s: w%d's %s %s with token "
                                   "%" PRIu64 " accepted after %stoken %" PRIu64
                                   " (register.log:%u)",
                                   run_name(r, l->key), l->worker,
                                   l->reader ? "reader's" : "writer's",
                                   reglog_op_name(l->op), l->token,
                                   l->reader ? "a writer's " : "",
                                   l->reader ? k->wtoken : k->token, l->line);
                }
                if (!k->any || l->token > k->token) {
                        k->token = l->token;
                }
                if (!l->reader && l->token > k->wtoken) {
                        k->wtoken = l->token;
                }
                k->any = true;
                if (!l->write) {
                        continue;
                }
                writes++;
                if (l->based != k->version) {
                        if (k->version > 0) {
                                check_note(
                                    &bad,
                                    "register %s: lost update: w%d's write "
                                    "(token %" PRIu64
                                    ") based on version %" PRIu64
                                    " accepted at version %" PRIu64
                                    ", last written by w%d (token %" PRIu64
                                    ") (register.log:%u)",
                                    run_name(r, l->key), l->worker, l->token,
                                    l->based, k->version, k->last_worker,
                                    k->last_token, l->line);
                        } else {
                                check_note(&bad,
                                           "register %s: w%d's write based on "
                                           "version %" PRIu64
                                           " accepted at version 0 "
                                           "(register.log:%u)",
                                           run_name(r, l->key), l->worker,
                                           l->based, l->line);
                        }
                }
                k->version = l->version;
                k->last_worker = l->worker;
                k->last_token = l->token;
        }
        if (bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu violations)", bad.first,
                          bad.count);
        } else {
                check_set(
                    res, CHECK_PASS,
                    "%zu accepted writes on %zu keys: tokens non-decreasing "
                    "(readers': never below a writer's), every write based on "
                    "the current version (%zu malformed or torn register "
                    "lines skipped)",
                    writes, n_keys, rl->log.n_bad + rl->log.n_torn);
        }
        free(keys);
}
