/* The access list's check of a simulated run: every node had the same
 * list after each index, the one the log's ACL entries make. */
#include "aclcheck.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../../src/fsm/entry.h"
#include "../../src/lib/cursor.h"
#include "../lib/simacl.h"

/* A rule on names or a quota, as the model keeps it: unsorted, by key
 * (kind, subject, prefix) or subject. acl_rule_put() and acl_quota_put()
 * only lay the expected list out in the replicas' order. */
struct mrule {
        uint8_t kind; /* ACL_RULE_PREFIX, ACL_RULE_GROUP_PREFIX; 0: quota */
        uint8_t perms;
        uint8_t subject_len;
        uint8_t prefix_len;
        char subject[ACL_IDENTITY_MAX + 1];
        char prefix[ACL_PREFIX_LEN_MAX + 1];
        uint32_t limit[ACL_QUOTA_KINDS];
};

/* An ACL entry of node 0's log, and the list every node had after it. */
struct aclat {
        const struct simentry *e;
        uint64_t digest;
};

struct model {
        bool seeded;
        struct acl seed; /* its identity rules and default role */
        struct mrule rules[ACL_PREFIX_MAX];
        unsigned n_rules;
        struct mrule quotas[ACL_QUOTA_MAX];
        unsigned n_quotas;
        struct acl built; /* the expected list, laid out */
        uint64_t digest;  /* of `built`, as of the last change */
        struct aclat *at; /* node 0's ACL entries, in index order */
        size_t n_at;
};

static const char *mode_name(uint8_t mode)
{
        static const char *const names[] = {
            "SET",         "REMOVE",    "SEED",        "RULE_SET",
            "RULE_REMOVE", "QUOTA_SET", "QUOTA_REMOVE"};

        return mode < sizeof names / sizeof *names ? names[mode] : "?";
}

/* ------------------------------------------------------------------------
 * What the nodes recorded
 */

/* Every node that applied index i had the same list after it (the
 * entries are the same on every node: check (b) ran first). */
static int check_same_lists(struct sim *s, char *reason, size_t cap)
{
        const struct simnode *n0 = &s->c.nodes[0];

        for (unsigned i = 1; i < s->n; i++) {
                const struct simnode *n = &s->c.nodes[i];

                for (size_t k = 0; k < n->n_entries && k < n0->n_entries; k++) {
                        const struct simentry *x = &n0->entries[k];
                        const struct simentry *y = &n->entries[k];

                        if (x->index == y->index && x->acl == y->acl) {
                                continue;
                        }
                        s->fail_index = x->index;
                        return fail(reason, cap,
                                    "node %u's access list after entry "
                                    "%" PRIu64 " differs from node 0's "
                                    "(digest %016" PRIx64 ", node 0's "
                                    "%016" PRIx64 ")",
                                    i, y->index, y->acl, x->acl);
                }
        }
        return 0;
}

/* Each node's list now is the one it had after its last ACL entry. */
static int check_lists_now(struct sim *s, char *reason, size_t cap)
{
        for (unsigned i = 0; i < s->n; i++) {
                const struct simnode *n = &s->c.nodes[i];
                uint64_t last = SIMACL_ABSENT;
                uint64_t at = 0;
                uint64_t now = simacl_digest(raftfsm_acl(&n->rf));

                for (size_t k = n->n_entries; k > 0 && at == 0; k--) {
                        if (n->entries[k - 1].acl != 0) {
                                last = n->entries[k - 1].acl;
                                at = n->entries[k - 1].index;
                        }
                }
                if (now != last) {
                        return fail(reason, cap,
                                    "node %u's access list now differs from "
                                    "the one it had after its last ACL "
                                    "entry (%" PRIu64 ")",
                                    i, at);
                }
        }
        return 0;
}

/* ------------------------------------------------------------------------
 * The model
 */

