/* The messages a simulated node sends and receives, through shims around
 * its raft_io: patched where libraft 0.22.1 would act on bytes that no
 * seed decides, so that a seed replays exactly. */
#include "simwire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/server/raft/changesplit.h"

/* The io methods and the receive callback get no pointer of ours: find
 * the shim by its io. A test-only table, filled by attach and emptied by
 * close, as simstore's. */
static struct simwire *wires[SIMWIRE_MAX_IOS];

static struct simwire *wire_of(const struct raft_io *io)
{
        unsigned i;

        for (i = 0; i < SIMWIRE_MAX_IOS; i++) {
                if (wires[i] != NULL && wires[i]->raft->io == io) {
                        return wires[i];
                }
        }
        abort(); /* an io we never wrapped: a broken test setup */
}

/* 2. in simwire.h: a vote result whose higher term a follower with a
 * leader would take or ignore by a byte of a pointer. */
static void lower_vote_term(struct simwire *w, struct raft_message *message)
{
        struct raft_request_vote_result *res = &message->request_vote_result;
        raft_term term = raft_current_term(w->raft);
        const char *address;
        raft_id leader;

        if (message->type != RAFT_REQUEST_VOTE_RESULT ||
            raft_state(w->raft) != RAFT_FOLLOWER || res->term <= term) {
                return;
        }
        raft_leader(w->raft, &leader, &address);
        if (address != NULL) {
                res->term = term;
                w->lowered++;
        }
}

/* Raft answers a request from within its receive callback: note the
 * request's sender and term for shim_send while it runs. */
static void shim_recv(struct raft_io *io, struct raft_message *message)
{
        struct simwire *w = wire_of(io);

        lower_vote_term(w, message);
        w->receiving = message->type == RAFT_APPEND_ENTRIES ||
                       message->type == RAFT_INSTALL_SNAPSHOT;
        w->from = message->server_id;
        w->term = message->type == RAFT_APPEND_ENTRIES
                      ? message->append_entries.term
                      : message->install_snapshot.term;
        /* 3. in simwire.h */
        if (message->type == RAFT_APPEND_ENTRIES) {
                w->splits += changesplit_deliver(io, message,
                                                 CHANGESPLIT_FIXTURE, w->recv);
        } else {
                w->recv(io, message);
        }
        w->receiving = false;
}

static int shim_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                      raft_io_recv_cb recv)
{
        struct simwire *w = wire_of(io);

        w->recv = recv;
        return w->start(io, msecs, tick, shim_recv);
}

static int shim_send(struct raft_io *io, struct raft_io_send *req,
                     const struct raft_message *message, raft_io_send_cb cb)
{
        struct simwire *w = wire_of(io);
        struct raft_append_entries_result *res;
        struct raft_message copy;

        if (!w->receiving || message->type != RAFT_APPEND_ENTRIES_RESULT ||
            message->server_id != w->from ||
            message->append_entries_result.term <= w->term) {
                return w->send(io, req, message, cb);
        }
        /* 1. in simwire.h: a rejection for a stale term, whose
         * last_log_index libraft left unset. The fixture copies the
         * message before send returns, so a patched copy will do. */
        copy = *message;
        res = &copy.append_entries_result;
        res->last_log_index = res->rejected > 0 ? res->rejected - 1 : 0;
        w->hints++;
        return w->send(io, req, &copy, cb);
}

int simwire_attach(struct simwire *w, struct raft *raft)
{
        unsigned i;

        memset(w, 0, sizeof *w);
        for (i = 0; i < SIMWIRE_MAX_IOS && wires[i] != NULL; i++) {
        }
        if (i == SIMWIRE_MAX_IOS) {
                return RAFT_NOMEM;
        }
        wires[i] = w;
        w->raft = raft;
        w->start = raft->io->start;
        w->send = raft->io->send;
        raft->io->start = shim_start;
        raft->io->send = shim_send;
        return 0;
}

void simwire_close(struct simwire *w)
{
        unsigned i;

        for (i = 0; i < SIMWIRE_MAX_IOS; i++) {
                if (wires[i] == w) {
                        wires[i] = NULL;
                }
        }
}
