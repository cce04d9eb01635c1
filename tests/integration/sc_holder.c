/* Integration scenario on holder descriptions: client names in QUERY and
 * LIST answers. */
#include "sc_holder.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/query.h"
#include "../../src/proto/list.h"

/* Send `f` on `raw` and take its answer, which must be of `type`. */
static bool exchange(struct ctx *x, struct tclient *raw, const uint8_t *f,
                     size_t len, uint8_t type, struct proto_header *h,
                     const uint8_t **body, int line)
{
        int rv = tclient_raw_send(raw, f, len, OP_MS);

        if (rv == 0) {
                rv = tclient_raw_recv(raw, OP_MS, h, body);
        }
        if (rv != 0 || h->type != type) {
                fail_at(x, line, "%s: %d %s (%s)", proto_type_name(type), rv,
                        rv == 0 ? proto_type_name(h->type) : "-", raw->errmsg);
                return false;
        }
        return true;
}

void sc_client_names(struct ctx *x)
{
        struct tclient a, raw;
        struct tclient_result res;
        struct proto_lock_entry e[4];
        struct proto_result r;
        struct proto_header h;
        const uint8_t *body;
        uint8_t f[PROTO_HEADER_SIZE + 300];
        char name[64];
        unsigned leader;
        uint64_t token;
        uint32_t n;
        bool more;
        size_t len;

        lock_name(x, name, sizeof name, "names");
        EXPECT(x, tclient_init(&a, x->h.endpoints) == 0, "tclient_init");
        EXPECT(x,
               tclient_session_open(&a, 5000, "build-42", OP_MS, &res) == 0 &&
                   res.kind == PROTO_KIND_OPENED,
               "OPEN as build-42 (%s)", a.errmsg);
        GRANT(x, token, &a, name);
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        EXPECT(x, tclient_init(&raw, x->h.endpoints) == 0, "tclient_init");
        EXPECT(x,
               tclient_connect(&raw, harness_client_address(&x->h, leader),
                               OP_MS) == 0,
               "connect to the leader (%s)", raw.errmsg);

        /* Asked for: the RESULT carries the holder's client name. */
        len = proto_write_query(f, sizeof f, 11, PROTO_FLAG_NAMES, name,
                                strlen(name));
        if (!exchange(x, &raw, f, len, PROTO_RESULT, &h, &body, __LINE__)) {
                return;
        }
        EXPECT(x,
               h.flags == PROTO_FLAG_NAMES &&
                   proto_read_result(body, h.length, PROTO_FLAG_NAMES, &r) ==
                       0 &&
                   r.kind == PROTO_KIND_HOLDER && r.token == token &&
                   r.client_name.len == 8 &&
                   memcmp(r.client_name.p, "build-42", 8) == 0,
               "QUERY with names: flags %u length %" PRIu32, h.flags, h.length);

        /* Not asked for: the old shape, byte for byte. */
        len = proto_write_query(f, sizeof f, 12, 0, name, strlen(name));
        if (!exchange(x, &raw, f, len, PROTO_RESULT, &h, &body, __LINE__)) {
                return;
        }
        EXPECT(x,
               h.flags == 0 && h.length == 45 &&
                   proto_read_result(body, h.length, 0, &r) == 0 &&
                   r.token == token,
               "plain QUERY: flags %u length %" PRIu32, h.flags, h.length);

        len = proto_write_list(f, sizeof f, 13, PROTO_FLAG_NAMES, name,
                               strlen(name), 4);
        if (!exchange(x, &raw, f, len, PROTO_LIST_REPLY, &h, &body, __LINE__)) {
                return;
        }
        EXPECT(x,
               h.flags == PROTO_FLAG_NAMES &&
                   proto_read_list_reply(body, h.length, PROTO_FLAG_NAMES, e, 4,
                                         &n, &more) == 0 &&
                   n == 1 && e[0].client_name.len == 8 &&
                   memcmp(e[0].client_name.p, "build-42", 8) == 0,
               "LIST with names: flags %u length %" PRIu32, h.flags, h.length);

        len = proto_write_list(f, sizeof f, 14, 0, name, strlen(name), 4);
        if (!exchange(x, &raw, f, len, PROTO_LIST_REPLY, &h, &body, __LINE__)) {
                return;
        }
        EXPECT(x,
               h.flags == 0 &&
                   h.length == PROTO_LIST_REPLY_FIXED +
                                   PROTO_LIST_ENTRY_SIZE(strlen(name)) &&
                   proto_read_list_reply(body, h.length, 0, e, 4, &n, &more) ==
                       0,
               "plain LIST: flags %u length %" PRIu32, h.flags, h.length);
        tclient_close(&raw);
        tclient_close(&a);
}
