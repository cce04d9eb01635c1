/* Tests of snapshot images made in a forked child (snapimage.h) and of the
 * image-and-tail container (snaptail.h), and of the kept image handed over
 * again with a longer tail (snapkeep.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <raft.h>

#include "../../include/baton.h"
#include "../../src/server/snapimage.h"
#include "../../src/server/snapkeep.h"
#include "../../src/server/snaptail.h"

/* The state an encoder sees: a counter and a byte pattern. */
struct fake {
        size_t len;
        uint8_t seed;
        int fail; /* the encoder's answer when not 0 */
        unsigned slow_ms;
};

static int encode(void *data, void **buf, size_t *len)
{
        struct fake *f = data;
        uint8_t *p;

        if (f->fail != 0) {
                return f->fail;
        }
        if (f->slow_ms > 0) {
                usleep(f->slow_ms * 1000);
        }
        p = raft_malloc(f->len);
        if (p == NULL) {
                return BATON_ENOMEM;
        }
        for (size_t i = 0; i < f->len; i++) {
                p[i] = (uint8_t)(f->seed + i * 7);
        }
        *buf = p;
        *len = f->len;
        return 0;
}

static enum snapimage_state wait_done(struct snapimage *s)
{
        for (int i = 0; i < 5000 && snapimage_poll(s) == SNAPIMAGE_MAKING;
             i++) {
                usleep(1000);
        }
        return snapimage_poll(s);
}

static void check_bytes(const struct snapimage_bytes *b, size_t len,
                        uint8_t seed)
{
        assert_int_equal(b->len, len);
        for (size_t i = 0; i < len; i++) {
                assert_int_equal(((const uint8_t *)b->base)[i],
                                 (uint8_t)(seed + i * 7));
        }
}

/* The child sees the state as it was at the fork, whatever the parent
 * does to it afterwards. */
static void fork_sees_the_state_at_the_fork(void **state)
{
        struct fake f = {300000, 5, 0, 50};
        struct snapimage s;
        struct snapimage_bytes b;

        (void)state;
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_start(&s, 42, encode, &f), 0);
        assert_int_equal(s.state, SNAPIMAGE_MAKING);
        f.seed = 99; /* the parent moves on */
        assert_int_equal(wait_done(&s), SNAPIMAGE_READY);
        assert_int_equal(s.index, 42);
        b = snapimage_take(&s);
        assert_true(b.mapped);
        check_bytes(&b, 300000, 5);
        assert_int_equal(s.state, SNAPIMAGE_NONE);
        snapimage_bytes_free(&b);
        assert_int_equal(s.n_made, 1);
}

static void inline_is_ready_at_once(void **state)
{
        struct fake f = {1000, 3, 0, 0};
        struct snapimage s;
        struct snapimage_bytes b;

        (void)state;
        snapimage_init(&s, SNAPIMAGE_INLINE);
        assert_int_equal(snapimage_start(&s, 7, encode, &f), 0);
        assert_int_equal(snapimage_poll(&s), SNAPIMAGE_READY);
        b = snapimage_take(&s);
        assert_false(b.mapped);
        check_bytes(&b, 1000, 3);
        snapimage_bytes_free(&b);
}

/* An encoder that fails in the child: no image, the reason said. */
static void failing_child_leaves_nothing(void **state)
{
        struct fake f = {1000, 3, BATON_ENOMEM, 0};
        struct snapimage s;

        (void)state;
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_start(&s, 9, encode, &f), 0);
        assert_int_equal(wait_done(&s), SNAPIMAGE_NONE);
        assert_int_equal(s.n_failed, 1);
        assert_non_null(strstr(s.errmsg, "exited with"));
}

/* Cancelling kills the child at once and reaps it. */
static void cancel_kills_the_child(void **state)
{
        struct fake f = {1000, 3, 0, 10000};
        struct snapimage s;
        pid_t pid;

        (void)state;
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_start(&s, 9, encode, &f), 0);
        pid = s.pid;
        snapimage_cancel(&s);
        assert_int_equal(s.state, SNAPIMAGE_NONE);
        assert_int_equal(kill(pid, 0), -1); /* reaped: no such process */
}

/* Whether `dir`'s file system has unnamed files (O_TMPFILE). */
static bool tmpfile_works(const char *dir)
{
        int fd = open(dir, O_TMPFILE | O_RDWR, 0600);

        if (fd < 0) {
                return false;
        }
        close(fd);
        return true;
}

static size_t entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        assert_non_null(d);
        while ((e = readdir(d)) != NULL) {
                n +=
                    strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
        }
        closedir(d);
        return n;
}

/* The process's resident pages of files, in KiB (/proc/self/status). */
static long rss_file_kib(void)
{
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long kib = -1;

        assert_non_null(f);
        while (fgets(line, sizeof line, f) != NULL) {
                if (sscanf(line, "RssFile: %ld", &kib) == 1) {
                        break;
                }
        }
        fclose(f);
        return kib;
}

