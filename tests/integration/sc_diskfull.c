/* A full disk, against real batond processes (see sc_diskfull.h).
 *
 * The two followers of a 3-node cluster are moved, one after the other,
 * onto tmpfs file systems of their own (as the chaos suite's disk-full
 * nemesis does), filled to 1.5 MiB free: less than the 8 MiB a raft log
 * segment takes, as in the report that a follower "never creates its
 * segment and logs nothing" while GET /ready said ready. With one follower
 * full the cluster still commits; that follower must say so once in its
 * log (ENOSPC and its path), answer 503 disk-full, and show the free bytes
 * and the failed writes in its metrics. With both full the leader cannot
 * commit: clients time out and the leader answers 503 cannot-commit. Once
 * space is freed every node is ready again, each full node has said the
 * recovery once, and every grant acknowledged before is still held.
 *
 * The mounts are made in a mount namespace of the test process's own, so
 * that they go with it whatever happens; that needs root. */
#include "sc_diskfull.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "harness.h"
#include "prom.h"

#define SMALL_FS    "size=64m"         /* room for several segments */
#define LEAVE_FREE  (1536u * 1024)     /* what the report's node had */
#define SEGMENT     (8u * 1024 * 1024) /* a raft log segment */
#define DISK_MS     20000              /* for a node to say what it sees */
#define HELD_TTL    120000             /* outlives the whole scenario */
#define N_HELD      5                  /* grants acknowledged before */
#define BODY_MAX    4096
#define ENOSPC_TEXT "No space left on device"

/* As EXPECT, in a function that returns whether it went on. */
#define CHECK(x, cond, ...)                                                    \
        do {                                                                   \
                if (!(cond)) {                                                 \
                        fail_at(x, __LINE__, __VA_ARGS__);                     \
                        return false;                                          \
                }                                                              \
        } while (0)

/* A follower's data directory on a file system of its own. */
struct small_fs {
        unsigned id;
        bool mounted;
        char mnt[PATH_MAX];
        char fill[PATH_MAX + 8];
};

/* Root and a mount namespace of this process's own, whose mounts
 * propagate nowhere; false with the reason in `why` otherwise. */
static bool private_mounts(char *why, size_t cap)
{
        if (geteuid() != 0) {
                snprintf(why, cap,
                         "needs root to mount small file systems "
                         "for data directories");
                return false;
        }
        if (unshare(CLONE_NEWNS) != 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
                snprintf(why, cap, "no mount namespace of its own: %s",
                         strerror(errno));
                return false;
        }
        return true;
}

/* Fill the file system at `fs->mnt` until LEAVE_FREE bytes are free. */
static int fill(struct small_fs *fs, char *err, size_t cap)
{
        struct statvfs sv;
        uint64_t avail;
        int fd, rv;

        snprintf(fs->fill, sizeof fs->fill, "%s/fill", fs->mnt);
        if (statvfs(fs->mnt, &sv) != 0) {
                snprintf(err, cap, "statvfs %s: %s", fs->mnt, strerror(errno));
                return -1;
        }
        avail = (uint64_t)sv.f_bavail * sv.f_frsize;
        fd = open(fs->fill, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || avail <= LEAVE_FREE) {
                snprintf(err, cap, "fill %s: %s (%" PRIu64 " bytes free)",
                         fs->fill, strerror(errno), avail);
                if (fd >= 0) {
                        close(fd);
                }
                return -1;
        }
        rv = posix_fallocate(fd, 0, (off_t)(avail - LEAVE_FREE));
        close(fd);
        if (rv != 0) {
                snprintf(err, cap, "fallocate %s: %s", fs->fill, strerror(rv));
                return -1;
        }
        return 0;
}

static bool stop(struct ctx *x, unsigned id)
{
        int st = 0;

        CHECK(x,
              harness_term(&x->h, id, NULL) == 0 &&
                  harness_wait_exit(&x->h, id, 10000, &st) == 0,
              "stop node %u: %s", id, x->h.errmsg);
        return true;
}

/* Copy stopped node `id`'s data directory onto a new tmpfs (sparse: an
 * open segment is mostly zeros), make that its data directory for its
 * next start, and fill it. */
static bool onto_small_fs(struct ctx *x, unsigned id, struct small_fs *fs)
{
        struct harness_node *nd = &x->h.nodes[id - 1];
        char cmd[3 * PATH_MAX], err[PATH_MAX + 128];

        fs->id = id;
        snprintf(fs->mnt, sizeof fs->mnt, "%s/n%u-small", x->h.dir, id);
        CHECK(x,
              mkdir(fs->mnt, 0750) == 0 &&
                  mount("baton-full", fs->mnt, "tmpfs", 0, SMALL_FS) == 0,
              "mount a tmpfs on %s: %s", fs->mnt, strerror(errno));
        fs->mounted = true;
        snprintf(cmd, sizeof cmd, "cp -a --sparse=always '%s/.' '%s/'",
                 nd->data_dir, fs->mnt);
        CHECK(x, system(cmd) == 0, "%s failed", cmd);
        snprintf(nd->data_dir, sizeof nd->data_dir, "%s", fs->mnt);
        CHECK(x, fill(fs, err, sizeof err) == 0, "%s", err);
        return true;
}

