/* A STATUS reply copied into the public struct baton_status and struct
 * baton_node_version. */
#include <stdio.h>
#include <string.h>

#include "../../include/baton/cluster.h"
#include "proto.h"

static void copy_string(char *dst, size_t cap, const struct proto_string *s)
{
        size_t n = s->len < cap - 1 ? s->len : cap - 1;

        if (n > 0) {
                memcpy(dst, s->p, n);
        }
        dst[n] = '\0';
}

void proto_status_export(struct baton_status *out, const char *endpoint,
                         const struct proto_status *ps)
{
        unsigned i;

        memset(out, 0, sizeof *out);
        snprintf(out->endpoint, sizeof out->endpoint, "%s",
                 endpoint != NULL ? endpoint : "");
        out->id = ps->id;
        out->role = ps->role;
        out->term = ps->term;
        out->leader_id = ps->leader_id;
        out->commit_index = ps->commit_index;
        out->applied_index = ps->applied_index;
        out->last_index = ps->last_index;
        out->sessions = ps->sessions;
        out->locks = ps->locks;
        out->waiters = ps->waiters;
        out->n_members = ps->n_members;
        for (i = 0; i < ps->n_members; i++) {
                out->members[i].id = ps->members[i].id;
                out->members[i].role = ps->members[i].role;
                copy_string(out->members[i].raft_address,
                            sizeof out->members[i].raft_address,
                            &ps->members[i].raft_address);
                copy_string(out->members[i].client_address,
                            sizeof out->members[i].client_address,
                            &ps->members[i].client_address);
        }
}

void proto_versions_export(struct baton_node_version *out, uint8_t protocol,
                           const struct proto_versions *v)
{
        memset(out, 0, sizeof *out);
        out->protocol = protocol;
        if (v == NULL) {
                return;
        }
        copy_string(out->release, sizeof out->release, &v->release);
        out->command = v->command;
        out->snapshot = v->snapshot;
        out->container = v->container;
}
