/* How long a leader's oldest uncommitted entry has waited: the sign that a
 * majority of voters cannot store what the leader appends (their disks are
 * full, or they are cut off), for GET /ready's "cannot-commit". No I/O and
 * no clock: the caller passes the time and raft's indexes. */
#ifndef SERVER_COMMITAGE_H
#define SERVER_COMMITAGE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Entries pending is not the sign: under load a leader always has some
 * (each waits a round trip to a majority), so "last index above commit
 * index" holds nearly all the time. What does not happen under load is one
 * entry staying uncommitted: the tracker follows the oldest entry it saw
 * uncommitted (the one after the commit index), from the first time it
 * saw it, until the commit index passes it; then it follows the next. Its
 * age is a lower bound of the entry's: observed often (every loop turn),
 * close to it.
 */
struct commitage {
        uint64_t index;    /* the entry followed, 0: none */
        uint64_t since_ms; /* when it was first seen uncommitted */
};

void commitage_init(struct commitage *a);

/* At `now` (milliseconds), whether this node leads, and raft's commit and
 * last index. A node that does not lead follows nothing. */
void commitage_observe(struct commitage *a, uint64_t now, bool leader,
                       uint64_t commit, uint64_t last);

/* How long the entry followed has waited at `now`, 0 when none. */
uint64_t commitage_ms(const struct commitage *a, uint64_t now);

/* The entry followed (0: none). */
uint64_t commitage_index(const struct commitage *a);

#endif /* SERVER_COMMITAGE_H */
