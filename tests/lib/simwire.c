/* The messages a simulated node sends and receives, through shims around
 * its raft_io: patched where libraft 0.22.1 would act on bytes that no
 * seed decides, so that a seed replays exactly. */
#include "simwire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The position of the first RAFT_CHANGE entry of `a` after its first
 * entry, or 0 when there is none (3. in simwire.h). */
static unsigned change_after_first(const struct raft_append_entries *a)
{
        unsigned i;

        for (i = 1; i < a->n_entries; i++) {
                if (a->entries[i].type == RAFT_CHANGE) {
                        return i;
                }
        }
        return 0;
}

/* Make `tail` an AppendEntries of the entries of `msg` from position `k`
 * on, their bytes copied into a batch of its own laid out as the
 * fixture's (raft frees a message's batch through its first entry). 0,
 * or RAFT_NOMEM with nothing changed. */
static int split_tail(const struct raft_message *msg, unsigned k,
                      struct raft_message *tail)
{
        const struct raft_append_entries *a = &msg->append_entries;
        struct raft_append_entries *t = &tail->append_entries;
        unsigned n = a->n_entries - k, i;
        size_t size = 0, off = 0;
        uint8_t *batch;

        for (i = k; i < a->n_entries; i++) {
                size += a->entries[i].buf.len;
        }
        *tail = *msg;
        t->entries = raft_malloc(n * sizeof *t->entries);
        batch = raft_malloc(size > 0 ? size : 1);
        if (t->entries == NULL || batch == NULL) {
                raft_free(t->entries);
                raft_free(batch);
                return RAFT_NOMEM;
        }
        for (i = 0; i < n; i++) {
                t->entries[i] = a->entries[k + i];
                t->entries[i].batch = batch;
                t->entries[i].buf.base = batch + off;
                memcpy(batch + off, a->entries[k + i].buf.base,
                       a->entries[k + i].buf.len);
                off += a->entries[k + i].buf.len;
        }
        t->n_entries = n;
        t->prev_log_index = a->prev_log_index + k;
        t->prev_log_term = a->entries[k - 1].term;
        return 0;
}

/* 3. in simwire.h: every RAFT_CHANGE entry first in a message of its
 * own, each part delivered in order as if the leader had sent it so. */
static void deliver(struct simwire *w, struct raft_io *io,
                    struct raft_message *msg)
{
        struct raft_message parts[2];
        unsigned k, next = 0;

        while (msg->type == RAFT_APPEND_ENTRIES &&
               (k = change_after_first(&msg->append_entries)) != 0 &&
               split_tail(msg, k, &parts[next]) == 0) {
                msg->append_entries.n_entries = k;
                w->splits++;
                w->recv(io, msg);
                msg = &parts[next];
                next ^= 1;
        }
        w->recv(io, msg);
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
        deliver(w, io, message);
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
