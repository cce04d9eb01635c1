/* Online backup and restore as an operator runs them, against real batond
 * processes with TLS: the backup taken from a live cluster through
 * libbaton (what `batonctl snapshot save` calls), checked, then restored
 * with `batond --restore` on every node of a new cluster over the same
 * ports, and the rule that matters: every token handed out after the
 * restore is above every token handed out before it, including after the
 * backup was taken. */
#include "sc_backup.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/backup.h"

#define MARGIN (UINT64_C(1) << 40) /* restore-margin's default */

static baton_client *admin(struct ctx *x)
{
        struct baton_options o;
        baton_client *c = NULL;

        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.ttl_ms = 600000; /* outlives the restore */
        o.client_name = "sc_backup";
        return baton_client_create(&c, x->h.endpoints, &o) == 0 ? c : NULL;
}

/* A copy of the file at `from` with one byte of its snapshot changed. */
static bool corrupt_copy(const char *from, const char *to)
{
        char buf[1 << 16];
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        size_t n = in != NULL ? fread(buf, 1, sizeof buf, in) : 0;
        bool ok = n > 200 && out != NULL;

        if (ok) {
                buf[n - 10] ^= 0x01;
                ok = fwrite(buf, 1, n, out) == n;
        }
        if (in != NULL) {
                fclose(in);
        }
        if (out != NULL) {
                fclose(out);
        }
        return ok;
}

/* Whether `path` holds nothing (or is not there). */
static bool dir_empty(const char *path)
{
        DIR *d = opendir(path);
        struct dirent *e;
        bool empty = true;

        while (d != NULL && (e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") != 0 &&
                    strcmp(e->d_name, "..") != 0) {
                        empty = false;
                }
        }
        if (d != NULL) {
                closedir(d);
        }
        return empty;
}

/* Every node stopped and its data moved aside, as for a new cluster. */
static bool stop_all(struct ctx *x)
{
        char old[PATH_MAX + 8];
        unsigned id;

        for (id = 1; id <= x->h.n; id++) {
                int st;
                if (harness_term(&x->h, id, NULL) != 0 ||
                    harness_wait_exit(&x->h, id, 10000, &st) != 0) {
                        return false;
                }
                snprintf(old, sizeof old, "%s.old",
                         x->h.nodes[id - 1].data_dir);
                if (rename(x->h.nodes[id - 1].data_dir, old) != 0) {
                        return false;
                }
        }
        return true;
}

static int restore_node(struct ctx *x, unsigned id, const char *file)
{
        const char *flags[] = {"--restore", file};
        int st = -1;

        if (harness_run_once(&x->h, id, flags, 2, 30000, &st) != 0) {
                return -1;
        }
        return st;
}

/* The cluster before: locks held, a backup, then more tokens after it. */
static void before(struct ctx *x, const char *file, const char *bad,
                   struct baton_backup_info *info, uint64_t held[2],
                   uint64_t *last)
{
        struct baton_backup_info again;
        baton_client *c = admin(x);
        int i, rv;

        EXPECT(x, c != NULL, "no client");
        rv = baton_acquire(c, "bk-a", 1, BATON_WAIT_TRY, &held[0]);
        rv = rv != 0 ? rv
                     : baton_acquire(c, "bk-b", 1, BATON_WAIT_TRY, &held[1]);
        rv = rv != 0 ? rv : baton_backup_save(c, file, 0, info);
        if (rv != 0) {
                baton_client_destroy(c);
        }
        EXPECT(x, rv == 0, "before the backup: %s", baton_strerror(rv));
        printf("# backup: index %" PRIu64 ", %" PRIu64 " bytes, %" PRIu64
               " sessions, %" PRIu64 " locks\n",
               info->index, info->size, info->sessions, info->locks);
        for (i = 0; i < 5 && rv == 0; i++) {
                rv = baton_acquire(c, "bk-after", 1, BATON_WAIT_TRY, last);
                rv = rv != 0 ? rv : baton_release(c, "bk-after", 1, *last);
        }
        baton_client_destroy(c);
        EXPECT(x, rv == 0, "after the backup: %s", baton_strerror(rv));
        EXPECT(x, info->sessions == 1 && info->locks == 2 && info->grants == 2,
               "the backup holds %" PRIu64 " sessions, %" PRIu64 " locks",
               info->sessions, info->locks);
        EXPECT(x, info->index >= held[1] && *last > info->index,
               "index %" PRIu64 ", tokens %" PRIu64 " and %" PRIu64,
               info->index, held[1], *last);
        rv = baton_backup_inspect(file, &again);
        EXPECT(x, rv == 0 && memcmp(&again, info, sizeof again) == 0,
               "inspect: %s", baton_strerror(rv));
        EXPECT(x, corrupt_copy(file, bad), "cannot copy the backup");
        rv = baton_backup_inspect(bad, &again);
        EXPECT(x, rv == BATON_ECORRUPT, "a changed byte: %s",
               baton_strerror(rv));
}

