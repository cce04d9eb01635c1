/* What the final answer of a request means for the handle: the lock table,
 * the end of the session, and finishing what orphaned and internal requests
 * started. */
#ifndef CLIENT_OUTCOME_H
#define CLIENT_OUTCOME_H

struct baton_client;
struct request;

/*
 * Record the final answer of `r` (its status and res are set) and act on
 * it: mirror grants and releases in the lock table, end the session if the
 * answer says it is over, finish what an orphaned or internal request
 * started (a grant nobody waits for is released), and wake the callers.
 * Frees `r` when no caller waits for it. Mutex held.
 */
void outcome_answered(struct baton_client *c, struct request *r);

/* Give `r` a final status without an answer from the cluster (its session
 * ended), with the same cleanup as outcome_answered(). Mutex held. */
void outcome_fail(struct baton_client *c, struct request *r, int status);

/* Follow the orphaned blocking ACQUIRE `acquire`, which is on the wire,
 * with a CANCEL, so that the cluster does not grant it behind the back of
 * the caller who gave up. Mutex held. */
void outcome_withdraw(struct baton_client *c, struct request *acquire);

#endif /* CLIENT_OUTCOME_H */
