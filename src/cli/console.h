/* batonctl console: a page in the operator's browser showing the cluster
 * (members, locks, sessions, elections, a live stream of events) with the
 * admin actions behind a confirmation, served on the operator's own
 * machine through the operator's libbaton handle, so with the operator's
 * certificate and role. */
#ifndef CLI_CONSOLE_H
#define CLI_CONSOLE_H

#include "../../include/baton.h"

/* Where the console listens when --listen is not given. */
#define CONSOLE_DEFAULT_LISTEN "127.0.0.1:7400"

struct console_settings {
        /* "HOST:PORT" or "[::1]:PORT" (PORT 0: any free port). HOST must
         * be a loopback address or "localhost": whoever reaches the port
         * acts with the operator's certificate. */
        const char *listen;
        const char *endpoints; /* shown on the page */
        /* The directory of index.html, console.js and console.css. */
        const char *files;
};

/*
 * Serve the console until SIGINT or SIGTERM. Prints the address to open,
 * with a token for this run only, on stdout; a browser that opens it gets
 * a cookie (HttpOnly, SameSite=Strict) that every other request must
 * carry, and requests for another Host than the console's are refused (a
 * page elsewhere cannot drive it, nor a DNS name rebound to loopback).
 * Returns 0 once stopped, or 2 (with a message on stderr naming the
 * problem) when `listen` is not a loopback address, the files are
 * missing, or the port cannot be bound.
 */
int console_run(baton_client *c, const struct console_settings *s);

/* The directory of the console's files: $BATON_CONSOLE_DIR, else the
 * installed one, else the source tree's (a build that is not installed). */
const char *console_files(void);

#endif /* CLI_CONSOLE_H */
