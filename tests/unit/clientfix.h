/* A client core with what it borrows, for the unit tests that drive
 * libbaton's deciding modules at chosen times: a session, its lock table
 * and notices, a registry on a link that never connects, so that what
 * they submit stays queued and nothing reads the clock to send it, and an
 * environment whose random numbers and secrets come from a seed. */
#ifndef TESTS_UNIT_CLIENTFIX_H
#define TESTS_UNIT_CLIENTFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/rng.h"
#include "../../src/client/core.h"
#include "../../src/proto/command.h"
#include "../../src/proto/proto.h"

struct clientfix {
        struct rng rng;      /* every draw of `env`: a seed names them all */
        struct core_env env; /* what the link, registry and session borrow */
        unsigned draws;      /* random numbers drawn so far */
        struct core core;    /* on a link that never connects by itself */
};

/* A fixture whose session asks for `ttl_ms`, its environment drawing from
 * `seed`; fails the test on error. */
struct clientfix *clientfix_new(uint32_t ttl_ms, uint64_t seed);
void clientfix_free(struct clientfix *f);

/* What the registry's put() records when `r` goes out at `t` on the
 * link's connection: a frame id, the connection, the send times. */
void clientfix_sent(struct clientfix *f, struct request *r, int64_t t);

/* `r` answered with `status` and handled at `now`, as the registry's
 * finish() hands it to the session, then dropped (nobody collects the
 * library's own requests). */
void clientfix_answer(struct clientfix *f, struct request *r, int status,
                      int64_t now);

/* A frame the core put in the link's outbox, and its command when it is a
 * COMMAND taken with `decode`. */
struct clientfix_frame {
        struct proto_header h;
        uint8_t body[1024];
        struct command k; /* zeroed unless decoded */
};

/* The frames in the link's outbox, taken as a host writes them: at most
 * `max` into `out`, with `decode` each COMMAND's command decoded; their
 * count. Fails the test on a frame that does not fit or decode. */
size_t clientfix_take(struct clientfix *f, struct clientfix_frame *out,
                      size_t max, bool decode);

#endif /* TESTS_UNIT_CLIENTFIX_H */
