/*
 * What a cluster reports of itself: the roles of its members and nodes,
 * a node's status and versions, and what an online backup holds. The
 * administrative calls (baton/admin.h) fill these records; the numbers of
 * the roles are part of the wire protocol (STATUS).
 */
#ifndef BATON_CLUSTER_H
#define BATON_CLUSTER_H

#include <stdint.h>

/**
 * A member's place in the configuration (struct baton_member's role). The
 * numbers are part of the wire protocol (STATUS).
 */
enum baton_member_role {
        BATON_MEMBER_STANDBY = 0, /* replicates the log, does not vote */
        BATON_MEMBER_VOTER = 1,   /* votes and counts towards a majority */
        BATON_MEMBER_SPARE = 2,   /* neither replicates nor votes */
};

/**
 * What one node is doing in its current term (struct baton_status's role).
 * The numbers are part of the wire protocol (STATUS).
 */
enum baton_node_role {
        BATON_ROLE_UNAVAILABLE = 0, /* starting or stopping */
        BATON_ROLE_FOLLOWER = 1,
        BATON_ROLE_CANDIDATE = 2,
        BATON_ROLE_LEADER = 3,
};

/** One member of the cluster, as STATUS reports it. */
struct baton_member {
        uint64_t id;
        int role; /* enum baton_member_role */
        char raft_address[65];
        char client_address[65];
};

/** One node's view of the cluster. */
struct baton_status {
        char endpoint[65]; /* the node that answered */
        uint64_t id;
        int role; /* enum baton_node_role */
        uint64_t term;
        uint64_t leader_id; /* 0: unknown */
        uint64_t commit_index;
        uint64_t applied_index;
        uint64_t last_index;
        uint64_t sessions;
        uint64_t locks;
        uint64_t waiters;
        unsigned n_members;
        struct baton_member members[16];
};

/**
 * A node's Baton release and the newest format of each thing it replicates
 * or keeps on disk (docs/operations.md, "Upgrades"). A node of another
 * release may join the cluster only while it reads everything the others
 * write.
 */
struct baton_node_version {
        char release[33];   /* "0.3.0", as `batond --version` says; "" from
                               a node older than 0.2.0, which does not say */
        unsigned protocol;  /* the client protocol version it answered in */
        unsigned command;   /* log entries (commands, batches): it reads
                               versions 1..command and writes none newer */
        unsigned snapshot;  /* snapshot images: it reads 1..snapshot and
                               writes snapshot */
        unsigned container; /* the snapshot container (image and tail): the
                               one version it reads and writes */
};

/**
 * What is wrong with a node, as it says of itself (its GET /ready gives
 * the same reasons, docs/operations.md), like the alarms of other
 * replicated stores.
 */
#define BATON_ALARM_DIVERGED 0x1u /* its state is not the leader's */
struct baton_node_alarms {
        int known;       /* 0: the node does not say (one before 0.3.0) */
        unsigned alarms; /* BATON_ALARM_* bits; a newer node may set others */
        uint64_t diverged_index; /* BATON_ALARM_DIVERGED: the log index at
                                    which this node's digest of its state
                                    machine differed from the leader's */
        uint64_t digest;         /* this node's digest at that index */
        uint64_t leader_digest;  /* the leader's */
};

/* What an online backup holds (batonctl snapshot save/inspect). Tokens
 * are the indexes of the entries that granted them, so every token handed
 * out up to the backup is at most `index`. */
struct baton_backup_info {
        uint64_t index;    /* the last entry the state includes */
        uint64_t term;     /* the leader's term when it was taken */
        uint64_t made_ms;  /* the leader's wall clock then, Unix ms */
        uint64_t size;     /* bytes of snapshot in the file */
        uint64_t sessions; /* counts of the state at `index` */
        uint64_t locks;
        uint64_t grants;
        uint64_t waiters;
};

#endif /* BATON_CLUSTER_H */
