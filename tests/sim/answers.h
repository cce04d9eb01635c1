/* The final answers test_sim's clients were told, and check (d): each is
 * what the final log says became of its request. */
#ifndef TESTS_SIM_ANSWERS_H
#define TESTS_SIM_ANSWERS_H

#include <stddef.h>

#include "sim.h"

/* Record client `cl`'s final answer `res` to `cmd` (QUERY and CHECK, reads
 * of the state, are not recorded); out of memory sets s->oom. */
void answers_add(struct sim *s, const struct client *cl,
                 const struct command *cmd, const struct proto_result *res);

/* Free the record. */
void answers_free(struct sim *s);

/*
 * Check (d) over every recorded answer, against node 0's final log: the
 * event that decided its request at the answer's index, with the outcome
 * told,
 * - a RESULT of its (session, seq) (an OPEN's by its nonce) in an entry
 *   that holds the request's bytes as the client sent them;
 * - or, for an ACQUIRE or MULTI answered once its wait ended, the GRANT
 *   of its (session, seq) (GRANTED, its token that index) or the UNQUEUE
 *   (the status told);
 * and what a success says happened did: GRANTED with token T is a GRANT
 * event to its session and seq at index T, and at no other index (applied
 * once); REENTERED a GRANT to its owner at T; OPENED an OPEN of the
 * session; a RELEASED that freed the grant (count 0, not a duplicate) a
 * RELEASE, a CLOSED an END, in the answer's entry. An answer refused
 * before any proposal (index 0, an error) says nothing of the log.
 * 0, or -1 with the first failure in `reason` and s->fail_index set.
 */
int check_acknowledged(struct sim *s, char *reason, size_t cap);

/* A negative control: the first grant or OPEN told as done from halfway
 * through the record on is told with another token (an OPEN's another
 * session). 0, or -1 when there is none. */
int answers_break(struct sim *s, char *reason, size_t cap);

#endif /* TESTS_SIM_ANSWERS_H */
