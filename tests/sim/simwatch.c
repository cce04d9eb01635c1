/* Watches through libbaton's real client cores in test_simclient, and
 * their check against node 0's feed. */
#include "simwatch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/lib/hmap.h"
#include "hostwatch.h"
#include "sim.h"
#include "simkinds.h"

/* Prefixes a watch may take besides the names themselves. */
static const char *const prefixes[] = {"", "rw", "sem", "vote", "a", "gam"};
#define N_PREFIXES (sizeof prefixes / sizeof prefixes[0])

void simwatches_init(struct simwatches *ws, unsigned n_watchers, uint64_t seed)
{
        memset(ws, 0, sizeof *ws);
        ws->rng.s = seed * 0x9E3779B97F4A7C15ULL + 0x57A7C4;
        ws->n_watchers =
            n_watchers < SIMWATCH_CLIENTS ? n_watchers : SIMWATCH_CLIENTS;
        for (unsigned i = 0; i < ws->n_watchers; i++) {
                ws->next_at[i] = -1; /* at the client's first step */
        }
}

void simwatches_free(struct simwatches *ws)
{
        for (unsigned i = 0; i < ws->n; i++) {
                free(ws->w[i].got);
                free(ws->w[i].bodies);
        }
        ws->n = 0;
}

static void wrong(struct simwatches *ws, const char *what,
                  const struct simwatch *w)
{
        if (ws->errmsg[0] == '\0') {
                snprintf(ws->errmsg, sizeof ws->errmsg,
                         "watch %u of client %u (%s \"%.*s\"): %s",
                         (unsigned)(w - ws->w), w->client,
                         w->prefix ? "prefix" : "name", (int)w->name_len,
                         w->name, what);
        }
}

/* ------------------------------------------------------------------------
 * Opening and closing, as baton_watch_open() and baton_watch_close()
 */

/* Where a new watch of client `c` (0-based) starts: now (0), after the
 * last event the client was given, or at an older index. */
static void draw_start(struct simwatches *ws, unsigned c, uint64_t *index,
                       uint32_t *ord)
{
        unsigned pick = rng_below(&ws->rng, 100);

        *index = 0;
        *ord = 0;
        if (pick >= 55 && pick < 80 && ws->last_index[c] != 0) {
                *index = ws->last_index[c];
                *ord = ws->last_ord[c];
        } else if (pick >= 80 && ws->high_index > 1) {
                *index = rng_range(&ws->rng, 1, ws->high_index);
        }
}

static void open_watch(struct simwatches *ws, struct simclient *cl, int64_t now)
{
        struct simwatch *w = &ws->w[ws->n];
        const char *name;
        uint64_t from_index;
        uint32_t from_ord;

        memset(w, 0, sizeof *w);
        w->client = cl->id;
        w->prefix = rng_chance(&ws->rng, 50);
        name = w->prefix ? prefixes[rng_below(&ws->rng, N_PREFIXES)]
                         : kinds_names[rng_below(&ws->rng, KINDS_NAMES)];
        w->name_len = (uint8_t)strlen(name);
        memcpy(w->name, name, w->name_len);
        draw_start(ws, cl->id - 1, &from_index, &from_ord);
        w->r = request_watch(w->name, w->name_len,
                             w->prefix ? PROTO_WATCH_PREFIX : 0, from_index,
                             from_ord);
        if (w->r == NULL) {
                wrong(ws, "out of memory", w);
                return;
        }
        if (from_index != 0) {
                w->started = true;
                w->from_index = from_index;
                w->from_ord = from_ord;
        }
        w->close_at = now + (int64_t)rng_range(&ws->rng, 1000, 9000);
        registry_submit(&cl->core.registry, w->r, now);
        ws->n++;
        ws->opened++;
}

/* Let go of `w`'s request: an UNWATCH of it first, if it is running on
 * the connection (libbaton's watch.c does the same), else the node keeps
 * sending until the connection closes. */
