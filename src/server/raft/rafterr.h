/* libraft's error codes in Baton's terms. */
#ifndef SERVER_RAFTERR_H
#define SERVER_RAFTERR_H

/* The nearest BATON_E* code to libraft's `raft_rv` (0 for 0; BATON_EINVAL
 * for a code without a nearer one). */
int rafterr_baton(int raft_rv);

#endif /* SERVER_RAFTERR_H */
