/* Unit tests for what batond refuses of damaged files at start: raft's
 * segments, snapshot .meta files and metadata made by hand in libraft
 * 0.22.1's format (diskscan.c), and the checksums of a snapshot
 * container's tail (snaptail.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/baton/errors.h"
#include "../../src/server/disk/diskscan.h"
#include "../../src/server/snap/snaptail.h"

#define SEG_SIZE (8u * 1024 * 1024)

/* libraft's CRC32 (libiberty's), written again for the fixtures. */
static uint32_t raft_crc(uint32_t crc, const uint8_t *p, size_t n)
{
        size_t i;
        int b;

        for (i = 0; i < n; i++) {
                uint32_t c = (uint32_t)(((crc >> 24) ^ p[i]) & 0xff) << 24;

                for (b = 0; b < 8; b++) {
                        c = (c & 0x80000000u) ? (c << 1) ^ 0x04c11db7u : c << 1;
                }
                crc = (crc << 8) ^ c;
        }
        return crc;
}

static void put64(uint8_t *p, uint64_t v)
{
        int i;

        for (i = 0; i < 8; i++) {
                p[i] = (uint8_t)(v >> (8 * i));
        }
}

static void put32(uint8_t *p, uint32_t v)
{
        int i;

        for (i = 0; i < 4; i++) {
                p[i] = (uint8_t)(v >> (8 * i));
        }
}

/* One batch of one 8-byte entry of term `term` at `p`: its length. */
static size_t batch(uint8_t *p, uint64_t term, uint8_t fill)
{
        put64(p + 8, 1);
        put64(p + 16, term);
        p[24] = 1; /* RAFT_COMMAND */
        p[25] = p[26] = p[27] = 0;
        put32(p + 28, 8);
        memset(p + 32, fill, 8);
        put32(p, raft_crc(0, p + 8, 24));
        put32(p + 4, raft_crc(0, p + 32, 8));
        return 40;
}

struct fixture {
        char dir[64];
};

static void write_file(const char *dir, const char *name, const uint8_t *p,
                       size_t n)
{
        char path[128];
        FILE *f;

        snprintf(path, sizeof path, "%s/%s", dir, name);
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(p, 1, n, f), n);
        fclose(f);
}

static void metadata(const char *dir, int k, uint64_t version, uint64_t term)
{
        uint8_t m[32];
        char name[16];

        put64(m, 1);
        put64(m + 8, version);
        put64(m + 16, term);
        put64(m + 24, 1);
        snprintf(name, sizeof name, "metadata%d", k);
        write_file(dir, name, m, sizeof m);
}

/* A directory with metadata at versions 3/2 (term 2), a closed segment
 * 1-2 and an open segment of three batches of term 2. */