static void close_watch(struct simclient *cl, struct simwatch *w, int64_t now)
{
        struct request *r = w->r;

        w->sends = r->sends;
        if (r->state != REQUEST_DONE && r->sends != 0 &&
            r->gen == cl->core.link.gen) {
                struct request *u = request_u64(PROTO_UNWATCH, r->id);

                if (u != NULL) {
                        u->kind = REQUEST_UNWATCH;
                        registry_submit(&cl->core.registry, u, now);
                }
        }
        registry_drop(&cl->core.registry, r);
        w->r = NULL;
}

void simwatch_step(struct simwatches *ws, struct simclient *cl, int64_t now)
{
        unsigned c = cl->id - 1, open = 0;

        if (c >= ws->n_watchers) {
                return;
        }
        for (unsigned i = 0; i < ws->n; i++) {
                struct simwatch *w = &ws->w[i];

                if (w->client != cl->id || w->r == NULL) {
                        continue;
                }
                if (w->status != 0) {
                        /* Ended in the core: read, and let go. */
                        close_watch(cl, w, now);
                        ws->next_at[c] =
                            now + (int64_t)rng_range(&ws->rng, 50, 500);
                } else if (now >= w->close_at && !ws->stopping) {
                        close_watch(cl, w, now);
                        w->status = SIMWATCH_CLOSED;
                        ws->closed++;
                        ws->next_at[c] =
                            now + (int64_t)rng_range(&ws->rng, 100, 1500);
                } else {
                        open++;
                }
        }
        if (!ws->stopping && open < SIMWATCH_PER && now >= ws->next_at[c] &&
            ws->n < SIMWATCH_MAX) {
                open_watch(ws, cl, now);
                ws->next_at[c] = now + (int64_t)rng_range(&ws->rng, 200, 2000);
        }
}

int64_t simwatch_next(const struct simwatches *ws, const struct simclient *cl)
{
        unsigned c = cl->id - 1;
        int64_t t = INT64_MAX;

        if (c >= ws->n_watchers || ws->stopping) {
                return t;
        }
        for (unsigned i = 0; i < ws->n; i++) {
                const struct simwatch *w = &ws->w[i];

                if (w->client == cl->id && w->r != NULL) {
                        t = w->close_at < t ? w->close_at : t;
                }
        }
        return ws->next_at[c] < t ? ws->next_at[c] : t;
}

/* ------------------------------------------------------------------------
 * What the core delivers
 */

static struct simwatch *watch_of(struct simwatches *ws,
                                 const struct simclient *cl,
                                 const struct request *r)
{
        for (unsigned i = 0; i < ws->n; i++) {
                if (ws->w[i].r == r && ws->w[i].client == cl->id) {
                        return &ws->w[i];
                }
        }
        return NULL;
}

/* Keep `e` as its WATCH_EVENT body. */
static void keep(struct simwatches *ws, struct simwatch *w,
                 const struct proto_watch_event *e)
{
        uint8_t frame[PROTO_HEADER_SIZE + PROTO_WATCH_EVENT_MAX];
        size_t len = proto_write_watch_event(frame, sizeof frame, 0, e);
        struct simwatch_got *g;

        if (len < PROTO_HEADER_SIZE) {
                wrong(ws, "an event that does not encode", w);
                return;
        }
        len -= PROTO_HEADER_SIZE;
        if (!sim_grow((void **)&w->got, &w->cap_got, w->n_got + 1,
                      sizeof *w->got) ||
            !sim_grow((void **)&w->bodies, &w->cap_bodies, w->n_bodies + len,
                      1)) {
                wrong(ws, "out of memory", w);
                return;
        }
        g = &w->got[w->n_got++];
        *g = (struct simwatch_got){e->index, e->ord, w->n_bodies, len};
        memcpy(w->bodies + w->n_bodies, frame + PROTO_HEADER_SIZE, len);
        w->n_bodies += len;
}

void simwatch_event(struct simwatches *ws, struct simclient *cl,
                    struct request *r, const struct proto_watch_event *e)
{
        struct simwatch *w = watch_of(ws, cl, r);

