/* Waiting for a harness's cluster to elect a leader that serves, and for
 * every node to follow it; part of the harness (harness.h includes it). */
#ifndef TESTS_INTEGRATION_HARNESSWAIT_H
#define TESTS_INTEGRATION_HARNESSWAIT_H

struct harness;

/*
 * Poll every running node's STATUS until the leader with the highest term
 * answers a linearizable QUERY (so it serves). 0 with *leader, or -1 after
 * timeout_ms with h->errmsg.
 */
int harness_wait_leader(struct harness *h, int timeout_ms, unsigned *leader);

/*
 * As harness_wait_leader(), and every running, unpaused node follows that
 * leader in its term and has applied the leader's commit index.
 */
int harness_wait_healthy(struct harness *h, int timeout_ms, unsigned *leader);

#endif /* TESTS_INTEGRATION_HARNESSWAIT_H */
