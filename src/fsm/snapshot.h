/* Deterministic serialization of the lock state machine (docs/fsm.md). */
#ifndef FSM_SNAPSHOT_H
#define FSM_SNAPSHOT_H

#include <stddef.h>

struct lockfsm;

/* Version 2 adds the command stamp after the last index; version 1
 * snapshots (written before entries carried batches) still load, with the
 * stamp equal to the last index, which is what it was then. Version 3 adds
 * each session's 32-byte owner hash after its client name; sessions of
 * older snapshots load with an all-zero hash, which no secret matches.
 * Version 4 adds each holder's and waiter's mode (a u8 after its other
 * fields): read/write locks; the holds of older snapshots are writers.
 * Version 5 adds semaphores: a lock of kind COMMAND_MODE_SEMAPHORE carries
 * its limit (u32 after its kind) and each of its holds its permits (u32
 * after its mode); a read/write lock's records are as in version 4.
 * Version 6 adds lock-delay: a read/write lock in its lock-delay has
 * SNAPSHOT_BLOCKED set in its kind byte, then its delay (u32), and may
 * have neither holders nor waiters; every other record is as in
 * version 5.
 * Version 7 adds multi-locks: a waiter that is a name of one has
 * SNAPSHOT_MULTI set in its mode byte; every other record is as in
 * version 6.
 * Version 8 adds a session's own lock-delay (u32) after its hash; every
 * other record is as in version 7.
 * Version 9 adds, after that, the count of a session's grants revoked
 * (u32); every other record is as in version 8.
 * Version 10 adds the leader's clock of the last CLOCK (u64 ms, after the
 * stamp) and each grant's time (u32 s, last in its record); every other
 * record is as in version 9.
 * Version 11 adds elections: a lock of kind COMMAND_MODE_ELECTION, whose
 * holds (writers) each end with their value (a string, 0..255 bytes);
 * every other record is as in version 10.
 * Version 12 adds values and hold times to every grant: each hold of
 * every kind ends with its value (a string, 0..255 bytes; empty when it
 * has none), as an election's did in version 11, then its hold clock: u32
 * hold_ms (0: no hold time) and u64 armed (the entry its clock dates
 * from; 0 for a waiter or a hold without one).
 * Version 13 adds each session's principal (u64, after its revoked
 * count; 0: none), whose quota counts it (src/fsm/quota.h); every other
 * record is as in version 12. */
#define SNAPSHOT_VERSION 13
#define SNAPSHOT_BLOCKED 0x80
#define SNAPSHOT_MULTI   0x40

/* Serialize `f` into a buffer allocated with f's allocator. 0 or
 * BATON_ENOMEM. */
int snapshot_encode(const struct lockfsm *f, void **buf, size_t *len);

/*
 * Load a snapshot into `f`, a freshly initialised empty state. On error `f`
 * holds a partial state that the caller closes. Returns 0, BATON_ECORRUPT,
 * BATON_EVERSION or BATON_ENOMEM.
 */
int snapshot_decode(struct lockfsm *f, const void *buf, size_t len);

/* The format version a snapshot says it is in (its header only: nothing
 * else is checked), for saying why one was refused; 0 when `buf` is too
 * short or not a snapshot. */
unsigned snapshot_peek_version(const void *buf, size_t len);

#endif /* FSM_SNAPSHOT_H */
