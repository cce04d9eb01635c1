/* What a node's raft instance says of itself, in the wire's words: the
 * fields of a STATUS reply and who is a member. */
#include "raftview.h"

#include <string.h>

void raftview_status(struct raft *r, raftview_address_fn address, void *data,
                     struct proto_status *st)
{
        const struct raft_configuration *conf = &r->configuration;
        raft_id leader = 0;
        const char *leader_address = NULL;
        unsigned i;

        memset(st, 0, sizeof *st);
        raft_leader(r, &leader, &leader_address);
        st->role = (uint8_t)raft_state(r);
        st->term = raft_current_term(r);
        st->leader_id = leader;
        st->commit_index = raft_commit_index(r);
        st->applied_index = raft_last_applied(r);
        st->last_index = raft_last_index(r);
        for (i = 0; i < conf->n && i < PROTO_MAX_MEMBERS; i++) {
                const struct raft_server *s = &conf->servers[i];
                struct proto_member *m = &st->members[st->n_members++];
                const char *client = address(data, s->id);

                m->id = s->id;
                m->role = (uint8_t)s->role;
                m->raft_address.p = s->address;
                m->raft_address.len = (uint8_t)strlen(s->address);
                m->client_address.p = client;
                m->client_address.len = (uint8_t)strlen(client);
        }
}

bool raftview_has_member(const struct raft *r, uint64_t id,
                         const char *raft_address)
{
        const struct raft_configuration *conf = &r->configuration;
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                const struct raft_server *s = &conf->servers[i];

                if (s->id == id || (raft_address != NULL &&
                                    strcmp(s->address, raft_address) == 0)) {
                        return true;
                }
        }
        return false;
}
