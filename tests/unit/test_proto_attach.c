/* Cases of test_proto on session ownership: ATTACH, and the ERROR an old
 * client gets in its own version. */
#include "test_proto_attach.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/mem.h"
#include "../../src/proto/attach.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/reply.h"

static const uint8_t secret[ATTACH_SECRET_SIZE] = {
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
    0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
};

void attach_exact_bytes(void **state)
{
        static const uint8_t want[] = {
            0x02, 0x0b, 0x00, 0x00,                         /* v2, ATTACH */
            0x18, 0x00, 0x00, 0x00,                         /* length 24 */
            0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* id 5 */
            0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* session 42 */
            0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, /* secret */
            0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
        };
        uint8_t buf[sizeof want + 1];
        uint8_t got[ATTACH_SECRET_SIZE];
        struct proto_header h;
        uint64_t session = 0;

        (void)state;
        memset(buf, 0xee, sizeof buf);
        assert_int_equal(attach_write(buf, sizeof buf, 5, 42, secret),
                         sizeof want);
        assert_memory_equal(buf, want, sizeof want);
        assert_int_equal(buf[sizeof want], 0xee);
        assert_int_equal(proto_header_decode(&h, buf, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_ATTACH);
        assert_int_equal(
            attach_read(buf + PROTO_HEADER_SIZE, h.length, &session, got), 0);
        assert_true(session == 42);
        assert_memory_equal(got, secret, sizeof got);
        /* Too small a buffer, or no secret: nothing. */
        assert_int_equal(attach_write(buf, sizeof want - 1, 5, 42, secret), 0);
        assert_int_equal(attach_write(buf, sizeof buf, 5, 42, NULL), 0);
}

void attach_bad_bodies(void **state)
{
        uint8_t body[ATTACH_BODY_SIZE + 1];
        uint8_t got[ATTACH_SECRET_SIZE];
        uint64_t session;
        size_t len;

        (void)state;
        memset(body, 1, sizeof body);
        for (len = 0; len <= sizeof body; len++) {
                assert_int_equal(attach_read(body, len, &session, got),
                                 len == ATTACH_BODY_SIZE ? 0
                                                         : BATON_EMALFORMED);
        }
}

/* A version 1 client gets BATON_EVERSION in a version 1 header, which it
 * can read; other refusals answer in the current version. */
void refusal_in_the_old_version(void **state)
{
        struct proto_header old = {1, PROTO_PING, 0, 0, 77};
        struct proto_header future = {PROTO_VERSION + 1, PROTO_PING, 0, 0, 78};
        uint8_t in[PROTO_HEADER_SIZE];
        uint8_t out[PROTO_HEADER_SIZE + 300];
        struct proto_reader r;
        struct proto_string msg;
        int status = 0;
        size_t n;

        (void)state;
        proto_header_encode(&old, in);
        proto_reader_init(&r, PROTO_MAX_BODY, &mem_libc);
        assert_int_equal(proto_reader_feed(&r, in, sizeof in), BATON_EVERSION);
        n = proto_reader_refusal(&r, out, sizeof out, "upgrade");
        assert_true(n > PROTO_HEADER_SIZE);
        assert_int_equal(out[0], 1);
        assert_int_equal(out[1], PROTO_ERROR);
        assert_int_equal(out[8], 77);
        assert_int_equal(proto_read_error(out + PROTO_HEADER_SIZE,
                                          n - PROTO_HEADER_SIZE, &status, &msg),
                         0);
        assert_int_equal(status, BATON_EVERSION);
        assert_int_equal(msg.len, 7);
        proto_reader_close(&r);

        proto_header_encode(&future, in);
        proto_reader_init(&r, PROTO_MAX_BODY, &mem_libc);
        assert_int_equal(proto_reader_feed(&r, in, sizeof in), BATON_EVERSION);
        n = proto_reader_refusal(&r, out, sizeof out, "upgrade");
        assert_int_equal(out[0], PROTO_VERSION);
        assert_int_equal(out[8], 78);
        proto_reader_close(&r);
}
