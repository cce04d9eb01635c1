/* Integration scenarios on malformed input. */
#include "sc_malformed.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "rawframe.h"
#include "../../src/proto/reply.h"

struct bad_frame {
        const char *what;
        uint8_t bytes[512];
        size_t len;
        int status; /* expected ERROR status; 0: any */
};

static size_t bad_frames(struct bad_frame *b)
{
        static const char http[] = "GET / HTTP/1.1\r\nHost: baton\r\n\r\n";
        uint8_t cmd[COMMAND_MAX_SIZE];
        struct command k;
        size_t n = 0, len;

        b[n].what = "garbage (an HTTP request)";
        memcpy(b[n].bytes, http, sizeof http - 1);
        b[n].len = sizeof http - 1;
        b[n++].status = 0;

        b[n].what = "frame version 3 (from the future)";
        b[n].len = header(b[n].bytes, PROTO_VERSION + 1, PROTO_PING, 0, 0, 7);
        b[n++].status = BATON_EVERSION;

        b[n].what = "length over the maximum (65537)";
        b[n].len = header(b[n].bytes, PROTO_VERSION, PROTO_COMMAND, 0,
                          PROTO_MAX_BODY + 1, 8);
        b[n++].status = BATON_ETOOBIG;

        b[n].what = "length 4 GiB - 1";
        b[n].len =
            header(b[n].bytes, PROTO_VERSION, PROTO_QUERY, 0, UINT32_MAX, 9);
        b[n++].status = BATON_ETOOBIG;

        b[n].what = "unknown frame type";
        b[n].len = header(b[n].bytes, PROTO_VERSION, 0x33, 0, 0, 10);
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "non-zero flags";
        b[n].len = header(b[n].bytes, PROTO_VERSION, PROTO_PING, 1, 0, 11);
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "PING with a body";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_PING, 0, 4, 18);
        memcpy(b[n].bytes + len, "ping", 4);
        b[n].len = len + 4;
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "STATUS with a body";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_STATUS, 0, 1, 19);
        b[n].bytes[len] = 0;
        b[n].len = len + 1;
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "a response type sent as a request";
        b[n].len = header(b[n].bytes, PROTO_VERSION, PROTO_RESULT, 0, 0, 12);
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "COMMAND with a body that does not decode";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_COMMAND, 0, 5, 13);
        memcpy(b[n].bytes + len, "\x01\x04\x00\x00\xff", 5);
        b[n].len = len + 5;
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "COMMAND of command version 9";
        memset(&k, 0, sizeof k);
        k.type = COMMAND_ACQUIRE;
        k.session = 1;
        k.seq = 1;
        k.ack = 1;
        k.name = "x";
        k.name_len = 1;
        len = command_encode(&k, cmd, sizeof cmd);
        cmd[0] = 9;
        b[n].len =
            proto_write_command(b[n].bytes, sizeof b[n].bytes, 14, cmd, len);
        b[n++].status = BATON_EVERSION;

        b[n].what = "COMMAND longer than COMMAND_MAX_SIZE";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_COMMAND, 0,
                     COMMAND_MAX_SIZE + 1, 15);
        memset(b[n].bytes + len, 1, COMMAND_MAX_SIZE + 1);
        b[n].len = len + COMMAND_MAX_SIZE + 1;
        b[n++].status = BATON_EMALFORMED;

        b[n].what = "KEEPALIVE with a short body";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_KEEPALIVE, 0, 4, 16);
        memset(b[n].bytes + len, 0, 4);
        b[n].len = len + 4;
        b[n++].status = BATON_EMALFORMED;

        /* A u8 length cannot say 256: a 256-byte name can only be sent as
         * a string whose length byte wrapped to 0, with 256 bytes trailing. */
        b[n].what = "QUERY of a 256-byte name (length byte wrapped)";
        len = header(b[n].bytes, PROTO_VERSION, PROTO_QUERY, 0, 257, 17);
        b[n].bytes[len] = 0;
        memset(b[n].bytes + len + 1, 'n', 256);
        b[n].len = len + 257;
        b[n++].status = BATON_EMALFORMED;
        return n;
}

