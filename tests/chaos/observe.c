/* A chaos worker's observer: one watch, its events as history lines. */
#include "observe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history_out.h"

/* How long one baton_watch_next() waits before the thread looks at its
 * stop flag again. */
#define OBSERVE_POLL_MS 200

/* An observer's lines carry this incarnation in p= (w * 1000 + 999): they
 * are no operation's, and the checkers read them apart (f=observe). */
#define OBSERVE_INCARNATION 999

static void observe_nap(int64_t ms)
{
        struct timespec ts = {.tv_sec = ms / 1000,
                              .tv_nsec = (ms % 1000) * 1000000};

        nanosleep(&ts, NULL);
}

static void start_line(const struct observer *o, struct history_line *l,
                       const char *type, const char *key)
{
        history_line_start(l, history_now_ns(),
                           (uint64_t)o->id * 1000 + OBSERVE_INCARNATION, o->id,
                           type, "observe", key);
}

static void emit(const struct observer *o, struct history_line *l)
{
        if (history_line_write(o->hist_fd, l) != 0) {
                fprintf(stderr,
                        "chaos-worker %d: observer: history write: %s\n", o->id,
                        strerror(errno));
                exit(1);
        }
}

static const char *kind_name(int kind)
{
        switch (kind) {
        case BATON_EVENT_GRANTED:
                return "granted";
        case BATON_EVENT_RELEASED:
                return "released";
        case BATON_EVENT_PROCLAIMED:
                return "proclaimed";
        default:
                return "unknown";
        }
}

static const char *mode_name(int mode)
{
        switch (mode) {
        case BATON_MODE_EXCLUSIVE:
                return "exclusive";
        case BATON_MODE_SHARED:
                return "shared";
        case BATON_MODE_PERMITS:
                return "semaphore";
        case BATON_MODE_LEADER:
                return "leader";
        default:
                return "unknown";
        }
}

/* `s` with spaces, '=' and control bytes made '_', for one field. */
static void field_safe(char *out, size_t cap, const char *s)
{
        size_t i;

        for (i = 0; s[i] != '\0' && i + 1 < cap; i++) {
                unsigned char c = (unsigned char)s[i];
                out[i] = c <= ' ' || c == '=' || c == 0x7f ? '_' : (char)c;
        }
        out[i] = '\0';
}

static void log_event(const struct observer *o, const struct baton_event *e)
{
        struct history_line l;
        char name[OBSERVE_NAME_CAP], value[BATON_VALUE_MAX + 1];

        field_safe(name, sizeof name, e->name);
        start_line(o, &l, "event", name[0] != '\0' ? name : "-");
        history_line_str(&l, "kind", kind_name(e->kind));
        history_line_u64(&l, "index", e->index);
        history_line_u64(&l, "ord", e->ord);
        history_line_u64(&l, "cause", (uint64_t)e->cause);
        history_line_str(&l, "mode", mode_name(e->mode));
        history_line_u64(&l, "session", e->session);
        history_line_u64(&l, "owner", e->owner);
        history_line_u64(&l, "token", e->token);
        if (e->mode == BATON_MODE_PERMITS) {
                history_line_u64(&l, "permits", e->permits);
        }
        if (e->value[0] != '\0') {
                field_safe(value, sizeof value, e->value);
                history_line_str(&l, "value", value);
        }
        emit(o, &l);
}

/* "open": a watch began, from now or after the last event seen. */
static void log_open(const struct observer *o, bool from_last, uint64_t index,
                     uint32_t ord)
{
        struct history_line l;

        start_line(o, &l, "open", o->name);
        history_line_str(&l, "from", from_last ? "last" : "now");
        if (from_last) {
                history_line_u64(&l, "index", index);
                history_line_u64(&l, "ord", ord);
        }
        emit(o, &l);
}

/* "compacted" (the events after the last one seen are lost: start again
 * from now) or "end" (the watch ended otherwise: resume after the last
 * event seen), with the error and that last position. */
static void log_break(const struct observer *o, const char *type, int rv,
                      bool have_pos, uint64_t index, uint32_t ord)
{
        struct history_line l;

        start_line(o, &l, type, o->name);
        history_line_str(&l, "err", baton_errname(rv));
        if (have_pos) {
                history_line_u64(&l, "index", index);
                history_line_u64(&l, "ord", ord);
        }
        emit(o, &l);
}

static void *observe_main(void *arg)
{
        struct observer *o = arg;
        baton_watch *w = NULL;
        struct baton_event ev;
        bool have_pos = false; /* an event seen since the last compaction */
        uint64_t index = 0;
        uint32_t ord = 0;
        int rv;

        while (!atomic_load(&o->stop)) {
                if (w == NULL) {
                        rv = baton_watch_open(o->h, o->name, 0,
                                              have_pos ? index : 0,
                                              have_pos ? ord : 0, &w);
                        if (rv == BATON_ECOMPACTED) {
                                /* Events after the last one seen are gone:
                                 * say so, and watch from now. */
                                o->n_compacted++;
                                log_break(o, "compacted", rv, have_pos, index,
                                          ord);
                                have_pos = false;
                                continue;
                        }
                        if (rv != 0) {
                                /* No leader, no answer: try again. */
                                o->n_open_errors++;
                                w = NULL;
                                observe_nap(50);
                                continue;
                        }
                        o->n_opens++;
                        log_open(o, have_pos, index, ord);
                }
                rv = baton_watch_next(w, &ev, OBSERVE_POLL_MS);
                if (rv == 0) {
                        o->n_events++;
                        log_event(o, &ev);
                        index = ev.index;
                        ord = ev.ord;
                        have_pos = true;
                } else if (rv == BATON_ECOMPACTED) {
                        o->n_compacted++;
                        log_break(o, "compacted", rv, have_pos, index, ord);
                        baton_watch_close(w);
                        w = NULL;
                        have_pos = false;
                } else if (rv != BATON_ETIMEDOUT) {
                        /* BATON_ESLOW and the like: every event before it
                         * was delivered; go on after the last one. */
                        o->n_ended++;
                        log_break(o, "end", rv, have_pos, index, ord);
                        baton_watch_close(w);
                        w = NULL;
                        observe_nap(20);
                }
        }
        baton_watch_close(w);
        return NULL;
}

int observer_start(struct observer *o)
{
        struct baton_options opts;
        char name[64];
        sigset_t block, old;
        int rv;

        atomic_store(&o->stop, false);
        o->running = false;
        baton_options_init(&opts);
        opts.request_timeout_ms = o->request_timeout_ms;
        snprintf(name, sizeof name, "chaos-w%d-observer", o->id);
        opts.client_name = name;
        rv = baton_client_create(&o->h, o->endpoints, &opts);
        if (rv != 0) {
                o->h = NULL;
                return rv;
        }
        /* The thread inherits the mask: signals go to the main thread. */
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        rv = pthread_create(&o->thread, NULL, observe_main, o);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rv != 0) {
                baton_client_destroy(o->h);
                o->h = NULL;
                return BATON_ENOMEM;
        }
        o->running = true;
        return 0;
}

void observer_stop(struct observer *o)
{
        if (!o->running) {
                return;
        }
        atomic_store(&o->stop, true);
        pthread_join(o->thread, NULL);
        o->running = false;
        baton_client_destroy(o->h);
        o->h = NULL;
}
