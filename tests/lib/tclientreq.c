/* One request of a tclient on the wire: sent, sent again unchanged after
 * BATON_EUNKNOWN, followed to the leader, moved off a lost or silent
 * connection, and answered. */
#include "tclientreq.h"

#include <stdio.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/reply.h"
#include "tclientconn.h"

static int64_t min64(int64_t a, int64_t b)
{
        return a < b ? a : b;
}

/* Sleep up to `ms`, never past `deadline`: a retry pause, never a wait
 * for some state to be reached. */
static void pause_until(int64_t ms, int64_t deadline)
{
        tclient_sleep_ms(min64(ms, deadline - tclient_now_ms()));
}

void tclientreq_patch_id(uint8_t *frame, uint64_t id)
{
        unsigned i;

        for (i = 0; i < 8; i++) {
                frame[8 + i] = (uint8_t)(id >> (8 * i));
        }
}

static void stash(struct tclient_req *r, const struct proto_header *h,
                  const uint8_t *body)
{
        size_t n =
            h->length < TCLIENT_ANSWER_MAX ? h->length : TCLIENT_ANSWER_MAX;

        r->answered = true;
        r->ah = *h;
        r->ah.length = (uint32_t)n;
        if (n > 0) {
                memcpy(r->answer, body, n);
        }
}

static bool on_live_conn(const struct tclient *c, const struct tclient_req *r)
{
        return c->fd >= 0 && r->gen == c->gen;
}

/* Read frames until `r` is answered. Answers to the command in flight are
 * kept for it; answers to requests given up on are dropped. */
static int wait_answer(struct tclient *c, struct tclient_req *r, int64_t until)
{
        struct proto_header h;
        const uint8_t *body;
        int rv;

        while (!r->answered) {
                if (!on_live_conn(c, r)) {
                        return BATON_EIO;
                }
                rv = tclientconn_recv(c, until, &h, &body);
                if (rv != 0) {
                        return rv;
                }
                if (h.id == r->id) {
                        stash(r, &h, body);
                } else if (c->inflight && r != &c->cmd &&
                           on_live_conn(c, &c->cmd) && h.id == c->cmd.id) {
                        stash(&c->cmd, &h, body);
                }
        }
        return 0;
}

/* The pause after the leader turned out unknown or unreachable: jittered
 * so that clients do not move in step. */
static void back_off(struct tclient *c, int64_t deadline)
{
        int64_t ms =
            c->backoff_ms / 2 +
            (int64_t)(tclient_random() % (uint64_t)(c->backoff_ms + 1));

        pause_until(ms, deadline);
}

/* Before `r` goes out on this connection: ATTACH to the owned session,
 * if `r` acts in it and this connection has not attached yet. The answer
 * is not waited for: the node serves the connection's frames in order. */
int tclientreq_attach_first(struct tclient *c, const struct tclient_req *r,
                            int64_t deadline)
{
        uint8_t frame[PROTO_HEADER_SIZE + ATTACH_BODY_SIZE];
        size_t n;

        if (!c->attach || r->acts_in == 0 || r->acts_in != c->owned ||
            c->attached_gen == c->gen) {
                return 0;
        }
        n = attach_write(frame, sizeof frame, ++c->next_id, c->owned,
                         c->secret);
        if (tclientconn_send_all(c, frame, n, deadline) != 0) {
                return BATON_EIO;
        }
        c->attached_gen = c->gen;
        c->attaches++;
        return 0;
}

int tclientreq_exchange(struct tclient *c, struct tclient_req *r,
                        int64_t deadline)
{
        unsigned failures = 0;
        int rv;

        for (;;) {
                if (r->answered) {
                        r->answered = false;
                        if (r->ah.type == PROTO_NOT_LEADER) {
                                struct proto_string a = {NULL, 0};
                                uint64_t leader = 0;
                                c->redirects++;
                                r->gen = 0;
                                proto_read_not_leader(r->answer, r->ah.length,
                                                      &leader, &a);
                                if (!c->follow) {
                                        return BATON_ENOTLEADER;
                                }
                                tclientconn_drop(c);
                                if (leader != 0 && a.len > 0 &&
                                    a.len < TCLIENT_ADDR_MAX &&
                                    (a.len != strlen(c->peer) ||
                                     memcmp(a.p, c->peer, a.len) != 0)) {
                                        memcpy(c->hint, a.p, a.len);
                                        c->hint[a.len] = '\0';
                                        if (++failures > 2) {
                                                back_off(c, deadline);
                                        }
                                } else {
                                        tclientconn_advance(c);
                                        failures++;
                                        back_off(c, deadline);
                                }
                                continue;
                        }
                        if (r->ah.type == PROTO_RESULT) {
                                struct proto_result res;
                                if (proto_read_result(r->answer, r->ah.length,
                                                      0, &res) == 0 &&
                                    (res.status == BATON_EUNKNOWN ||
                                     res.status == BATON_ESHUTDOWN)) {
                                        /* Same frame again: exactly-once
                                         * makes the retry safe. */
                                        c->unknowns++;
                                        r->gen = 0;
                                        if (res.status == BATON_ESHUTDOWN) {
                                                tclientconn_drop(c);
                                                tclientconn_advance(c);
                                        }
                                        back_off(c, deadline);
                                        continue;
                                }
                                return 0;
                        }
                        if (r->ah.type == PROTO_ERROR) {
                                struct proto_string m = {NULL, 0};
                                int status = BATON_EMALFORMED;
                                proto_read_error(r->answer, r->ah.length,
                                                 &status, &m);
                                snprintf(c->errmsg, sizeof c->errmsg,
                                         "ERROR %d from %s: %.*s", status,
                                         c->peer, (int)m.len,
                                         m.p != NULL ? m.p : "");
                                tclientconn_drop(c);
                                return status < 0 ? status : BATON_EMALFORMED;
                        }
                        return 0;
                }
                if (tclient_now_ms() >= deadline) {
                        return BATON_ENOANSWER;
                }
                if (!on_live_conn(c, r)) {
                        if (tclientconn_ensure(c, deadline) != 0) {
                                if (++failures % c->n_endpoints == 0) {
                                        back_off(c, deadline);
                                }
                                continue;
                        }
                        if (tclientreq_attach_first(c, r, deadline) != 0) {
                                tclientconn_drop(c);
                                tclientconn_advance(c);
                                continue;
                        }
                        r->id = ++c->next_id;
                        tclientreq_patch_id(r->frame, r->id);
                        if (tclientconn_send_all(c, r->frame, r->len,
                                                 deadline) != 0) {
                                tclientconn_drop(c);
                                tclientconn_advance(c);
                                continue;
                        }
                        if (r->sends++ > 0) {
                                c->resends++;
                        }
                        r->gen = c->gen;
                        r->sent_ms = tclient_now_ms();
                }
                {
                        int64_t until = deadline;
                        if (!r->slow && c->try_ms > 0) {
                                until = min64(until, r->sent_ms + c->try_ms);
                        }
                        rv = wait_answer(c, r, until);
                }
                if (rv == 0) {
                        continue;
                }
                if (rv == BATON_ENOANSWER && tclient_now_ms() >= deadline) {
                        return BATON_ENOANSWER;
                }
                /* Lost, or silent for try_ms (a paused node): elsewhere. */
                tclientconn_drop(c);
                tclientconn_advance(c);
                if (++failures % c->n_endpoints == 0) {
                        back_off(c, deadline);
                }
        }
}

void tclientreq_init(struct tclient_req *r)
{
        memset(r, 0, sizeof *r);
}
