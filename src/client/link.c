/* The deciding half of a handle's transport. */
#include "link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "clock.h"
#include "../proto/reply.h"

#define BACKOFF_BASE_MS  10   /* first pause after failures in a row */
#define BACKOFF_MAX_MS   1000 /* longest pause between attempts */
#define SUSPECT_MS       3000 /* ignore a silent node's hints this long */
#define ELECTION_POLL_MS 40   /* ask again this often while one runs, */
#define ELECTION_FAST_MS 3000 /* for this long; then the usual backoff */

int link_init(struct link *l, const char (*endpoints)[LINK_ADDR_MAX],
              unsigned n_endpoints, const struct core_env *env)
{
        memset(l, 0, sizeof *l);
        l->env = env;
        l->endpoints = endpoints;
        l->n_endpoints = n_endpoints;
        l->peer_index = -1;
        return reach_init(&l->reach, endpoints, n_endpoints) != 0 ? BATON_ENOMEM
                                                                  : 0;
}

void link_close(struct link *l)
{
        free(l->out);
        l->out = NULL;
        reach_close(&l->reach);
}

void link_listen(struct link *l, const struct link_cb *cb)
{
        l->cb = *cb;
}

bool link_up(const struct link *l)
{
        return l->conn != 0 && !l->dialing && !l->greeting;
}

/* --- The outbox ----------------------------------------------------------- */

static bool append(struct link *l, const uint8_t *p, size_t n)
{
        if (l->out_len + n > l->out_cap) {
                size_t cap = l->out_cap == 0 ? 4096 : l->out_cap;
                uint8_t *out;
                while (cap < l->out_len + n) {
                        cap *= 2;
                }
                out = realloc(l->out, cap);
                if (out == NULL) {
                        return false;
                }
                l->out = out;
                l->out_cap = cap;
        }
        memcpy(l->out + l->out_len, p, n);
        l->out_len += n;
        return true;
}

uint64_t link_put(struct link *l, uint8_t *frame, size_t len)
{
        uint64_t id = ++l->next_id;

        proto_header_set_id(frame, id);
        return append(l, frame, len) ? id : 0;
}

size_t link_output(const struct link *l, const uint8_t **p)
{
        if (p != NULL) {
                *p = l->out;
        }
        return l->out_len;
}

void link_output_taken(struct link *l, size_t n)
{
        if (n == 0) {
                return;
        }
        memmove(l->out, l->out + n, l->out_len - n);
        l->out_len -= n;
}

/* --- Choosing a node ------------------------------------------------------ */

static bool suspect(const struct link *l, const char *address, int64_t now)
{
        return now < l->suspect_until && strcmp(address, l->suspect) == 0;
}

/* After trouble with the current peer: the endpoint after it is next. */
static void advance(struct link *l)
{
        unsigned i;

        for (i = 0; i < l->n_endpoints; i++) {
                if (strcmp(l->endpoints[i], l->peer) == 0) {
                        l->next = (i + 1) % l->n_endpoints;
                        return;
                }
        }
        l->next = (l->next + 1) % l->n_endpoints;
}

static int64_t backoff(const struct link *l, unsigned n)
{
        int64_t ms = BACKOFF_BASE_MS;

        if (n <= 1) {
                return 0; /* the first failure moves on at once */
        }
        while (n-- > 2 && ms < BACKOFF_MAX_MS) {
                ms *= 2;
        }
        return coreenv_jitter(l->env,
                              ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS);
}

/* Give the connection up and tell the owner, which resends on the next
 * one what it had sent on this; the host closes what it holds of it. */
static void drop(struct link *l, int64_t now)
{
        l->conn = 0;
        l->dialing = false;
        l->greeting = false;
        l->out_len = 0;
        l->cb.closed(l->cb.data, l->gen, now);
}

void link_disconnect(struct link *l, int64_t now)
{
        drop(l, now);
}

/* After an attempt: the rest of the pass goes on at once; a pass that
 * ended without a leader backs off, longer each time, and one that failed
 * everywhere tells the owner. */
static void settle(struct link *l, int64_t now, enum reach_verdict v)
{
        if (v == REACH_GOING) {
                l->retry_at = now;
                return;
        }
        l->failures++;
        l->retry_at = now + backoff(l, l->failures);
        if (v == REACH_FAILED && l->cb.unreachable != NULL) {
                l->cb.unreachable(l->cb.data);
        }
}

/* The connection or the attempt failed with `outcome`, for the reason
 * `why`: record it, move on. A node that went silent is avoided for a
 * while, even when others name it as the leader (they learn of its death
 * late). */
static void fail_as(struct link *l, int64_t now, bool silent,
                    enum reach_outcome outcome, bool tls, const char *why)
{
        enum reach_verdict v =
            reach_note(&l->reach, l->peer_index, outcome, tls, why, now);

