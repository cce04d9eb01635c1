/* The negative controls of test_sim's checks. */
#include "breaks.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../src/fsm/lockfsm.h"
#include "aclcheck.h"
#include "answers.h"

const char *const breaks_names[N_BREAKS] = {
    "none",       "drop-grant", "reapply", "blind", "split-multi",
    "skip-watch", "answer",     "index",   "leak",  "acl-noop"};

/* ------------------------------------------------------------------------
 * Negative controls: corrupt the checker's input on purpose
 */

/* Whether events `a` and `b` are GRANTs of one multi-lock's names. */
static bool same_multi(const struct simevent *a, const struct simevent *b)
{
        return a->type == LOCKFSM_EV_GRANT && b->type == LOCKFSM_EV_GRANT &&
               a->index == b->index && a->session == b->session &&
               a->seq == b->seq;
}

/* A GRANT event of node `n`'s first multi-lock granted by one entry, the
 * second of its names or later, whose lock no other event of that entry
 * names (so that moving it breaks the multi-lock and nothing else); 0 if
 * none. */
static size_t multi_grant(const struct simnode *n)
{
        for (size_t j = 1; j < n->n_events; j++) {
                const struct simevent *b = &n->events[j];
                bool group = same_multi(&n->events[j - 1], b);
                size_t k;

                for (k = j;
                     group && k > 0 && n->events[k - 1].index == b->index;
                     k--) {
                }
                for (;
                     group && k < n->n_events && n->events[k].index == b->index;
                     k++) {
                        group = k == j ||
                                n->events[k].name_len != b->name_len ||
                                memcmp(n->events[k].name, b->name,
                                       b->name_len) != 0;
                }
                if (group) {
                        return j;
                }
        }
        return 0;
}

/* BREAK_SPLIT_MULTI: on every node alike, the GRANT of one name of a
 * multi-lock moves to the next entry (with that entry's index as its
 * token), so that its names are granted by two entries. */
static int split_multi(struct sim *s, char *reason, size_t cap)
{
        size_t j = multi_grant(&s->c.nodes[0]);
        const struct simentry *e;
        uint64_t to;
        unsigned i;

        if (j == 0) {
                return fail(reason, cap,
                            "break split-multi: no multi-lock "
                            "granted to split");
        }
        e = simnode_entry_at(&s->c.nodes[0], s->c.nodes[0].events[j].index);
        if (e == NULL ||
            e + 1 == s->c.nodes[0].entries + s->c.nodes[0].n_entries) {
                return fail(reason, cap, "break split-multi: no next entry");
        }
        to = e[1].index;
        for (i = 0; i < s->n; i++) {
                struct simnode *n = &s->c.nodes[i];
                struct simevent ev;
                size_t k;

                if (multi_grant(n) != j) {
                        return fail(reason, cap,
                                    "break split-multi: node %u differs", i);
                }
                ev = n->events[j];
                ev.index = to;
                ev.token = to;
                for (k = j; k + 1 < n->n_events && n->events[k + 1].index < to;
                     k++) {
                        n->events[k] = n->events[k + 1];
                }
                n->events[k] = ev;
        }
        say(s,
            "break: moved a GRANT of the multi-lock at %" PRIu64 " to %" PRIu64,
            e->index, to);
        return 0;
}

/* Node 1's watchers miss the event in the middle of the run, as a server
 * that drops one when its leadership changes would have them. */
static int skip_watch(struct sim *s, char *reason, size_t cap)
{
        struct simnode *n = &s->c.nodes[1];
        size_t at = 0, k = 0;

        while (at + PROTO_HEADER_SIZE <= n->n_watched) {
                size_t len = PROTO_HEADER_SIZE + (size_t)n->watched[at + 4] +
                             ((size_t)n->watched[at + 5] << 8);
                if (k++ == n->n_watch_events / 2) {
                        memmove(n->watched + at, n->watched + at + len,
                                n->n_watched - at - len);
                        n->n_watched -= len;
                        n->n_watch_events--;
                        say(s, "break: node 1's watchers miss event %zu",
                            k - 1);
                        return 0;
                }
                at += len;
        }
        return fail(reason, cap, "break skip-watch: no watch event");
}

/* BREAK_DROP_GRANT: the GRANT at `token` goes from every node alike, so
 * that only the check of the clients' answers can notice. */
static void drop_grant(struct sim *s, uint64_t token)
{
        for (unsigned i = 0; i < s->n; i++) {
                struct simnode *n = &s->c.nodes[i];

                for (size_t j = 0; j < n->n_events; j++) {
                        if (n->events[j].type == LOCKFSM_EV_GRANT &&
                            n->events[j].index == token) {
                                memmove(&n->events[j], &n->events[j + 1],
                                        (n->n_events - j - 1) *
                                            sizeof n->events[0]);
                                n->n_events--;
                                break;
                        }
                }
        }
        say(s, "break: dropped the GRANT at %" PRIu64, token);
}

/* BREAK_REAPPLY: the last node applies the entry at `index` again. */
static int reapply(struct sim *s, uint64_t index, char *reason, size_t cap)
{
        struct simnode *n = &s->c.nodes[s->n - 1];
        const struct simentry *e = simnode_entry_at(n, index);
        struct lockfsm *f = simcluster_lockfsm(&s->c, s->n - 1);
        struct lockfsm_result r;

        if (e == NULL) {
                return fail(reason, cap, "break reapply: no entry %" PRIu64,
                            index);
        }
        if (lockfsm_apply(f, lockfsm_last_index(f) + 1, e->bytes, e->len, &r) !=
            0) {
                return fail(reason, cap, "break: re-apply failed");
        }
        say(s, "break: node %u re-applied entry %" PRIu64, s->n - 1, e->index);
        return 0;
}

int breaks_apply(struct sim *s, enum brk brk, char *reason, size_t cap)
{
        if (brk == BREAK_NONE || brk == BREAK_BLIND || brk == BREAK_LEAK ||
            brk == BREAK_INDEX) {
                return 0;
        }
        if (brk == BREAK_SPLIT_MULTI) {
                return split_multi(s, reason, cap);
        }
        if (brk == BREAK_SKIP_WATCH) {
                return skip_watch(s, reason, cap);
        }
        if (brk == BREAK_ANSWER) {
                return answers_break(s, reason, cap);
        }
        if (brk == BREAK_ACL_NOOP) {
                return aclcheck_break(s, reason, cap);
        }
        /* The first grant a client was told of, by its ACQUIRE's own
         * entry. */
        for (size_t k = 0; k < s->n_answers; k++) {
                const struct proto_result *res = &s->answers[k].res;

                if (res->status != 0 || res->kind != PROTO_KIND_GRANTED ||
                    res->token != res->index) {
                        continue;
                }
                if (brk == BREAK_DROP_GRANT) {
                        drop_grant(s, res->token);
                        return 0;
                }
                return reapply(s, res->index, reason, cap);
        }
        return fail(reason, cap, "break %s: no grant told to corrupt",
                    breaks_names[brk]);
}
