/* STATUS and STATUS_REPLY frames, and a reply copied into the public
 * struct baton_status and struct baton_node_version. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"
#include "fields.h"
#include "frame.h"
#include "status.h"

/* The largest STATUS_REPLY body: fixed fields, then every member at its
 * largest (id, role, two strings of PROTO_ADDRESS_MAX bytes), then both
 * tails. */
#define STATUS_FIXED_SIZE (8 + 1 + 8 * 8 + 1)
#define MEMBER_MAX_SIZE   (8 + 1 + 2 * (1 + PROTO_ADDRESS_MAX))
#define VERSIONS_MAX_SIZE (1 + PROTO_RELEASE_MAX + 3 * 2)
#define ALARMS_SIZE       (4 + 3 * 8)
#define STATUS_MAX_SIZE                                                        \
        (STATUS_FIXED_SIZE + PROTO_MAX_MEMBERS * MEMBER_MAX_SIZE +             \
         VERSIONS_MAX_SIZE + ALARMS_SIZE)

_Static_assert(STATUS_MAX_SIZE <= PROTO_MAX_BODY, "status reply fits a frame");

/* STATUS_REPLY: the fixed part, then n_members of member_fields. */
static const struct fields_entry status_fields[] = {
    FIELD(struct proto_status, U64, id),
    FIELD(struct proto_status, U8, role),
    FIELD(struct proto_status, U64, term),
    FIELD(struct proto_status, U64, leader_id),
    FIELD(struct proto_status, U64, commit_index),
    FIELD(struct proto_status, U64, applied_index),
    FIELD(struct proto_status, U64, last_index),
    FIELD(struct proto_status, U64, sessions),
    FIELD(struct proto_status, U64, locks),
    FIELD(struct proto_status, U64, waiters),
    FIELD(struct proto_status, U8, n_members),
};

/* STATUS_REPLY's PROTO_FLAG_ALARMS tail, after the versions (or the
 * members). */
static const struct fields_entry alarms_fields[] = {
    FIELD(struct proto_alarms, U32, alarms),
    FIELD(struct proto_alarms, U64, diverged_index),
    FIELD(struct proto_alarms, U64, digest),
    FIELD(struct proto_alarms, U64, leader_digest),
};

/* STATUS_REPLY's PROTO_FLAG_VERSIONS tail, after the members. */
static const struct fields_entry versions_fields[] = {
    FIELD(struct proto_versions, STRING, release),
    FIELD(struct proto_versions, U16, command),
    FIELD(struct proto_versions, U16, snapshot),
    FIELD(struct proto_versions, U16, container),
};

static const struct fields_entry member_fields[] = {
    FIELD(struct proto_member, U64, id),
    FIELD(struct proto_member, U8, role),
    FIELD(struct proto_member, STRING, raft_address),
    FIELD(struct proto_member, STRING, client_address),
};

/* A member's addresses may be empty (not known yet), never too long. */
static bool valid_address(const struct proto_string *s)
{
        return s->len <= PROTO_ADDRESS_MAX && (s->len == 0 || s->p != NULL) &&
               (s->len == 0 || memchr(s->p, '\0', s->len) == NULL);
}

size_t proto_write_status(uint8_t *out, size_t cap, uint64_t id, uint16_t flags,
                          const struct proto_status *st,
                          const struct proto_versions *v)
{
        bool versions = flags & PROTO_FLAG_VERSIONS;
        struct wcursor w;
        unsigned i;

        if (st->n_members > PROTO_MAX_MEMBERS ||
            !proto_flags_allowed(PROTO_STATUS_REPLY, flags)) {
                return 0;
        }
        for (i = 0; i < st->n_members; i++) {
                if (!valid_address(&st->members[i].raft_address) ||
                    !valid_address(&st->members[i].client_address)) {
                        return 0;
                }
        }
        if (versions && (v == NULL || v->release.len == 0 ||
                         v->release.len > PROTO_RELEASE_MAX ||
                         memchr(v->release.p, '\0', v->release.len) != NULL)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_STATUS_REPLY, flags, id);
        fields_put(&w, FIELDS(status_fields), st);
        for (i = 0; i < st->n_members; i++) {
                fields_put(&w, FIELDS(member_fields), &st->members[i]);
        }
        if (versions) {
                fields_put(&w, FIELDS(versions_fields), v);
        }
        if (flags & PROTO_FLAG_ALARMS) {
                fields_put(&w, FIELDS(alarms_fields), &st->alarms);
        }
        return proto_frame_finish(&w);
}