        if (l->peer_index < 0) {
                reach_note_named(&l->reach, l->peer, outcome, tls, why);
        }

        if (silent) {
                memcpy(l->suspect, l->peer, sizeof l->suspect);
                l->suspect_until = now + SUSPECT_MS;
        }
        drop(l, now);
        advance(l);
        settle(l, now, v);
}

void link_fail(struct link *l, int64_t now, bool silent)
{
        /* Not answered yet: a failure now says that no Baton node is
         * there to answer. */
        if (!link_up(l)) {
                fail_as(l, now, silent, REACH_REFUSED, false,
                        "closed the connection without answering (not a "
                        "Baton client port?)");
                return;
        }
        fail_as(l, now, silent, REACH_LOST, false,
                silent ? "stopped answering" : "dropped the connection");
}

/* A live node knows no leader, or names the one that went silent: an
 * election runs, and it typically ends within two election timeouts. Ask
 * again soon, on the next node. The exponential backoff would make the gap
 * a client sees after losing its leader the sum of its pauses, about twice
 * the election; once ELECTION_FAST_MS pass without a leader (no majority,
 * most likely) it takes over again, so that a leaderless cluster is not
 * polled hard for long. */
static void no_leader(struct link *l, int64_t now, const char *why)
{
        if (l->leaderless_since == 0) {
                l->leaderless_since = now;
        }
        fail_as(l, now, false, REACH_NO_LEADER, false, why);
        if (now - l->leaderless_since < ELECTION_FAST_MS) {
                l->retry_at = now + coreenv_jitter(l->env, ELECTION_POLL_MS);
        }
}

void link_no_leader(struct link *l, int64_t now)
{
        no_leader(l, now, "no leader");
}

void link_leader_answered(struct link *l)
{
        l->failures = 0;
        l->bounces = 0;
        l->leaderless_since = 0;
        reach_answered(&l->reach, l->peer_index);
}

/* The next endpoint that has not gone silent (the next one, if all have).
 * Those skipped count in the pass with what they did last, under
 * SUSPECT_MS ago; a pass never ends on skips alone. */
static void pick_endpoint(struct link *l, int64_t now)
{
        unsigned i, at = l->next;

        for (i = 0; i < l->n_endpoints; i++) {
                if (!suspect(l, l->endpoints[at], now)) {
                        break;
                }
                at = (at + 1) % l->n_endpoints;
        }
        while (i < l->n_endpoints && l->next != at) {
                if (reach_skip(&l->reach, (int)l->next, now) == REACH_FAILED &&
                    l->cb.unreachable != NULL) {
                        l->cb.unreachable(l->cb.data);
                }
                l->next = (l->next + 1) % l->n_endpoints;
        }
        memcpy(l->peer, l->endpoints[l->next], sizeof l->peer);
}

uint64_t link_dial(struct link *l, int64_t now, bool needed)
{
        if (l->conn != 0 || !needed || now < l->retry_at) {
                return 0;
        }
        if (l->hint[0] != '\0' && !suspect(l, l->hint, now)) {
                memcpy(l->peer, l->hint, sizeof l->peer);
        } else {
                pick_endpoint(l, now);
        }
        l->hint[0] = '\0';
        l->peer_index = reach_index(&l->reach, l->peer);
        l->conn = ++l->conns;
        l->dialing = true;
        return l->conn;
}

/* --- Connections ---------------------------------------------------------- */

/* Whether `conn` is the attempt in hand: a report on an earlier one comes
 * too late to mean anything. */
static bool current(const struct link *l, uint64_t conn)
{
        return conn != 0 && conn == l->conn;
}

/* TCP (and TLS) is through: ask the node a PING, and hold every request
 * back until it answers, so that a port that is not Baton's, or a node
 * that refuses this client, never gets one. */
void link_conn_up(struct link *l, uint64_t conn, int64_t now)
{
        uint8_t frame[PROTO_HEADER_SIZE];
        size_t n = proto_write_empty(frame, sizeof frame, 0, PROTO_PING);

        if (!current(l, conn) || !l->dialing) {
                return;
        }
        l->dialing = false;
        l->greeting = true;
        l->deadline = now + LINK_CONNECT_MS;
        l->hello = link_put(l, frame, n);
        if (l->hello == 0) {
                fail_as(l, now, false, REACH_LOST, false, "out of memory");
        }
}

void link_conn_failed(struct link *l, uint64_t conn,
                      const struct link_failure *f, int64_t now)
{
        if (!current(l, conn)) {
                return;
        }
        if (link_up(l)) {
                link_fail(l, now, f->silent);
                return;
        }
        fail_as(l, now, f->silent, f->outcome, f->tls,
                f->why != NULL ? f->why : "");
}