/* With a directory, the child writes the image into an unnamed file of
 * it (where the file system has them): the same bytes, no name left in
 * the directory, and once evicted the pages leave the process's resident
 * memory while the bytes stay readable. */
static void image_in_a_directory(void **state)
{
        char dir[] = "/tmp/baton-snapimage-XXXXXX";
        struct fake f = {8 << 20, 11, 0, 0};
        struct snapimage s;
        struct snapimage_bytes b;
        long before;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_set_dir(&s, dir), 0);
        assert_int_equal(snapimage_start(&s, 5, encode, &f), 0);
        assert_int_equal(wait_done(&s), SNAPIMAGE_READY);
        b = snapimage_take(&s);
        assert_true(b.mapped);
        assert_int_equal(b.on_disk, tmpfile_works(dir));
        assert_int_equal(entries(dir), 0);
        check_bytes(&b, f.len, 11); /* every page touched */
        before = rss_file_kib();
        snapimage_bytes_evict(&b);
        if (b.on_disk) {
                assert_true(before - rss_file_kib() >= (long)(f.len >> 10) / 2);
        }
        check_bytes(&b, f.len, 11); /* read back from the file */
        snapimage_bytes_free(&b);
        snapimage_close(&s);
        assert_int_equal(s.dir_fd, -1);
        assert_int_equal(rmdir(dir), 0);
}

/* A directory that cannot be opened is an error that names it; images
 * stay in memory. */
static void missing_directory_is_named(void **state)
{
        struct snapimage s;

        (void)state;
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_set_dir(&s, "/nonexistent/baton"),
                         BATON_EIO);
        assert_non_null(strstr(s.errmsg, "/nonexistent/baton"));
        assert_int_equal(s.dir_fd, -1);
}

/* --- The container --------------------------------------------------- */

static uint8_t *container(const struct snaptail *t, size_t tail_len,
                          uint64_t image_index, uint64_t last, size_t *len)
{
        static const char image[] = "IMAGE";
        uint8_t *p = malloc(SNAPTAIL_HEADER_SIZE + 5 + tail_len);

        snaptail_header(p, image_index, last, 5);
        memcpy(p + SNAPTAIL_HEADER_SIZE, image, 5);
        memcpy(p + SNAPTAIL_HEADER_SIZE + 5, t->buf, tail_len);
        *len = SNAPTAIL_HEADER_SIZE + 5 + tail_len;
        return p;
}

static void tail_round_trip(void **state)
{
        struct snaptail t;
        struct snaptail_reader r;
        const void *e;
        uint64_t index;
        size_t n, len;
        uint8_t *p;

        (void)state;
        snaptail_init(&t);
        assert_int_equal(snaptail_add(&t, 11, "one", 3), 0);
        assert_int_equal(snaptail_add(&t, 12, "", 0), 0);
        assert_int_equal(snaptail_add(&t, 14, "three", 5), 0);
        assert_int_equal(t.n, 3);
        assert_int_equal(t.last, 14);
        p = container(&t, t.len, 10, 14, &len);
        assert_true(snaptail_is(p, len));
        assert_int_equal(snaptail_open(&r, p, len), 0);
        assert_memory_equal(r.image, "IMAGE", 5);
        assert_int_equal(snaptail_next(&r, &index, &e, &n), 1);
        assert_int_equal(index, 11);
        assert_memory_equal(e, "one", 3);
        assert_int_equal(snaptail_next(&r, &index, &e, &n), 1);
        assert_int_equal(n, 0);
        assert_int_equal(snaptail_next(&r, &index, &e, &n), 1);
        assert_int_equal(index, 14);
        assert_int_equal(snaptail_next(&r, &index, &e, &n), 0);
        free(p);
        snaptail_reset(&t);
}

/* A tail cut anywhere, or one that does not reach its last index, is
 * refused rather than restored short. */
static void damaged_tails_are_refused(void **state)
{
        struct snaptail t;
        struct snaptail_reader r;
        const void *e;
        uint64_t index;
        size_t n, len, cut;
        uint8_t *p;
        int rv;

        (void)state;
        snaptail_init(&t);
        assert_int_equal(snaptail_add(&t, 11, "one", 3), 0);
        assert_int_equal(snaptail_add(&t, 12, "two", 3), 0);
        for (cut = 0; cut < t.len; cut++) {
                p = container(&t, cut, 10, 12, &len);
                assert_int_equal(snaptail_open(&r, p, len), 0);
                while ((rv = snaptail_next(&r, &index, &e, &n)) == 1) {
                }
                assert_int_equal(rv, BATON_ECORRUPT);
                free(p);
        }
        /* Whole, but claiming a later last entry. */
        p = container(&t, t.len, 10, 13, &len);
        assert_int_equal(snaptail_open(&r, p, len), 0);
        while ((rv = snaptail_next(&r, &index, &e, &n)) == 1) {
        }
        assert_int_equal(rv, BATON_ECORRUPT);
        free(p);
        /* An image longer than the container. */
        p = container(&t, t.len, 10, 12, &len);
        assert_int_equal(snaptail_open(&r, p, SNAPTAIL_HEADER_SIZE + 4),
                         BATON_ECORRUPT);
        p[4] = 2; /* version */
        assert_int_equal(snaptail_open(&r, p, len), BATON_EVERSION);
        free(p);
        snaptail_reset(&t);
}

