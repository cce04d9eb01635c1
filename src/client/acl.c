/* libbaton's calls on the cluster's access list (include/baton.h): ACL
 * requests sent once to the leader, as membership changes are. */
#include <stdlib.h>
#include <string.h>

#include "../proto/proto.h"
#include "client.h"
#include "errmsg.h"
#include "members.h"

/* Copy an ACL_REPLY's rules into `out`. */
static int take_list(void *data, const uint8_t *body, size_t len)
{
        struct baton_acl *out = data;
        struct proto_acl_reply *r = calloc(1, sizeof *r);
        unsigned i;
        int rv;

        if (r == NULL) {
                return BATON_ENOMEM;
        }
        rv = proto_read_acl_reply(body, len, r);
        if (rv == 0 && r->n > 0 &&
            (out->rules = calloc(r->n, sizeof out->rules[0])) == NULL) {
                rv = BATON_ENOMEM;
        }
        if (rv == 0) {
                out->seeded = r->seeded;
                out->default_role = r->default_role;
                out->n_rules = r->n;
                for (i = 0; i < r->n; i++) {
                        memcpy(out->rules[i].identity, r->rules[i].identity.p,
                               r->rules[i].identity.len);
                        out->rules[i].role = r->rules[i].role;
                }
        }
        free(r);
        return rv;
}

static int refused(int rv, const char *identity);

int baton_acl_list(baton_client *c, struct baton_acl *out)
{
        struct proto_acl_request req = {.op = PROTO_ACL_LIST};
        struct members_reply reply = {PROTO_ACL_REPLY, take_list, out};
        uint8_t frame[MEMBERS_FRAME_MAX];
        struct proto_result res;
        bool unknown = false;
        int rv;

        if (c == NULL || out == NULL) {
                return BATON_EINVAL;
        }
        memset(out, 0, sizeof *out);
        rv =
            members_ask(c, frame, proto_write_acl(frame, sizeof frame, 0, &req),
                        true, &reply, &res, &unknown);
        if (rv == 0 && out->n_rules == 0 && out->rules == NULL &&
            res.status != 0) {
                rv = res.status; /* a RESULT: refused (BATON_EPERM) */
        }
        if (rv == BATON_EPERM || rv == BATON_EMALFORMED) {
                rv = refused(rv, "");
        }
        if (rv != 0) {
                baton_acl_free(out);
        }
        return rv;
}

void baton_acl_free(struct baton_acl *acl)
{
        if (acl != NULL) {
                free(acl->rules);
                acl->rules = NULL;
                acl->n_rules = 0;
        }
}

/* The detail of a refused change of `identity`. */
static int refused(int rv, const char *identity)
{
        switch (rv) {
        case BATON_ENOTFOUND:
                return errmsg_set(rv, "no rule for '%s' in the access list",
                                  identity);
        case BATON_EINVAL:
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

static int change(baton_client *c, uint8_t op, const char *identity, int role)
{
        struct proto_acl_request req = {.op = op};
        uint8_t frame[MEMBERS_FRAME_MAX];
        struct proto_result res;
        bool unknown = false;
        size_t n;
        int rv;

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
        /* A SET or REMOVE done twice leaves the same list: safe to send
         * again after an unknown outcome. */
        rv =
            members_ask(c, frame, proto_write_acl(frame, sizeof frame, 0, &req),
                        true, NULL, &res, &unknown);
        rv = rv != 0 ? rv : res.status;
        if (rv == BATON_ENOTFOUND && unknown && op == PROTO_ACL_REMOVE) {
                return 0; /* removed by a send whose answer was lost */
        }
        return refused(rv, identity);
}

int baton_acl_set(baton_client *c, const char *identity, int role)
{
        return change(c, PROTO_ACL_SET, identity, role);
}

int baton_acl_remove(baton_client *c, const char *identity)
{
        return change(c, PROTO_ACL_REMOVE, identity, 0);
}
