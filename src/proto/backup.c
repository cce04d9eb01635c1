/* BACKUP requests and the BACKUP_CHUNK frames that answer them. */
#include <string.h>

#include "../../include/baton/errors.h"
#include "fields.h"
#include "frame.h"
#include "backup.h"

static const struct fields_entry backup_fields[] = {
    FIELD(struct proto_backup, U64, backup),
    FIELD(struct proto_backup, U64, offset),
};

static const struct fields_entry chunk_fields[] = {
    FIELD(struct proto_backup_chunk, U64, backup),
    FIELD(struct proto_backup_chunk, U64, index),
    FIELD(struct proto_backup_chunk, U64, term),
    FIELD(struct proto_backup_chunk, U64, made_ms),
    FIELD(struct proto_backup_chunk, U64, size),
    FIELD(struct proto_backup_chunk, U64, offset),
    FIELD(struct proto_backup_chunk, U64, sessions),
    FIELD(struct proto_backup_chunk, U64, locks),
    FIELD(struct proto_backup_chunk, U64, grants),
    FIELD(struct proto_backup_chunk, U64, waiters),
};

size_t proto_write_backup(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_backup *b)
{
        struct wcursor w;

        proto_frame_begin(&w, out, cap, PROTO_BACKUP, 0, id);
        fields_put(&w, FIELDS(backup_fields), b);
        return proto_frame_finish(&w);
}

int proto_read_backup(const uint8_t *body, size_t len, struct proto_backup *b)
{
        struct rcursor r;

        rcursor_init(&r, body, len);
        fields_get(&r, FIELDS(backup_fields), b);
        return proto_read_done(&r) ? 0 : BATON_EMALFORMED;
}

size_t proto_write_backup_chunk(uint8_t *out, size_t cap, uint64_t id,
                                const struct proto_backup_chunk *k)
{
        struct wcursor w;

        if (k->len > PROTO_BACKUP_CHUNK_MAX || k->offset > k->size ||
            k->len > k->size - k->offset) {
                return 0;
        }
        proto_frame_begin(&w, out, cap, PROTO_BACKUP_CHUNK, 0, id);
        fields_put(&w, FIELDS(chunk_fields), k);
        wcursor_bytes(&w, k->data, k->len);
        return proto_frame_finish(&w);
}

int proto_read_backup_chunk(const uint8_t *body, size_t len,
                            struct proto_backup_chunk *k)
{
        struct rcursor r;

        if (len < PROTO_BACKUP_CHUNK_FIXED ||
            len - PROTO_BACKUP_CHUNK_FIXED > PROTO_BACKUP_CHUNK_MAX) {
                return BATON_EMALFORMED;
        }
        rcursor_init(&r, body, PROTO_BACKUP_CHUNK_FIXED);
        fields_get(&r, FIELDS(chunk_fields), k);
        k->data = body + PROTO_BACKUP_CHUNK_FIXED;
        k->len = len - PROTO_BACKUP_CHUNK_FIXED;
        if (!proto_read_done(&r) || k->offset > k->size ||
            k->len > k->size - k->offset) {
                return BATON_EMALFORMED;
        }
        return 0;
}