/* The buffers of a handed snapshot, joined as raft writes them. */
static uint8_t *join(const struct raft_buffer *b, unsigned n, size_t *len)
{
        uint8_t *p;
        unsigned i;

        *len = 0;
        for (i = 0; i < n; i++) {
                *len += b[i].len;
        }
        p = malloc(*len);
        *len = 0;
        for (i = 0; i < n; i++) {
                memcpy(p + *len, b[i].base, b[i].len);
                *len += b[i].len;
        }
        return p;
}

/* Reads a joined snapshot's entries into `got` (their indexes); returns
 * how many, or -1 when it is refused. */
static int entries_of(const uint8_t *p, size_t len, uint64_t *got)
{
        struct snaptail_reader r;
        const void *e;
        uint64_t index;
        size_t n;
        int k = 0, rv;

        if (snaptail_open(&r, p, len) != 0 || r.image_len != 5 ||
            memcmp(r.image, "IMAGE", 5) != 0) {
                return -1;
        }
        while ((rv = snaptail_next(&r, &index, &e, &n)) == 1) {
                got[k++] = index;
        }
        return rv == 0 ? k : -1;
}

/* One image serves snapshot after snapshot, each with every entry since
 * it; snapshots raft still holds stay whole after the keep moves on or
 * is dropped. */
static void kept_image_is_handed_again(void **state)
{
        struct snapimage_bytes img = {raft_malloc(5), 5, false, false};
        struct snapkeep k;
        struct snaptail t;
        struct raft_buffer *b1, *b2;
        unsigned n1, n2;
        uint64_t got[8];
        size_t len;
        uint8_t *p;

        (void)state;
        memcpy(img.base, "IMAGE", 5);
        snapkeep_init(&k);
        snaptail_init(&t);
        assert_int_equal(snaptail_add(&t, 11, "one", 3), 0);
        assert_int_equal(snapkeep_set(&k, img, 10, &t), 0);
        assert_int_equal(t.n, 0); /* moved in */
        assert_true(snapkeep_covers(&k, 11));
        assert_false(snapkeep_covers(&k, 12));
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        assert_int_equal(snapkeep_add(&k, 12, "two", 3), 0);
        assert_int_equal(snapkeep_add(&k, 13, "three", 5), 0);
        assert_true(snapkeep_covers(&k, 13));
        assert_int_equal(snapkeep_hand(&k, &b2, &n2), 0);
        snapkeep_drop(&k);
        assert_false(snapkeep_covers(&k, 13));

        p = join(b1, n1, &len);
        assert_int_equal(entries_of(p, len, got), 1);
        assert_int_equal(got[0], 11);
        free(p);
        snapkeep_release(b1, n1);
        p = join(b2, n2, &len);
        assert_int_equal(entries_of(p, len, got), 3);
        assert_int_equal(got[2], 13);
        free(p);
        snapkeep_release(b2, n2);
}

/* A new image is due once the tail is as large as the kept one. */
static void keep_goes_stale_at_the_image_size(void **state)
{
        struct snapimage_bytes img = {raft_malloc(64), 64, false, false};
        struct snapkeep k;
        struct snaptail t;
        uint64_t i;

        (void)state;
        snapkeep_init(&k);
        assert_false(snapkeep_stale(&k));
        snaptail_init(&t);
        assert_int_equal(snapkeep_set(&k, img, 100, &t), 0);
        assert_true(snapkeep_covers(&k, 100)); /* no tail yet */
        /* 12 bytes of header and 8 of entry each: stale at the 4th. */
        for (i = 101; i <= 103; i++) {
                assert_int_equal(snapkeep_add(&k, i, "entry..", 8), 0);
                assert_false(snapkeep_stale(&k));
        }
        assert_int_equal(snapkeep_add(&k, 104, "entry..", 8), 0);
        assert_true(snapkeep_stale(&k));
        assert_int_equal(snapkeep_size(&k), 64 + 4 * 20);
        snapkeep_drop(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(fork_sees_the_state_at_the_fork),
            cmocka_unit_test(inline_is_ready_at_once),
            cmocka_unit_test(failing_child_leaves_nothing),
            cmocka_unit_test(cancel_kills_the_child),
            cmocka_unit_test(image_in_a_directory),
            cmocka_unit_test(missing_directory_is_named),
            cmocka_unit_test(tail_round_trip),
            cmocka_unit_test(damaged_tails_are_refused),
            cmocka_unit_test(kept_image_is_handed_again),
            cmocka_unit_test(keep_goes_stale_at_the_image_size),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