void link_tick(struct link *l, int64_t now)
{
        char why[REACH_WHY_MAX];

        if (!l->greeting || now < l->deadline) {
                return;
        }
        snprintf(why, sizeof why,
                 "accepted the connection but did not answer within %d ms "
                 "(not a Baton client port, or a node that is stopped?)",
                 LINK_CONNECT_MS);
        fail_as(l, now, true, REACH_REFUSED, false, why);
}

int64_t link_next_event(const struct link *l, bool needed)
{
        if (l->conn == 0) {
                return needed ? l->retry_at : CLOCK_NEVER;
        }
        return l->greeting ? l->deadline : CLOCK_NEVER;
}

/* --- Reading -------------------------------------------------------------- */

/* The node answered the first PING: the owner may send. */
static void up(struct link *l, int64_t now)
{
        l->greeting = false;
        l->gen++;
        l->connects++;
        l->last_rx = now;
        reach_greeted(&l->reach, l->peer_index, now);
        if (l->peer_index < 0) {
                reach_note_named(&l->reach, l->peer, REACH_ANSWERED, false, "");
        }
        l->cb.connected(l->cb.data, now);
}

/* A follower names the leader, or knows none. */
static void not_leader(struct link *l, const uint8_t *body, uint32_t len,
                       int64_t now)
{
        struct proto_string a = {NULL, 0};
        char why[REACH_WHY_MAX];
        uint64_t leader = 0;

        l->redirects++;
        if (proto_read_not_leader(body, len, &leader, &a) == 0 && leader != 0 &&
            a.len > 0 && a.len < LINK_ADDR_MAX &&
            (a.len != strlen(l->peer) || memcmp(a.p, l->peer, a.len) != 0)) {
                /* Copied first: the address lives in the frame, which dies
                 * with the connection. */
                memcpy(l->hint, a.p, a.len);
                l->hint[a.len] = '\0';
                if (suspect(l, l->hint, now)) {
                        /* It names the node that went silent: it has not
                         * noticed yet. */
                        snprintf(why, sizeof why,
                                 "no leader (it names %s, which went silent)",
                                 l->hint);
                        l->hint[0] = '\0';
                        no_leader(l, now, why);
                        return;
                }
                snprintf(why, sizeof why, "not the leader; it names %s",
                         l->hint);
                reach_note(&l->reach, l->peer_index, REACH_REDIRECTED, false,
                           why, now);
                /* Every request goes to the leader, so leave this node. */
                drop(l, now);
                l->bounces++;
                l->retry_at =
                    now + (l->bounces > 2 ? backoff(l, l->bounces) : 0);
                return;
        }
        no_leader(l, now, "no leader");
}

/* An ERROR in answer to the first PING: the node refuses the connection.
 * Only a full node (too many connections) may take it later. */
static void refused(struct link *l, const struct proto_header *h,
                    const uint8_t *body, int64_t now)
{
        struct proto_string msg = {"", 0};
        char why[REACH_WHY_MAX];
        int status = BATON_EMALFORMED;

        if (proto_read_error(body, h->length, &status, &msg) != 0 ||
            msg.p == NULL) {
                msg.p = "";
                msg.len = 0;
        }
        if (status == BATON_ETLS) {
                fail_as(l, now, false, REACH_REFUSED, true,
                        "the node requires TLS but this client uses plain "
                        "TCP (it was given no CA, certificate and key)");
                return;
        }
        snprintf(why, sizeof why, "refused the connection: %.*s", (int)msg.len,
                 msg.p);
        fail_as(l, now, false,
                status == BATON_ETOOMANYCONNS ? REACH_LOST : REACH_REFUSED,
                false, why);
}

/* A frame while the first PING waits for its answer: a refusal, or the
 * node's answer, which brings the connection up. True when the frame is
 * done with here (the refusal, or the PING's own answer). */
static bool greeting_frame(struct link *l, const struct proto_header *h,
                           const uint8_t *body, int64_t now)
{
        if (h->type == PROTO_ERROR) {
                refused(l, h, body, now);
                return true;
        }
        up(l, now);
        return h->id == l->hello;
}

void link_conn_frame(struct link *l, uint64_t conn,
                     const struct proto_header *h, const uint8_t *body,
                     int64_t now)
{
        if (!current(l, conn) || l->dialing) {
                return;
        }
        l->last_rx = now;
        if (l->greeting) {
                if (greeting_frame(l, h, body, now) || !current(l, conn)) {
                        return; /* done with, or the connection refused */
                }
        }
        if (h->type == PROTO_NOT_LEADER) {
                not_leader(l, body, h->length, now);
        } else {
                l->cb.frame(l->cb.data, h, body, now);
        }
}
