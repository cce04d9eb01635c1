/* A watcher of every lock on one simulated node, through batond's request
 * core (simhost.h), and the check of what it was sent against the node's
 * own feed of watch events. */
#include "hostwatch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/baton.h"
#include "../../src/proto/reply.h"
#include "../../src/proto/watch.h"
#include "sim.h"

void hostwatch_init(struct hostwatch *w, struct simhost *h, unsigned node)
{
        memset(w, 0, sizeof *w);
        w->h = h;
        w->node = node;
}

void hostwatch_close(struct hostwatch *w)
{
        simhost_disconnect(w->conn);
        free(w->got);
        free(w->bodies);
        free(w->segs);
        memset(w, 0, sizeof *w);
}

static void surprise(struct hostwatch *w, const char *what)
{
        if (w->errmsg[0] == '\0') {
                snprintf(w->errmsg, sizeof w->errmsg, "watcher of n%u: %s",
                         w->node, what);
        }
}

/* The watch ended or was refused: from now, a while later. */
static void restart(struct hostwatch *w, uint64_t now, int status)
{
        w->compacted += status == BATON_ECOMPACTED;
        w->watch_id = 0;
        w->watching = false;
        w->resume = false;
        w->retry_at = now + 50;
}

static void on_result(struct hostwatch *w, const struct proto_header *hdr,
                      const uint8_t *body, uint64_t now)
{
        struct proto_result res;

        if (proto_read_result(body, hdr->length, hdr->flags, &res) != 0) {
                surprise(w, "a RESULT that does not decode");
                return;
        }
        if (res.status != 0 || res.kind != PROTO_KIND_WATCHING || w->watching) {
                restart(w, now, res.status);
                return;
        }
        if (!sim_grow((void **)&w->segs, &w->cap_segs, w->n_segs + 1,
                      sizeof *w->segs)) {
                surprise(w, "out of memory");
                return;
        }
        w->segs[w->n_segs++] = (struct hostwatch_segment){res.index, res.count};
        w->index = res.index;
        w->ord = res.count;
        w->watching = true;
        w->resume = true;
}

static void on_event(struct hostwatch *w, const struct proto_header *hdr,
                     const uint8_t *body)
{
        struct proto_watch_event e;
        struct hostwatch_event *g;

        if (proto_read_watch_event(body, hdr->length, &e) != 0) {
                surprise(w, "a WATCH_EVENT that does not decode");
                return;
        }
        if (hdr->id == 0 && (!w->watching || e.index < w->index ||
                             (e.index == w->index && e.ord <= w->ord))) {
                /* A new event for the connection's watches: this one
                 * wants it only after its position (docs/protocol.md). */
                return;
        }
        if (!w->watching) {
                surprise(w, "an event before its WATCHING");
                return;
        }
        if (!sim_grow((void **)&w->got, &w->cap_got, w->n_got + 1,
                      sizeof *w->got) ||
            !sim_grow((void **)&w->bodies, &w->cap_bodies,
                      w->n_bodies + hdr->length, 1)) {
                surprise(w, "out of memory");
                return;
        }
        g = &w->got[w->n_got++];
        g->index = e.index;
        g->ord = e.ord;
        g->segment = w->n_segs - 1;
        g->at = w->n_bodies;
        g->len = hdr->length;
        memcpy(w->bodies + w->n_bodies, body, hdr->length);
        w->n_bodies += hdr->length;
        w->index = e.index;
        w->ord = e.ord;
}

/* A WATCH from where it stands (or from now). */
static void ask(struct hostwatch *w)
{
        uint8_t frame[PROTO_HEADER_SIZE + 64];
        struct proto_watch req;
        size_t n;

        memset(&req, 0, sizeof req);
        req.flags = PROTO_WATCH_PREFIX;
        if (w->resume) {
                req.from_index = w->index;
                req.from_ord = w->ord;
        }
        req.name.p = "";
        w->watch_id = ++w->next_id;
        n = proto_write_watch(frame, sizeof frame, w->watch_id, &req);
        simhost_send(w->conn, frame, n);
}