void sc_malformed(struct ctx *x)
{
        struct bad_frame bad[20];
        struct tclient other, raw, c;
        struct tclient_result res;
        struct proto_header h;
        const uint8_t *body;
        struct proto_string msg;
        char name[64], text[PROTO_MESSAGE_MAX + 1];
        unsigned leader, follower, i, k;
        size_t n = bad_frames(bad);
        uint64_t t;
        int rv, status;

        lock_name(x, name, sizeof name, "malformed");
        EXPECT(x, harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        follower = a_follower(x, leader);
        /* A client connected before the bad ones, to the leader. */
        OPEN(x, &other, TTL_MS);
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        for (k = 0; k < 2; k++) {
                unsigned target = k == 0 ? leader : follower;
                const char *addr = harness_client_address(&x->h, target);
                for (i = 0; i < n; i++) {
                        rv = tclient_connect(&raw, addr, OP_MS);
                        EXPECT(x, rv == 0, "connect %s: %s", addr, raw.errmsg);
                        rv = tclient_raw_send(&raw, bad[i].bytes, bad[i].len,
                                              OP_MS);
                        EXPECT(x, rv == 0, "%s: send: %s", bad[i].what,
                               raw.errmsg);
                        rv = tclient_raw_recv(&raw, OP_MS, &h, &body);
                        EXPECT(x, rv == 0 && h.type == PROTO_ERROR,
                               "%s to node %u: expected an ERROR frame, got "
                               "%d %s",
                               bad[i].what, target, rv,
                               rv == 0 ? proto_type_name(h.type) : raw.errmsg);
                        EXPECT(x,
                               proto_read_error(body, h.length, &status,
                                                &msg) == 0,
                               "%s: the ERROR frame does not decode",
                               bad[i].what);
                        /* The body is the client's until its next read. */
                        snprintf(text, sizeof text, "%.*s", (int)msg.len,
                                 msg.p != NULL ? msg.p : "");
                        EXPECT(x, bad[i].status == 0 || status == bad[i].status,
                               "%s: ERROR status %d (%s), expected %d",
                               bad[i].what, status, text, bad[i].status);
                        EXPECT(x, tclient_wait_closed(&raw, OP_MS),
                               "%s: the connection stayed open after ERROR",
                               bad[i].what);
                        if (k == 0) {
                                printf("# %s: ERROR %d \"%s\", closed\n",
                                       bad[i].what, status, text);
                        }
                }
                /* The node still serves new connections... */
                EXPECT(x, tclient_init(&c, addr) == 0, "tclient_init");
                c.follow = false;
                rv = tclient_ping(&c, OP_MS, NULL);
                EXPECT(x, rv == 0, "PING node %u after bad frames: %d (%s)",
                       target, rv, c.errmsg);
                tclient_close(&c);
        }
        tclient_close(&raw);
        /* ... and the client that was there before carries on. */
        rv = tclient_query(&other, name, OP_MS, &res);
        EXPECT(x, rv == 0 && res.kind == PROTO_KIND_FREE,
               "QUERY by the other client: %d %s", rv, rs(x, &res));
        GRANT(x, t, &other, name);
        RELEASE(x, &other, name, t);
        tclient_close(&other);
}

void sc_names(struct ctx *x)
{
        struct tclient a, raw;
        struct tclient_result res;
        char big[300], name[COMMAND_NAME_MAX + 1];
        uint8_t f[PROTO_HEADER_SIZE + COMMAND_MAX_SIZE + 16];
        size_t len;
        unsigned leader;
        uint64_t t;
        int rv;

        OPEN(x, &a, TTL_MS);
        /* 256 bytes cannot be encoded: refused before anything is sent. */
        memset(big, 'n', 256);
        big[256] = '\0';
        rv = tclient_acquire(&a, big, 1, 0, OP_MS, &res);
        EXPECT(x, rv == BATON_ENAME, "ACQUIRE of a 256-byte name: %d", rv);
        rv = tclient_query(&a, big, OP_MS, &res);
        EXPECT(x, rv == BATON_ENAME, "QUERY of a 256-byte name: %d", rv);

        /* Names the frame can carry but that are not names: the server
         * answers ENAME and keeps the connection. */
        EXPECT(x, harness_wait_leader(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        rv =
            tclient_connect(&raw, harness_client_address(&x->h, leader), OP_MS);
        EXPECT(x, rv == 0, "connect: %s", raw.errmsg);
        len = raw_acquire(f, sizeof f, 101, a.session, 1000, "", 0);
        if (!raw_result(x, &raw, f, len, 101, BATON_ENAME,
                        "ACQUIRE of an empty name", __LINE__) ||
            !raw_ping(x, &raw, 102, __LINE__)) {
                return;
        }
        len = raw_acquire(f, sizeof f, 103, a.session, 1001, "a\0b", 3);
        if (!raw_result(x, &raw, f, len, 103, BATON_ENAME,
                        "ACQUIRE of a name with a NUL", __LINE__) ||
            !raw_ping(x, &raw, 104, __LINE__)) {
                return;
        }
        len = raw_read(f, sizeof f, 105, false, "", 0);
        if (!raw_result(x, &raw, f, len, 105, BATON_ENAME,
                        "QUERY of an empty name", __LINE__)) {
                return;
        }
        len = raw_read(f, sizeof f, 106, true, "x\0", 2);
        if (!raw_result(x, &raw, f, len, 106, BATON_ENAME,
                        "CHECK of a name with a NUL", __LINE__) ||
            !raw_ping(x, &raw, 107, __LINE__)) {
                return;
        }
        tclient_close(&raw);

        /* 255 bytes is a name. */
        memset(name, 'm', COMMAND_NAME_MAX);
        snprintf(name, 16, "it-%u-%u-", x->n, ++x->names);
        name[strlen(name)] = 'm';
        name[COMMAND_NAME_MAX] = '\0';
        GRANT(x, t, &a, name);
        HOLDS(x, &a, name, a.session, t, 0);
        RELEASE(x, &a, name, t);
        tclient_close(&a);
}