static bool restart(struct ctx *x, unsigned id)
{
        CHECK(x, harness_restart(&x->h, id) == 0, "restart node %u: %s", id,
              x->h.errmsg);
        return true;
}

/* Follower `id` stopped, moved onto a full file system and started. */
static bool move_onto_small_fs(struct ctx *x, unsigned id, struct small_fs *fs)
{
        return stop(x, id) && onto_small_fs(x, id, fs) && restart(x, id);
}

/* Lines of node `id`'s log since its last start that have `needle` in
 * them, and `also` too unless it is NULL. */
static unsigned lines_since_start(struct ctx *x, unsigned id,
                                  const char *needle, const char *also)
{
        FILE *f = fopen(x->h.nodes[id - 1].log_path, "r");
        char *line = NULL;
        size_t cap = 0;
        unsigned n = 0;

        while (f != NULL && getline(&line, &cap, f) > 0) {
                if (strncmp(line, "=== harness: start", 18) == 0) {
                        n = 0;
                } else if (strstr(line, needle) != NULL &&
                           (also == NULL || strstr(line, also) != NULL)) {
                        n++;
                }
        }
        free(line);
        if (f != NULL) {
                fclose(f);
        }
        return n;
}

/* Node `id`'s lines since its last start that say raft's writes found no
 * room. A node that meets a peer for the first time while its disk is
 * full also says that it could not record the peer in batond.identity
 * (whether it does depends on which nodes talked before): that line is
 * about the identity file, not raft's writes, and is not counted. With
 * `also` (NULL: any), only lines that have it too. */
static unsigned enospc_lines(struct ctx *x, unsigned id, const char *also)
{
        /* An identity line names the data directory's path too, so it is
         * among the lines with `also` whatever `also` is. */
        return lines_since_start(x, id, ENOSPC_TEXT, also) -
               lines_since_start(x, id, ENOSPC_TEXT, "batond.identity");
}

/* Poll GET `path` of node `id` until it answers `status` with `text` in
 * its body, for up to `ms`; the last body in `body`. */
static bool await_answer(struct ctx *x, unsigned id, const char *path,
                         int status, const char *text, int ms, char *body)
{
        int64_t end = tclient_now_ms() + ms;
        int got;

        do {
                got = 0;
                body[0] = '\0';
                if (harness_http_get(&x->h, id, path, &got, body, BODY_MAX,
                                     OP_MS) >= 0 &&
                    got == status && strstr(body, text) != NULL) {
                        return true;
                }
                poll_pause();
        } while (tclient_now_ms() < end);
        return false;
}

/* Poll node `id`'s metrics until `series` is at least `min`, for up to
 * `ms`; its last value in `*v` (-1: not there). */
static bool await_metric(struct ctx *x, unsigned id, const char *series,
                         double min, int ms, double *v)
{
        char *text = malloc(METRICS_MAX);
        int64_t end = tclient_now_ms() + ms;
        bool ok = false;

        *v = -1;
        while (text != NULL && !ok) {
                if (harness_metrics(&x->h, id, text, METRICS_MAX, OP_MS) > 0 &&
                    !prom_value(text, series, v)) {
                        *v = -1;
                }
                ok = *v >= min;
                if (ok || tclient_now_ms() >= end) {
                        break;
                }
                poll_pause();
        }
        free(text);
        return ok;
}

/* What a follower on a full disk says while the cluster still commits:
 * once in its log, 503 on /ready (200 on /health), its free bytes and
 * its failed writes in the metrics. */
static bool one_full(struct ctx *x, const struct small_fs *fs,
                     struct tclient *c)
{
        char body[BODY_MAX], name[64];
        double errors = -1, failing = -1, free_bytes = -1;
        uint64_t token;
        unsigned id = fs->id, i;

