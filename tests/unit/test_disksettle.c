/* Unit tests for writing raft's open segments and metadata back before raft
 * loads them (disksettle.c): through a recording io, every byte raft will
 * read was written, unchanged, and then synced; failed calls are named. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/baton/errors.h"
#include "../../src/server/disk/disksettle.h"

#define SEG_SIZE (1024u * 1024) /* preallocated, as libraft's 8 MiB are */
#define USED     4100u          /* open-1's bytes up to its last non-zero */
#define CLOSED   "0000000000000001-0000000000000002"
#define MAX_EV   32

enum kind { EV_WRITE, EV_DATASYNC, EV_DIRSYNC };

/* One call through the io: which file (its base name), what, where. */
struct ev {
        char name[256];
        enum kind kind;
        off_t off;
        size_t n;
};

/* The recording io's state: its calls, and the one to fail. */
struct rec {
        struct ev ev[MAX_EV];
        unsigned n_ev;
        unsigned n_differs; /* writes of bytes other than the file held */
        const char *fail_name;
        enum kind fail_kind;
};

struct fixture {
        char dir[64];
        struct rec rec;
        struct disksettle_io io;
};

static void fd_name(int fd, char *name, size_t size)
{
        char link[64], path[256];
        ssize_t n;
        const char *slash;

        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof path - 1);
        assert_true(n > 0);
        path[n] = '\0';
        slash = strrchr(path, '/');
        snprintf(name, size, "%s", slash != NULL ? slash + 1 : path);
}

/* Record the call; 1 if it is the one to fail (errno set), else 0. */
static int record(struct rec *r, int fd, enum kind kind, off_t off, size_t n)
{
        struct ev *e;

        assert_true(r->n_ev < MAX_EV);
        e = &r->ev[r->n_ev++];
        fd_name(fd, e->name, sizeof e->name);
        e->kind = kind;
        e->off = off;
        e->n = n;
        if (r->fail_name != NULL && r->fail_kind == kind &&
            strcmp(r->fail_name, e->name) == 0) {
                errno = EIO;
                return 1;
        }
        return 0;
}

static ssize_t rec_pwrite(void *ctx, int fd, const void *p, size_t n, off_t off)
{
        struct rec *r = ctx;
        uint8_t *was = malloc(n);

        assert_non_null(was);
        assert_int_equal(pread(fd, was, n, off), (ssize_t)n);
        r->n_differs += memcmp(was, p, n) != 0;
        free(was);
        if (record(r, fd, EV_WRITE, off, n)) {
                return -1;
        }
        return pwrite(fd, p, n, off);
}

static int rec_fdatasync(void *ctx, int fd)
{
        return record(ctx, fd, EV_DATASYNC, 0, 0) ? -1 : fdatasync(fd);
}

static int rec_fsync(void *ctx, int fd)
{
        return record(ctx, fd, EV_DIRSYNC, 0, 0) ? -1 : fsync(fd);
}

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

/* metadata1 at version 3 with no vote (its last 8 bytes zero), metadata2
 * at version 2 with a vote, a closed segment, open-1 with USED bytes of
 * data (a zero byte inside) and open-2 all zeros, as libraft preallocates
 * them. The bytes are not libraft's format: disksettle reads none of it. */
