/* The state of one simulated run that its parts share: the cluster, the
 * clients' view of their sessions and their requests out, the faults in
 * force, the final answers the clients were told, and the run's log and
 * failure messages. */
#ifndef TESTS_SIM_SIM_H
#define TESTS_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/rng.h"
#include "../../src/proto/command.h"
#include "../../src/proto/reply.h"
#include "../lib/simcluster.h"

#define MAX_CLIENTS 5
#define MAX_HELD    8
#define MAX_WAITS   8
#define MAX_FAULTS  8
#define N_NAMES     6 /* lock_names[]: four locks, a semaphore, an election */
#define SEM_NAME    4 /* lock_names[SEM_NAME] is a semaphore of SEM_LIMIT */
#define ELECT_NAME  5 /* lock_names[ELECT_NAME] is an election */
#define SEM_LIMIT   3
/* A MULTI names 2..SIM_MULTI_NAMES locks (the cluster's limit), and now
 * and then one more, which is refused; its list fits SIM_LIST_MAX. */
#define SIM_MULTI_NAMES 3
#define SIM_MULTI_MAX   (SIM_MULTI_NAMES + 1)
#define SIM_LIST_MAX    (SIM_MULTI_MAX * (2 + COMMAND_NAME_MAX))

static inline unsigned rng_range(struct rng *r, unsigned lo, unsigned hi)
{
        return lo + rng_below(r, hi - lo + 1);
}

static inline bool rng_chance(struct rng *r, unsigned percent)
{
        return rng_below(r, 100) < percent;
}

struct simhost;
struct simpath;
struct pathconn;

struct held {
        unsigned name;
        uint64_t owner;
        uint8_t mode; /* COMMAND_MODE_* */
        uint64_t token;
        uint32_t count;
};

/* A client's request out, as a COMMAND (or QUERY, CHECK) frame to the
 * core it believes leads: sent again, byte for byte (its id, session and
 * seq), until a final answer comes (frames.h). A MULTI's list lives in
 * `list`, which cmd.list points at wherever the request is moved. */
#define SIM_FRAME_MAX (PROTO_HEADER_SIZE + COMMAND_ANY_MAX_SIZE)
struct outreq {
        bool busy;
        struct command cmd;
        uint8_t list[SIM_LIST_MAX];
        uint8_t frame[SIM_FRAME_MAX];
        size_t len;
        uint64_t id;
        raft_time sent_at;   /* last sent */
        raft_time resend_at; /* 0: not waiting to be sent again */
        unsigned sends;
};

struct client {
        unsigned id;
        uint64_t nonce;
        uint64_t session; /* 0: none */
        uint64_t next_seq;
        /* Its one connection, to the node it believes leads; the session
         * it proved it owns there (ATTACH), and its frames' ids. */
        struct pathconn *conn;
        unsigned node;
        uint64_t conn_session;
        uint64_t next_id;
        /* The request it waits on before its next one, and its ACQUIREs
         * and MULTIs that wait for a lock, which it does not wait on:
         * each is answered once granted, or once it left its queue. */
        struct outreq req;
        struct outreq waits[MAX_WAITS];
        unsigned n_waits;
        raft_time next_at;
        struct held held[MAX_HELD];
        unsigned n_held;
        uint64_t last_token[N_NAMES]; /* for stale releases */
        /* Its session's lease, kept alive at the core of the node it
         * believes leads (leases.h). */
        uint32_t ttl_ms;
        uint8_t secret[16]; /* ATTACH_SECRET_SIZE */
        uint8_t hash[32];   /* its SHA-256, in the OPEN */
        bool keyed;         /* secret and hash drawn */
        struct pathconn *ka_conn;
        unsigned ka_node;
        uint64_t ka_session; /* the session ka_conn is attached to */
        uint64_t ka_id;
        raft_time ka_next;
        raft_time quiet_until;
};

struct fault {
        int kind;
        unsigned a;
        unsigned b;
        unsigned mask; /* F_PARTITION: the minority side */
        bool both;
        raft_time heal_at;
};

/* A final answer a client was told (a RESULT frame), with what it
 * asked: checked against the final log (answers.h). */
