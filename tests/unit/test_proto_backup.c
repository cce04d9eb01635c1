/* Online backups on the wire and on disk. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/backupfile.h"
#include "../../src/proto/proto.h"
#include "../../src/proto/backup.h"
#include "test_proto_backup.h"

static const struct proto_backup_chunk about = {
    .backup = 3,
    .index = 9001,
    .term = 4,
    .made_ms = 1795700000123,
    .size = 10,
    .offset = 4,
    .sessions = 2,
    .locks = 5,
    .grants = 6,
    .waiters = 1,
};

void backup_frames_round_trip(void **state)
{
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_MAX_BODY];
        struct proto_backup b = {7, 65536}, b2;
        struct proto_backup_chunk k = about, k2;
        struct proto_header h;
        size_t n;

        (void)state;
        n = proto_write_backup(frame, sizeof frame, 11, &b);
        assert_int_equal(n, PROTO_HEADER_SIZE + 16);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_BACKUP);
        assert_int_equal(
            proto_read_backup(frame + PROTO_HEADER_SIZE, h.length, &b2), 0);
        assert_int_equal(b2.backup, 7);
        assert_int_equal(b2.offset, 65536);
        assert_int_equal(proto_read_backup(frame + PROTO_HEADER_SIZE, 15, &b2),
                         BATON_EMALFORMED);

        k.data = (const uint8_t *)"abcdef";
        k.len = 6;
        n = proto_write_backup_chunk(frame, sizeof frame, 12, &k);
        assert_int_equal(n, PROTO_HEADER_SIZE + PROTO_BACKUP_CHUNK_FIXED + 6);
        assert_int_equal(proto_header_decode(&h, frame, PROTO_MAX_BODY), 0);
        assert_int_equal(h.type, PROTO_BACKUP_CHUNK);
        assert_int_equal(
            proto_read_backup_chunk(frame + PROTO_HEADER_SIZE, h.length, &k2),
            0);
        assert_int_equal(k2.index, 9001);
        assert_int_equal(k2.made_ms, 1795700000123);
        assert_int_equal(k2.waiters, 1);
        assert_int_equal(k2.len, 6);
        assert_memory_equal(k2.data, "abcdef", 6);
}

/* A chunk never runs past the backup's size, either way. */
void backup_chunk_bounds(void **state)
{
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_MAX_BODY];
        struct proto_backup_chunk k = about, k2;
        size_t n;

        (void)state;
        k.data = (const uint8_t *)"abcdefg";
        k.len = 7; /* 4 + 7 > 10 */
        assert_int_equal(proto_write_backup_chunk(frame, sizeof frame, 1, &k),
                         0);
        k.len = 6;
        n = proto_write_backup_chunk(frame, sizeof frame, 1, &k);
        assert_true(n > 0);
        /* The same bytes claiming a smaller size are malformed. */
        frame[PROTO_HEADER_SIZE + 32] = 9; /* size */
        assert_int_equal(proto_read_backup_chunk(frame + PROTO_HEADER_SIZE,
                                                 n - PROTO_HEADER_SIZE, &k2),
                         BATON_EMALFORMED);
        assert_int_equal(proto_read_backup_chunk(frame + PROTO_HEADER_SIZE,
                                                 PROTO_BACKUP_CHUNK_FIXED - 1,
                                                 &k2),
                         BATON_EMALFORMED);
}

/* A file whose digest covers the header and the snapshot: any byte
 * changed, a byte missing or one more is refused, and a newer format says
 * so. */
void backup_file_checks_every_byte(void **state)
{
        static const char snap[] = "a snapshot's bytes";
        struct baton_backup_info info = {
            9001, 4, 1795700000123, sizeof snap, 2, 5, 6, 1};
        struct baton_backup_info got;
        uint8_t file[BACKUPFILE_HEADER + sizeof snap + 1];
        struct backupfile_digest *d = backupfile_digest_new(&info);
        const uint8_t *p;
        size_t len = BACKUPFILE_HEADER + sizeof snap, i;

        (void)state;
        assert_non_null(d);
        assert_int_equal(backupfile_digest_add(d, snap, 5), 0);
        assert_int_equal(backupfile_digest_add(d, snap + 5, sizeof snap - 5),
                         0);
        assert_int_equal(backupfile_digest_finish(d, &info, file), 0);
        memcpy(file + BACKUPFILE_HEADER, snap, sizeof snap);
        assert_int_equal(backupfile_check(file, len, &got, &p), 0);
        assert_memory_equal(&got, &info, sizeof info);
        assert_ptr_equal(p, file + BACKUPFILE_HEADER);
        for (i = 0; i < len; i++) {
                file[i] ^= 0x20;
                assert_int_not_equal(backupfile_check(file, len, &got, &p), 0);
                file[i] ^= 0x20;
        }
        assert_int_equal(backupfile_check(file, len - 1, &got, &p),
                         BATON_ECORRUPT);
        assert_int_equal(backupfile_check(file, len + 1, &got, &p),
                         BATON_ECORRUPT);
        file[8] = BACKUPFILE_FORMAT + 1;
        assert_int_equal(backupfile_check(file, len, &got, &p), BATON_EVERSION);
}
