/*
 * Checker S13 of a chaos run: the transfers workload's accounts keep their
 * total. The accounts are the register keys the register was started with
 * (its `init` lines: each one's starting balance). A transfer is one
 * worker's accepted requests with one token on accounts: it enters (reads)
 * two accounts, then writes both, moving an amount from one to the other.
 * Replaying the register log, the checker keeps every account's balance
 * and each transfer's delta (what its accepted writes added to the total:
 * 0 once both are written, the amount while it is half done).
 *
 * Whenever an account is read (an accepted ENTER or READ), the accounts
 * must sum to the starting total, plus the reader's own delta, plus the
 * deltas of transfers judged before. If they do not, each other transfer
 * still half done is judged against the reader's token, as S6 judges a
 * refusal: if every grant of its accounts at its token had ended by the
 * reader's grant (a holder paused past its TTL after its first write,
 * whose second the register then refused), it is a torn transfer, counted
 * (two fenced resources written one after the other cannot be made atomic
 * by fencing); if one had not ended, two holders were inside at once:
 * FAIL; if the entry at its token granted that account to no one (a
 * holder writing an account it never locked): FAIL; if the apply logs do
 * not have that entry: UNKNOWN. Either way its delta is part of the
 * expected total from then on, so that one problem is reported once. A
 * transfer that read every account before writing must have seen them sum
 * to the expected total. At the end, the transfers left half done are
 * judged the same way against the end of the log.
 */
#include "check_transfers.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util.h"

#define XFER_KEYS 4 /* accounts one transfer names (the workload's: 2) */

/* One transfer: a worker's accepted requests with one token on accounts. */
struct xfer {
        int worker;
        uint64_t token;
        int keys[XFER_KEYS]; /* the accounts it read or wrote */
        size_t n_keys;
        int64_t delta;       /* what its accepted writes added to the total */
        size_t writes;       /* its accepted writes */
        size_t n_read;       /* accounts it read before its first write */
        uint64_t read_sum;   /* their balances' sum */
        unsigned first_line; /* its first accepted request */
        unsigned write_line; /* its first accepted write */
        bool judged;         /* found half done: its delta is expected */
};

struct xcheck {
        const struct run *r;
        bool *account; /* by name id */
        uint64_t *bal; /* by name id */
        size_t n_accounts;
        uint64_t total0; /* the starting total */
        uint64_t sum;    /* the accounts' sum now */
        uint64_t judged; /* the judged transfers' deltas (mod 2^64) */
        struct xfer *x;
        size_t n_x, cap_x;
        size_t reads, views, writes, transfers, torn, left;
        struct check_note bad, unknown;
};

/* The accounts and their starting balances, from the init lines. */
static void load_accounts(struct xcheck *c)
{
        const struct reglog *rl = &c->r->reglog;
        size_t i;

        for (i = 0; i < rl->n; i++) {
                const struct reglog_line *l = &rl->lines[i];
                if (l->op != REGLOG_INIT || c->account[l->key]) {
                        continue;
                }
                c->account[l->key] = true;
                c->bal[l->key] = l->value;
                c->total0 += l->value;
                c->n_accounts++;
        }
        c->sum = c->total0;
}

/* The transfer of `l`'s worker and token, created if new; creating one
 * forgets the worker's earlier transfers that are not half done. */
static struct xfer *xfer_of(struct xcheck *c, const struct reglog_line *l)
{
        struct xfer nx;
        size_t i = 0;

        for (i = 0; i < c->n_x; i++) {
                if (c->x[i].worker == l->worker && c->x[i].token == l->token) {
                        return &c->x[i];
                }
        }
        i = 0;
        while (i < c->n_x) {
                if (c->x[i].worker == l->worker && c->x[i].delta == 0) {
                        c->x[i] = c->x[--c->n_x];
                } else {
                        i++;
                }
        }
        memset(&nx, 0, sizeof nx);
        nx.worker = l->worker;
        nx.token = l->token;
        nx.first_line = l->line;
        c->transfers++;
        util_push((void **)&c->x, &c->n_x, &c->cap_x, &nx, sizeof nx);
        return &c->x[c->n_x - 1];
}

/* Whether `x` names account `key`; adds it if there is room. */
static bool names_key(struct xfer *x, int key)
{
        size_t i;

        for (i = 0; i < x->n_keys; i++) {
                if (x->keys[i] == key) {
                        return true;
                }
        }
        if (x->n_keys < XFER_KEYS) {
                x->keys[x->n_keys++] = key;
        }
        return false;
}

/* The total a read by `own` must see. */
static uint64_t expected(const struct xcheck *c, const struct xfer *own)
{
        return c->total0 + c->judged +
               (own != NULL && !own->judged ? (uint64_t)own->delta : 0);
}

/*
 * Judge `x`, half done when the accounts summed to `seen` instead of
 * `want` (`what` says where: a read, or the end), against grant index
 * `by`: a torn transfer whose holder's grants had all ended by then, else
 * FAIL (a grant still live, or none at its token), or UNKNOWN (the apply
 * logs miss its entry).
 */