static bool same_bytes(const char *a, size_t a_len, const char *b, size_t b_len)
{
        return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

/* The rule or quota `c` names, in `list` of `n`, or NULL. */
static struct mrule *find(struct mrule *list, unsigned n,
                          const struct mrule *key)
{
        for (unsigned i = 0; i < n; i++) {
                if (list[i].kind == key->kind &&
                    same_bytes(list[i].subject, list[i].subject_len,
                               key->subject, key->subject_len) &&
                    same_bytes(list[i].prefix, list[i].prefix_len, key->prefix,
                               key->prefix_len)) {
                        return &list[i];
                }
        }
        return NULL;
}

/* What the change `c` (a rule's or a quota's) names, into `key`. */
static void key_of(const struct command *c, struct mrule *key)
{
        bool rule = c->mode == COMMAND_ACL_RULE_SET ||
                    c->mode == COMMAND_ACL_RULE_REMOVE;
        struct rcursor r;

        memset(key, 0, sizeof *key);
        key->subject_len = c->name_len;
        memcpy(key->subject, c->name, c->name_len);
        if (rule && c->list_len >= 2) {
                key->kind = c->list[0];
                key->prefix_len = c->list[1];
                memcpy(key->prefix, c->list + 2, c->list[1]);
                /* lock and manage each include read (acl.h). */
                key->perms = c->role | ACL_PERM_READ;
        }
        if (c->mode == COMMAND_ACL_QUOTA_SET) {
                rcursor_init(&r, c->list, c->list_len);
                for (unsigned k = 0; k < ACL_QUOTA_KINDS; k++) {
                        key->limit[k] = rcursor_u32(&r);
                }
        }
}

/* Put `key` into `list` (`*n` of at most `max`), or replace the one of
 * its key: 0, or BATON_EINVAL when full. `*changed` when it was not
 * there as it is. */
static int put(struct mrule *list, unsigned *n, unsigned max,
               const struct mrule *key, bool *changed)
{
        struct mrule *r = find(list, *n, key);

        if (r == NULL && *n == max) {
                return BATON_EINVAL;
        }
        *changed = r == NULL || memcmp(r, key, sizeof *key) != 0;
        *(r != NULL ? r : &list[(*n)++]) = *key;
        return 0;
}

/* Take `key` out of `list`: 0, or BATON_ENOTFOUND. */
static int take(struct mrule *list, unsigned *n, const struct mrule *key,
                bool *changed)
{
        struct mrule *r = find(list, *n, key);

        if (r == NULL) {
                return BATON_ENOTFOUND;
        }
        *r = list[--*n];
        *changed = true;
        return 0;
}

/* The first SEED: its list, and its rules and quotas into the model's
 * lists. 0, or BATON_ECORRUPT (the list does not decode). */
static int seed(struct model *m, const struct command *c)
{
        if (acl_decode(&m->seed, c->list, c->list_len) != 0) {
                return BATON_ECORRUPT;
        }
        m->seeded = true;
        for (unsigned i = 0; i < m->seed.n_prefix; i++) {
                const struct acl_prefix_rule *p = &m->seed.prefix[i];
                struct mrule *r = &m->rules[m->n_rules++];
                r->kind = p->kind;
                r->perms = p->perms;
                r->subject_len = p->subject_len;
                r->prefix_len = p->prefix_len;
                memcpy(r->subject, p->subject, p->subject_len);
                memcpy(r->prefix, p->prefix, p->prefix_len);
        }
        for (unsigned i = 0; i < m->seed.n_quota; i++) {
                const struct acl_quota *q = &m->seed.quota[i];
                struct mrule *r = &m->quotas[m->n_quotas++];
                r->subject_len = q->subject_len;
                memcpy(r->subject, q->subject, q->subject_len);
                memcpy(r->limit, q->limit, sizeof r->limit);
        }
        m->seed.n_prefix = 0;
        m->seed.n_quota = 0;
        return 0;
}

/* Whether a quota set limits anything (a QUOTA_SET of none is
 * BATON_EINVAL). */
static bool limits_any(const struct mrule *q)
{
        for (unsigned k = 0; k < ACL_QUOTA_KINDS; k++) {
                if (q->limit[k] != 0) {
                        return true;
                }
        }
        return false;
}

/* The outcome the model gives the change `c`, which it applies;
 * `*changed` when the list changed. BATON_EINVAL for a SET or REMOVE of
 * an identity's role, which the simulation does not send. */
static int model_apply(struct model *m, const struct command *c, bool *changed)
{
        struct mrule key;

        *changed = false;
        if (c->mode == COMMAND_ACL_SEED) {
                if (m->seeded) {
                        return 0; /* the first one stands */
                }
                *changed = true;
                return seed(m, c);
        }
        if (!m->seeded) {
                return BATON_EBUSY;
        }
        key_of(c, &key);
        switch (c->mode) {
        case COMMAND_ACL_RULE_SET:
                return put(m->rules, &m->n_rules, ACL_PREFIX_MAX, &key,
                           changed);
        case COMMAND_ACL_RULE_REMOVE:
                return take(m->rules, &m->n_rules, &key, changed);
        case COMMAND_ACL_QUOTA_SET:
                return limits_any(&key) ? put(m->quotas, &m->n_quotas,
                                              ACL_QUOTA_MAX, &key, changed)
                                        : BATON_EINVAL;
        case COMMAND_ACL_QUOTA_REMOVE:
                return take(m->quotas, &m->n_quotas, &key, changed);
        default:
                return BATON_EINVAL;
        }
}

/* The digest of the list the model holds, laid out as the replicas keep
 * theirs. */
static uint64_t model_digest(struct model *m)
{
        unsigned i;

        if (!m->seeded) {
                return SIMACL_ABSENT;
        }
        acl_start(&m->built, m->seed.default_role);
        for (i = 0; i < m->seed.n; i++) {
                const struct acl_rule *r = &m->seed.rules[i];
                acl_put(&m->built, r->identity, r->len, r->role);
        }
        for (i = 0; i < m->n_rules; i++) {
                const struct mrule *r = &m->rules[i];
                acl_rule_put(&m->built, r->kind, r->subject, r->subject_len,
                             r->prefix, r->prefix_len, r->perms);
        }
        for (i = 0; i < m->n_quotas; i++) {
                const struct mrule *q = &m->quotas[i];
                acl_quota_put(&m->built, q->subject, q->subject_len, q->limit);
        }
        return simacl_digest(&m->built);
}

/* One ACL entry of node 0's log against the model: its outcome, and the
 * list after it. */
static int follow_entry(struct sim *s, struct model *m,
                        const struct simentry *e, char *reason, size_t cap)
{
        struct command c;
        bool changed;
        int want;

        if (entry_is_batch(e->bytes, e->len) || simentry_command(e, &c) != 0 ||
            c.type != COMMAND_ACL) {
                return fail(reason, cap,
                            "@%" PRIu64 ": an access list recorded after an "
                            "entry that is no ACL command",
                            e->index);
        }
        if (c.mode == COMMAND_ACL_SET || c.mode == COMMAND_ACL_REMOVE) {
                return fail(reason, cap,
                            "@%" PRIu64 ": an ACL %s, which the model does "
                            "not follow",
                            e->index, mode_name(c.mode));
        }
        want = model_apply(m, &c, &changed);
        s->acl_entries++;
        s->acl_changes += changed;
        if (changed) {
                m->digest = model_digest(m);
        }
        if (e->res.status != want) {
                s->fail_index = e->index;
                return fail(reason, cap,
                            "@%" PRIu64 ": ACL %s applied with %s, the "
                            "model's outcome is %s",
                            e->index, mode_name(c.mode),
                            baton_strerror(e->res.status),
                            baton_strerror(want));
        }
        if (e->acl != m->digest) {
                s->fail_index = e->index;
                return fail(reason, cap,
                            "@%" PRIu64 ": the access list after ACL %s "
                            "(%s) is not the model's: %u rules on names "
                            "and %u quotas expected",
                            e->index, mode_name(c.mode),
                            changed ? "a change" : "no change", m->n_rules,
                            m->n_quotas);
        }
        m->at[m->n_at].e = e;
        m->at[m->n_at++].digest = e->acl;
        return 0;
}

/* Node 0's ACL entries, in order, against the model. */
static int follow_log(struct sim *s, struct model *m, char *reason, size_t cap)
{
        const struct simnode *n = &s->c.nodes[0];

        m->at = calloc(n->n_entries + 1, sizeof *m->at);
        if (m->at == NULL) {
                return fail(reason, cap, "out of memory in the checker");
        }
        for (size_t k = 0; k < n->n_entries; k++) {
                if (n->entries[k].acl != 0 &&
                    follow_entry(s, m, &n->entries[k], reason, cap) != 0) {
                        return -1;
                }
        }
        return 0;
}

/* ------------------------------------------------------------------------
 * Restores and answers
 */

/* The list the nodes had once they applied index `index`. */
static uint64_t list_at(const struct model *m, uint64_t index)
{
        size_t lo = 0, hi = m->n_at;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (m->at[mid].e->index <= index) {
                        lo = mid + 1;
                } else {
                        hi = mid;
                }
        }
        return lo > 0 ? m->at[lo - 1].digest : SIMACL_ABSENT;
}

