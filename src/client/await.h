/* The waits of a handle's calling threads: the host's side of the core's
 * steps, which acts on what the registry and the session flag, waits on
 * the handle's condition variable until what they decide comes, and
 * records why a wait failed for the calling thread (baton_errmsg()). */
#ifndef CLIENT_AWAIT_H
#define CLIENT_AWAIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../proto/command.h"
#include "registry.h"
#include "request.h"

struct baton_client;

/* Do the effects, then wait on the handle's `cv` until it is broadcast or
 * `deadline` (CLOCK_MONOTONIC ms); false once the deadline has passed
 * (then without waiting). Mutex held. */
bool await_until(struct baton_client *c, int64_t deadline);

/* registry_unreachable() and registry_no_answer() for a call waiting since
 * pass `mark` on `r` (NULL: nothing of its own that went out), their
 * detail recorded for the calling thread. Mutex held. */
int await_unreachable(struct baton_client *c, uint64_t mark,
                      const struct request *r);
int await_no_answer(struct baton_client *c, uint64_t mark,
                    const struct request *r);

/* Wait for the submitted `r` (AWAITED) to become DONE until `deadline`:
 * 0, or what await_unreachable() or await_no_answer() says for r->mark,
 * the pass in progress when it was submitted. Mutex held; released while
 * waiting. */
int await_request(struct baton_client *c, struct request *r, int64_t deadline);

/* Make sure the handle has a live session (session_ensure_step()), waiting
 * until `deadline`: 0, BATON_ENOANSWER, BATON_ECONNECT / BATON_ETLS (no
 * node reached for an OPEN never sent), or the cluster's refusal, its
 * detail recorded. Mutex held. */
int await_session(struct baton_client *c, int64_t deadline);

/* Submit the command `k` in the live session (session_submit_step()),
 * waiting until `deadline` while its window is full: 0 with `*out`
 * submitted, BATON_EEXPIRED, BATON_ENOANSWER, BATON_ECONNECT / BATON_ETLS
 * or what the command fails with. Mutex held. */
int await_submit(struct baton_client *c, struct command *k, int64_t deadline,
                 struct request **out);

#endif /* CLIENT_AWAIT_H */