static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof *f);
        uint8_t *seg = calloc(1, SEG_SIZE);
        size_t n = 8;

        snprintf(f->dir, sizeof f->dir, "/tmp/baton-diskscan-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        metadata(f->dir, 1, 3, 2);
        metadata(f->dir, 2, 2, 2);
        put64(seg, 1);
        n += batch(seg + n, 1, 'a');
        n += batch(seg + n, 1, 'b');
        write_file(f->dir, "0000000000000001-0000000000000002", seg, n);
        memset(seg, 0, SEG_SIZE);
        put64(seg, 1);
        n = 8;
        n += batch(seg + n, 2, 'c');
        n += batch(seg + n, 2, 'd');
        n += batch(seg + n, 2, 'e');
        write_file(f->dir, "open-1", seg, SEG_SIZE);
        free(seg);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        char cmd[128];

        snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

/* Damage: `n` bytes of `with` at `off` of file `name`. */
static void poke(const struct fixture *f, const char *name, long off,
                 const void *with, size_t n)
{
        char path[128];
        FILE *fp;

        snprintf(path, sizeof path, "%s/%s", f->dir, name);
        fp = fopen(path, "r+b");
        assert_non_null(fp);
        fseek(fp, off, SEEK_SET);
        assert_int_equal(fwrite(with, 1, n, fp), n);
        fclose(fp);
}

static void refused(const struct fixture *f, const char *want)
{
        struct diskscan s;

        assert_int_equal(diskscan_check(&s, f->dir), BATON_ECORRUPT);
        if (strstr(s.errmsg, want) == NULL) {
                fail_msg("\"%s\" does not say \"%s\"", s.errmsg, want);
        }
}

static void sound_directory_passes(void **state)
{
        struct fixture *f = *state;
        struct diskscan s;

        assert_int_equal(diskscan_check(&s, f->dir), 0);
        assert_int_equal(s.n_segments, 2);
        assert_string_equal(s.errmsg, "");
        assert_string_equal(s.note, "");
}

/* libraft would cut the segment there and drop the batches after it. */
static void open_batch_damaged_before_valid_ones(void **state)
{
        static const uint8_t zero[16];

        poke(*state, "open-1", 48 + 16, zero, sizeof zero);
        refused(*state, "open-1 at byte 48: header checksum mismatch, and a "
                        "valid batch follows at byte 88");
}

/* As a crash in the middle of the last write leaves it: said, trusted. */
static void open_last_batch_damaged_is_a_torn_write(void **state)
{
        struct fixture *f = *state;
        static const uint8_t x = 'z';
        struct diskscan s;

        poke(f, "open-1", 88 + 35, &x, 1);
        assert_int_equal(diskscan_check(&s, f->dir), 0);
        assert_non_null(strstr(s.note, "open-1 at byte 88: data checksum "
                                       "mismatch in its last batch"));
}

static void open_segment_truncated(void **state)
{
        struct fixture *f = *state;
        char path[128];

        snprintf(path, sizeof path, "%s/open-1", f->dir);
        assert_int_equal(truncate(path, 124), 0);
        refused(f, "open-1 at byte 88: the file ends inside a batch's "
                   "entries, 124 bytes long (truncated)");
}

static void closed_segment_damaged(void **state)
{
        static const uint8_t x = 'z';

        poke(*state, "0000000000000001-0000000000000002", 48 + 33, &x, 1);
        refused(*state, "0000000000000001-0000000000000002 at byte 48: data "
                        "checksum mismatch");
}

/* libraft deletes a short metadata file and takes the other's older
 * vote. */
static void metadata_short(void **state)
{
        struct fixture *f = *state;
        char path[128];

        snprintf(path, sizeof path, "%s/metadata1", f->dir);
        assert_int_equal(truncate(path, 10), 0);
        refused(f, "metadata1 at byte 10: 10 bytes, not 32, and metadata2 is "
                   "at version 2");
}

static void metadata_rolled_back(void **state)
{
        struct fixture *f = *state;

        metadata(f->dir, 2, 4, 2); /* written after 3 ... */
        metadata(f->dir, 1, 1, 2); /* ... and 1 put back over 3 and 5 */
        refused(f, "versions 1 and 4 (metadata2) are not consecutive");
}

static void metadata_term_below_the_log(void **state)
{
        struct fixture *f = *state;

        metadata(f->dir, 1, 3, 1);
        refused(f, "metadata1 at byte 16: term 1, below term 2 of the last "
                   "entry of its open segments");
}

static void snapshot_meta_damaged(void **state)
{
        struct fixture *f = *state;
        uint8_t meta[40] = {0}, data[8] = {1};
        uint32_t crc;

        put64(meta, 1);
        put64(meta + 16, 1); /* configuration index */
        put64(meta + 24, 8); /* configuration length */
        memset(meta + 32, 'c', 8);
        crc = raft_crc(0, meta + 16, 16);
        put64(meta + 8, raft_crc(crc, meta + 32, 8));
        write_file(f->dir, "snapshot-1-2-3.meta", meta, sizeof meta);
        write_file(f->dir, "snapshot-1-2-3", data, sizeof data);
        assert_int_equal(diskscan_check(&(struct diskscan){0}, f->dir), 0);
        /* A .meta whose snapshot was never renamed into place (a crash in
         * between): libraft skips it, and so does the check. */
        write_file(f->dir, "snapshot-1-5-6.meta", meta, sizeof meta);
        assert_int_equal(diskscan_check(&(struct diskscan){0}, f->dir), 0);
        meta[35] = 'x';
        write_file(f->dir, "snapshot-1-2-3.meta", meta, sizeof meta);
        refused(f, "snapshot-1-2-3.meta at byte 8: checksum mismatch");
}

/* A container's tail: damage is refused at open (version 2); version 1
 * has no checksum and still opens. */
static void snapshot_tail_checksum(void **state)
{
        uint8_t p[SNAPTAIL_HEADER_SIZE + 4 + 12 + 3];
        struct snaptail_reader r;

        (void)state;
        assert_int_equal(snaptail_crc(0, "123456789", 9), 0xcbf43926u);
        snaptail_header(p, 7, 8, 4);
        memcpy(p + SNAPTAIL_HEADER_SIZE, "IMGE", 4);
        put64(p + SNAPTAIL_HEADER_SIZE + 4, 8);
        put32(p + SNAPTAIL_HEADER_SIZE + 12, 3);
        memcpy(p + SNAPTAIL_HEADER_SIZE + 16, "abc", 3);
        snaptail_seal(p, snaptail_crc(0, p + SNAPTAIL_HEADER_SIZE + 4, 15));
        assert_int_equal(snaptail_open(&r, p, sizeof p), 0);
        p[sizeof p - 1] ^= 0x10;
        assert_int_equal(snaptail_open(&r, p, sizeof p), BATON_ECORRUPT);
        p[sizeof p - 1] ^= 0x10;
        p[9] ^= 0x01; /* the image index: the header's own checksum */
        assert_int_equal(snaptail_open(&r, p, sizeof p), BATON_ECORRUPT);
        p[9] ^= 0x01;
        /* Version 1: the same without the 8 bytes of checksums. */
        memmove(p + 32, p + SNAPTAIL_HEADER_SIZE,
                sizeof p - SNAPTAIL_HEADER_SIZE);
        p[4] = 1;
        p[sizeof p - 9] ^= 0x10;
        assert_int_equal(snaptail_open(&r, p, sizeof p - 8), 0);
        assert_int_equal(r.image_len, 4);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(sound_directory_passes, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(
                open_batch_damaged_before_valid_ones, setup, teardown),
            cmocka_unit_test_setup_teardown(
                open_last_batch_damaged_is_a_torn_write, setup, teardown),
            cmocka_unit_test_setup_teardown(open_segment_truncated, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(closed_segment_damaged, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(metadata_short, setup, teardown),
            cmocka_unit_test_setup_teardown(metadata_rolled_back, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(metadata_term_below_the_log, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(snapshot_meta_damaged, setup,
                                            teardown),
            cmocka_unit_test(snapshot_tail_checksum),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
