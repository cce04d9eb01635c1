/* The state of one simulated run that its parts share: the cluster, the
 * clients' view of their sessions, the faults in force, the grants the
 * leader reported, and the run's log and failure messages. */
#ifndef TESTS_SIM_SIM_H
#define TESTS_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/rng.h"
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
struct simconn;

struct held {
        unsigned name;
        uint64_t owner;
        uint8_t mode; /* COMMAND_MODE_* */
        uint64_t token;
        uint32_t count;
};

/* A queued ACQUIRE or MULTI: the command is kept so that a poll retries
 * it byte for byte (same session and seq); a MULTI's list lives in `list`,
 * which cmd.list points at wherever the wait is moved. */
struct wait {
        struct command cmd;
        uint8_t list[SIM_LIST_MAX];
};

struct client {
        unsigned id;
        uint64_t nonce;
        uint64_t session; /* 0: none */
        uint64_t next_seq;
        bool busy; /* a request is outstanding until acknowledged */
        struct command cmd;
        uint8_t cmd_list[SIM_LIST_MAX]; /* cmd.list of a MULTI */
        struct simprop *prop; /* its latest attempt, NULL if refused */
        raft_time sent_at;
        raft_time next_at;
        unsigned attempts;
        struct held held[MAX_HELD];
        unsigned n_held;
        struct wait waits[MAX_WAITS];
        unsigned n_waits;
        uint64_t last_token[N_NAMES]; /* for stale releases */
        /* Its session's lease, kept at the serving core (leases.h). */
        uint32_t ttl_ms;
        uint8_t secret[16]; /* ATTACH_SECRET_SIZE */
        uint8_t hash[32];   /* its SHA-256, in the OPEN */
        bool keyed;         /* secret and hash drawn */
        struct simconn *ka_conn;
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

/* A grant the server reported to a waiting client (from a leader's GRANT
 * event): it must be in the final log. */
struct report {
        uint64_t session;
        uint64_t seq;
        uint64_t token;
};

struct sim {
        struct simcluster c;
        /* batond's request cores (test_sim), or NULL; the operator's
         * connection to the serving one, and what it sent and heard. */
        struct simhost *h;
        struct simconn *admin;
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
        struct report *reports;
        size_t n_reports;
        size_t cap_reports;
        bool oom;
        uint64_t final_index;
        uint64_t fail_index; /* the log index a failed check is about, or 0 */
        /* MULTIs in the final log (counted by the checker): granted by
         * their own entry, granted after waiting, left their queues. */
        unsigned multi_now;
        unsigned multi_waited;
        unsigned multi_left;
};

/* Prints a "# t=<virtual ms>" TAP comment when the run is verbose. */
void say(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes the failure into `reason` (`cap` bytes); returns -1. */
int fail(char *reason, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* TESTS_SIM_SIM_H */