/* The cluster after: the same holders, and new tokens above the old. */
static void after(struct ctx *x, const struct baton_backup_info *info,
                  const uint64_t held[2], uint64_t last)
{
        struct baton_lock_info locks[8];
        baton_client *c = admin(x);
        uint64_t token = 0;
        size_t n = 0;
        int more = 0, rv;

        EXPECT(x, c != NULL, "no client");
        rv = baton_list(c, "bk-", locks, 8, &n, &more);
        if (rv == 0) {
                rv = baton_acquire(c, "bk-new", 1, BATON_WAIT_TRY, &token);
        }
        baton_client_destroy(c);
        EXPECT(x, rv == 0, "after the restore: %s", baton_strerror(rv));
        EXPECT(x,
               n == 2 && strcmp(locks[0].name, "bk-a") == 0 &&
                   locks[0].token == held[0] && locks[1].token == held[1],
               "restored locks: %zu, first %s", n, n > 0 ? locks[0].name : "");
        printf("# token gap across the restore: %" PRIu64
               " (last before %" PRIu64 ", first after %" PRIu64 ")\n",
               token - last, last, token);
        EXPECT(x, token > last && token > info->index + MARGIN,
               "new token %" PRIu64 " not above %" PRIu64 " + margin", token,
               last);
}

void sc_backup_restore(struct ctx *x)
{
        struct baton_backup_info info;
        uint64_t held[2] = {0, 0}, last = 0;
        char file[PATH_MAX], bad[PATH_MAX];
        unsigned id;

        EXPECT(x,
               harness_start(&x->h, 3, NULL, x->run->argv0,
                             x->run->base_port) == 0 &&
                   harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0,
               "cannot start: %s", x->h.errmsg);
        x->have_cluster = true;
        snprintf(file, sizeof file, "%s/cluster.bak", x->h.dir);
        snprintf(bad, sizeof bad, "%s/changed.bak", x->h.dir);
        before(x, file, bad, &info, held, &last);
        if (!x->ok) {
                return;
        }
        EXPECT(x, stop_all(x), "stopping: %s", x->h.errmsg);
        /* A changed byte is refused and leaves the data dir empty. */
        EXPECT(x, restore_node(x, 1, bad) == 1, "a corrupt backup restored");
        EXPECT(x, dir_empty(x->h.nodes[0].data_dir), "left files behind");
        for (id = 1; id <= x->h.n; id++) {
                EXPECT(x, restore_node(x, id, file) == 0, "node %u: %s", id,
                       x->h.errmsg);
        }
        /* Never over a node's data. */
        EXPECT(x, restore_node(x, 2, file) == 1, "restored over data");
        for (id = 1; id <= x->h.n; id++) {
                EXPECT(x, harness_restart(&x->h, id) == 0, "%s", x->h.errmsg);
        }
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0,
               "restored cluster: %s", x->h.errmsg);
        after(x, &info, held, last);
}

/* Locks the chunked backup holds, and the bytes of each name: together
 * well over one BACKUP_CHUNK's 64 KiB of snapshot. */
#define BIG_LOCKS 500
#define BIG_NAME  200

