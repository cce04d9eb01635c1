/* What the data directory checks need of a node's raft: who votes, and
 * where raft's configuration puts this node (peercheck.h, datadir.h). */
#include <stdio.h>
#include <string.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "node.h"
#include "nodecore.h"
#include "peercheck.h"

/* Whether `id` is a voter in raft's configuration now (peercheck.h). */
static bool is_voter(void *data, uint64_t id)
{
        struct node *n = data;
        const struct raft_configuration *conf;
        unsigned i;

        if (n->core == NULL) {
                return false;
        }
        conf = &n->core->raft.configuration;
        for (i = 0; i < conf->n; i++) {
                if (conf->servers[i].id == id) {
                        return conf->servers[i].role == RAFT_VOTER;
                }
        }
        return false;
}

static bool has(const struct raft_configuration *conf, uint64_t id)
{
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                if (conf->servers[i].id == id) {
                        return true;
                }
        }
        return false;
}

/* Whether `id` is in raft's configuration now, in any role. */
static bool is_member(void *data, uint64_t id)
{
        struct node *n = data;

        return n->core != NULL && has(&n->core->raft.configuration, id);
}

static bool is_leading(void *data)
{
        struct node *n = data;

        return n->core != NULL && raft_state(&n->core->raft) == RAFT_LEADER;
}

void nodedir_attach(struct node *n, struct peercheck *check)
{
        n->check = check;
        if (check != NULL) {
                check->voter = is_voter;
                check->member = is_member;
                check->leading = is_leading;
                check->voter_data = n;
        }
}

/*
 * A configuration without this node, after a committed one with it, and
 * no entry received for REMOVED_WAIT election timeouts since: it was
 * removed (member remove), and says so and stops (peercheck.h). The
 * leader stops sending to a node it removes as soon as it appends that
 * configuration, so a removed follower often never learns it was
 * committed, and hears nothing more (had it been rolled back, a leader of
 * the configuration with this node would have replaced it meanwhile). A
 * node joining replays the configurations from before it was added: none
 * had it, unless it is a member removed and added back under its id (a
 * wiped directory, docs/operations.md), which replays its old membership
 * and its removal, a committed one, while entries keep coming: hence the
 * wait for the entries to stop, and not for a commit.
 */
#define REMOVED_WAIT 5

static void tell_removed(struct node *n)
{
        const struct raft *r = &n->core->raft;
        bool committed = r->configuration_uncommitted_index == 0;
        uint64_t at = committed ? r->configuration_committed_index
                                : r->configuration_uncommitted_index;
        uint64_t now = uv_now(n->loop);

        if (at == 0) {
                return;
        }
        if (has(&r->configuration, n->cfg->id)) {
                n->was_member = n->was_member || committed;
                n->removed_at = 0;
                return;
        }
        if (!n->was_member) {
                return;
        }
        if (n->removed_at != at ||
            n->removed_last != raft_last_index(&n->core->raft)) {
                n->removed_at = at;
                n->removed_last = raft_last_index(&n->core->raft);
                n->removed_since = now;
        }
        if (now - n->removed_since >=
            REMOVED_WAIT * (uint64_t)n->cfg->election_timeout_ms) {
                peercheck_removed(n->check);
        }
}

/* Each configuration raft takes (appended, installed or rolled back) tells
 * the data directory checks who the voters are: members that stopped
 * being voters may come back with a new directory (peercheck.h). Each
 * start of leadership tells them too, so that a removed node still
 * connected hears it (peercheck_leading()). */
void nodedir_tell_voters(struct node *n)
{
        const struct raft *r = &n->core->raft;
        raft_index at = r->configuration_uncommitted_index != 0
                            ? r->configuration_uncommitted_index
                            : r->configuration_committed_index;
        uint64_t ids[2 * CONFIG_MAX_MEMBERS];
        unsigned i, k = 0;
        bool leading = raft_state(&n->core->raft) == RAFT_LEADER;

        if (n->check != NULL) {
                tell_removed(n);
                if (leading && !n->dir_leading) {
                        peercheck_leading(n->check);
                }
        }
        n->dir_leading = leading;
        if (n->check == NULL || at == 0 || at == n->voters_at ||
            r->configuration.n > sizeof ids / sizeof ids[0]) {
                return;
        }
        n->voters_at = at;
        for (i = 0; i < r->configuration.n; i++) {
                if (r->configuration.servers[i].role == RAFT_VOTER) {
                        ids[k++] = r->configuration.servers[i].id;
                }
        }
        peercheck_voters(n->check, ids, k);
        for (i = 0; i < r->configuration.n; i++) {
                ids[i] = r->configuration.servers[i].id;
        }
        peercheck_members(n->check, ids, r->configuration.n);
}

/* Raft's configuration as loaded from the data dir must put this node at
 * the raft address its config gives: elsewhere, the directory is another
 * cluster's (or a copy of one), or this node's address changed, which
 * raft cannot follow (its peers would keep dialling the old one). */
int nodedir_own_address(struct node *n, const char *raft_address)
{
        const struct raft_configuration *conf = &n->core->raft.configuration;
        unsigned i;

        for (i = 0; i < conf->n; i++) {
                const struct raft_server *s = &conf->servers[i];
                if (s->id == n->cfg->id &&
                    strcmp(s->address, raft_address) != 0) {
                        snprintf(n->errmsg, sizeof n->errmsg,
                                 "data directory %.200s: its raft "
                                 "configuration has node %llu at %.64s, its "
                                 "config at %.64s: the directory is another "
                                 "cluster's, or this node's raft address "
                                 "changed (raft cannot follow that: member "
                                 "remove it, then add it at the new address "
                                 "with an empty data directory)",
                                 n->cfg->data_dir, (unsigned long long)s->id,
                                 s->address, raft_address);
                        return BATON_EINVAL;
                }
        }
        return 0;
}
