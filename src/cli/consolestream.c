/* The console's live stream of events, as Server-Sent Events. */
#include "consolestream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consoleapi.h"

/* How long one read of the stream waits for an event, and after how many
 * such empty waits a comment goes out (to keep proxies and the browser
 * from giving up on a quiet stream). */
#define POLL_MS         1000
#define HEARTBEAT_POLLS 15

struct stream {
        baton_client *c;
        baton_watch *w; /* NULL: not opened yet, or ended */
        uint64_t from_index;
        uint32_t from_ord;
        int ended; /* the `end` event went out */
        unsigned quiet;
        volatile sig_atomic_t *stopping;
};

/* Writes `event`'s lines into buf; their length, or 0 when they do not
 * fit (the stream then ends). */
static size_t put_json(char *buf, size_t max, const char *head, json_t *v)
{
        char *body = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
        int n = -1;

        json_decref(v);
        if (body != NULL) {
                n = snprintf(buf, max, "%sdata: %s\n\n", head, body);
                free(body);
        }
        return n > 0 && (size_t)n < max ? (size_t)n : 0;
}

static ssize_t end(struct stream *s, int rv, char *buf, size_t max)
{
        int status;
        size_t n;

        s->ended = 1;
        n = put_json(buf, max, "event: end\n", consoleapi_error(rv, &status));
        return n > 0 ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static ssize_t next(void *cls, uint64_t pos, char *buf, size_t max)
{
        struct stream *s = cls;
        struct baton_event ev;
        char head[64];
        size_t n;
        int rv;

        (void)pos;
        if (s->ended || *s->stopping) {
                return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (s->w == NULL) {
                rv = baton_watch_open(s->c, "", BATON_WATCH_PREFIX,
                                      s->from_index, s->from_ord, &s->w);
                if (rv != 0) {
                        return end(s, rv, buf, max);
                }
                return snprintf(buf, max, ": watching\n\n");
        }
        /* Answering 0 is not allowed with the daemon's own threads: wait
         * here, looking up at `stopping` between short waits. */
        do {
                rv = baton_watch_next(s->w, &ev, POLL_MS);
        } while (rv == BATON_ETIMEDOUT && !*s->stopping &&
                 ++s->quiet < HEARTBEAT_POLLS);
        if (*s->stopping) {
                return MHD_CONTENT_READER_END_OF_STREAM;
        }
        s->quiet = 0;
        if (rv == BATON_ETIMEDOUT) {
                return snprintf(buf, max, ": quiet\n\n");
        }
        if (rv != 0) {
                return end(s, rv, buf, max);
        }
        snprintf(head, sizeof head, "id: %" PRIu64 ":%" PRIu32 "\n", ev.index,
                 ev.ord);
        n = put_json(buf, max, head, consoleapi_event(&ev));
        return n > 0 ? (ssize_t)n : end(s, BATON_ENOMEM, buf, max);
}

static void done(void *cls)
{
        struct stream *s = cls;

        baton_watch_close(s->w);
        free(s);
}

struct MHD_Response *consolestream_open(baton_client *c, const char *last_id,
                                        volatile sig_atomic_t *stopping)
{
        struct stream *s = calloc(1, sizeof *s);
        struct MHD_Response *r;

        if (s == NULL) {
                return NULL;
        }
        s->c = c;
        s->stopping = stopping;
        if (last_id != NULL && sscanf(last_id, "%" SCNu64 ":%" SCNu32,
                                      &s->from_index, &s->from_ord) != 2) {
                s->from_index = 0;
                s->from_ord = 0;
        }
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, next, s,
                                              done);
        if (r == NULL) {
                free(s);
                return NULL;
        }
        MHD_add_response_header(r, "Content-Type", "text/event-stream");
        return r;
}