/* The name of big lock `i`: hex of a simple generator, so that the
 * snapshot does not compress below one chunk. */
static void big_name(char *name, unsigned i)
{
        uint64_t v = 0x9e3779b97f4a7c15ULL * (i + 1);
        size_t n = (size_t)snprintf(name, BIG_NAME + 1, "bk-big-%04u-", i);

        while (n < BIG_NAME) {
                v ^= v << 13;
                v ^= v >> 7;
                v ^= v << 17;
                name[n++] = "0123456789abcdef"[v & 15];
        }
        name[n] = '\0';
}

void sc_backup_chunks(struct ctx *x)
{
        struct baton_backup_info info, again;
        baton_client *c = admin(x);
        char file[PATH_MAX], name[BIG_NAME + 1];
        uint64_t token;
        unsigned i;
        int rv = c != NULL ? 0 : BATON_ENOMEM;

        EXPECT(x, c != NULL, "no client");
        for (i = 0; i < BIG_LOCKS && rv == 0; i++) {
                big_name(name, i);
                rv = baton_acquire(c, name, 1, BATON_WAIT_TRY, &token);
        }
        snprintf(file, sizeof file, "%s/chunks.bak", x->h.dir);
        rv = rv != 0 ? rv : baton_backup_save(c, file, 0, &info);
        baton_client_destroy(c);
        EXPECT(x, rv == 0, "lock %u or the backup: %s", i, baton_strerror(rv));
        printf("# backup: %" PRIu64 " bytes, %" PRIu64 " locks\n", info.size,
               info.locks);
        EXPECT(x, info.size > PROTO_BACKUP_CHUNK_MAX,
               "%" PRIu64 " bytes fit in one chunk: nothing to test",
               info.size);
        EXPECT(x, info.locks >= BIG_LOCKS && info.sessions >= 1,
               "the backup holds %" PRIu64 " locks, not %d", info.locks,
               BIG_LOCKS);
        rv = baton_backup_inspect(file, &again);
        EXPECT(x, rv == 0 && memcmp(&again, &info, sizeof again) == 0,
               "inspect: %s", baton_strerror(rv));
}

/* A client of node `id` alone. */
static baton_client *client_of(struct ctx *x, unsigned id)
{
        struct baton_options o;
        baton_client *c = NULL;

        baton_options_init(&o);
        o.request_timeout_ms = OP_MS;
        o.ttl_ms = 600000;
        o.client_name = "sc_recover";
        return baton_client_create(&c, harness_client_address(&x->h, id), &o) ==
                       0
                   ? c
                   : NULL;
}

/* The majority commits grants that node `s` never receives, then is lost
 * for good. `s` is killed rather than paused: a paused process still has the
 * leader's AppendEntries queued in its socket, and would apply them when
 * resumed. The last token the majority handed out. */
static uint64_t lose_majority(struct ctx *x, unsigned s, uint64_t *held)
{
        baton_client *c = admin(x);
        uint64_t last = 0;
        unsigned id;
        int i, rv;

        if (c == NULL) {
                return 0;
        }
        rv = baton_acquire(c, "rc-a", 1, BATON_WAIT_TRY, held);
        if (rv == 0 && (harness_wait_healthy(&x->h, HEALTHY_MS, NULL) != 0 ||
                        harness_kill(&x->h, s, NULL) != 0)) {
                rv = BATON_EIO;
        }
        for (i = 0; i < 5 && rv == 0; i++) {
                rv = baton_acquire(c, "rc-lost", 1, BATON_WAIT_TRY, &last);
                rv = rv != 0 ? rv : baton_release(c, "rc-lost", 1, last);
        }
        baton_client_destroy(c);
        for (id = 1; id <= x->h.n; id++) {
                if (id != s) {
                        harness_kill(&x->h, id, NULL);
                }
        }
        return rv == 0 ? last : 0;
}

