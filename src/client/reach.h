/* What each endpoint of a link answered when it was last tried, counted in
 * passes over the endpoints: what a call that finds no node says about why,
 * and the verdict that no node can be reached at all. */
#ifndef CLIENT_REACH_H
#define CLIENT_REACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/proto.h"

#define REACH_ADDR_MAX (PROTO_ADDRESS_MAX + 1) /* an endpoint, with its NUL */
#define REACH_WHY_MAX  256  /* one endpoint's reason, with its NUL */
#define REACH_TEXT_MAX 1024 /* every endpoint's reasons, with the NUL */

/*
 * What became of the last attempt on an endpoint. The first four are
 * answers: a node is there and speaks Baton. LOST may pass by itself.
 * REFUSED is a failure that waiting a little cannot mend: no connection
 * within the connect timeout, the name does not resolve, TLS failed (a
 * certificate refused either way, TLS on one side only), or the peer is
 * not a Baton client port (it closed, or said nothing, before answering
 * the connection's first PING). NOT_LISTENING, the connection refused, is
 * a refusal too, but one that a node starting or restarting mends within
 * a moment (a script that starts batond and then asks it).
 */
enum reach_outcome {
        REACH_UNTRIED = 0,
        REACH_ANSWERED,   /* the node answered (as the leader, for a handle) */
        REACH_REDIRECTED, /* the node answered that another node leads */
        REACH_NO_LEADER,  /* the node answered that it knows no leader */
        REACH_LOST,       /* a node that had answered went away or silent */
        REACH_REFUSED,    /* no Baton node can be reached there */
        REACH_NOT_LISTENING, /* connection refused: nothing listens yet */
};

/* How long passes refused everywhere, some for want of a listener, go on
 * before they count as failed: a node that is starting listens within it. */
#define REACH_MEND_MS 1000

struct reach_endpoint {
        uint64_t pass;   /* the pass it was last tried in; 0: never */
        uint8_t outcome; /* enum reach_outcome */
        bool tls;        /* REFUSED in TLS (either side's refusal) */
        char why[REACH_WHY_MAX];
};

/*
 * A pass tries every endpoint once, in turn, and ends when the last of them
 * has been tried. A pass in which every endpoint was REFUSED fails: no node
 * can be reached, and a call whose request was never sent can say so at
 * once (registry.h decides). When some of them were NOT_LISTENING instead,
 * passes like it fail only once they have gone on for REACH_MEND_MS. Any
 * answer, or a LOST, keeps the pass from failing: an election runs, or a
 * node is on its way back.
 *
 * Not thread-safe: the link's owner guards it (the handle's mutex).
 */
struct reach {
        const char (*endpoints)[REACH_ADDR_MAX]; /* borrowed */
        unsigned n;
        struct reach_endpoint *ends; /* n of them */
        uint64_t pass;               /* the pass in progress, from 1 */
        uint64_t failed_pass;        /* the last that failed; 0: none */
        int64_t mending_since; /* first refused pass of a run in which some
                                  were NOT_LISTENING; 0: none */
        int failed_code;       /* of it: BATON_ETLS or BATON_ECONNECT */
        char failed_why[REACH_TEXT_MAX]; /* of it: each endpoint's reason */
        /* The leader the nodes named, when it is not an endpoint: its
         * address and its last attempt (pass 0: none recorded, or it
         * answered since). */
        char named[REACH_ADDR_MAX];
        struct reach_endpoint named_end;
};

/* `endpoints` (n >= 1) are borrowed for the life of `r`. 0 or
 * BATON_ENOMEM. */
int reach_init(struct reach *r, const char (*endpoints)[REACH_ADDR_MAX],
               unsigned n);
void reach_close(struct reach *r);

/* The index of `address` among the endpoints, or -1 (a leader named by a
 * node, which is not an endpoint: its attempts are not recorded). */
int reach_index(const struct reach *r, const char *address);

/* What a pass came to once its last endpoint was tried. */
enum reach_verdict {
        REACH_GOING = 0, /* the pass goes on */
        REACH_OVER,      /* it ended, and some node answered or may yet */
        REACH_FAILED,    /* it ended, and every endpoint was REFUSED */
};

/* Record that endpoint `i` (-1: not an endpoint, nothing is recorded) came
 * to `outcome` for the reason `why` (copied; `tls`: a TLS failure) at
 * `now` (ms, the link's clock). What the pass came to. */
enum reach_verdict reach_note(struct reach *r, int i,
                              enum reach_outcome outcome, bool tls,
                              const char *why, int64_t now);

/* An attempt on `address`, the leader a node named, which is not an
 * endpoint, came to `outcome` for `why` (copied; `tls`: a TLS failure):
 * kept for what a call that gives up says (a refusal), or forgotten (an
 * answer). It never makes a pass fail: the nodes name a leader that died
 * until they notice, which an election mends. */
void reach_note_named(struct reach *r, const char *address,
                      enum reach_outcome outcome, bool tls, const char *why);

/* Endpoint `i` is skipped in this pass (it went silent a moment ago): its
 * last outcome counts for this pass too. What the pass came to. */
enum reach_verdict reach_skip(struct reach *r, int i, int64_t now);

/* Endpoint `i` answered a new connection's first PING at `now`: a Baton
 * node is there. That says nothing of who leads, so what it last said of
 * that (REDIRECTED, NO_LEADER) stands for this pass until it answers a
 * request; otherwise it is ANSWERED. What the pass came to. */
enum reach_verdict reach_greeted(struct reach *r, int i, int64_t now);

/* Endpoint `i` answered again, as it did last time: only the outcome is
 * kept (cheap enough for every answer). */
void reach_answered(struct reach *r, int i);

/* Whether a pass that began at or after pass `mark` failed. */
bool reach_failed_since(const struct reach *r, uint64_t mark);

/* "A: why; B: why" for every endpoint tried, from its last attempt, into
 * `buf` (cut short to fit), then "; the leader they name, L: why" when
 * the last attempt on a named leader that is not an endpoint failed.
 * Whether some node answered that it knows no leader, or named one that
 * could not be reached, goes to `*leaderless` (may be NULL): an election
 * runs, or no majority is left. */
void reach_describe(const struct reach *r, char *buf, size_t size,
                    bool *leaderless);

/*
 * What a call answers that began waiting during pass `mark` (its request
 * `sent` to a node, or not yet), with its detail in `buf`:
 *
 * - never sent, and a pass since `mark` failed: BATON_ETLS when some
 *   endpoint failed in TLS, else BATON_ECONNECT, at once (nothing reached
 *   the cluster, so nothing can have been applied);
 * - otherwise 0 (wait on) until `expired`, the call's deadline; then
 *   BATON_ENOANSWER, saying "no leader" when the nodes that answered knew
 *   none ("cannot connect to the leader" when they named one that could
 *   not be reached) and, for a request that went out, that its outcome
 *   is unknown;
 *   or, for a request never sent when no node answered at all, or when
 *   the nodes named a leader that could not be reached (refused,
 *   unreachable, timed out, a name that does not resolve),
 *   BATON_ETLS / BATON_ECONNECT as above, saying which address failed
 *   and why.
 */
int reach_answer(const struct reach *r, uint64_t mark, bool sent, bool expired,
                 char *buf, size_t size);

#endif /* CLIENT_REACH_H */
