/* Hand-made frames for the integration scenarios. */
#include "rawframe.h"

#include <inttypes.h>
#include <string.h>

#include "../../src/lib/cursor.h"
#include "../../src/proto/reply.h"

size_t header(uint8_t *out, uint8_t version, uint8_t type, uint16_t flags,
              uint32_t length, uint64_t id)
{
        struct proto_header h = {version, type, flags, length, id};

        proto_header_encode(&h, out);
        return PROTO_HEADER_SIZE;
}

/* A COMMAND frame carrying an ACQUIRE whose name is `name_len` raw bytes
 * (which may be empty or hold a NUL: command_encode would refuse them),
 * zero-padded to 8 bytes as every command is. */
size_t raw_acquire(uint8_t *out, size_t cap, uint64_t id, uint64_t session,
                   uint64_t seq, const char *name, size_t name_len)
{
        struct wcursor w;

        wcursor_init(&w, out + PROTO_HEADER_SIZE, cap - PROTO_HEADER_SIZE);
        wcursor_u8(&w, 2); /* the version of a lock's ACQUIRE */
        wcursor_u8(&w, COMMAND_ACQUIRE);
        wcursor_u16(&w, 0);
        wcursor_u64(&w, session);
        wcursor_u64(&w, seq);
        wcursor_u64(&w, seq);
        wcursor_u64(&w, 1);
        wcursor_u32(&w, 0);
        wcursor_u8(&w, COMMAND_MODE_EXCLUSIVE);
        wcursor_u8(&w, (uint8_t)name_len);
        wcursor_bytes(&w, name, name_len);
        while (w.len % 8 != 0) {
                wcursor_u8(&w, 0); /* commands are padded to 8 bytes */
        }
        header(out, PROTO_VERSION, PROTO_COMMAND, 0, (uint32_t)w.len, id);
        return PROTO_HEADER_SIZE + w.len;
}

/* A QUERY (check: CHECK) frame with a raw name. */
size_t raw_read(uint8_t *out, size_t cap, uint64_t id, bool check,
                const char *name, size_t name_len)
{
        struct wcursor w;

        wcursor_init(&w, out + PROTO_HEADER_SIZE, cap - PROTO_HEADER_SIZE);
        if (check) {
                wcursor_u64(&w, 1);
        }
        wcursor_u8(&w, (uint8_t)name_len);
        wcursor_bytes(&w, name, name_len);
        header(out, PROTO_VERSION, check ? PROTO_CHECK : PROTO_QUERY, 0,
               (uint32_t)w.len, id);
        return PROTO_HEADER_SIZE + w.len;
}

/* Send a raw request and expect a RESULT with `status` for `id`. */
bool raw_result(struct ctx *x, struct tclient *c, const uint8_t *frame,
                size_t len, uint64_t id, int status, const char *what, int line)
{
        struct proto_header h;
        struct proto_result r;
        const uint8_t *body;
        int rv = tclient_raw_send(c, frame, len, OP_MS);

        if (rv == 0) {
                rv = tclient_raw_recv(c, OP_MS, &h, &body);
        }
        if (rv != 0) {
                fail_at(x, line, "%s: no answer: %d (%s)", what, rv, c->errmsg);
                return false;
        }
        if (h.type != PROTO_RESULT || h.id != id ||
            proto_read_result(body, h.length, 0, &r) != 0 ||
            r.status != status) {
                fail_at(x, line,
                        "%s: got %s id %" PRIu64 " status %d, expected RESULT "
                        "id %" PRIu64 " status %d",
                        what, proto_type_name(h.type), h.id,
                        h.type == PROTO_RESULT &&
                                proto_read_result(body, h.length, 0, &r) == 0
                            ? r.status
                            : 0,
                        id, status);
                return false;
        }
        return true;
}

/* PING on the same raw connection: it is still open and served. */
bool raw_ping(struct ctx *x, struct tclient *c, uint64_t id, int line)
{
        uint8_t f[PROTO_HEADER_SIZE];
        struct proto_header h;
        const uint8_t *body;
        int rv;

        header(f, PROTO_VERSION, PROTO_PING, 0, 0, id);
        rv = tclient_raw_send(c, f, sizeof f, OP_MS);
        if (rv == 0) {
                rv = tclient_raw_recv(c, OP_MS, &h, &body);
        }
        if (rv != 0 || h.type != PROTO_PONG || h.id != id) {
                fail_at(x, line, "PING on the same connection: %d %s (%s)", rv,
                        rv == 0 ? proto_type_name(h.type) : "-", c->errmsg);
                return false;
        }
        return true;
}

/* Expect NOT_LEADER naming `leader` for a raw request on `raw`. */
bool redirected(struct ctx *x, struct tclient *raw, const uint8_t *f,
                size_t len, uint64_t id, unsigned leader, const char *what,
                int line)
{
        const char *want = harness_client_address(&x->h, leader);
        struct proto_header h;
        struct proto_string a;
        const uint8_t *body;
        uint64_t lid = 0;
        int rv = tclient_raw_send(raw, f, len, OP_MS);

        if (rv == 0) {
                rv = tclient_raw_recv(raw, OP_MS, &h, &body);
        }
        if (rv != 0 || h.type != PROTO_NOT_LEADER || h.id != id ||
            proto_read_not_leader(body, h.length, &lid, &a) != 0 ||
            lid != leader || a.len != strlen(want) ||
            memcmp(a.p, want, a.len) != 0) {
                fail_at(x, line,
                        "%s on follower %s: %d %s leader %" PRIu64
                        ", expected NOT_LEADER %u %s",
                        what, raw->peer, rv,
                        rv == 0 ? proto_type_name(h.type) : raw->errmsg, lid,
                        leader, want);
                return false;
        }
        return true;
}
