/* libbaton's cluster administration calls (include/baton.h): the status
 * of a node and of the cluster, and ending another client's session or
 * grant (membership and leadership: members.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../proto/proto.h"
#include "client.h"
#include "clock.h"
#include "members.h"
#include "probe.h"
#include "request.h"

int baton_status(baton_client *c, const char *endpoint,
                 struct baton_status *out)
{
        int64_t deadline;
        const struct baton_member *m;
        struct request *r;
        char leader[sizeof out->endpoint];
        int rv;

        if (c == NULL || out == NULL) {
                return BATON_EINVAL;
        }
        memset(out, 0, sizeof *out);
        deadline = clock_after(clock_now_ms(), c->opts.request_timeout_ms);
        if (endpoint != NULL) {
                return probe_status(endpoint, c->tls, deadline, out);
        }
        /* Whichever node the handle is connected to answers; if it is not
         * the leader, ask the leader it names. */
        client_lock(c);
        r = request_empty(PROTO_STATUS);
        if (r != NULL) {
                r->reply = calloc(1, sizeof *r->reply);
        }
        if (r == NULL || r->reply == NULL) {
                request_free(r);
                client_unlock(c);
                return BATON_ENOMEM;
        }
        rv = client_roundtrip(c, r, deadline);
        if (rv == 0) {
                rv = r->status;
                if (rv == 0) {
                        *out = *r->reply;
                }
                registry_drop(&c->core.registry, r);
        }
        client_unlock(c);
        if (rv != 0 || out->role == BATON_ROLE_LEADER) {
                return rv;
        }
        m = out->leader_id != 0 ? members_find(out, out->leader_id) : NULL;
        if (m == NULL || m->client_address[0] == '\0') {
                return BATON_EUNAVAILABLE;
        }
        snprintf(leader, sizeof leader, "%s", m->client_address);
        return probe_status(leader, c->tls, deadline, out);
}

/* The node to ask: `endpoint`, or, for NULL, the leader baton_status()
 * finds, copied into `node` (`cap` bytes). The question then goes on a
 * connection of the call's own: an old node refuses it by closing the
 * connection it came on. */
static int node_to_ask(baton_client *c, const char **endpoint,
                       struct baton_status *out, char *node, size_t cap)
{
        int rv;

        if (*endpoint != NULL) {
                return 0;
        }
        rv = baton_status(c, NULL, out);
        if (rv != 0) {
                return rv;
        }
        snprintf(node, cap, "%s", out->endpoint);
        *endpoint = node;
        return 0;
}

int baton_status_version(baton_client *c, const char *endpoint,
                         struct baton_status *out,
                         struct baton_node_version *version)
{
        char node[sizeof out->endpoint];
        int rv;

        if (c == NULL || out == NULL || version == NULL) {
                return BATON_EINVAL;
        }
        memset(version, 0, sizeof *version);
        rv = node_to_ask(c, &endpoint, out, node, sizeof node);
        if (rv != 0) {
                return rv;
        }
        return probe_status_version(
            endpoint, c->tls,
            clock_after(clock_now_ms(), c->opts.request_timeout_ms), out,
            version);
}

int baton_status_alarms(baton_client *c, const char *endpoint,
                        struct baton_status *out,
                        struct baton_node_version *version,
                        struct baton_node_alarms *alarms)
{
        char node[sizeof out->endpoint];
        int rv;

        if (c == NULL || out == NULL || version == NULL || alarms == NULL) {
                return BATON_EINVAL;
        }
        memset(version, 0, sizeof *version);
        memset(alarms, 0, sizeof *alarms);
        rv = node_to_ask(c, &endpoint, out, node, sizeof node);
        if (rv != 0) {
                return rv;
        }
        return probe_status_alarms(
            endpoint, c->tls,
            clock_after(clock_now_ms(), c->opts.request_timeout_ms), out,
            version, alarms);
}

int baton_session_revoke(baton_client *c, uint64_t session)
{
        struct command k;
        struct request *r;
        int rv;

        if (c == NULL || session == 0) {
                return BATON_EINVAL;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_REVOKE;
        k.session = session;
        r = request_command(&k, &rv);
        if (r == NULL) {
                return rv;
        }
        /* Not a command of the handle's session, whichever it names. */
        r->kind = REQUEST_FOREIGN;
        return client_ask(c, r);
}

int baton_revoke(baton_client *c, const char *name, uint64_t session,
                 uint64_t token)
{
        struct command k;
        struct request *r;
        uint8_t len;
        int rv;

        if (c == NULL || session == 0 || token == 0) {
                return BATON_EINVAL;
        }
        rv = client_check_name(name, &len);
        if (rv != 0) {
                return rv;
        }
        memset(&k, 0, sizeof k);
        k.type = COMMAND_REVOKE_LOCK;
        k.session = session;
        k.token = token;
        k.name = name;
        k.name_len = len;
        r = request_command(&k, &rv);
        if (r == NULL) {
                return rv;
        }
        r->kind = REQUEST_FOREIGN; /* as baton_session_revoke()'s */
        return client_ask(c, r);
}
