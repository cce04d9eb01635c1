/* libbaton's calls on the cluster's access list (include/baton.h): ACL
 * requests sent once to the leader, as membership changes are. */
#include <stdlib.h>
#include <string.h>

#include "../proto/proto.h"
#include "client.h"
#include "errmsg.h"
#include "members.h"

/* The public permission bits are the wire's, sent as they are. */
_Static_assert(BATON_PERM_READ == PROTO_ACL_PERM_READ &&
                   BATON_PERM_LOCK == PROTO_ACL_PERM_LOCK &&
                   BATON_PERM_MANAGE == PROTO_ACL_PERM_MANAGE &&
                   BATON_ACL_PREFIX_MAX == PROTO_ACL_PREFIX_LEN_MAX,
               "libbaton's permissions are the protocol's");
_Static_assert((int)BATON_QUOTA_SESSIONS == PROTO_QUOTA_SESSIONS &&
                   (int)BATON_QUOTA_LOCKS == PROTO_QUOTA_LOCKS &&
                   (int)BATON_QUOTA_WAITERS == PROTO_QUOTA_WAITERS &&
                   (int)BATON_QUOTA_WATCHES == PROTO_QUOTA_WATCHES &&
                   (int)BATON_QUOTA_RATE == PROTO_QUOTA_RATE &&
                   BATON_QUOTA_KINDS == PROTO_QUOTA_KINDS &&
                   BATON_QUOTA_USED == PROTO_QUOTA_USED,
               "libbaton's quota kinds are the protocol's");

/* How baton_rule_set() and batonctl name a group: "group:NAME". */
#define GROUP_TAG     "group:"
#define GROUP_TAG_LEN (sizeof GROUP_TAG - 1)

/* Where a listing goes: the role rules into `acl`, the rules on name
 * prefixes into `rules`, the quotas into `quotas` (each NULL: not
 * wanted). */
struct listing {
        struct baton_acl *acl;
        struct baton_rules *rules;
        struct baton_quotas *quotas;
        bool taken; /* an ACL_REPLY came */
};

/* Copy the quotas of ACL_REPLY `r` into `out` (allocated for them). */
static void take_quotas(const struct proto_acl_reply *r,
                        struct baton_quotas *out)
{
        unsigned i, k;

        out->n = r->n_quota;
        for (i = 0; i < r->n_quota; i++) {
                const struct proto_acl_quota *x = &r->quotas[i];
                struct baton_quota *y = &out->quotas[i];
                memcpy(y->subject, x->subject.p, x->subject.len);
                for (k = 0; k < BATON_QUOTA_KINDS; k++) {
                        y->limits[k] = x->limits[k];
                }
                for (k = 0; k < BATON_QUOTA_USED; k++) {
                        y->used[k] = x->used[k];
                }
        }
}

/* Copy an ACL_REPLY's rules into `data`'s listing; the reply's strings
 * are at most 255 bytes, so each fits its field with its NUL (calloc's
 * zeroes). */
static int take_list(void *data, const uint8_t *body, size_t len)
{
        struct listing *out = data;
        struct baton_acl *acl = out->acl;
        struct baton_rules *rules = out->rules;
        struct baton_quotas *quotas = out->quotas;
        struct proto_acl_reply *r = calloc(1, sizeof *r);
        unsigned i;
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_acl_reply(body, len, r);
        if (rv == 0 && acl != NULL && r->n > 0 &&
            (acl->rules = calloc(r->n, sizeof acl->rules[0])) == NULL) {
                rv = BATON_ENOMEM;
        }
        if (rv == 0 && rules != NULL && r->n_prefix > 0 &&
            (rules->rules = calloc(r->n_prefix, sizeof rules->rules[0])) ==
                NULL) {
                rv = BATON_ENOMEM;
        }
        if (rv == 0 && quotas != NULL && r->n_quota > 0 &&
            (quotas->quotas = calloc(r->n_quota, sizeof quotas->quotas[0])) ==
                NULL) {
                rv = BATON_ENOMEM;
        }
        if (rv == 0) {
                out->taken = true;
        }
        if (rv == 0 && acl != NULL) {
                acl->seeded = r->seeded;
                acl->default_role = r->default_role;
                acl->n_rules = r->n;
                for (i = 0; i < r->n; i++) {
                        memcpy(acl->rules[i].identity, r->rules[i].identity.p,
                               r->rules[i].identity.len);
                        acl->rules[i].role = r->rules[i].role;
                }
        }
        if (rv == 0 && rules != NULL) {
                rules->n = r->n_prefix;
                for (i = 0; i < r->n_prefix; i++) {
                        const struct proto_acl_prefix_rule *x = &r->prefix[i];
                        struct baton_acl_prefix_rule *y = &rules->rules[i];
                        memcpy(y->subject, x->subject.p, x->subject.len);
                        y->group = x->kind == PROTO_ACL_KIND_GROUP_PREFIX;
                        memcpy(y->prefix, x->prefix.p, x->prefix.len);
                        y->perms = x->perms;
                }
        }
        if (rv == 0 && quotas != NULL) {
                take_quotas(r, quotas);
        }
        free(r);
        return rv;
}

