/* Tests of snapshot images made in a forked child (snapimage.h) and of the
 * image-and-tail container (snaptail.h), and of the kept image handed over
 * again with a longer tail (snapkeep.h), whose segments move into files
 * (snapspill.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <raft.h>

#include "../../include/baton.h"
#include "../../src/server/snap/snapimage.h"
#include "../../src/server/snap/snapkeep.h"
#include "../../src/server/snap/snapspill.h"
#include "../../src/server/snap/snaptail.h"

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
        assert_int_equal(s.n_cancelled, 1);
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

/* An encoder that writes the niceness it runs at. */
static int encode_nice(void *data, void **buf, size_t *len)
{
        int *p = raft_malloc(sizeof *p);

        (void)data;
        if (p == NULL) {
                return BATON_ENOMEM;
        }
        errno = 0;
        *p = getpriority(PRIO_PROCESS, 0);
        *buf = p;
        *len = sizeof *p;
        return 0;
}

/* The child runs behind the loops: SNAPIMAGE_NICE above its parent. */
static void child_yields_to_the_loops(void **state)
{
        struct snapimage s;
        struct snapimage_bytes b;
        int parent = getpriority(PRIO_PROCESS, 0), want;

        (void)state;
        want = parent + SNAPIMAGE_NICE > 19 ? 19 : parent + SNAPIMAGE_NICE;
        snapimage_init(&s, SNAPIMAGE_FORK);
        assert_int_equal(snapimage_start(&s, 1, encode_nice, NULL), 0);
        assert_int_equal(wait_done(&s), SNAPIMAGE_READY);
        b = snapimage_take(&s);
        assert_int_equal(b.len, sizeof(int));
        assert_int_equal(*(const int *)b.base, want);
        assert_int_equal(getpriority(PRIO_PROCESS, 0), parent);
        snapimage_bytes_free(&b);
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
        snaptail_seal(p, snaptail_crc(0, t->buf, tail_len));
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
        p[4] = SNAPTAIL_VERSION + 1; /* version */
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

/* --- The tail moved into files ------------------------------------------ */

#define SEG_ENTRY 3000 /* bytes per entry: a segment of 4 spans pages */

/* A keep of a 5-byte image at 10 whose tail is entries 11 .. `last`,
 * each SEG_ENTRY bytes of (index & 0xff). */
static void keep_with_tail(struct snapkeep *k, uint64_t from, uint64_t last)
{
        static uint8_t e[SEG_ENTRY];
        struct snapimage_bytes img = {raft_malloc(5), 5, false, false};
        struct snaptail t;

        memcpy(img.base, "IMAGE", 5);
        snaptail_init(&t);
        if (from == 11) {
                snapkeep_init(k);
                assert_int_equal(snapkeep_set(k, img, 10, &t), 0);
        } else {
                raft_free(img.base);
        }
        for (uint64_t i = from; i <= last; i++) {
                memset(e, (int)(i & 0xff), sizeof e);
                assert_int_equal(snapkeep_add(k, i, e, sizeof e), 0);
        }
}

/* Whether a handed snapshot holds entries 11 .. last, each as written. */
static void check_tail(struct raft_buffer *b, unsigned n, uint64_t last)
{
        struct snaptail_reader r;
        const void *e;
        uint64_t index, want = 11;
        size_t len, elen;
        uint8_t *p = join(b, n, &len);

        assert_int_equal(snaptail_open(&r, p, len), 0);
        while (snaptail_next(&r, &index, &e, &elen) == 1) {
                assert_int_equal(index, want++);
                assert_int_equal(elen, SEG_ENTRY);
                assert_int_equal(((const uint8_t *)e)[0], index & 0xff);
                assert_int_equal(((const uint8_t *)e)[elen - 1], index & 0xff);
        }
        assert_int_equal(want, last + 1);
        free(p);
}

/* Spill the segment snapkeep_spill_take() gives, on the worker. */
static void spill_one(struct snapkeep *k, struct snapspill *sp, int dir_fd)
{
        struct snapimage_bytes bytes;
        const void *p;
        size_t len;
        void *tag;
        struct snapshare *seg = snapkeep_spill_take(k, 1, &p, &len);

        assert_non_null(seg);
        assert_int_equal(snapspill_start(sp, dir_fd, p, len, seg), 0);
        (void)snapspill_join(sp, &bytes, &tag);
        assert_ptr_equal(tag, seg);
        snapkeep_spill_done(k, seg, &bytes);
}

/* A frozen segment moves into an unnamed file once raft has written the
 * snapshot that froze it; later snapshots read the same entries back from
 * it, and the bytes leave resident memory at their release. */
static void tail_segments_move_into_files(void **state)
{
        char dir[] = "/tmp/baton-snapspill-XXXXXX";
        struct snapspill sp;
        struct snapkeep k;
        int dir_fd;
        struct raft_buffer *b1, *b2;
        const void *p;
        size_t len;
        unsigned n1, n2;

        (void)state;
        assert_non_null(mkdtemp(dir));
        if (!tmpfile_works(dir)) {
                assert_int_equal(rmdir(dir), 0);
                skip();
        }
        snapspill_init(&sp);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_true(dir_fd >= 0);
        keep_with_tail(&k, 11, 14);
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        /* Raft is writing it: the segment stays where the buffers point. */
        assert_null(snapkeep_spill_take(&k, 1, &p, &len));
        snapkeep_release(b1, n1);
        spill_one(&k, &sp, dir_fd);
        assert_int_equal(snapkeep_spilled(&k), 4 * (12 + SEG_ENTRY));
        assert_int_equal(sp.n_spilled, 1);
        assert_int_equal(entries(dir), 0);
        assert_null(snapkeep_spill_take(&k, 1, &p, &len)); /* none left */

        keep_with_tail(&k, 15, 16);
        assert_int_equal(snapkeep_hand(&k, &b2, &n2), 0);
        assert_int_equal(n2, 4); /* header, image, two segments */
        check_tail(b2, n2, 16);
        snapkeep_release(b2, n2);
        assert_int_equal(snapkeep_size(&k), 5 + 6 * (12 + SEG_ENTRY));
        snapkeep_drop(&k);
        assert_int_equal(snapkeep_spilled(&k), 0);
        close(dir_fd);
        assert_int_equal(rmdir(dir), 0);
}

/* A spill that ends while a snapshot holds its segment, or after the keep
 * moved on, changes nothing; one that fails leaves the tail in memory and
 * stops the spills until the next snapshot, which tries again. */
static void spills_yield_to_snapshots_and_failures(void **state)
{
        char dir[] = "/tmp/baton-snapspill-XXXXXX";
        struct snapimage_bytes bytes;
        struct snapspill sp;
        struct snapkeep k;
        int dir_fd;
        struct snapshare *seg;
        struct raft_buffer *b1, *b2;
        const void *p;
        size_t len;
        unsigned n1, n2;
        void *tag;

        (void)state;
        assert_non_null(mkdtemp(dir));
        snapspill_init(&sp);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
        keep_with_tail(&k, 11, 12);
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        snapkeep_release(b1, n1);
        seg = snapkeep_spill_take(&k, 1, &p, &len);
        assert_non_null(seg);
        assert_int_equal(snapspill_start(&sp, dir_fd, p, len, seg), 0);
        assert_int_equal(snapkeep_hand(&k, &b2, &n2), 0); /* meanwhile */
        (void)snapspill_join(&sp, &bytes, &tag);
        snapkeep_spill_done(&k, tag, &bytes);
        assert_int_equal(snapkeep_spilled(&k), 0);
        check_tail(b2, n2, 12); /* its buffers did not move */
        snapkeep_release(b2, n2);
        assert_ptr_equal(snapkeep_spill_take(&k, 1, &p, &len), seg);
        snapkeep_spill_done(&k, seg, &(struct snapimage_bytes){0});
        assert_true(k.spill_failed);
        assert_null(snapkeep_spill_take(&k, 1, &p, &len));
        /* The next snapshot tries again, from the segment that failed. */
        keep_with_tail(&k, 13, 13);
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        assert_false(k.spill_failed);
        snapkeep_release(b1, n1);
        spill_one(&k, &sp, dir_fd);
        assert_int_equal(snapkeep_spilled(&k), 2 * (12 + SEG_ENTRY));
        spill_one(&k, &sp, dir_fd); /* and the one that snapshot froze */
        assert_int_equal(snapkeep_spilled(&k), 3 * (12 + SEG_ENTRY));
        snapkeep_drop(&k);

        /* Too small for the spill's minimum: passed over, in memory. */
        keep_with_tail(&k, 11, 12);
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        snapkeep_release(b1, n1);
        assert_null(snapkeep_spill_take(&k, 1 << 20, &p, &len));
        assert_int_equal(k.spill_next, 1);
        snapkeep_drop(&k);

        /* A spill of a keep dropped meanwhile is freed. */
        keep_with_tail(&k, 11, 12);
        assert_int_equal(snapkeep_hand(&k, &b1, &n1), 0);
        snapkeep_release(b1, n1);
        seg = snapkeep_spill_take(&k, 1, &p, &len);
        assert_int_equal(snapspill_start(&sp, dir_fd, p, len, seg), 0);
        snapkeep_drop(&k);
        (void)snapspill_join(&sp, &bytes, &tag);
        snapkeep_spill_done(&k, tag, &bytes);
        assert_int_equal(snapkeep_spilled(&k), 0);

        /* A file that cannot be made: the errno, counted, nothing made. */
        close(dir_fd);
        assert_int_equal(snapspill_start(&sp, -1, "abc", 3, NULL), 0);
        assert_int_equal(snapspill_join(&sp, &bytes, &tag), EBADF);
        assert_null(bytes.base);
        assert_int_equal(sp.n_failed, 1);
        assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(fork_sees_the_state_at_the_fork),
            cmocka_unit_test(inline_is_ready_at_once),
            cmocka_unit_test(failing_child_leaves_nothing),
            cmocka_unit_test(cancel_kills_the_child),
            cmocka_unit_test(child_yields_to_the_loops),
            cmocka_unit_test(image_in_a_directory),
            cmocka_unit_test(missing_directory_is_named),
            cmocka_unit_test(tail_round_trip),
            cmocka_unit_test(damaged_tails_are_refused),
            cmocka_unit_test(kept_image_is_handed_again),
            cmocka_unit_test(keep_goes_stale_at_the_image_size),
            cmocka_unit_test(tail_segments_move_into_files),
            cmocka_unit_test(spills_yield_to_snapshots_and_failures),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