void hostwatch_drive(struct hostwatch *w, uint64_t now)
{
        struct proto_header hdr;
        const uint8_t *body;

        while (w->conn != NULL && simhost_next(w->conn, &hdr, &body)) {
                if (hdr.type == PROTO_WATCH_EVENT && hdr.id == 0) {
                        on_event(w, &hdr, body);
                        continue;
                }
                if (hdr.id != w->watch_id || w->watch_id == 0) {
                        continue;
                }
                if (hdr.type == PROTO_RESULT) {
                        on_result(w, &hdr, body, now);
                } else if (hdr.type == PROTO_WATCH_EVENT) {
                        on_event(w, &hdr, body);
                } else {
                        restart(w, now, 0); /* NOT_LEADER, ERROR */
                }
        }
        if (w->conn != NULL && simhost_closed(w->conn)) {
                /* Its node went: from where it stood, once it is back. */
                simhost_disconnect(w->conn);
                w->conn = NULL;
                w->watch_id = 0;
                w->watching = false;
                w->retry_at = now + 50;
        }
        if (w->watch_id != 0 || now < w->retry_at) {
                return;
        }
        if (w->conn == NULL) {
                w->conn = simhost_connect(w->h, w->node);
        }
        if (w->conn == NULL) {
                w->retry_at = now + 50;
                return;
        }
        ask(w);
}

void hostwatch_drop(struct hostwatch *w, uint64_t now)
{
        simhost_disconnect(w->conn);
        w->conn = NULL;
        w->watch_id = 0;
        w->watching = false;
        w->retry_at = now;
}

struct hostwatch_feed_event *hostwatch_feed(const struct simnode *n,
                                            size_t *count)
{
        struct hostwatch_feed_event *f =
            calloc(n->n_watch_events + 1, sizeof *f);
        size_t at = 0, k = 0;

        *count = 0;
        if (f == NULL) {
                return NULL;
        }
        while (at + PROTO_HEADER_SIZE <= n->n_watched &&
               k < n->n_watch_events) {
                struct proto_header hdr;
                struct proto_watch_event e;
                const uint8_t *body = n->watched + at + PROTO_HEADER_SIZE;

                if (proto_header_decode(&hdr, n->watched + at,
                                        PROTO_MAX_BODY) != 0 ||
                    proto_read_watch_event(body, hdr.length, &e) != 0) {
                        break;
                }
                f[k++] = (struct hostwatch_feed_event){e.index, e.ord, body,
                                                       hdr.length};
                at += PROTO_HEADER_SIZE + hdr.length;
        }
        *count = k;
        return f;
}

size_t hostwatch_feed_after(const struct hostwatch_feed_event *f, size_t n,
                            uint64_t index, uint32_t ord)
{
        size_t k = 0;

        while (k < n && (f[k].index < index ||
                         (f[k].index == index && f[k].ord <= ord))) {
                k++;
        }
        return k;
}

int hostwatch_check(const struct hostwatch *w, const struct simnode *n,
                    char *reason, size_t cap)
{
        size_t nf, k = 0, p = 0;
        struct hostwatch_feed_event *f;
        unsigned s;
        int rv = 0;

        if (w->errmsg[0] != '\0') {
                snprintf(reason, cap, "%s", w->errmsg);
                return -1;
        }
        f = hostwatch_feed(n, &nf);
        if (f == NULL) {
                snprintf(reason, cap, "out of memory reading a feed");
                return -1;
        }
        for (s = 0; s < w->n_segs && rv == 0; s++) {
                p = hostwatch_feed_after(f, nf, w->segs[s].index,
                                         w->segs[s].ord);
                for (; k < w->n_got && w->got[k].segment == s; k++, p++) {
                        const struct hostwatch_event *g = &w->got[k];

                        if (p < nf && g->index == f[p].index &&
                            g->ord == f[p].ord && g->len == f[p].len &&
                            memcmp(w->bodies + g->at, f[p].body, g->len) == 0) {
                                continue;
                        }
                        snprintf(reason, cap,
                                 "watcher of n%u was sent the event at "
                                 "%" PRIu64 "/%" PRIu32 " where the node's "
                                 "feed has %s %" PRIu64 "/%" PRIu32,
                                 w->node, g->index, g->ord,
                                 p < nf ? "the one at" : "nothing more, not",
                                 p < nf ? f[p].index : 0,
                                 p < nf ? f[p].ord : 0);
                        rv = -1;
                        break;
                }
        }
        if (rv == 0 && w->watching && w->n_segs > 0 && p < nf) {
                snprintf(reason, cap,
                         "watcher of n%u, still watching, was never sent the "
                         "event at %" PRIu64 "/%" PRIu32 " (%zu of the feed's "
                         "%zu left)",
                         w->node, f[p].index, f[p].ord, nf - p, nf);
                rv = -1;
        }
        free(f);
        return rv;
}