static int refused(int rv, const struct proto_acl_request *req);

/* Ask the leader for the access list, into `out` (zeroed by the caller):
 * 0 or the error, with its detail. */
static int list(baton_client *c, struct listing *out)
{
        struct proto_acl_request req = {.op = PROTO_ACL_LIST};
        struct members_reply reply = {PROTO_ACL_REPLY, take_list, out};
        uint8_t frame[MEMBERS_FRAME_MAX];
        struct proto_result res;
        bool unknown = false;
        int rv;

        rv =
            members_ask(c, frame, proto_write_acl(frame, sizeof frame, 0, &req),
                        true, &reply, &res, &unknown);
        if (rv == 0 && !out->taken && res.status != 0) {
                rv = res.status; /* a RESULT: refused (BATON_EPERM) */
        }
        if (rv == BATON_EPERM || rv == BATON_EMALFORMED) {
                rv = refused(rv, &req);
        }
        return rv;
}

/* Ask for the access list into the parts `l` wants, zeroed first and
 * freed again when the call fails. */
static int list_into(baton_client *c, struct listing *l)
{
        int rv = BATON_EINVAL;

        if (l->acl != NULL) {
                memset(l->acl, 0, sizeof *l->acl);
        }
        if (l->rules != NULL) {
                memset(l->rules, 0, sizeof *l->rules);
        }
        if (l->quotas != NULL) {
                memset(l->quotas, 0, sizeof *l->quotas);
        }
        if (c != NULL) {
                rv = list(c, l);
        }
        if (rv != 0) {
                baton_acl_free(l->acl);
                baton_rules_free(l->rules);
                baton_quotas_free(l->quotas);
        }
        return rv;
}

int baton_acl_list(baton_client *c, struct baton_acl *out)
{
        if (out == NULL) {
                return BATON_EINVAL;
        }
        return list_into(c, &(struct listing){.acl = out});
}

void baton_acl_free(struct baton_acl *acl)
{
        if (acl != NULL) {
                free(acl->rules);
                acl->rules = NULL;
                acl->n_rules = 0;
        }
}

int baton_rule_list(baton_client *c, struct baton_rules *out)
{
        if (out == NULL) {
                return BATON_EINVAL;
        }
        return list_into(c, &(struct listing){.rules = out});
}

void baton_rules_free(struct baton_rules *r)
{
        if (r != NULL) {
                free(r->rules);
                r->rules = NULL;
                r->n = 0;
        }
}

int baton_quota_list(baton_client *c, struct baton_quotas *out)
{
        if (out == NULL) {
                return BATON_EINVAL;
        }
        return list_into(c, &(struct listing){.quotas = out});
}

void baton_quotas_free(struct baton_quotas *q)
{
        if (q != NULL) {
                free(q->quotas);
                q->quotas = NULL;
                q->n = 0;
        }
}

const char *baton_quota_name(int kind)
{
        return proto_quota_name(kind);
}

static bool is_quota(const struct proto_acl_request *req)
{
        return req->op == PROTO_ACL_QUOTA_SET ||
               req->op == PROTO_ACL_QUOTA_REMOVE;
}

static bool is_rule(const struct proto_acl_request *req)
{
        return req->op == PROTO_ACL_RULE_SET ||
               req->op == PROTO_ACL_RULE_REMOVE;
}

/* The detail of a refused ACL request `req`: of a role rule's change the
 * words libbaton always gave, of a prefix rule's its own. */