size_t proto_write_status_request(uint8_t *out, size_t cap, uint64_t id,
                                  uint16_t flags)
{
        struct wcursor w;

        if (!proto_flags_allowed(PROTO_STATUS, flags)) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_STATUS, flags, id);
        return proto_frame_finish(&w);
}

int proto_read_status(const uint8_t *body, size_t len, uint16_t flags,
                      struct proto_status *st, struct proto_versions *v)
{
        struct proto_versions none;
        struct rcursor r;
        unsigned i;

        if (v == NULL) {
                v = &none;
        }
        memset(st, 0, sizeof *st);
        memset(v, 0, sizeof *v);
        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(status_fields), st);
        if (r.bad || st->n_members > PROTO_MAX_MEMBERS) {
                st->n_members = 0;
                return BATON_EMALFORMED;
        }
        for (i = 0; i < st->n_members; i++) {
                struct proto_member *m = &st->members[i];

                fields_get(&r, FIELDS(member_fields), m);
                if (r.bad ||
                    !proto_valid_text(&m->raft_address, PROTO_ADDRESS_MAX) ||
                    !proto_valid_text(&m->client_address, PROTO_ADDRESS_MAX)) {
                        return BATON_EMALFORMED;
                }
        }
        if (flags & PROTO_FLAG_VERSIONS) {
                fields_get(&r, FIELDS(versions_fields), v);
                if (r.bad || v->release.len == 0 ||
                    !proto_valid_text(&v->release, PROTO_RELEASE_MAX)) {
                        memset(v, 0, sizeof *v);
                        return BATON_EMALFORMED;
                }
        }
        if (flags & PROTO_FLAG_ALARMS) {
                fields_get(&r, FIELDS(alarms_fields), &st->alarms);
                if (r.bad) {
                        memset(&st->alarms, 0, sizeof st->alarms);
                        return BATON_EMALFORMED;
                }
        }
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
}

static void copy_string(char *dst, size_t cap, const struct proto_string *s)
{
        size_t n = s->len < cap - 1 ? s->len : cap - 1;

        if (n > 0) {
                memcpy(dst, s->p, n);
        }
        dst[n] = '\0';
}

void proto_status_export(struct baton_status *out, const char *endpoint,
                         const struct proto_status *ps)
{
        unsigned i;

        memset(out, 0, sizeof *out);
        snprintf(out->endpoint, sizeof out->endpoint, "%s",
                 endpoint != NULL ? endpoint : "");
        out->id = ps->id;
        out->role = ps->role;
        out->term = ps->term;
        out->leader_id = ps->leader_id;
        out->commit_index = ps->commit_index;
        out->applied_index = ps->applied_index;
        out->last_index = ps->last_index;
        out->sessions = ps->sessions;
        out->locks = ps->locks;
        out->waiters = ps->waiters;
        out->n_members = ps->n_members;
        for (i = 0; i < ps->n_members; i++) {
                out->members[i].id = ps->members[i].id;
                out->members[i].role = ps->members[i].role;
                copy_string(out->members[i].raft_address,
                            sizeof out->members[i].raft_address,
                            &ps->members[i].raft_address);
                copy_string(out->members[i].client_address,
                            sizeof out->members[i].client_address,
                            &ps->members[i].client_address);
        }
}

void proto_versions_export(struct baton_node_version *out, uint8_t protocol,
                           const struct proto_versions *v)
{
        memset(out, 0, sizeof *out);
        out->protocol = protocol;
        if (v == NULL) {
                return;
        }
        copy_string(out->release, sizeof out->release, &v->release);
        out->command = v->command;
        out->snapshot = v->snapshot;
        out->container = v->container;
}

void proto_alarms_export(struct baton_node_alarms *out,
                         const struct proto_alarms *a)
{
        memset(out, 0, sizeof *out);
        if (a == NULL) {
                return;
        }
        out->known = 1;
        out->alarms = a->alarms;
        out->diverged_index = a->diverged_index;
        out->digest = a->digest;
        out->leader_digest = a->leader_digest;
}