        CHECK(x,
              await_answer(x, id, "/ready", 503, "\"reason\":\"disk-full\"",
                           DISK_MS, body),
              "node %u on a full disk: GET /ready gave %s", id, body);
        /* The cluster commits without it, and sends it entries to store. */
        for (i = 0; i < 3; i++) {
                lock_name(x, name, sizeof name, "while-one-full");
                token = granted(x, c, name, 1000, __LINE__);
                CHECK(x, token != 0, "no grant with one follower full");
        }
        /* Several retries, to see that they are not said again. */
        CHECK(x,
              await_metric(x, id,
                           "baton_disk_write_errors_total{kind=\"segment\"}", 3,
                           DISK_MS, &errors),
              "node %u: baton_disk_write_errors_total{kind=\"segment\"} is "
              "%g",
              id, errors);
        CHECK(x,
              await_metric(x, id, "baton_disk_write_failing", 1, OP_MS,
                           &failing) &&
                  await_metric(x, id, "baton_data_dir_free_bytes", 0, OP_MS,
                               &free_bytes) &&
                  free_bytes < SEGMENT,
              "node %u: baton_disk_write_failing %g, "
              "baton_data_dir_free_bytes %g (a tmpfs with %u bytes free)",
              id, failing, free_bytes, LEAVE_FREE);
        CHECK(x,
              enospc_lines(x, id, NULL) == 1 &&
                  enospc_lines(x, id, fs->mnt) == 1,
              "node %u: %u lines say \"%s\" (%u with %s) after %g failed "
              "writes; one was wanted",
              id, enospc_lines(x, id, NULL), ENOSPC_TEXT,
              enospc_lines(x, id, fs->mnt), fs->mnt, errors);
        CHECK(x,
              await_answer(x, id, "/health", 200, "\"status\":\"ok\"", OP_MS,
                           body),
              "node %u on a full disk: GET /health gave %s", id, body);
        return true;
}

/* With the other follower full too, a majority cannot store: a client's
 * acquire times out and the leader says it cannot commit. */
static bool both_full(struct ctx *x, const struct small_fs *fs, unsigned leader,
                      struct tclient *c)
{
        struct tclient_result res;
        char body[BODY_MAX], name[64];
        int rv;

        CHECK(x,
              await_answer(x, fs->id, "/ready", 503, "\"reason\":\"disk-full\"",
                           DISK_MS, body),
              "node %u on a full disk: GET /ready gave %s", fs->id, body);
        lock_name(x, name, sizeof name, "both-full");
        memset(&res, 0, sizeof res);
        rv = tclient_acquire(c, name, 1, 1000, 3000, &res);
        CHECK(x, rv != 0 && res.kind != PROTO_KIND_GRANTED,
              "ACQUIRE with a majority full was answered: %d %s", rv,
              rs(x, &res));
        CHECK(x,
              await_answer(x, leader, "/ready", 503,
                           "\"reason\":\"cannot-commit\"", DISK_MS, body),
              "leader %u with a majority full: GET /ready gave %s", leader,
              body);
        CHECK(x,
              await_answer(x, leader, "/health", 200, "\"status\":\"ok\"",
                           OP_MS, body),
              "leader %u: GET /health gave %s", leader, body);
        CHECK(x, lines_since_start(x, leader, "to be committed", NULL) >= 1,
              "leader %u does not say that it cannot commit", leader);
        return true;
}

/* Space freed: every node ready, each full node has said so once, and
 * what was acknowledged is all there. */
static bool freed(struct ctx *x, const struct small_fs fs[2], struct tclient *c,
                  char names[][64], const uint64_t *tokens)
{
        char body[BODY_MAX], name[64];
        struct tclient q;
        unsigned i, id;
        uint64_t token;

        for (i = 0; i < 2; i++) {
                CHECK(x, unlink(fs[i].fill) == 0, "rm %s: %s", fs[i].fill,
                      strerror(errno));
        }
        for (id = 1; id <= x->h.n; id++) {
                CHECK(x,
                      await_answer(x, id, "/ready", 200, "\"status\":\"ready\"",
                                   2 * DISK_MS, body),
                      "node %u after space was freed: GET /ready gave %s", id,
                      body);
        }
        for (i = 0; i < 2; i++) {
                id = fs[i].id;
                CHECK(x,
                      enospc_lines(x, id, NULL) == 1 &&
                          lines_since_start(x, id, "data directory",
                                            " again") == 1,
                      "node %u: %u lines say \"%s\", %u that it writes again; "
                      "one each was wanted",
                      id, enospc_lines(x, id, NULL), ENOSPC_TEXT,
                      lines_since_start(x, id, "data directory", " again"));
        }
        CHECK(x, client_open(x, &q, TTL_MS, __LINE__), "no client");
        for (i = 0; i < N_HELD && x->ok; i++) {
                holds(x, &q, names[i], c->session, tokens[i], 0, __LINE__);
        }
        tclient_close(&q);
        lock_name(x, name, sizeof name, "after");
        token = granted(x, c, name, 1000, __LINE__);
        return x->ok && token > tokens[N_HELD - 1];
}

/* The grants acknowledged before any disk fills, on a session that
 * outlives the scenario. */
static bool grant_held(struct ctx *x, struct tclient *c, char names[][64],
                       uint64_t *tokens)
{
        unsigned i;

        for (i = 0; i < N_HELD; i++) {
                lock_name(x, names[i], 64, "held");
                tokens[i] = granted(x, c, names[i], 1000, __LINE__);
                if (tokens[i] == 0) {
                        return false;
                }
        }
        return true;
}

