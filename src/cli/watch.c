/* batonctl watch and observe: the changes of a name, a prefix, or an
 * election's leadership, one line (or JSON object) each, until SIGINT or
 * SIGTERM. */
#include "watch.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "print.h"

#define EXIT_OK    0
#define EXIT_ERROR 3

static volatile sig_atomic_t stopped;

static void on_stop(int sig)
{
        (void)sig;
        stopped = 1;
}

static void catch_stop(void)
{
        struct sigaction sa = {0};

        sa.sa_handler = on_stop;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
}

/* Say that a watch had to start again from now: events were missed. */
static void say_compacted(const struct args *o, const char *name)
{
        if (o->json) {
                fputs("{\"event\":\"compacted\",\"lock\":", stdout);
                print_json_string(stdout, name);
                fputs("}\n", stdout);
        } else {
                printf("%s compacted: events were missed, watching from "
                       "now\n",
                       name);
        }
        fflush(stdout);
}

/* Watch `name` with `flags` (`w`: already open, or NULL), calling `each`
 * for every event until a signal: a watch compacted away starts again
 * from now, said first, and then `resync` (NULL: none) shows the state
 * as it is, so that what changed in the gap is not left out. */
static int watch_loop(baton_client *c, const struct args *o, const char *name,
                      int flags, baton_watch *w,
                      void (*each)(baton_client *c, const struct args *o,
                                   const struct baton_event *e),
                      int (*resync)(baton_client *c, const struct args *o))
{
        uint64_t index = o->from_index;
        uint32_t ord = o->from_ord;
        struct baton_event e;
        int rv;

        catch_stop();
        while (!stopped) {
                if (w == NULL) {
                        rv = baton_watch_open(c, name, flags, index, ord, &w);
                        if (rv == BATON_ECOMPACTED) {
                                say_compacted(o, name);
                                index = ord = 0;
                                continue;
                        }
                        if (rv == 0 && index == 0 && resync != NULL) {
                                rv = resync(c, o);
                        }
                        if (rv != 0) {
                                print_error(o->json, "watch", rv);
                                return EXIT_ERROR;
                        }
                }
                rv = baton_watch_next(w, &e, 200);
                if (rv == 0) {
                        index = e.index;
                        ord = e.ord;
                        each(c, o, &e);
                        fflush(stdout);
                } else if (rv == BATON_ECOMPACTED || rv == BATON_ESLOW) {
                        /* Resume from the last event shown; from now when
                         * that is no longer kept, or none was shown. */
                        baton_watch_close(w);
                        w = NULL;
                        if (index == 0) {
                                say_compacted(o, name);
                        }
                } else if (rv != BATON_ETIMEDOUT) {
                        baton_watch_close(w);
                        print_error(o->json, "watch", rv);
                        return EXIT_ERROR;
                }
        }
        baton_watch_close(w);
        return EXIT_OK;
}

static void show(baton_client *c, const struct args *o,
                 const struct baton_event *e)
{
        (void)c;
        print_event(stdout, o->json, e);
}

int cli_watch(baton_client *c, const struct args *o)
{
        return o->prefix != NULL
                   ? watch_loop(c, o, o->prefix, BATON_WATCH_PREFIX, NULL, show,
                                NULL)
                   : watch_loop(c, o, o->name, 0, NULL, show, NULL);
}

/* The last leadership shown: events of it seen again are not shown. */
static uint64_t shown_token;
static char shown_value[BATON_VALUE_MAX + 1];

/* Show a leadership (token, session, value) unless it is the one shown
 * last. */
static void show_leadership(const struct args *o, const char *name,
                            uint64_t token, uint64_t session, const char *value)
{
        if (token <= shown_token && strcmp(value, shown_value) == 0) {
                return;
        }
        shown_token = token;
        snprintf(shown_value, sizeof shown_value, "%s", value);
        print_leadership(stdout, o->json, name, token, session, value);
        fflush(stdout);
}

static void leadership(baton_client *c, const struct args *o,
                       const struct baton_event *e)
{
        (void)c;
        if (e->mode == BATON_MODE_LEADER && e->kind != BATON_EVENT_RELEASED) {
                show_leadership(o, e->name, e->token, e->session, e->value);
        }
}

/* Who leads now (after a watch from now began): shown unless shown. */
static int show_leader(baton_client *c, const struct args *o)
{
        struct baton_leader l;
        int rv = baton_leader(c, o->name, &l);

        if (rv == 0 && l.held) {
                show_leadership(o, o->name, l.token, l.session, l.value);
        }
        return rv;
}

int cli_observe(baton_client *c, const struct args *o)
{
        baton_watch *w;
        int rv;

        /* The watch first, then who leads: a leadership that begins in
         * between is shown by both, and the second time not at all. */
        rv = baton_watch_open(c, o->name, 0, 0, 0, &w);
        if (rv == 0 && (rv = show_leader(c, o)) != 0) {
                baton_watch_close(w);
        }
        if (rv != 0) {
                print_error(o->json, "observe", rv);
                return EXIT_ERROR;
        }
        return watch_loop(c, o, o->name, 0, w, leadership, show_leader);
}
