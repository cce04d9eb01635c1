/* The console's live stream of events: a watch of every name, sent to the
 * page as Server-Sent Events. */
#ifndef CLI_CONSOLESTREAM_H
#define CLI_CONSOLESTREAM_H

#include <signal.h>

#include <microhttpd.h>

#include "../../include/baton.h"

/*
 * A response that streams every grant, release and proclaim from now, or
 * after `last_id` ("INDEX:ORD", the Last-Event-ID an EventSource sends
 * when it reconnects) when not NULL: one event a change, `id: INDEX:ORD`
 * and `data: ` the JSON of consoleapi_event(); a comment line every 15 s
 * when nothing happens; and when the watch ends (compacted, too slow, the
 * cluster refused it), `event: end` with the error's JSON, after which
 * the stream closes and the page reads the state again. The stream stops
 * too once `*stopping` is set. NULL when out of memory.
 */
struct MHD_Response *consolestream_open(baton_client *c, const char *last_id,
                                        volatile sig_atomic_t *stopping);

#endif /* CLI_CONSOLESTREAM_H */
