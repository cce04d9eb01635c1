/* WATCH requests and the WATCH_EVENT frames pushed for them. */
#include <stdbool.h>
#include <string.h>

#include "../../include/baton/errors.h"
#include "../proto/command.h"
#include "fields.h"
#include "frame.h"
#include "watch.h"

_Static_assert(PROTO_VALUE_MAX == COMMAND_VALUE_MAX,
               "a watched value is a command's");

static const struct fields_entry watch_fields[] = {
    FIELD(struct proto_watch, U8, flags),
    FIELD(struct proto_watch, U64, from_index),
    FIELD(struct proto_watch, U32, from_ord),
    FIELD(struct proto_watch, STRING, name),
};

static const struct fields_entry event_fields[] = {
    FIELD(struct proto_watch_event, U64, index),
    FIELD(struct proto_watch_event, U32, ord),
    FIELD(struct proto_watch_event, U8, kind),
    FIELD(struct proto_watch_event, U8, cause),
    FIELD(struct proto_watch_event, U8, mode),
    FIELD(struct proto_watch_event, U64, session),
    FIELD(struct proto_watch_event, U64, owner),
    FIELD(struct proto_watch_event, U64, token),
    FIELD(struct proto_watch_event, U32, permits),
    FIELD(struct proto_watch_event, STRING, name),
    FIELD(struct proto_watch_event, STRING, value),
};

/* An exact watch names a lock; a prefix is 0..255 bytes without NUL. */
static int check_watch(const struct proto_watch *w)
{
        if (w->flags & ~PROTO_WATCH_PREFIX) {
                return BATON_EMALFORMED;
        }
        if (w->flags & PROTO_WATCH_PREFIX) {
                return w->name.len == 0 ||
                               (w->name.p != NULL &&
                                memchr(w->name.p, '\0', w->name.len) == NULL)
                           ? 0
                           : BATON_ENAME;
        }
        return proto_valid_name(w->name.p, w->name.len) ? 0 : BATON_ENAME;
}

/* A value: no NUL (a u8 string carries at most 255 bytes). */
static bool valid_value(const struct proto_string *s)
{
        return s->len == 0 ||
               (s->p != NULL && memchr(s->p, '\0', s->len) == NULL);
}

size_t proto_write_watch(uint8_t *out, size_t cap, uint64_t id,
                         const struct proto_watch *w)
{
        struct wcursor c;

        if (check_watch(w) != 0) {
                return 0;
        }
        proto_frame_begin(&c, out, cap, PROTO_WATCH, 0, id);
        fields_put(&c, FIELDS(watch_fields), w);
        return proto_frame_finish(&c);
}

int proto_read_watch(const uint8_t *body, size_t len, struct proto_watch *w)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(watch_fields), w);
        if (!proto_read_done(&r)) {
                return BATON_EMALFORMED;
        }
        return check_watch(w);
}

size_t proto_write_watch_event(uint8_t *out, size_t cap, uint64_t id,
                               const struct proto_watch_event *e)
{
        struct wcursor c;

        if (!proto_valid_name(e->name.p, e->name.len) ||
            !valid_value(&e->value)) {
                return 0;
        }
        proto_frame_begin(&c, out, cap, PROTO_WATCH_EVENT, 0, id);
        fields_put(&c, FIELDS(event_fields), e);
        return proto_frame_finish(&c);
}

int proto_read_watch_event(const uint8_t *body, size_t len,
                           struct proto_watch_event *e)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(event_fields), e);
        if (!proto_read_done(&r) || !proto_valid_name(e->name.p, e->name.len) ||
            !valid_value(&e->value) || e->kind < PROTO_EVENT_GRANTED ||
            e->kind > PROTO_EVENT_PROCLAIMED) {
                return BATON_EMALFORMED;
        }
        return 0;
}