static int refused(int rv, const struct proto_acl_request *req)
{
        const char *group =
            req->kind == PROTO_ACL_KIND_GROUP_PREFIX ? GROUP_TAG : "";

        switch (rv) {
        case BATON_ENOTFOUND:
                if (is_quota(req)) {
                        return errmsg_set(rv,
                                          "no quota of '%.*s' in the access "
                                          "list",
                                          (int)req->identity.len,
                                          req->identity.p);
                }
                if (is_rule(req)) {
                        return errmsg_set(rv,
                                          "no rule of '%s%.*s' on \"%.*s\" in "
                                          "the access list",
                                          group, (int)req->identity.len,
                                          req->identity.p, (int)req->prefix.len,
                                          req->prefix.p != NULL ? req->prefix.p
                                                                : "");
                }
                return errmsg_set(rv, "no rule for '%.*s' in the access list",
                                  (int)req->identity.len, req->identity.p);
        case BATON_EINVAL:
                if (is_quota(req)) {
                        return errmsg_set(rv,
                                          "the access list is full: it has "
                                          "%d quotas",
                                          PROTO_ACL_QUOTA_MAX);
                }
                if (is_rule(req)) {
                        return errmsg_set(rv,
                                          "the access list is full: it has "
                                          "%d rules on names, or their size "
                                          "would pass its limit",
                                          PROTO_ACL_PREFIX_MAX);
                }
                return errmsg_set(rv,
                                  "the access list would have no admin left, "
                                  "or it is full (%d rules)",
                                  PROTO_ACL_RULES_MAX);
        case BATON_EBUSY:
                return errmsg_set(rv, "the cluster's access list is being "
                                      "seeded: try again");
        case BATON_EPERM:
                return errmsg_set(rv, "permission denied: the access list "
                                      "needs the admin role");
        case BATON_EMALFORMED:
                if (is_quota(req)) {
                        return errmsg_set(rv,
                                          "the leader does not know quotas: "
                                          "it runs an earlier release "
                                          "(batonctl status shows each "
                                          "node's version)");
                }
                if (is_rule(req)) {
                        return errmsg_set(rv,
                                          "the leader does not know rules on "
                                          "lock names: it runs an earlier "
                                          "release (batonctl status shows "
                                          "each node's version)");
                }
                return errmsg_set(rv, "the leader does not know ACL requests: "
                                      "it runs a release without the access "
                                      "list (batonctl status shows each "
                                      "node's version)");
        case BATON_EUNSUPPORTED:
                return errmsg_set(rv, "the cluster runs without TLS (tls = "
                                      "false): there are no identities, and "
                                      "every client is an administrator");
        default:
                return rv;
        }
}

/* Send the change `req` (its strings the caller's) to the leader: 0, or
 * the error, with its detail. */
static int change(baton_client *c, const struct proto_acl_request *req)
{
        uint8_t frame[MEMBERS_FRAME_MAX];
        struct proto_result res;
        bool unknown = false;
        bool remove = req->op == PROTO_ACL_REMOVE ||
                      req->op == PROTO_ACL_RULE_REMOVE ||
                      req->op == PROTO_ACL_QUOTA_REMOVE;
        int rv;

        /* Each change done twice leaves the same list: safe to send again
         * after an unknown outcome. */
        rv = members_ask(c, frame, proto_write_acl(frame, sizeof frame, 0, req),
                         true, NULL, &res, &unknown);
        rv = rv != 0 ? rv : res.status;
        if (rv == BATON_ENOTFOUND && unknown && remove) {
                return 0; /* removed by a send whose answer was lost */
        }
        return refused(rv, req);
}

/* A role rule's change. */
static int change_role(baton_client *c, uint8_t op, const char *identity,
                       int role)
{
        struct proto_acl_request req = {.op = op};
        size_t n;

        if (c == NULL || identity == NULL) {
                return BATON_EINVAL;
        }
        n = strlen(identity);
        if (n == 0 || n > BATON_ACL_IDENTITY_MAX) {
                return errmsg_set(BATON_EINVAL,
                                  "an identity is 1..%d bytes, not %zu",
                                  BATON_ACL_IDENTITY_MAX, n);
        }
        if (role < BATON_ACCESS_NONE || role > BATON_ACCESS_ADMIN) {
                return errmsg_set(BATON_EINVAL, "role %d is not a role", role);
        }
        req.role = (uint8_t)role;
        req.identity.p = identity;
        req.identity.len = (uint8_t)n;
        return change(c, &req);
}

int baton_acl_set(baton_client *c, const char *identity, int role)
{
        return change_role(c, PROTO_ACL_SET, identity, role);
}

int baton_acl_remove(baton_client *c, const char *identity)
{
        return change_role(c, PROTO_ACL_REMOVE, identity, 0);
}