struct simanswer {
        uint8_t type; /* COMMAND_* */
        uint64_t session, seq, nonce;
        unsigned client;
        struct proto_result res;
        uint8_t *bytes; /* the command as the client sent it, owned */
        size_t len;
};

/* A node's access list restored from its snapshot during the run
 * (aclwork.h): the index the snapshot was at, and the digest of the list
 * the restore made (tests/lib/simacl.h). */
struct aclsample {
        unsigned node;
        uint64_t index;
        uint64_t digest;
};

/* An ACL change the administrator was answered (a RESULT), with what it
 * asked as its ACL entry carries it (command.h): mode, permissions in
 * `role`, subject in `name`, a rule's kind and prefix or a quota's limits
 * in `table`. */
#define SIM_ACL_NAME_MAX  32
#define SIM_ACL_TABLE_MAX 40
struct aclanswer {
        uint8_t mode; /* COMMAND_ACL_* */
        uint8_t role;
        uint8_t name_len;
        uint8_t table_len;
        char name[SIM_ACL_NAME_MAX];
        uint8_t table[SIM_ACL_TABLE_MAX];
        int status;
};

struct aclwork;

struct sim {
        struct simcluster c;
        /* batond's request cores (test_sim), or NULL; the operator's
         * connection to the node it believes leads (admin_node), and
         * what it sent and heard. */
        struct simhost *h;
        /* The clients' and the operator's connections to the cores: over
         * simnet, or simhost's direct path (simpath.h). */
        struct simpath *path;
        struct pathconn *admin;
        unsigned admin_node;
        uint64_t admin_id;
        unsigned revokes_sent;
        unsigned revokes_answered;
        unsigned keepalives; /* the clients sent (leases.h) */
        struct rng rng;
        unsigned n;
        bool verbose;
        unsigned n_clients;
        struct client clients[MAX_CLIENTS];
        struct fault faults[MAX_FAULTS];
        unsigned n_faults;
        unsigned faults_total;
        raft_time next_fault_at;
        raft_time next_server_at;
        struct simanswer *answers;
        size_t n_answers;
        size_t cap_answers;
        /* The clients' frames: sent again, NOT_LEADER followed, answered
         * BATON_EUNKNOWN, connections found closed. */
        unsigned resends;
        unsigned redirects;
        unsigned unknowns;
        unsigned cuts;
        unsigned requests; /* requests the clients started */
        bool oom;
        uint64_t final_index;
        uint64_t fail_index; /* the log index a failed check is about, or 0 */
        /* MULTIs in the final log (counted by the checker): granted by
         * their own entry, granted after waiting, left their queues. */
        unsigned multi_now;
        unsigned multi_waited;
        unsigned multi_left;
        /* The access list: the administrator that changes it (aclwork.h;
         * NULL in a run without changes), the nodes' lists restored from
         * their snapshots and the answers it was told, which the checker
         * compares with the log (aclcheck.h), the first thing that went
         * wrong on its side, and what the checker counted in the final
         * log: ACL entries, and those that changed the list. */
        struct aclwork *aclw;
        struct aclsample *acl_samples;
        size_t n_acl_samples;
        size_t cap_acl_samples;
        struct aclanswer *acl_answers;
        size_t n_acl_answers;
        size_t cap_acl_answers;
        char acl_error[512];
        unsigned acl_entries;
        unsigned acl_changes;
};

/* Prints a "# t=<virtual ms>" TAP comment when the run is verbose. */
void say(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes the failure into `reason` (`cap` bytes); returns -1. */
int fail(char *reason, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Whether a NOT_LEADER body (`len` bytes) decodes and names one of a
 * run's `n` nodes; if so `*node` is that node (0-based). A leader it does
 * not name, or names out of range, leaves `*node` as it was. */
bool sim_leader_named(const uint8_t *body, size_t len, unsigned n,
                      unsigned *node);

/* The position of node `n`'s first event at index `index` or later: its
 * events are in index order. */
size_t sim_first_event(const struct simnode *n, uint64_t index);

/* Room in the array *p (of *cap elements of `size` bytes) for `n`: grown
 * to the next power of two from 16; false, with *p unchanged, when out of
 * memory. */
bool sim_grow(void **p, size_t *cap, size_t n, size_t size);

#endif /* TESTS_SIM_SIM_H */
