/* The state of one test_simclient run, which its workload
 * (test_simclient.c) and its faults (clientfaults.c) share. */
#ifndef TESTS_SIM_CLIENTWORLD_H
#define TESTS_SIM_CLIENTWORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "../../src/client/acqop.h"
#include "../../src/proto/command.h"
#include "../lib/rng.h"
#include "../lib/simnet.h"
#include "hostrun.h"
#include "simclient.h"
#include "simkinds.h"
#include "simview.h"
#include "simwatch.h"

#define N_CLIENTS    24
#define TTL_MS       3000
#define TIMEOUT_MS   2000
#define OWNER        1
#define N_UNDO       256
#define CONTROL_SET  20
#define FAULT_SEEDS  10    /* of the default run, with --faults too */
#define N_WATCHERS   6     /* clients 1..6 also watch */
#define QUIET_MS     1500  /* no event applied, before the check */
#define QUIET_MAX_MS 20000 /* waiting for that, at most */

enum phase { IDLE, ACQ, HOLD, REL };

struct wclient {
        enum phase phase;
        struct acqop op;
        struct kcall call; /* what it asks for, and its hold */
        char why[256];
        int64_t next_at, release_at, rel_deadline;
        struct command rel_k; /* a RELEASE, or an election's PROCLAIM */
        bool proclaim;
        struct request *rel;
        uint64_t mark;
};

struct undo {
        struct simnet_fault f;
        uint64_t at;
};

struct world {
        struct run *r; /* the cluster, simhost, acks, hostcheck's record */
        struct simclients sc;
        struct wclient w[N_CLIENTS];
        struct kprofile profiles[N_CLIENTS]; /* each client's mix */
        struct kinds_run kr;                 /* grants by kind, acks */
        struct simview view;                 /* the client-view check */
        struct rng rng;
        struct simwatches watches; /* and their check */
        struct undo undo[N_UNDO];
        unsigned n_undo;
        uint64_t fault_at, isolate_at, kill_at, revive_at;
        unsigned killed;
        bool raft_faults; /* test_sim's faults (faults.c) strike too */
        bool stopping;
        bool unquiet; /* events never stopped at the end */
        /* Counts. */
        unsigned grants, errors, timeouts, releases, rel_fail, lost;
        uint64_t digest; /* of the run: two runs of a seed agree */
        unsigned faults, isolations, kills, recovered, reentered;
};

#endif /* TESTS_SIM_CLIENTWORLD_H */
