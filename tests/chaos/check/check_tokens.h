/* Checkers S2, S3 and S6 of a chaos run (checks.c): the tokens clients
 * were told, their order, their grants, and fencing refusals. */
#ifndef CHAOS_CHECK_CHECK_TOKENS_H
#define CHAOS_CHECK_CHECK_TOKENS_H

#include "checks.h"

/* S2: per lock, tokens rise with real time. */
void check_s2(const struct run *r, struct check_result *res);

/* S3: each ok acquire's token is the index of its GRANT. */
void check_s3(const struct run *r, struct check_result *res);

/* S6: each refusal by the register is a fencing save; counts them in
 * `st`. */
void check_s6(const struct run *r, struct check_result *res,
              struct check_stats *st);

#endif /* CHAOS_CHECK_CHECK_TOKENS_H */
