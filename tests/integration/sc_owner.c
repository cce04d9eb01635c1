/* Integration scenarios on who may act in a session: ownership proven with
 * the session's secret (ATTACH), and the answer an old client gets. */
#include "sc_owner.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "rawframe.h"
#include "../../src/proto/reply.h"

/* Every request `b` (which does not own `session`) makes in it is refused
 * BATON_EPERM; `wait_seq` is a queued ACQUIRE of that session on `wname`. */
static void refused_in(struct ctx *x, struct tclient *b, uint64_t session,
                       const char *name, uint64_t owner, uint64_t token,
                       const char *wname, uint64_t wait_seq)
{
        struct tclient_result res;
        int rv;

        b->session = session;
        b->next_seq = 1000;
        rv = tclient_keepalive(b, OP_MS, NULL);
        EXPECT(x, rv == BATON_EPERM, "foreign KEEPALIVE: %d (%s)", rv,
               b->errmsg);
        rv = tclient_release(b, name, owner, token, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "foreign RELEASE: %d %s", rv, rs(x, &res));
        rv = tclient_acquire(b, name, owner, COMMAND_WAIT_TRY, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "foreign ACQUIRE: %d %s", rv, rs(x, &res));
        rv = tclient_cancel(b, wname, wait_seq, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "foreign CANCEL: %d %s", rv, rs(x, &res));
        rv = tclient_session_close(b, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "foreign CLOSE: %d %s", rv, rs(x, &res));
}

void sc_foreign_session(struct ctx *x)
{
        struct tclient a, b, c;
        struct tclient_result q, res;
        uint8_t wrong[ATTACH_SECRET_SIZE];
        char name[64], wname[64];
        uint64_t t, tw, seq;
        int rv;

        lock_name(x, name, sizeof name, "owned");
        lock_name(x, wname, sizeof wname, "owned-wait");
        OPEN(x, &a, TTL_MS);
        OPEN(x, &c, TTL_MS);
        GRANT(x, t, &a, name);
        GRANT(x, tw, &c, wname);
        START_WAIT(x, &a, wname, COMMAND_WAIT_FOREVER, &seq);
        WAITERS(x, &c, wname, 1);
        /* b knows what anyone can read. */
        EXPECT(x, tclient_init(&b, x->h.endpoints) == 0, "tclient_init");
        rv = tclient_query(&b, name, OP_MS, &q);
        EXPECT(x, rv == 0 && q.session == a.session && q.token == t,
               "QUERY: %d %s", rv, rs(x, &q));
        refused_in(x, &b, q.session, name, q.owner, q.token, wname, seq);
        if (!x->ok) {
                return;
        }
        /* Guessing the secret does not help. */
        memcpy(wrong, a.secret, sizeof wrong);
        wrong[ATTACH_SECRET_SIZE - 1] ^= 0x80;
        rv = tclient_attach(&b, a.session, wrong, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "ATTACH with a wrong secret: %d %s", rv,
               rs(x, &res));
        rv = tclient_release(&b, name, q.owner, q.token, OP_MS, &res);
        EXPECT(x, rv == BATON_EPERM, "RELEASE after a wrong ATTACH: %d %s", rv,
               rs(x, &res));
        /* Nothing changed: the grant, the waiter, the session. */
        HOLDS(x, &c, name, a.session, t, 0);
        HOLDS(x, &c, wname, c.session, tw, 1);
        /* The holder, on a new connection without ATTACH: refused too... */
        tclient_disconnect(&a);
        a.attach = false;
        rv = tclient_keepalive(&a, OP_MS, NULL);
        EXPECT(x, rv == BATON_EPERM, "KEEPALIVE without ATTACH: %d (%s)", rv,
               a.errmsg);
        /* ...and served again once it attaches. */
        a.attach = true;
        KEEPALIVE(x, &a);
        EXPECT(x, a.attaches >= 2, "the holder sent %lu ATTACH", a.attaches);
        /* The right secret works for anyone who has it. */
        rv = tclient_attach(&b, a.session, a.secret, OP_MS, &res);
        EXPECT(x,
               rv == 0 && res.kind == PROTO_KIND_OPENED &&
                   res.session == a.session,
               "ATTACH with the secret: %d %s", rv, rs(x, &res));
        rv = tclient_keepalive(&b, OP_MS, NULL);
        EXPECT(x, rv == 0, "KEEPALIVE after ATTACH: %d (%s)", rv, b.errmsg);
        RELEASE(x, &c, wname, tw);
        rv = tclient_finish(&a, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_GRANTED,
               "the waiter after the release: %d %s", rv, rs(x, &res));
        RELEASE(x, &a, wname, res.token);
        RELEASE(x, &a, name, t);
        tclient_close(&a);
        tclient_close(&b);
        tclient_close(&c);
}

void sc_old_version(struct ctx *x)
{
        struct tclient raw;
        struct proto_string msg;
        uint8_t frame[PROTO_HEADER_SIZE];
        uint8_t in[PROTO_HEADER_SIZE + 300];
        uint32_t len;
        int status = 0, rv;

        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        rv = tclient_connect(&raw, harness_client_address(&x->h, 1), OP_MS);
        EXPECT(x, rv == 0, "connect: %d", rv);
        header(frame, 1, PROTO_PING, 0, 0, 0x4242);
        EXPECT(x, tclient_raw_send(&raw, frame, sizeof frame, OP_MS) == 0,
               "send");
        EXPECT(x, tclient_raw_read(&raw, in, PROTO_HEADER_SIZE, OP_MS),
               "no answer to a version 1 frame");
        /* Version 1's header: what an old client can read. */
        EXPECT(x, in[0] == 1 && in[1] == PROTO_ERROR,
               "answered version %u type %u", in[0], in[1]);
        EXPECT(x, in[8] == 0x42 && in[9] == 0x42, "not the frame's id");
        len = (uint32_t)in[4] | (uint32_t)in[5] << 8 | (uint32_t)in[6] << 16 |
              (uint32_t)in[7] << 24;
        EXPECT(x,
               len <= 300 &&
                   tclient_raw_read(&raw, in + PROTO_HEADER_SIZE, len, OP_MS),
               "ERROR body of %u bytes", len);
        EXPECT(x,
               proto_read_error(in + PROTO_HEADER_SIZE, len, &status, &msg) ==
                       0 &&
                   status == BATON_EVERSION,
               "ERROR status %d, expected BATON_EVERSION", status);
        printf("# version 1 PING: ERROR %d \"%.*s\" in a version 1 header\n",
               status, (int)msg.len, msg.p != NULL ? msg.p : "");
        EXPECT(x, !tclient_raw_read(&raw, in, 1, OP_MS),
               "the connection stayed open after ERROR");
        tclient_close(&raw);
}