static int check_samples(struct sim *s, const struct model *m, char *reason,
                         size_t cap)
{
        for (size_t k = 0; k < s->n_acl_samples; k++) {
                const struct aclsample *a = &s->acl_samples[k];

                if (a->digest != list_at(m, a->index)) {
                        s->fail_index = a->index;
                        return fail(reason, cap,
                                    "node %u's snapshot at %" PRIu64 " "
                                    "restores an access list other than the "
                                    "one every node had after that entry",
                                    a->node, a->index);
                }
        }
        return 0;
}

/* Whether the ACL entry `c` is the change `a` asked for. */
static bool asked(const struct aclanswer *a, const struct command *c)
{
        return c->mode == a->mode && c->role == a->role &&
               same_bytes(c->name, c->name_len, a->name, a->name_len) &&
               c->list_len == a->table_len &&
               (a->table_len == 0 ||
                memcmp(c->list, a->table, a->table_len) == 0);
}

/* A change answered 0 or BATON_ENOTFOUND is an ACL entry of the log, as
 * asked, with that outcome. Other answers (BATON_EUNKNOWN, refusals to
 * propose, BATON_EBUSY, which is also a core's refusal) are not
 * checked. */
static int check_answers(struct sim *s, const struct model *m, char *reason,
                         size_t cap)
{
        for (size_t k = 0; k < s->n_acl_answers; k++) {
                const struct aclanswer *a = &s->acl_answers[k];
                bool found = false;
                struct command c;

                if (a->status != 0 && a->status != BATON_ENOTFOUND) {
                        continue;
                }
                for (size_t j = 0; j < m->n_at && !found; j++) {
                        found = simentry_command(m->at[j].e, &c) == 0 &&
                                asked(a, &c) &&
                                m->at[j].e->res.status == a->status;
                }
                if (!found) {
                        return fail(reason, cap,
                                    "the administrator was told %s for ACL "
                                    "%s of '%.*s', which no ACL entry of "
                                    "the log gave it",
                                    baton_strerror(a->status),
                                    mode_name(a->mode), (int)a->name_len,
                                    a->name);
                }
        }
        return 0;
}

