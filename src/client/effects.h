/* What the host of libbaton's core does for the flags its registry and
 * session raise: write the outbox a caller's request was put in, wake the
 * waiting callers, wake the background thread. */
#ifndef CLIENT_EFFECTS_H
#define CLIENT_EFFECTS_H

#include <pthread.h>

#include "linkio.h"
#include "registry.h"

/*
 * Do what `reg` flagged, and clear the flags: write the outbox a caller's
 * request was put in (write_now, from this thread, through `io`),
 * broadcast `cv` when something changed, wake the background thread when
 * it has work or the write left bytes for it. The handle's mutex held:
 * every entry point of the host does it before it releases the mutex or
 * waits on `cv`. All three are borrowed for the call.
 */
void effects_apply(struct registry *reg, struct linkio *io, pthread_cond_t *cv);

#endif /* CLIENT_EFFECTS_H */
