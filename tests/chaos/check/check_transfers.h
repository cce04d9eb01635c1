/* Checker S13 of a chaos run (checks.c): the transfers workload's accounts
 * at the fenced register keep their total. */
#ifndef CHAOS_CHECK_CHECK_TRANSFERS_H
#define CHAOS_CHECK_CHECK_TRANSFERS_H

#include "checks.h"

/* S13: every read of an account inside a transfer sees the accounts sum to
 * their starting total, but for transfers left half done by a holder
 * whose grants had ended; a holder that read every account saw them sum
 * to it. */
void check_s13(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_TRANSFERS_H */
