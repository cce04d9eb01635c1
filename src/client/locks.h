/* The locks held through one handle, per (session, name, owner, mode), mirrored
 * from the cluster's answers: for on_lock_lost and for refusing, without
 * asking the cluster, to release a lock that an ended session held. */
#ifndef CLIENT_LOCKS_H
#define CLIENT_LOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "../lib/queue.h"
#include "coreenv.h"
#include "notify.h"

/*
 * The cluster decides every count and token (GRANTED, REENTERED, RELEASED
 * carry them); this table only copies the latest answer. `lost` keeps the
 * holds of the last session that ended, so that a release of one of them
 * says BATON_EEXPIRED rather than BATON_ENOTHOLDER. Each change of `held`
 * goes to the environment's tracer, if any, with the time it was made
 * (enum core_hold_change says why).
 */
struct locks {
        struct queue held;          /* struct locks_hold */
        struct queue lost;          /* holds of the last ended session */
        const struct core_env *env; /* borrowed: its tracer */
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

/* `env` is borrowed for the table's life. */
void locks_init(struct locks *l, const struct core_env *env);
void locks_close(struct locks *l);

/* Any mode, for locks_count(). */
#define LOCKS_ANY_MODE (-1)

/* Hold count of (session, name, owner) in `mode` (all modes together for
 * LOCKS_ANY_MODE); 0 when not held. */
uint32_t locks_count(const struct locks *l, uint64_t session, const char *name,
                     uint8_t name_len, uint64_t owner, int mode);

/* The time of a change recorded without one, for the tracer. */
#define LOCKS_NO_TIME INT64_MIN

/* Record what the cluster answered an ACQUIRE in `mode`, handled at `now`:
 * `count` holds with `token` (0 holds forgets the entry); the tracer hears
 * of it only if the table changed. 0 or BATON_ENOMEM (the table is then
 * unchanged; only the callbacks of a later expiry miss the lock). */
int locks_set_at(struct locks *l, uint64_t session, const char *name,
                 uint8_t name_len, uint64_t owner, uint8_t mode, uint64_t token,
                 uint32_t count, int64_t now);

/* Record a MULTI `k` granted with `token`, handled at `now`: each of its
 * names once, in its mode, for k->owner. 0, or BATON_ENOMEM for a name
 * that was not recorded (the others are). */
int locks_set_list_at(struct locks *l, uint64_t session,
                      const struct command *k, uint64_t token, int64_t now);

/* Record what the cluster answered a RELEASE of `token`, handled at `now`:
 * the grant it names (the write grant first, as the cluster picks when an
 * owner's two grants share a token) now has `count` holds. */
void locks_released(struct locks *l, uint64_t session, const char *name,
                    uint8_t name_len, uint64_t owner, uint64_t token,
                    uint32_t count, int64_t now);

/* The session ended at `now`: its holds become the `lost` list (replacing
 * the previous one) and each gets an on_lock_lost event in `n`. */
void locks_end_session(struct locks *l, uint64_t session, struct notify *n,
                       int64_t now);

/* The grant (session, name, owner, token) was taken away while the
 * session lives (an administrator's revoke), learnt at `now`: forget it,
 * with an on_lock_lost event in `n`. Nothing when it is not held. */
void locks_lose(struct locks *l, uint64_t session, const char *name,
                uint8_t name_len, uint64_t owner, uint64_t token,
                struct notify *n, int64_t now);

/* Call `cb` for every hold of `session` (which it must not change). */
void locks_foreach(const struct locks *l, uint64_t session,
                   void (*cb)(void *data, const struct locks_hold *h),
                   void *data);

/* Forget the holds of `session` without on_lock_lost (a detached session,
 * at `now`). */
void locks_forget_session(struct locks *l, uint64_t session, int64_t now);

/* Whether (name, owner, token) was lost with the last ended session; a
 * match is forgotten, so a second release is not told EEXPIRED again. */
bool locks_take_lost(struct locks *l, const char *name, uint8_t name_len,
                     uint64_t owner, uint64_t token);

#endif /* CLIENT_LOCKS_H */