int check_acl(struct sim *s, char *reason, size_t cap)
{
        struct model *m;
        int rv;

        s->acl_entries = 0;
        s->acl_changes = 0;
        if (s->acl_error[0] != '\0') {
                return fail(reason, cap, "access list: %s", s->acl_error);
        }
        if (check_same_lists(s, reason, cap) != 0) {
                return -1;
        }
        m = calloc(1, sizeof *m);
        if (m == NULL) {
                return fail(reason, cap, "out of memory in the checker");
        }
        m->digest = SIMACL_ABSENT;
        rv = follow_log(s, m, reason, cap);
        if (rv == 0) {
                rv = check_lists_now(s, reason, cap);
        }
        if (rv == 0) {
                rv = check_samples(s, m, reason, cap);
        }
        if (rv == 0) {
                rv = check_answers(s, m, reason, cap);
        }
        free(m->at);
        free(m);
        return rv;
}

int aclcheck_break(struct sim *s, char *reason, size_t cap)
{
        const struct simnode *n0 = &s->c.nodes[0];
        uint64_t before = SIMACL_ABSENT;
        struct command c;

        for (size_t k = 0; k < n0->n_entries; k++) {
                const struct simentry *e = &n0->entries[k];

                if (e->acl == 0) {
                        continue;
                }
                if (e->acl != before && simentry_command(e, &c) == 0 &&
                    c.mode == COMMAND_ACL_RULE_SET) {
                        for (unsigned i = 0; i < s->n; i++) {
                                if (k < s->c.nodes[i].n_entries) {
                                        s->c.nodes[i].entries[k].acl = before;
                                }
                        }
                        say(s,
                            "break: the RULE_SET at %" PRIu64 " changed "
                            "no node's access list",
                            e->index);
                        return 0;
                }
                before = e->acl;
        }
        return fail(reason, cap,
                    "break acl-noop: no RULE_SET changed the "
                    "access list");
}
