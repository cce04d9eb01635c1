/* The faults in force on a simulated client network (simnet.h), counted
 * so that overlapping faults heal independently. */
#ifndef TESTS_SIMFAULTS_H
#define TESTS_SIMFAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simnet.h"

/* A fault naming a client: a partition from one node, per direction
 * (n[side], the side it stalls towards), or a pause (n[0]). */
struct simfaults_rec {
        uint64_t client;
        unsigned node;
        unsigned n[2];
};

/*
 * Faults are few at a time, so those naming a client are kept in short
 * arrays searched in order: nothing is kept per client that no fault
 * names, and nothing depends on addresses.
 */
struct simfaults {
        unsigned killed[SIMNET_MAX_NODES];
        unsigned paused[SIMNET_MAX_NODES];
        unsigned isolated[SIMNET_MAX_NODES][2]; /* by the side stalled to */
        uint64_t spike_ms[SIMNET_MAX_NODES];
        struct simfaults_rec *parts;
        size_t n_parts, parts_cap;
        struct simfaults_rec *pauses;
        size_t n_pauses, pauses_cap;
};

void simfaults_init(struct simfaults *fs);
void simfaults_close(struct simfaults *fs);

/*
 * Count `f` in (`up`) or out; its node is in range (the caller checks).
 * 0; BATON_EINVAL for a cut (a moment, not a state) or an undo of what is
 * not in force (nothing changes then); BATON_ENOMEM.
 */
int simfaults_count(struct simfaults *fs, const struct simnet_fault *f,
                    bool up);

/* Whether the stream of `client`'s connection to `node` towards `to`
 * stalls. */
bool simfaults_parted(const struct simfaults *fs, uint64_t client,
                      unsigned node, enum simnet_side to);

/* Whether side `s` of `client`'s connection to `node` is paused. */
bool simfaults_held(const struct simfaults *fs, uint64_t client, unsigned node,
                    enum simnet_side s);

#endif /* TESTS_SIMFAULTS_H */
