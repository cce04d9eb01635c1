/* SESSIONS and SESSIONS_REPLY frames. */
#include <string.h>

#include "../../include/baton/errors.h"
#include "command.h"
#include "fields.h"
#include "frame.h"
#include "sesslist.h"

_Static_assert(PROTO_SESSIONS_REPLY_FIXED +
                       PROTO_SESSION_SIZE(PROTO_CLIENT_NAME_MAX,
                                          PROTO_IDENTITY_MAX,
                                          PROTO_ADDRESS_MAX) +
                       PROTO_SESSION_HOLDS_MAX *
                           PROTO_SESSION_HOLD_SIZE(COMMAND_NAME_MAX) <=
                   PROTO_MAX_BODY,
               "one session of the largest fits a SESSIONS_REPLY");

struct sessions_body {
        uint64_t session;
        uint8_t mode;
        uint32_t limit;
};

static const struct fields_entry sessions_fields[] = {
    FIELD(struct sessions_body, U64, session),
    FIELD(struct sessions_body, U8, mode),
    FIELD(struct sessions_body, U32, limit),
};

static const struct fields_entry session_fields[] = {
    FIELD(struct proto_session, U64, id),
    FIELD(struct proto_session, STRING, client_name),
    FIELD(struct proto_session, STRING, identity),
    FIELD(struct proto_session, STRING, address),
    FIELD(struct proto_session, U32, ttl_ms),
    FIELD(struct proto_session, U32, lock_delay_ms),
    FIELD(struct proto_session, U32, left_ms),
    FIELD(struct proto_session, U32, idle_ms),
    FIELD(struct proto_session, U32, revoked),
    FIELD(struct proto_session, U32, n_grants),
    FIELD(struct proto_session, U32, n_waits),
    FIELD(struct proto_session, U16, n_holds),
};

static const struct fields_entry hold_fields[] = {
    FIELD(struct proto_session_hold, U8, waiting),
    FIELD(struct proto_session_hold, U8, mode),
    FIELD(struct proto_session_hold, U64, owner),
    FIELD(struct proto_session_hold, U64, token),
    FIELD(struct proto_session_hold, U32, count),
    FIELD(struct proto_session_hold, U32, permits),
    FIELD(struct proto_session_hold, U32, wait_ms),
    FIELD(struct proto_session_hold, STRING, name),
};

static bool valid_request(uint8_t mode, uint32_t limit)
{
        return (mode == PROTO_SESSIONS_AFTER && limit >= 1 &&
                limit <= PROTO_SESSIONS_MAX) ||
               (mode == PROTO_SESSIONS_ONE && limit == 1);
}

/* A string of 0..max bytes with no NUL. */
static bool valid_text(const struct proto_string *s, size_t max)
{
        return s->len <= max &&
               (s->len == 0 ||
                (s->p != NULL && memchr(s->p, '\0', s->len) == NULL));
}

static bool valid_session(const struct proto_session *s)
{
        uint16_t i;

        if (!proto_valid_client(&s->client_name) ||
            !valid_text(&s->identity, PROTO_IDENTITY_MAX) ||
            !valid_text(&s->address, PROTO_ADDRESS_MAX) ||
            s->n_holds > PROTO_SESSION_HOLDS_MAX ||
            (s->n_holds > 0 && s->holds == NULL)) {
                return false;
        }
        for (i = 0; i < s->n_holds; i++) {
                if (!proto_valid_name(s->holds[i].name.p,
                                      s->holds[i].name.len) ||
                    s->holds[i].waiting > 1) {
                        return false;
                }
        }
        return true;
}

size_t proto_write_sessions(uint8_t *out, size_t cap, uint64_t id,
                            uint64_t session, uint8_t mode, uint32_t limit)
{
        struct sessions_body b = {session, mode, limit};
        struct wcursor w;

        if (!valid_request(mode, limit)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_SESSIONS, 0, id);
        fields_put(&w, FIELDS(sessions_fields), &b);
        return proto_frame_finish(&w);
}

int proto_read_sessions(const uint8_t *body, size_t len, uint64_t *session,
                        uint8_t *mode, uint32_t *limit)
{
        struct sessions_body b;
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(sessions_fields), &b);
        if (!proto_read_done(&r) || !valid_request(b.mode, b.limit)) {
                return BATON_EMALFORMED;
        }
        *session = b.session;
        *mode = b.mode;
        *limit = b.limit;
        return 0;
}

size_t proto_write_sessions_reply(uint8_t *out, size_t cap, uint64_t id,
                                  const struct proto_session *s, uint32_t n,
                                  bool more)
{
        struct wcursor w;
        uint32_t i;
        uint16_t k;

        if (n > 0 && s == NULL) {
                return 0;
        }
        for (i = 0; i < n; i++) {
                if (!valid_session(&s[i])) {
                        return 0;
                }
        }
        proto_frame_begin(&w, out, cap, PROTO_SESSIONS_REPLY, 0, id);
        wcursor_u32(&w, n);
        wcursor_u8(&w, more ? 1 : 0);
        for (i = 0; i < n; i++) {
                fields_put(&w, FIELDS(session_fields), &s[i]);
                for (k = 0; k < s[i].n_holds; k++) {
                        fields_put(&w, FIELDS(hold_fields), &s[i].holds[k]);
                }
        }
        return proto_frame_finish(&w);
}

/* Read one record and its holds into `holds` (`*used` of `holds_cap`
 * taken so far). */
static bool read_session(struct rcursor *r, struct proto_session *s,
                         struct proto_session_hold *holds, size_t holds_cap,
                         size_t *used)
{
        uint16_t k;

        fields_get(r, FIELDS(session_fields), s);
        if (r->bad || s->n_holds > PROTO_SESSION_HOLDS_MAX ||
            s->n_holds > holds_cap - *used ||
            s->n_holds > r->left / PROTO_SESSION_HOLD_MIN) {
                return false;
        }
        s->holds = s->n_holds > 0 ? &holds[*used] : NULL;
        for (k = 0; k < s->n_holds; k++) {
                fields_get(r, FIELDS(hold_fields), &holds[*used + k]);
        }
        *used += s->n_holds;
        return !r->bad && valid_session(s);
}

int proto_read_sessions_reply(const uint8_t *body, size_t len,
                              struct proto_session *s, size_t cap,
                              struct proto_session_hold *holds,
                              size_t holds_cap, uint32_t *n, bool *more)
{
        struct rcursor r;
        size_t used = 0;
        uint32_t count, i;
        uint8_t flag;

        *n = 0;
        *more = false;
        rcursor_init(&r, body, len);
        count = rcursor_u32(&r);
        flag = rcursor_u8(&r);
        if (r.bad || flag > 1 || count > cap ||
            count > r.left / PROTO_SESSION_SIZE(0, 0, 0)) {
                return BATON_EMALFORMED;
        }
        for (i = 0; i < count; i++) {
                if (!read_session(&r, &s[i], holds, holds_cap, &used)) {
                        return BATON_EMALFORMED;
                }
        }
        if (!proto_read_done(&r)) {
                return BATON_EMALFORMED;
        }
        *n = count;
        *more = flag == 1;
        return 0;
}