static void judge(struct xcheck *c, struct xfer *x, uint64_t by,
                  const char *what)
{
        const struct run *r = c->r;
        const struct applylog_event *live;
        char when[64];
        size_t i;

        if (by == UINT64_MAX) {
                snprintf(when, sizeof when, "by the end of the log");
        } else {
                snprintf(when, sizeof when, "when grant %" PRIu64 " was made",
                         by);
        }
        x->judged = true;
        c->judged += (uint64_t)x->delta;
        for (i = 0; i < x->n_keys; i++) {
                int ended =
                    check_grants_ended(r, x->keys[i], x->token, by, &live);
                if (ended == 1) {
                        continue;
                }
                if (ended == 0) {
                        check_note(&c->bad,
                                   "%s: w%d's transfer with token %" PRIu64
                                   " was half done (its first write: "
                                   "register.log:%u), and its grant of %s "
                                   "(session %" PRIu64 ") had not ended %s",
                                   what, x->worker, x->token, x->write_line,
                                   run_name(r, x->keys[i]), live->session,
                                   when);
                } else if (applylog_find(&r->applylog, x->token) != NULL) {
                        check_note(&c->bad,
                                   "%s: w%d's transfer with token %" PRIu64
                                   " was half done (its first write: "
                                   "register.log:%u), and the entry at index "
                                   "%" PRIu64 " granted %s to no one: a "
                                   "holder without the account's lock",
                                   what, x->worker, x->token, x->write_line,
                                   x->token, run_name(r, x->keys[i]));
                } else {
                        check_note(&c->unknown,
                                   "%s: w%d's transfer with token %" PRIu64
                                   " was half done, and no node logged "
                                   "index %" PRIu64,
                                   what, x->worker, x->token, x->token);
                }
                return;
        }
        c->torn++;
}

/* An accepted read of an account by `own`: the accounts must sum to the
 * expected total, else the other transfers half done are judged; a
 * transfer that has read every account must have seen that total. */
static void on_read(struct xcheck *c, const struct reglog_line *l,
                    struct xfer *own)
{
        char what[300];
        uint64_t want = expected(c, own);
        size_t i;

        c->reads++;
        if (c->sum != want) {
                snprintf(what, sizeof what,
                         "w%d's read of %s with token %" PRIu64
                         " (register.log:%u) saw the accounts sum to %" PRIu64
                         ", not %" PRIu64,
                         l->worker, run_name(c->r, l->key), l->token, l->line,
                         c->sum, want);
                for (i = 0; i < c->n_x; i++) {
                        struct xfer *x = &c->x[i];
                        if (x != own && !x->judged && x->delta != 0) {
                                judge(c, x, l->token, what);
                        }
                }
        }
        if (own->writes > 0 || names_key(own, l->key)) {
                return; /* read after its writes, or again */
        }
        own->read_sum += l->value;
        if (++own->n_read < c->n_accounts) {
                return;
        }
        c->views++;
        if (own->read_sum != expected(c, own)) {
                check_note(&c->bad,
                           "w%d's reads of all %zu accounts with token %" PRIu64
                           " (register.log:%u to %u) saw them sum to %" PRIu64
                           ", not %" PRIu64,
                           l->worker, c->n_accounts, l->token, own->first_line,
                           l->line, own->read_sum, expected(c, own));
        }
}

/* An accepted write of an account by `own`. */
static void on_write(struct xcheck *c, const struct reglog_line *l,
                     struct xfer *own)
{
        uint64_t d = l->value - c->bal[l->key];

        c->writes++;
        (void)names_key(own, l->key);
        if (own->writes++ == 0) {
                own->write_line = l->line;
        }
        own->delta += (int64_t)d;
        if (own->judged) {
                c->judged += d;
        }
        c->sum += d;
        c->bal[l->key] = l->value;
}

/* The transfers left half done at the end, judged against its end. */
static void at_end(struct xcheck *c)
{
        char what[200];
        size_t i;

        snprintf(what, sizeof what,
                 "at the end the accounts sum to %" PRIu64 ", not %" PRIu64,
                 c->sum, c->total0);
        for (i = 0; i < c->n_x; i++) {
                if (!c->x[i].judged && c->x[i].delta != 0) {
                        c->left++;
                        judge(c, &c->x[i], UINT64_MAX, what);
                }
        }
}

static void verdict(const struct xcheck *c, struct check_result *res)
{
        if (c->bad.count > 0) {
                check_set(res, CHECK_FAIL, "%s (%zu violations)", c->bad.first,
                          c->bad.count);
        } else if (c->unknown.count > 0) {
                check_set(res, CHECK_UNKNOWN, "%s (%zu transfers unjudged)",
                          c->unknown.first, c->unknown.count);
        } else if (c->n_accounts == 0) {
                check_set(res, CHECK_PASS,
                          "no accounts (no transfers workload)");
        } else {
                check_set(res, CHECK_PASS,
                          "%zu accounts, %" PRIu64 " in all at the start, %zu "
                          "accepted writes in %zu transfers: %zu reads all "
                          "saw the expected total (the starting one, but for "
                          "what torn transfers left half done), %zu holders "
                          "read every account and saw it; %zu transfers torn "
                          "by a holder whose grants had ended (refused after "
                          "its first write; %zu found at the end); the "
                          "accounts end at %" PRIu64,
                          c->n_accounts, c->total0, c->writes, c->transfers,
                          c->reads, c->views, c->torn, c->left, c->sum);
        }
}

void check_s13(const struct run *r, struct check_result *res)
{
        const struct reglog *rl = &r->reglog;
        struct xcheck c;
        size_t i;

        memset(&c, 0, sizeof c);
        c.r = r;
        c.account = util_calloc(r->names.n, sizeof *c.account);
        c.bal = util_calloc(r->names.n, sizeof *c.bal);
        load_accounts(&c);
        for (i = 0; i < rl->n && c.n_accounts > 0; i++) {
                const struct reglog_line *l = &rl->lines[i];
                if (!c.account[l->key] || !l->ok || l->op == REGLOG_INIT ||
                    l->op == REGLOG_LEAVE) {
                        continue;
                }
                if (l->write) {
                        on_write(&c, l, xfer_of(&c, l));
                } else {
                        on_read(&c, l, xfer_of(&c, l));
                }
        }
        at_end(&c);
        verdict(&c, res);
        free(c.x);
        free(c.account);
        free(c.bal);
}
