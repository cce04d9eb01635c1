/* What node.c, nodereq.c, nodedir.c and nodetransfer.c share of a node:
 * libraft's instance and the raft glue around it. Private to those files. */
#ifndef SERVER_NODECORE_H
#define SERVER_NODECORE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <raft.h>

#include "../../../include/baton/errors.h"
#include "crashio.h"
#include "diskwrite.h"
#include "fsmdigest.h"
#include "heard.h"
#include "leaderloss.h"
#include "node.h"
#include "plaintcp.h"
#include "raftfsm.h"
#include "stallwatch.h"
#include "storefail.h"
#ifdef BATON_CHAOS_EARLYACK
#include "earlyack.h"
#endif

struct node_core {
        struct node *node;
        /* The raft transport: peer.h's with TLS, else plaintcp.h's. */
        struct plaintcp net;
        struct heard heard;     /* raft_uv's I/O, and what a leader sent */
        struct leaderloss loss; /* the leader's connection closed */
        struct raft raft;
        struct raftfsm rf;
        struct fsmdigest digest; /* of rf's state, compared through the log */
        struct raft_barrier barrier; /* the one that makes the node serve */
        struct raft_transfer transfer;
        struct stallwatch watch; /* full disks, entries left uncommitted */
        struct storefail store;  /* term, vote and snapshot stores */
        struct diskwrite disk;   /* appends, timed */
        /* The last leader this node knew of (0: none yet), and how many
         * times that changed to another (nodestats.c). */
        uint64_t leader_seen;
        uint64_t leader_changes;
        uint64_t restores_logged; /* installed snapshots said in the log */
        uint64_t drops_logged;    /* InstallSnapshots dropped, said too */
        /* Tail spills that worked and that failed, as last looked at, and
         * whether the last one failed (log_spills()). */
        uint64_t spills_seen, spill_fails_seen;
        bool spill_failing;
#ifdef BATON_CHAOS_CRASHPOINTS
        struct crashio crash; /* batond-crashpoints only (crashio.h) */
#endif
#ifdef BATON_CHAOS_EARLYACK
        struct earlyack early; /* the negative control's bug */
#endif
};

/* The core whose heard.io is `io`: raft_uv's functions that the raft glue
 * wraps (storefail.h, diskwrite.h, crashio.h) find their state so. */
static inline struct node_core *node_core_of_io(struct raft_io *io)
{
        struct heard *h =
            (struct heard *)(void *)((char *)io - offsetof(struct heard, io));

        return (struct node_core *)(void *)((char *)h -
                                            offsetof(struct node_core, heard));
}

/* The libraft requests a struct node_request holds in its private words. */
union node_raft_request {
        struct raft_apply apply;
        struct raft_barrier barrier;
        struct raft_change change;
};

_Static_assert(sizeof(union node_raft_request) <=
                   sizeof(((struct node_request *)0)->priv),
               "a libraft request does not fit in struct node_request");
_Static_assert(alignof(union node_raft_request) <= alignof(uint64_t),
               "a libraft request needs more alignment than node_request has");
/* nodedir.c. The data directory checks of node `n`: it tells `check`
 * (may be NULL) who votes. */
struct peercheck;
void nodedir_attach(struct node *n, struct peercheck *check);
/* Tell n->check the voters when raft's configuration changed. */
void nodedir_tell_voters(struct node *n);
/* 0 when raft's configuration, as loaded, has this node at `raft_address`
 * or not at all; else BATON_EINVAL with n->errmsg. */
int nodedir_own_address(struct node *n, const char *raft_address);

/* nodetransfer.c. The transfer ended, or took too long (`timed_out`):
 * the caller's callback runs, once. */
void nodetransfer_done(struct node *n, bool timed_out);
/* From the monitor while n->handover: hand over once a voter caught up. */
void nodetransfer_step(struct node *n);
/* From the monitor: leading in `term` with a diverged state (fsmdigest.h),
 * not serving; says so and hands leadership over, once a term. */
void nodetransfer_diverged(struct node *n, uint64_t term);

#endif /* SERVER_NODECORE_H */
