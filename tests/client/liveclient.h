/* The libbaton handles and lock names a case on the live cluster of
 * livecluster.h makes, and assert_ok(), which fails the case with the
 * call's error text. */
#ifndef TESTS_CLIENT_LIVECLIENT_H
#define TESTS_CLIENT_LIVECLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "../../include/baton.h"

#define LIVECLIENT_OP_MS 5000 /* request_timeout_ms of the handles */
#define LIVECLIENT_SLACK_MS                                                    \
        500 /* a call may end this much past its deadline                      \
             */

/*
 * A handle on the cluster livecluster_use() was given, with session TTL
 * `ttl_ms` and the options `o` (NULL: the defaults with a request timeout
 * of LIVECLIENT_OP_MS; a NULL client_name becomes "test_client"). `o` is
 * borrowed for the call and its ttl_ms overwritten. Fails the case (after
 * saying why) when the handle cannot be made.
 */
baton_client *liveclient_new(uint32_t ttl_ms, struct baton_options *o);

/* A lock name no other case of the run uses: "tc-WHAT-N" into `buf`. */
void liveclient_name(char *buf, size_t cap, const char *what);

/* Fails the case with the call's error text (cmocka.h included first). */
#define assert_ok(expr)                                                        \
        do {                                                                   \
                int rv_ = (expr);                                              \
                if (rv_ != 0) {                                                \
                        print_message("# %s: %d %s\n", #expr, rv_,             \
                                      baton_strerror(rv_));                    \
                }                                                              \
                assert_int_equal(rv_, 0);                                      \
        } while (0)

#endif /* TESTS_CLIENT_LIVECLIENT_H */
