/* The entry's two lists of locks, touched and deferred, singly linked
 * through 4 bytes of each lock. */
#ifndef FSM_LOCKCHAIN_H
#define FSM_LOCKCHAIN_H

#include <stdint.h>

struct lock;

/*
 * A lock is in at most one chain at a time: lockfsm.touched while an entry
 * that granted it is applied, lockfsm.deferred between entries while its
 * next grant waits for the next entry (lock.touched and lock.deferred say
 * which). The chains are short, bounded by what one entry touches, and are
 * walked whole, so a lock pays a single 32-bit link for them
 * (lock.entry_next, an offset as in rqueue.h, 0 at the chain's end) where
 * a doubly linked list would take 8 bytes of every lock of the state. Only
 * a multi-lock that takes a deferred lock before the entry's start reaches
 * it removes from the middle (lockchain_remove()), walking from the head.
 *
 * The head and tail are pointers, in struct lockfsm: links between records
 * must fit 32 bits, not the chain's ends outside them.
 */
struct lockchain {
        struct lock *head; /* NULL when empty */
        struct lock *tail;
        uint64_t n;
};

void lockchain_init(struct lockchain *c);
/* Append `l`, in no chain. */
void lockchain_push(struct lockchain *c, struct lock *l);
/* Take the first lock off, or NULL. */
struct lock *lockchain_pop(struct lockchain *c);
/* The lock after `l` in its chain, or NULL. */
struct lock *lockchain_next(const struct lock *l);
/* Take `l`, which is in `c`, off. */
void lockchain_remove(struct lockchain *c, struct lock *l);
/* Order by creation stamp, equal stamps in their order (a merge sort; it
 * allocates nothing, so that applying an entry cannot fail in it). */
void lockchain_sort(struct lockchain *c);

#endif /* FSM_LOCKCHAIN_H */
