/* Integration scenario on a follower's data directory as a kill during a
 * snapshot install leaves it: batond starts from it at the first try and
 * catches up (docs/raft.md, section 2). */
#include "sc_install.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"

/* Snapshots every 64 entries, 8 kept behind. */
static const char *const small_snapshots[] = {"--snapshot-threshold", "64",
                                              "--snapshot-trailing", "8"};
#define FIRST_STEPS 100 /* acquire + release: the follower's own snapshots */
#define MAX_STEPS   400 /* until the leader's snapshot passes the follower */
#define EMPTY_OPEN  "open-1000000" /* a name libraft's counter never reached */
#define PATH_CAP    (PATH_MAX + 128)

/* What one data directory holds, by libraft's file names. */
struct dir_scan {
        unsigned long long snapshot;    /* newest snapshot's index (0: none) */
        char snapshot_name[256];        /* its file (".meta" beside it) */
        unsigned long long last_closed; /* highest end of a closed segment */
        unsigned closed;
        unsigned open;
};

static bool scan_dir(const char *path, struct dir_scan *s)
{
        DIR *d = opendir(path);
        struct dirent *e;
        unsigned long long a, b, c;
        int end;

        memset(s, 0, sizeof *s);
        if (d == NULL) {
                return false;
        }
        while ((e = readdir(d)) != NULL) {
                end = 0;
                if (sscanf(e->d_name, "snapshot-%llu-%llu-%llu%n", &a, &b, &c,
                           &end) == 3 &&
                    e->d_name[end] == '\0') {
                        if (b > s->snapshot) {
                                s->snapshot = b;
                                snprintf(s->snapshot_name,
                                         sizeof s->snapshot_name, "%s",
                                         e->d_name);
                        }
                } else if (sscanf(e->d_name, "%llu-%llu%n", &a, &b, &end) ==
                               2 &&
                           e->d_name[end] == '\0') {
                        s->closed++;
                        if (b > s->last_closed) {
                                s->last_closed = b;
                        }
                } else if (strncmp(e->d_name, "open-", 5) == 0) {
                        s->open++;
                }
        }
        closedir(d);
        return true;
}

static bool copy_file(const char *from_dir, const char *to_dir,
                      const char *name)
{
        char from[PATH_CAP], to[PATH_CAP], buf[1 << 16];
        FILE *in, *out;
        size_t n;
        bool ok = true;

        snprintf(from, sizeof from, "%s/%s", from_dir, name);
        snprintf(to, sizeof to, "%s/%s", to_dir, name);
        in = fopen(from, "rb");
        out = in != NULL ? fopen(to, "wb") : NULL;
        if (out == NULL) {
                if (in != NULL) {
                        fclose(in);
                }
                return false;
        }
        while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
                ok = ok && fwrite(buf, 1, n, out) == n;
        }
        ok = ok && !ferror(in);
        fclose(in);
        return fclose(out) == 0 && ok;
}

/* An open segment libraft made ready and never wrote: zeros (libraft
 * allocates them ahead of need, so there are some at any kill). */
static bool write_empty_open(const char *dir)
{
        char path[PATH_CAP];
        static const char zeros[1 << 16];
        FILE *f;
        bool ok;

        snprintf(path, sizeof path, "%s/%s", dir, EMPTY_OPEN);
        f = fopen(path, "wb");
        if (f == NULL) {
                return false;
        }
        ok = fwrite(zeros, 1, sizeof zeros, f) == sizeof zeros;
        return fclose(f) == 0 && ok;
}

/* `steps` acquire + release pairs of `name` on `c`. */
static bool steps(struct ctx *x, struct tclient *c, const char *name,
                  unsigned steps, int line)
{
        uint64_t token;
        unsigned i;

        for (i = 0; i < steps; i++) {
                token = granted(x, c, name, 1000, line);
                if (token == 0 || !released(x, c, name, token, line)) {
                        return false;
                }
        }
        return true;
}

/*
 * A follower f with closed segments of its own is stopped; the leader
 * goes on past a snapshot newer than all of them; that snapshot is copied
 * into f's directory beside its old segments and an empty open segment:
 * what is on f's disk after libraft wrote an installed snapshot and before
 * it removed the segments the snapshot replaces, had f been killed there.
 * f must start (libraft refuses that directory once: batond says so in
 * its log and starts again), catch up, and apply what the others apply.
 */
static void install_cut_short_run(struct ctx *x, struct tclient *c,
                                  bool *opened, const char *name)
{
        struct harness_node *fn;
        struct dir_scan fs, ls;
        unsigned leader, f, i;
        char meta[300];

        EXPECT(x, restart_all(x, small_snapshots, 4, __LINE__),
               "small snapshots");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        OPEN(x, c, TTL_MS);
        *opened = true;
        EXPECT(x, steps(x, c, name, FIRST_STEPS, __LINE__), "first steps");
        f = a_follower(x, leader);
        fn = &x->h.nodes[f - 1];
        EXPECT(x,
               harness_term(&x->h, f, NULL) == 0 &&
                   harness_wait_exit(&x->h, f, HEALTHY_MS, NULL) == 0,
               "stop node %u: %s", f, x->h.errmsg);
        EXPECT(x, scan_dir(fn->data_dir, &fs) && fs.closed > 0,
               "node %u left no closed segment in %s", f, fn->data_dir);
        for (i = 0; i < MAX_STEPS; i += 10) {
                EXPECT(x, steps(x, c, name, 10, __LINE__), "steps");
                EXPECT(x,
                       scan_dir(x->h.nodes[leader - 1].data_dir, &ls) &&
                           ls.snapshot > 0,
                       "the leader %u has no snapshot", leader);
                if (ls.snapshot > fs.last_closed) {
                        break;
                }
        }
        EXPECT(x, ls.snapshot > fs.last_closed,
               "the leader's snapshot %llu is not past node %u's last "
               "entry %llu",
               ls.snapshot, f, fs.last_closed);
        snprintf(meta, sizeof meta, "%s.meta", ls.snapshot_name);
        EXPECT(x,
               copy_file(x->h.nodes[leader - 1].data_dir, fn->data_dir,
                         ls.snapshot_name) &&
                   copy_file(x->h.nodes[leader - 1].data_dir, fn->data_dir,
                             meta) &&
                   write_empty_open(fn->data_dir),
               "copy snapshot %s into %s: %s", ls.snapshot_name, fn->data_dir,
               strerror(errno));
        printf("# node %u: closed segments up to %llu, snapshot %llu and an "
               "empty open segment\n",
               f, fs.last_closed, ls.snapshot);
        EXPECT(x, restarted(x, f, __LINE__), "restart");
        EXPECT(x, harness_reap(&x->h) == 0 && harness_running(&x->h, f),
               "node %u exited: see %s", f, fn->log_path);
        /* Proof that the directory was the one libraft refuses once. */
        EXPECT(x, log_has(x, f, "starting again from the snapshot"),
               "node %u's log does not say it started again", f);
        EXPECT(x, steps(x, c, name, 10, __LINE__), "steps after");
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
}

void sc_install_cut_short(struct ctx *x)
{
        struct tclient c;
        bool opened = false;
        char name[64];

        lock_name(x, name, sizeof name, "install");
        install_cut_short_run(x, &c, &opened, name);
        if (opened) {
                tclient_close(&c);
        }
        /* The next scenarios run with the default snapshots. */
        (void)restart_all(x, NULL, 0, __LINE__);
}
