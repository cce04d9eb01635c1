/* batonctl watch and observe. */
#ifndef CLI_WATCH_H
#define CLI_WATCH_H

#include "../../include/baton.h"
#include "args.h"

/* watch NAME | --prefix P [--from INDEX[:ORD]]: every event, until SIGINT
 * or SIGTERM (exit 0), or a failure (exit 3). */
int cli_watch(baton_client *c, const struct args *o);

/* observe NAME: the election's leader now, then every new leadership and
 * value, without gaps; as cli_watch() ends. */
int cli_observe(baton_client *c, const struct args *o);

#endif /* CLI_WATCH_H */