/* Nodes other than `s` join again with empty data dirs. */
static bool add_back(struct ctx *x, baton_client *c, unsigned s)
{
        char lost[PATH_MAX + 8];
        unsigned id;

        for (id = 1; id <= x->h.n; id++) {
                struct harness_node *nd = &x->h.nodes[id - 1];
                if (id == s) {
                        continue;
                }
                snprintf(lost, sizeof lost, "%s.lost", nd->data_dir);
                nd->join = true;
                if (rename(nd->data_dir, lost) != 0 ||
                    harness_restart(&x->h, id) != 0 ||
                    baton_member_add(c, id, nd->raft_address,
                                     nd->client_address) != 0) {
                        return false;
                }
        }
        return harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0;
}

void sc_recover_majority(struct ctx *x)
{
        struct baton_lock_info locks[8];
        uint64_t held = 0, lost, token = 0;
        const char *flags[] = {"--recover"};
        baton_client *c;
        unsigned s;
        size_t n = 0;
        int more, st = -1, rv;

        EXPECT(x,
               harness_start(&x->h, 3, NULL, x->run->argv0,
                             x->run->base_port) == 0 &&
                   harness_wait_healthy(&x->h, HEALTHY_MS, &s) == 0,
               "cannot start: %s", x->h.errmsg);
        x->have_cluster = true;
        s = s % 3 + 1; /* a follower survives */
        lost = lose_majority(x, s, &held);
        EXPECT(x, lost != 0, "before the loss: %s", x->h.errmsg);
        EXPECT(x,
               harness_run_once(&x->h, s, flags, 1, 30000, &st) == 0 && st == 0,
               "batond --recover: exit %d %s", st, x->h.errmsg);
        EXPECT(x, harness_restart(&x->h, s) == 0, "%s", x->h.errmsg);
        /* Serving before the client asks: a node not listening yet would
         * refuse its one endpoint, and libbaton says so at once. */
        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, NULL) == 0,
               "the recovered node: %s", x->h.errmsg);
        c = client_of(x, s);
        EXPECT(x, c != NULL, "no client");
        rv = baton_list(c, "rc-a", locks, 8, &n, &more);
        rv = rv != 0 ? rv
                     : baton_acquire(c, "rc-new", 1, BATON_WAIT_TRY, &token);
        if (rv != 0 || n != 1 || locks[0].token != held || token <= lost ||
            !add_back(x, c, s)) {
                baton_client_destroy(c);
                EXPECT(x, false,
                       "recovered node %u: %s, %zu locks, token %" PRIu64
                       " after %" PRIu64 " lost; %s",
                       s, baton_strerror(rv), n, token, lost, x->h.errmsg);
        }
        baton_client_destroy(c);
        printf("# recovered node %u: token gap %" PRIu64
               " over the lost majority's last (%" PRIu64 ")\n",
               s, token - lost, lost);
}

/* After an online backup (batonctl snapshot save), the node that made it
 * says the backup's index, or a later snapshot's, in baton_snapshot_index:
 * before, it said only raft's own snapshots, 0 on a cluster that had
 * taken none yet. */
void sc_backup_metric(struct ctx *x)
{
        struct baton_backup_info info;
        baton_client *c;
        char file[512];
        double snap = 0;
        unsigned leader;
        int rv;

        EXPECT(x, harness_wait_healthy(&x->h, HEALTHY_MS, &leader) == 0, "%s",
               x->h.errmsg);
        snprintf(file, sizeof file, "%s/metric-backup.snap", x->h.dir);
        c = admin(x);
        EXPECT(x, c != NULL, "no client");
        rv = baton_backup_save(c, file, 0, &info);
        baton_client_destroy(c);
        EXPECT(x, rv == 0, "snapshot save: %s", baton_strerror(rv));
        EXPECT(x, metric(x, leader, "baton_snapshot_index", &snap, __LINE__),
               "scrape failed");
        printf("# backup at index %" PRIu64 "; leader %u's "
               "baton_snapshot_index %.0f\n",
               info.index, leader, snap);
        EXPECT(x, snap >= (double)info.index && info.index > 0,
               "baton_snapshot_index %.0f after a backup at %" PRIu64, snap,
               info.index);
}
