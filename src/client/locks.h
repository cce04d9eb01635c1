/* The locks held through one handle, per (session, name, owner, mode), mirrored
 * from the cluster's answers: for on_lock_lost and for refusing, without
 * asking the cluster, to release a lock that an ended session held. */
#ifndef CLIENT_LOCKS_H
#define CLIENT_LOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "../lib/queue.h"
#include "notify.h"

/*
 * The cluster decides every count and token (GRANTED, REENTERED, RELEASED
 * carry them); this table only copies the latest answer. `lost` keeps the
 * holds of the last session that ended, so that a release of one of them
 * says BATON_EEXPIRED rather than BATON_ENOTHOLDER.
 */
struct locks {
        struct queue held; /* struct locks_hold */
        struct queue lost; /* holds of the last ended session */
};

struct locks_hold {
        struct queue link;
        uint64_t session;
        uint64_t owner;
        uint64_t token;
        uint32_t count;
        uint8_t mode; /* COMMAND_MODE_EXCLUSIVE or _SHARED */
        uint8_t name_len;
        char name[COMMAND_NAME_MAX];
};

void locks_init(struct locks *l);
void locks_close(struct locks *l);

/* Any mode, for locks_count(). */
#define LOCKS_ANY_MODE (-1)

/* Hold count of (session, name, owner) in `mode` (all modes together for
 * LOCKS_ANY_MODE); 0 when not held. */
uint32_t locks_count(const struct locks *l, uint64_t session, const char *name,
                     uint8_t name_len, uint64_t owner, int mode);

/* Record what the cluster answered an ACQUIRE in `mode`: `count` holds
 * with `token` (0 holds forgets the entry). 0 or BATON_ENOMEM (the table
 * is then unchanged; only the callbacks of a later expiry miss the
 * lock). */
int locks_set(struct locks *l, uint64_t session, const char *name,
              uint8_t name_len, uint64_t owner, uint8_t mode, uint64_t token,
              uint32_t count);

/* Record a MULTI `k` granted with `token`: each of its names once, in its
 * mode, for k->owner. 0, or BATON_ENOMEM for a name that was not
 * recorded (the others are). */
int locks_set_list(struct locks *l, uint64_t session, const struct command *k,
                   uint64_t token);

/* Record what the cluster answered a RELEASE of `token`: the grant it
 * names (the write grant first, as the cluster picks when an owner's two
 * grants share a token) now has `count` holds. */
void locks_released(struct locks *l, uint64_t session, const char *name,
                    uint8_t name_len, uint64_t owner, uint64_t token,
                    uint32_t count);

/* The session ended: its holds become the `lost` list (replacing the
 * previous one) and each gets an on_lock_lost event in `n`. */
void locks_end_session(struct locks *l, uint64_t session, struct notify *n);

/* The grant (session, name, owner, token) was taken away while the
 * session lives (an administrator's revoke): forget it, with an
 * on_lock_lost event in `n`. Nothing when it is not held. */
void locks_lose(struct locks *l, uint64_t session, const char *name,
                uint8_t name_len, uint64_t owner, uint64_t token,
                struct notify *n);

/* Call `cb` for every hold of `session` (which it must not change). */
void locks_foreach(const struct locks *l, uint64_t session,
                   void (*cb)(void *data, const struct locks_hold *h),
                   void *data);

/* Forget the holds of `session` without events (a detached session). */
void locks_forget_session(struct locks *l, uint64_t session);

/* Whether (name, owner, token) was lost with the last ended session; a
 * match is forgotten, so a second release is not told EEXPIRED again. */
bool locks_take_lost(struct locks *l, const char *name, uint8_t name_len,
                     uint64_t owner, uint64_t token);

#endif /* CLIENT_LOCKS_H */