        if (w == NULL) {
                return; /* a core closing after the run let go */
        }
        if (e == NULL) {
                w->status = r->status != 0 ? r->status : BATON_EIO;
                w->sends = r->sends;
                ws->compacted += r->status == BATON_ECOMPACTED;
                return;
        }
        if (w->status != 0) {
                wrong(ws, "an event after its end", w);
                return;
        }
        if (!w->started) {
                wrong(ws, "an event before its start was known", w);
                return;
        }
        keep(ws, w, e);
        ws->events++;
        ws->last_index[cl->id - 1] = e->index;
        ws->last_ord[cl->id - 1] = e->ord;
        if (e->index > ws->high_index) {
                ws->high_index = e->index;
        }
}

void simwatch_frame(struct simwatches *ws, struct simclient *cl)
{
        for (unsigned i = 0; i < ws->n; i++) {
                struct simwatch *w = &ws->w[i];
                struct proto_watch q;

                if (w->client != cl->id || w->r == NULL || w->started ||
                    !w->r->watching) {
                        continue;
                }
                if (proto_read_watch(w->r->frame + PROTO_HEADER_SIZE,
                                     w->r->len - PROTO_HEADER_SIZE, &q) != 0) {
                        wrong(ws, "its WATCH frame does not decode", w);
                        continue;
                }
                /* request_watch_started() wrote the first WATCHING's
                 * position into the frame it resends. */
                w->started = true;
                w->from_index = q.from_index;
                w->from_ord = q.from_ord;
        }
}

bool simwatches_settled(const struct simwatches *ws)
{
        for (unsigned i = 0; i < ws->n; i++) {
                const struct simwatch *w = &ws->w[i];

                if (w->r != NULL && w->status == 0 && !w->r->watching) {
                        return false;
                }
        }
        return true;
}

void simwatches_let_go(struct simwatches *ws)
{
        for (unsigned i = 0; i < ws->n; i++) {
                if (ws->w[i].r != NULL) {
                        ws->w[i].sends = ws->w[i].r->sends;
                        ws->w[i].r = NULL;
                }
        }
}

/* ------------------------------------------------------------------------
 * The check
 */

/* A feed event's name. */
struct feed_name {
        const char *p;
        uint8_t len;
};

static bool matches(const struct simwatch *w, const struct feed_name *n)
{
        if (w->prefix ? n->len < w->name_len : n->len != w->name_len) {
                return false;
        }
        return memcmp(n->p, w->name, w->name_len) == 0;
}

/* The first event of the feed at or after `p` that `w` watches. */
static size_t next_match(const struct simwatch *w, const struct feed_name *fn,
                         size_t nf, size_t p)
{
        while (p < nf && !matches(w, &fn[p])) {
                p++;
        }
        return p;
}

/* How many times its WATCH was sent, so far. */
static size_t sends_of(const struct simwatch *w)
{
        return w->r != NULL ? w->r->sends : w->sends;
}

static const char *end_of(const struct simwatch *w)
{
        if (w->status == 0) {
                return "open";
        }
        return w->status == SIMWATCH_CLOSED ? "closed"
                                            : baton_strerror(w->status);
}