static int setup(void **state)
{
        struct fixture *f = calloc(1, sizeof *f);
        uint8_t *seg = calloc(1, SEG_SIZE);
        uint8_t m[32] = {1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2};
        size_t i;

        snprintf(f->dir, sizeof f->dir, "/tmp/baton-disksettle-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        write_file(f->dir, "metadata1", m, sizeof m);
        m[8] = 2;
        m[24] = 2;
        write_file(f->dir, "metadata2", m, sizeof m);
        for (i = 0; i < USED; i++) {
                seg[i] = (uint8_t)(i % 251);
        }
        write_file(f->dir, CLOSED, seg, 200);
        write_file(f->dir, "open-1", seg, SEG_SIZE);
        memset(seg, 0, SEG_SIZE);
        write_file(f->dir, "open-2", seg, SEG_SIZE);
        free(seg);
        f->io.pwrite = rec_pwrite;
        f->io.fdatasync = rec_fdatasync;
        f->io.fsync = rec_fsync;
        f->io.ctx = &f->rec;
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

/* How much of file `name`, from byte 0, was written and then synced
 * before the directory's fsync: what a power cut after it keeps. */
static size_t durable(const struct rec *r, const char *name)
{
        size_t written = 0, synced = 0;
        unsigned i;

        for (i = 0; i < r->n_ev; i++) {
                const struct ev *e = &r->ev[i];

                if (e->kind == EV_DIRSYNC) {
                        break;
                }
                if (strcmp(e->name, name) != 0) {
                        continue;
                }
                if (e->kind == EV_WRITE && (size_t)e->off <= written &&
                    (size_t)e->off + e->n > written) {
                        written = (size_t)e->off + e->n;
                } else if (e->kind == EV_DATASYNC) {
                        synced = written;
                }
        }
        return synced;
}

static unsigned count(const struct rec *r, const char *name)
{
        unsigned i, n = 0;

        for (i = 0; i < r->n_ev; i++) {
                n += strcmp(r->ev[i].name, name) == 0;
        }
        return n;
}

/* The whole file `name`, malloc'ed, its size in *n. */
static uint8_t *slurp(const struct fixture *f, const char *name, size_t *n)
{
        char path[128];
        struct stat st;
        uint8_t *p;
        FILE *fp;

        snprintf(path, sizeof path, "%s/%s", f->dir, name);
        assert_int_equal(stat(path, &st), 0);
        p = malloc((size_t)st.st_size + 1);
        fp = fopen(path, "rb");
        assert_non_null(fp);
        *n = fread(p, 1, (size_t)st.st_size, fp);
        assert_int_equal(*n, (size_t)st.st_size);
        fclose(fp);
        return p;
}

static const char *const files[] = {"metadata1", "metadata2", CLOSED, "open-1",
                                    "open-2"};

static void settle_writes_back_what_raft_reads_and_syncs_it(void **state)
{
        struct fixture *f = *state;
        uint8_t *before[5], *after;
        size_t n_before[5], n;
        struct disksettle s;
        unsigned i;

        for (i = 0; i < 5; i++) {
                before[i] = slurp(f, files[i], &n_before[i]);
        }
        assert_int_equal(disksettle_run(&s, f->dir, &f->io), 0);
        assert_string_equal(s.errmsg, "");
        assert_int_equal(s.n_files, 3);
        assert_int_equal(s.n_bytes, USED + 64);
        assert_int_equal(f->rec.n_differs, 0);
        for (i = 0; i < 5; i++) {
                after = slurp(f, files[i], &n);
                assert_int_equal(n, n_before[i]);
                assert_memory_equal(after, before[i], n);
                free(after);
                free(before[i]);
        }
        /* metadata1 whole, trailing zero vote included: libraft writes it
         * over the older version in place. */
        assert_int_equal(durable(&f->rec, "metadata1"), 32);
        assert_int_equal(durable(&f->rec, "metadata2"), 32);
        assert_int_equal(durable(&f->rec, "open-1"), USED);
        assert_int_equal(count(&f->rec, "open-2"), 0);
        assert_int_equal(count(&f->rec, CLOSED), 0);
        /* The directory's fsync comes last, once. */
        assert_int_equal(f->rec.ev[f->rec.n_ev - 1].kind, EV_DIRSYNC);
        assert_int_equal(count(&f->rec, strrchr(f->dir, '/') + 1), 1);
}

/* The error a failed call gives, and that nothing after it ran. */
static void fails(struct fixture *f, const char *name, enum kind kind,
                  const char *want)
{
        struct disksettle s;

        f->rec.fail_name = name;
        f->rec.fail_kind = kind;
        assert_int_equal(disksettle_run(&s, f->dir, &f->io), BATON_EIO);
        if (strstr(s.errmsg, want) == NULL) {
                fail_msg("\"%s\" does not say \"%s\"", s.errmsg, want);
        }
        assert_int_equal(f->rec.ev[f->rec.n_ev - 1].kind, kind);
}

static void failed_fdatasync_is_named(void **state)
{
        fails(*state, "open-1", EV_DATASYNC,
              "/open-1: fdatasync: Input/output error");
}

static void failed_write_is_named(void **state)
{
        fails(*state, "metadata2", EV_WRITE,
              "/metadata2: write: Input/output error");
}

static void failed_directory_fsync_is_named(void **state)
{
        struct fixture *f = *state;

        fails(f, strrchr(f->dir, '/') + 1, EV_DIRSYNC,
              ": fsync: Input/output error");
}

/* A new node's directory: no metadata, no segment. */
static void empty_directory_is_only_synced(void **state)
{
        struct fixture *f = *state;
        struct disksettle s;
        char cmd[160];

        snprintf(cmd, sizeof cmd, "rm -f %s/*", f->dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(disksettle_run(&s, f->dir, &f->io), 0);
        assert_int_equal(s.n_files, 0);
        assert_int_equal(f->rec.n_ev, 1);
        assert_int_equal(f->rec.ev[0].kind, EV_DIRSYNC);
}

/* With libc's calls, as batond runs it. */
static void libc_io_leaves_the_bytes(void **state)
{
        struct fixture *f = *state;
        uint8_t *before, *after;
        size_t n_before, n;
        struct disksettle s;

        before = slurp(f, "open-1", &n_before);
        assert_int_equal(disksettle_run(&s, f->dir, NULL), 0);
        assert_int_equal(s.n_files, 3);
        after = slurp(f, "open-1", &n);
        assert_int_equal(n, n_before);
        assert_memory_equal(after, before, n);
        free(before);
        free(after);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(
                settle_writes_back_what_raft_reads_and_syncs_it, setup,
                teardown),
            cmocka_unit_test_setup_teardown(failed_fdatasync_is_named, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(failed_write_is_named, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(failed_directory_fsync_is_named,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(empty_directory_is_only_synced,
                                            setup, teardown),
            cmocka_unit_test_setup_teardown(libc_io_leaves_the_bytes, setup,
                                            teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
