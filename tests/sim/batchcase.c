/* A hand-written log of batches for the checker. */
#include "batchcase.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/fsm/entry.h"
#include "checker.h"
#include "sim.h"

#define STEPS_MAX                                                              \
        20000 /* fixture steps for one entry, far more than needed             \
               */

struct applied {
        struct raft_apply req;
        bool done;
        int status;
};

static void on_applied(struct raft_apply *req, int status, void *result)
{
        struct applied *a = req->data;

        (void)result;
        a->done = true;
        a->status = status;
}

/* Propose the batch of `cmds` (n of them) on node 0 and step until it is
 * applied; its index in `*index`. 0, or -1 with `reason`. */
static int apply_batch(struct sim *s, const struct command *cmds, unsigned n,
                       uint64_t *index, char *reason, size_t cap)
{
        struct raft *r = simcluster_raft(&s->c, 0);
        uint8_t cmd[COMMAND_ANY_MAX_SIZE];
        struct entry_writer w;
        struct raft_buffer buf;
        struct applied a = {.done = false};
        unsigned k;

        buf.base = raft_malloc(ENTRY_HEADER_SIZE + 8 + n * (2 + sizeof cmd));
        if (buf.base == NULL) {
                return fail(reason, cap, "batchcase: out of memory");
        }
        entry_writer_init(&w, buf.base,
                          ENTRY_HEADER_SIZE + 8 + n * (2 + sizeof cmd),
                          raft_current_term(r));
        for (k = 0; k < n; k++) {
                size_t len = command_encode(&cmds[k], cmd, sizeof cmd);

                if (len == 0 || !entry_writer_add(&w, cmd, len)) {
                        raft_free(buf.base);
                        return fail(reason, cap,
                                    "batchcase: command %u does not encode", k);
                }
        }
        buf.len = entry_writer_finish(&w);
        a.req.data = &a;
        if (raft_apply(r, &a.req, &buf, 1, on_applied) != 0) {
                raft_free(buf.base);
                return fail(reason, cap, "batchcase: raft_apply refused");
        }
        for (k = 0; k < STEPS_MAX && !a.done; k++) {
                simcluster_step(&s->c);
        }
        if (!a.done || a.status != 0) {
                return fail(reason, cap, "batchcase: entry not applied");
        }
        *index = a.req.index;
        return 0;
}

static struct command request(uint8_t type, uint64_t session, uint64_t seq)
{
        struct command c;

        memset(&c, 0, sizeof c);
        c.type = type;
        c.session = session;
        c.seq = seq;
        c.ack = seq;
        c.owner = 1;
        c.mode = COMMAND_MODE_EXCLUSIVE;
        c.name = "x";
        c.name_len = 1;
        return c;
}

/* The three sessions the first entry opened, from node 0's events. */
static int sessions(struct sim *s, uint64_t *id, char *reason, size_t cap)
{
        const struct simnode *n = &s->c.nodes[0];
        unsigned k = 0;

        for (size_t j = 0; j < n->n_events && k < 3; j++) {
                if (n->events[j].type == LOCKFSM_EV_OPEN) {
                        id[k++] = n->events[j].session;
                }
        }
        return k == 3 ? 0 : fail(reason, cap, "batchcase: %u OPENs", k);
}

/* Entries: three OPENs; an ACQUIRE by each of one lock (the first
 * granted, the others queued); the holder's RELEASE, which hands the lock
 * to the second, and the second's RELEASE with that entry's token, which
 * frees it in the entry that granted it; an empty batch, whose start
 * grants it to the third. */
static int build(struct sim *s, char *reason, size_t cap)
{
        struct command c[3];
        uint64_t id[3];
        uint64_t index;
        unsigned k;

        for (k = 0; k < 3; k++) {
                memset(&c[k], 0, sizeof c[k]);
                c[k].type = COMMAND_OPEN;
                c[k].nonce = k + 1;
                c[k].ttl_ms = 60000;
        }
        if (apply_batch(s, c, 3, &index, reason, cap) != 0 ||
            sessions(s, id, reason, cap) != 0) {
                return -1;
        }
        for (k = 0; k < 3; k++) {
                c[k] = request(COMMAND_ACQUIRE, id[k], 1);
                c[k].wait_ms = COMMAND_WAIT_FOREVER;
        }
        if (apply_batch(s, c, 3, &index, reason, cap) != 0) {
                return -1;
        }
        c[0] = request(COMMAND_RELEASE, id[0], 2);
        c[0].token = index;
        c[1] = request(COMMAND_RELEASE, id[1], 2);
        /* The grant the RELEASE before it makes: its entry's index. */
        c[1].token = raft_last_index(simcluster_raft(&s->c, 0)) + 1;
        if (apply_batch(s, c, 2, &index, reason, cap) != 0) {
                return -1;
        }
        return apply_batch(s, c, 0, &index, reason, cap);
}

/* The grant the last entry's start made; NULL if none. */
static struct simevent *deferred(struct sim *s)
{
        struct simnode *n = &s->c.nodes[0];

        for (size_t j = 0; j < n->n_events; j++) {
                if (n->events[j].type == LOCKFSM_EV_GRANT &&
                    n->events[j].cause == COMMAND_BATCH) {
                        return &n->events[j];
                }
        }
        return NULL;
}

int batchcase_run(bool tamper, char *reason, size_t cap)
{
        struct simcluster_config cfg;
        struct simevent *ev;
        struct sim *s = calloc(1, sizeof *s);
        unsigned k;
        int rv;

        if (s == NULL) {
                return fail(reason, cap, "batchcase: out of memory");
        }
        s->n = 1;
        simcluster_config_default(&cfg);
        cfg.n = 1;
        cfg.seed = 1;
        if (simcluster_init(&s->c, &cfg) != 0) {
                rv = fail(reason, cap, "batchcase: %s", s->c.errmsg);
                free(s);
                return rv;
        }
        for (k = 0; k < STEPS_MAX && simcluster_leader(&s->c) != 0; k++) {
                simcluster_step(&s->c);
        }
        rv = build(s, reason, cap);
        ev = rv == 0 ? deferred(s) : NULL;
        if (rv == 0 && ev == NULL) {
                rv = fail(reason, cap, "batchcase: no grant was deferred");
        }
        if (rv == 0 && tamper) {
                /* To the session of the second OPEN, which released it. */
                ev->session = ev->session - 1;
        }
        if (rv == 0) {
                rv = check_log(s, reason, cap);
        }
        simcluster_close(&s->c);
        free(s);
        return rv;
}
