/* The leader's session lease deadlines, packed: a heap of (deadline,
 * session) pairs and an index from session to heap position, no record
 * per session. */
#ifndef SERVER_LEASES_H
#define SERVER_LEASES_H

#include <stdint.h>

/*
 * Every open session has a lease deadline on the leader, so this table
 * holds as many entries as the cluster has sessions (100,000 and more).
 * A deadline record with a hash node and a heap pointer cost 88 bytes a
 * session; here an entry is 16 bytes of heap and a 4-byte index slot
 * (the slots at most 3/4 full), about 32 bytes with both arrays' slack.
 *
 * The index is open addressing with linear probing: a slot holds the
 * heap position of its session, UINT32_MAX when empty, and the session
 * is read from the heap; removal shifts the cluster back (no tombstones).
 * No I/O, no clock: deadlines are whatever the caller counts in.
 */
struct lease {
        uint64_t at; /* the deadline */
        uint64_t session;
};

struct leases {
        struct lease *heap; /* a min-heap on `at` */
        uint32_t n;
        uint32_t cap;
        uint32_t *slots; /* mask + 1 of them, or NULL */
        uint32_t mask;
};

void leases_init(struct leases *l);
/* Forget every lease and give the memory back (also the way to close:
 * the table is then as leases_init() left it). */
void leases_clear(struct leases *l);

/* Set or move `session`'s deadline (session != 0). 0, or BATON_ENOMEM
 * with nothing changed. */
int leases_set(struct leases *l, uint64_t session, uint64_t at);
/* Forget `session`'s deadline, if it has one. */
void leases_drop(struct leases *l, uint64_t session);

/* `session`'s deadline, or NULL when it has none; valid until the next
 * call that changes the table. */
const struct lease *leases_find(const struct leases *l, uint64_t session);

/* The earliest deadline (NULL when there is none); valid until the next
 * call that changes the table. */
const struct lease *leases_first(const struct leases *l);
/* Move the earliest deadline to `at`. */
void leases_move_first(struct leases *l, uint64_t at);

#endif /* SERVER_LEASES_H */