/* A prefix rule's change; `perms` 0 for a remove. */
static int change_rule(baton_client *c, uint8_t op, const char *subject,
                       const char *prefix, int perms)
{
        struct proto_acl_request req = {.op = op,
                                        .kind = PROTO_ACL_KIND_PREFIX};
        size_t n, p;

        if (c == NULL) {
                return BATON_EINVAL;
        }
        if (subject == NULL || prefix == NULL) {
                return errmsg_set(BATON_EINVAL, "%s: NULL, not a string",
                                  subject == NULL ? "subject" : "prefix");
        }
        if (strncmp(subject, GROUP_TAG, GROUP_TAG_LEN) == 0) {
                req.kind = PROTO_ACL_KIND_GROUP_PREFIX;
                subject += GROUP_TAG_LEN;
        }
        n = strlen(subject);
        if (n == 0 || n > BATON_ACL_IDENTITY_MAX) {
                return errmsg_set(BATON_EINVAL, "%s is 1..%d bytes, not %zu",
                                  req.kind == PROTO_ACL_KIND_GROUP_PREFIX
                                      ? "subject: a group's name"
                                      : "subject: an identity",
                                  BATON_ACL_IDENTITY_MAX, n);
        }
        p = strlen(prefix);
        if (p > BATON_ACL_PREFIX_MAX) {
                return errmsg_set(BATON_EINVAL, "prefix: %zu bytes, at most %d",
                                  p, BATON_ACL_PREFIX_MAX);
        }
        if (op == PROTO_ACL_RULE_SET &&
            (perms <= 0 || (perms & ~PROTO_ACL_PERMS_ALL) != 0)) {
                return errmsg_set(BATON_EINVAL,
                                  "perms: %d is not a set of BATON_PERM_READ, "
                                  "BATON_PERM_LOCK and BATON_PERM_MANAGE",
                                  perms);
        }
        /* Lock and manage include read: sent as the cluster stores and
         * lists them. */
        req.role = (uint8_t)(perms != 0 ? perms | BATON_PERM_READ : 0);
        req.identity.p = subject;
        req.identity.len = (uint8_t)n;
        req.prefix.p = prefix;
        req.prefix.len = (uint8_t)p;
        return change(c, &req);
}

int baton_rule_set(baton_client *c, const char *subject, const char *prefix,
                   int perms)
{
        return change_rule(c, PROTO_ACL_RULE_SET, subject, prefix, perms);
}

int baton_rule_remove(baton_client *c, const char *subject, const char *prefix)
{
        return change_rule(c, PROTO_ACL_RULE_REMOVE, subject, prefix, 0);
}

/* A quota's change; `limits` NULL for a remove. */
static int change_quota(baton_client *c, uint8_t op, const char *subject,
                        const unsigned *limits)
{
        struct proto_acl_request req = {.op = op};
        bool any = false;
        size_t n;
        unsigned k;

        if (c == NULL) {
                return BATON_EINVAL;
        }
        if (subject == NULL) {
                return errmsg_set(BATON_EINVAL, "subject: NULL, not a string");
        }
        n = strlen(subject);
        if (n == 0 || n > BATON_ACL_IDENTITY_MAX) {
                return errmsg_set(BATON_EINVAL,
                                  "subject: an identity or \"*\" is 1..%d "
                                  "bytes, not %zu",
                                  BATON_ACL_IDENTITY_MAX, n);
        }
        for (k = 0; limits != NULL && k < BATON_QUOTA_KINDS; k++) {
                req.limits[k] = (uint32_t)limits[k];
                any = any || limits[k] != 0;
        }
        if (op == PROTO_ACL_QUOTA_SET && !any) {
                return errmsg_set(BATON_EINVAL,
                                  "a quota limits at least one of sessions, "
                                  "locks, waiters, watches and rate (to lift "
                                  "every limit, remove the quota)");
        }
        req.identity.p = subject;
        req.identity.len = (uint8_t)n;
        return change(c, &req);
}

int baton_quota_set(baton_client *c, const char *subject,
                    const unsigned limits[BATON_QUOTA_KINDS])
{
        if (limits == NULL && c != NULL) {
                return errmsg_set(BATON_EINVAL, "limits: NULL, not %d limits",
                                  BATON_QUOTA_KINDS);
        }
        return change_quota(c, PROTO_ACL_QUOTA_SET, subject, limits);
}

int baton_quota_remove(baton_client *c, const char *subject)
{
        return change_quota(c, PROTO_ACL_QUOTA_REMOVE, subject, NULL);
}
