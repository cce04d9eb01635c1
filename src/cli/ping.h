/* batonctl ping: one linearizable round trip through the cluster's leader,
 * and which node served it. */
#ifndef CLI_PING_H
#define CLI_PING_H

#include "../../include/baton.h"
#include "args.h"

/* ping [--wait MS]: a read the leader answers only once a majority has
 * confirmed its leadership, then the leader's endpoint, id and term and
 * the read's round trip ("127.0.0.1:7101 id=1 term=3 rtt_us=812"), or one
 * JSON object. Without --wait, one try within --timeout; with it, tries
 * again until a leader serves or MS have passed. Exit 0, or 3 with the
 * last try's error named. */
int cli_ping(baton_client *c, const struct args *o);

#endif /* CLI_PING_H */
