/* The nodes' apply logs as the fenced register follows them: which grants
 * of semaphores and which sessions ended, as far as any node has applied
 * (docs/chaos.md, "Fenced register"). */
#ifndef CHAOS_APPLYFEED_H
#define CHAOS_APPLYFEED_H

#include <stddef.h>
#include <stdint.h>

/* At most this many apply logs (one per node). */
#define APPLYFEED_MAX_LOGS 16

struct applyfeed;

/* Follow the apply logs at `paths` (`n` of them, at most
 * APPLYFEED_MAX_LOGS; copied). A log that does not exist yet is read once
 * it does. NULL when out of memory or `n` is too large. */
struct applyfeed *applyfeed_create(const char *const *paths, size_t n);

/* Free everything (accepts NULL). */
void applyfeed_destroy(struct applyfeed *f);

/* Read the complete lines the logs gained since the last call. */
void applyfeed_update(struct applyfeed *f);

/*
 * The index where the grant of semaphore `lock` made at index `token` to
 * `session` ended, in the lines read so far: the RELEASE of that token by
 * that session (mode 2), else the session's END; 0 when no node has
 * logged either. Every line is a committed entry's, so a grant said to
 * have ended surely has; one not yet said to may have too (a lock name
 * the log had to escape is never matched).
 */
uint64_t applyfeed_ended(const struct applyfeed *f, const char *lock,
                         uint64_t token, uint64_t session);

#endif /* CHAOS_APPLYFEED_H */
