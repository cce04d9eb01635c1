/* What a watch is told of a state machine event, and its position. */
#include "watchfeed.h"

#include <string.h>

void watchfeed_init(struct watchfeed *f, uint64_t index)
{
        f->index = index;
        f->ord = 0;
}

bool watchfeed_next(struct watchfeed *f, const struct lockfsm_event *ev,
                    struct proto_watch_event *out)
{
        uint8_t kind = ev->type == LOCKFSM_EV_GRANT     ? PROTO_EVENT_GRANTED
                       : ev->type == LOCKFSM_EV_RELEASE ? PROTO_EVENT_RELEASED
                       : ev->type == LOCKFSM_EV_PROCLAIM
                           ? PROTO_EVENT_PROCLAIMED
                           : 0;

        if (kind == 0) {
                return false;
        }
        if (ev->index != f->index) {
                f->index = ev->index;
                f->ord = 0;
        }
        memset(out, 0, sizeof *out);
        out->index = ev->index;
        out->ord = ++f->ord;
        out->kind = kind;
        out->cause = ev->cause;
        out->mode = ev->mode;
        out->session = ev->session;
        out->owner = ev->owner;
        out->token = ev->token;
        out->permits = ev->permits;
        out->name = (struct proto_string){ev->name, ev->name_len};
        out->value = (struct proto_string){ev->value, ev->value_len};
        return true;
}