static bool await_leaderless(struct ctx *x, unsigned id)
{
        char body[BODY_MAX];

        CHECK(x,
              await_answer(x, id, "/ready", 503, "\"reason\":\"no-leader\"",
                           DISK_MS, body),
              "node %u without its followers: GET /ready gave %s", id, body);
        return true;
}

/* One follower onto a full disk, then the other; then space freed. */
static void fill_one_then_another(struct ctx *x, struct small_fs fs[2])
{
        char names[N_HELD][64];
        uint64_t tokens[N_HELD];
        unsigned leader;
        struct tclient c;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        OPEN(x, &c, HELD_TTL);
        if (grant_held(x, &c, names, tokens) &&
            move_onto_small_fs(x, leader % x->h.n + 1, &fs[0]) &&
            one_full(x, &fs[0], &c) &&
            move_onto_small_fs(x, fs[0].id % x->h.n + 1, &fs[1]) &&
            both_full(x, &fs[1], leader, &c)) {
                freed(x, fs, &c, names, tokens);
        }
        tclient_close(&c);
}

/*
 * Both followers restarted onto full disks at once, as a reboot (or the
 * chaos suite's disk-full nemesis) does. They create no segment at start
 * and have no room prepared for their logs; libraft 0.22.1's leader, told
 * so, refused every entry, so their segment creation was never retried
 * and the cluster stayed stuck after space was freed (docs/raft.md). It
 * must commit again once space is freed, with no restart.
 */
static void restart_two_full(struct ctx *x, struct small_fs fs[2])
{
        char names[N_HELD][64], body[BODY_MAX], name[64];
        struct tclient_result res;
        uint64_t tokens[N_HELD];
        unsigned leader, a, b, i;
        struct tclient c;
        int rv;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        OPEN(x, &c, HELD_TTL);
        a = leader % x->h.n + 1;
        b = a % x->h.n + 1;
        /* The leader steps down without its followers, so that the next
         * one is elected by nodes that say they have no room. */
        if (grant_held(x, &c, names, tokens) && stop(x, a) && stop(x, b) &&
            await_leaderless(x, leader) && onto_small_fs(x, a, &fs[0]) &&
            onto_small_fs(x, b, &fs[1]) && restart(x, a) && restart(x, b)) {
                for (i = 0; i < 2 && x->ok; i++) {
                        if (!await_answer(x, fs[i].id, "/ready", 503,
                                          "\"reason\":\"disk-full\"", DISK_MS,
                                          body)) {
                                fail_at(x, __LINE__,
                                        "node %u restarted on a full disk: "
                                        "GET /ready gave %s",
                                        fs[i].id, body);
                        }
                }
                lock_name(x, name, sizeof name, "restarted-full");
                memset(&res, 0, sizeof res);
                rv = tclient_acquire(&c, name, 1, 1000, 3000, &res);
                if (x->ok && (rv == 0 || res.kind == PROTO_KIND_GRANTED)) {
                        fail_at(x, __LINE__,
                                "ACQUIRE with a majority full was answered: "
                                "%d %s",
                                rv, rs(x, &res));
                }
                if (x->ok) {
                        freed(x, fs, &c, names, tokens);
                }
        }
        tclient_close(&c);
}

/* Run `body` on a 3-node cluster of its own with private mounts, and
 * unmount what it mounted once every node is stopped. */
static void with_cluster(struct ctx *x, bool *skipped,
                         void (*body)(struct ctx *x, struct small_fs fs[2]))
{
        struct small_fs fs[2];
        unsigned i;

        memset(fs, 0, sizeof fs);
        *skipped = false;
        if (!private_mounts(x->why, sizeof x->why)) {
                *skipped = true;
                return;
        }
        if (harness_start(&x->h, 3, NULL, x->run->argv0, x->run->base_port) !=
            0) {
                fail_at(x, __LINE__, "%s", x->h.errmsg);
                harness_close(&x->h);
                return;
        }
        x->h.keep = x->run->keep;
        body(x, fs);
        harness_stop(&x->h);
        for (i = 0; i < 2; i++) {
                if (fs[i].mounted && umount2(fs[i].mnt, MNT_DETACH) != 0) {
                        printf("# umount %s: %s\n", fs[i].mnt, strerror(errno));
                }
        }
        if (!x->ok) {
                x->h.failed = true;
        }
        harness_close(&x->h);
}

void sc_disk_full(struct ctx *x, bool *skipped)
{
        with_cluster(x, skipped, fill_one_then_another);
}

void sc_disk_full_restart(struct ctx *x, bool *skipped)
{
        with_cluster(x, skipped, restart_two_full);
}
