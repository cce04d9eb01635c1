/* The ops of simhost's struct gateway_host that ask the fixture node:
 * queries, the log, the timer and raft's requests; and what simhost.c
 * shares with them. Private to simhost.c and simops.c. */
#ifndef TESTS_SIM_SIMOPS_H
#define TESTS_SIM_SIMOPS_H

#include "simhost.h"

/* One node's core, from its start (or revival) to its drop. */
struct simcore {
        struct gateway g;
        struct gateway_host ops; /* ops.data = this */
        struct simhost *h;
        unsigned node;
        uint64_t timer_at;      /* GATEWAY_NEVER: none */
        bool dropped;           /* gateway_close() ran */
        bool serving;           /* from gateway_on_ready() to _lost() */
        uint64_t term;          /* the one it serves in */
        uint64_t barrier_term;  /* leadership barrier issued in */
        uint64_t restores_seen; /* restores reported so far */
        unsigned out;           /* raft requests with raft, ours too */
        struct queue conns;     /* its simconns not reported gone */
        struct simcore *next;   /* in h->dropped */
        /* Probes and transfers the host answers itself (simops.c). */
        struct simwait *waits;
        /* A transfer waits for a voter to hold the whole log before it
         * asks raft (batond's handover): nothing is proposed meanwhile. */
        bool handover;
};

/* A raft request behind a gateway_req, or the host's own leadership
 * barrier (req NULL). `data` comes first in each of raft's requests. */
struct simreq {
        union {
                struct raft_apply apply;
                struct raft_barrier barrier;
                struct raft_change change;
        } u;
        struct simcore *core;
        struct gateway_req *req;
        uint64_t term;  /* a leadership barrier's */
        uint8_t *bytes; /* a proposal's entry, copied: check (e) */
        size_t len;
};

/* The time of an input: the fixture's ms, and ms * 10^6 as ns. */
struct gateway_now simhost_clocks(const struct simhost *h);
/* A "# t=TIME" line when verbose. */
void simhost_say(const struct simhost *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The host broke a promise of gateway.h, or ran out of memory: the first
 * such reason, in h->errmsg, fails the run. */
void simhost_broken(struct simhost *h, const char *what, unsigned node);
/* Around every input of a core: connections that went inside it are
 * reported gone at the outermost leave. */
void simhost_enter(struct simhost *h);
void simhost_leave(struct simhost *h);

/* Every op of core->ops but the connection ops, with ops.data = core. */
void simops_init(struct simcore *core);
/* At every step of a live core: the probes and transfers it asked for go
 * on, and those whose time came are answered (simops.c). */
void simops_step(struct simcore *core);
/* The core was closed: what it still waits for is answered now, as
 * batond's closing raft answers it (a transfer 0, a probe
 * BATON_ESHUTDOWN). */
void simops_drop(struct simcore *core);

#endif /* TESTS_SIM_SIMOPS_H */
