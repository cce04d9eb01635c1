/* Checker S14 of a chaos run (checks.c): what the observers of the
 * election workload were told by their watches, against the apply logs. */
#ifndef CHAOS_CHECK_CHECK_OBSERVE_H
#define CHAOS_CHECK_CHECK_OBSERVE_H

#include "checks.h"
#include "run.h"

/* S14: each observer's events come in strictly increasing (index, ord)
 * and, from each watch opened from now (or after a compacted marker) to
 * the next, are a contiguous run of the watched name's GRANTs, RELEASEs
 * and PROCLAIMs in the merged apply log (numbered as
 * src/server/gateway/watchfeed.c numbers them), each with the apply log's kind,
 * session, owner, token, mode and value. */
void check_s14(const struct run *r, struct check_result *res);

#endif /* CHAOS_CHECK_CHECK_OBSERVE_H */