/* One watch against the feed `f` (names `fn`). */
static int check_one(struct simwatches *ws, const struct simwatch *w,
                     const struct hostwatch_feed_event *f,
                     const struct feed_name *fn, size_t nf, char *reason,
                     size_t cap)
{
        size_t p, k;

        if (w->status < 0 && w->status != BATON_ECOMPACTED) {
                wrong(ws, "ended with a status other than ECOMPACTED", w);
        }
        if (!w->started) {
                /* keep() let no event in; but an open one must start. */
                if (ws->whole > 0 && w->status == 0) {
                        wrong(ws, "still open, never started", w);
                }
                return 0;
        }
        p = hostwatch_feed_after(f, nf, w->from_index, w->from_ord);
        for (k = 0; k < w->n_got; k++, p++) {
                const struct simwatch_got *g = &w->got[k];

                p = next_match(w, fn, nf, p);
                if (p < nf && g->len == f[p].len &&
                    memcmp(w->bodies + g->at, f[p].body, g->len) == 0) {
                        continue;
                }
                snprintf(reason, cap,
                         "watch %u of client %u (%s \"%.*s\" after %" PRIu64
                         "/%" PRIu32 ", %s, %zu sends): its event %zu of %zu "
                         "is %" PRIu64 "/%" PRIu32 " where node 0's feed has "
                         "%s %" PRIu64 "/%" PRIu32,
                         (unsigned)(w - ws->w), w->client,
                         w->prefix ? "prefix" : "name", (int)w->name_len,
                         w->name, w->from_index, w->from_ord, end_of(w),
                         sends_of(w), k + 1, w->n_got, g->index, g->ord,
                         p < nf ? "the one at" : "nothing more, not",
                         p < nf ? f[p].index : 0, p < nf ? f[p].ord : 0);
                return -1;
        }
        p = next_match(w, fn, nf, p);
        if (w->status == 0 && p < (ws->whole < nf ? ws->whole : nf)) {
                snprintf(reason, cap,
                         "watch %u of client %u (%s \"%.*s\" after %" PRIu64
                         "/%" PRIu32 ", %zu sends), still open, was given %zu "
                         "events but never the one at %" PRIu64 "/%" PRIu32,
                         (unsigned)(w - ws->w), w->client,
                         w->prefix ? "prefix" : "name", (int)w->name_len,
                         w->name, w->from_index, w->from_ord, sends_of(w),
                         w->n_got, f[p].index, f[p].ord);
                return -1;
        }
        ws->caught_up += p == nf;
        ws->resumed += sends_of(w) > 1 && w->n_got > 0;
        return 0;
}

int simwatches_check(struct simwatches *ws, const struct simnode *n,
                     char *reason, size_t cap)
{
        size_t nf, i;
        struct hostwatch_feed_event *f = hostwatch_feed(n, &nf);
        struct feed_name *fn = calloc(nf + 1, sizeof *fn);
        int rv = 0;

        ws->caught_up = ws->resumed = 0;
        if (f == NULL || fn == NULL) {
                free(f);
                free(fn);
                snprintf(reason, cap, "out of memory reading node 0's feed");
                return -1;
        }
        for (i = 0; i < nf; i++) {
                struct proto_watch_event e;

                if (proto_read_watch_event(f[i].body, f[i].len, &e) == 0) {
                        fn[i] = (struct feed_name){e.name.p, e.name.len};
                }
        }
        for (i = 0; i < ws->n && rv == 0; i++) {
                rv = check_one(ws, &ws->w[i], f, fn, nf, reason, cap);
        }
        if (rv == 0 && ws->errmsg[0] != '\0') {
                snprintf(reason, cap, "%s", ws->errmsg);
                rv = -1;
        }
        free(f);
        free(fn);
        return rv;
}

bool simwatches_break(struct simwatches *ws, bool last)
{
        for (unsigned i = 0; i < ws->n; i++) {
                struct simwatch *w = &ws->w[i];
                size_t k = last ? w->n_got - 1 : (w->n_got - 1) / 2;

                if (w->n_got < (last ? 1u : 2u) || (last && w->status != 0)) {
                        continue;
                }
                memmove(&w->got[k], &w->got[k + 1],
                        (w->n_got - k - 1) * sizeof *w->got);
                w->n_got--;
                return true;
        }
        return false;
}

uint64_t simwatches_digest(const struct simwatches *ws, uint64_t d)
{
        for (unsigned i = 0; i < ws->n; i++) {
                const struct simwatch *w = &ws->w[i];

                d = hash_u64(d ^ hash_bytes(w->bodies, w->n_bodies));
                d = hash_u64(d ^ (uint64_t)(uint32_t)w->status ^
                             ((uint64_t)w->from_index << 20));
        }
        return d;
}
