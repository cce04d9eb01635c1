/* Online backups: BACKUP requests and the BACKUP_CHUNK frames that answer
 * them. */
#ifndef PROTO_BACKUP_H
#define PROTO_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* BACKUP: the first asks the leader to pin a consistent snapshot of the
 * state (backup 0, offset 0); each later one asks for the bytes of that
 * backup from `offset` on. */
struct proto_backup {
        uint64_t backup; /* the id the first chunk named; 0: a new one */
        uint64_t offset;
};

/* BACKUP_CHUNK: what the backup is, and `len` of its bytes from `offset`
 * (every chunk repeats the description, so each can be checked alone). */
struct proto_backup_chunk {
        uint64_t backup;   /* the pinned backup's id on this node */
        uint64_t index;    /* the last entry the state includes */
        uint64_t term;     /* the leader's term when it was taken */
        uint64_t made_ms;  /* the leader's wall clock then, Unix ms */
        uint64_t size;     /* the snapshot's bytes in all */
        uint64_t offset;   /* of this chunk */
        uint64_t sessions; /* counts of the state at `index` */
        uint64_t locks;
        uint64_t grants;
        uint64_t waiters;
        const uint8_t *data; /* borrowed: the body, or the writer's bytes */
        size_t len;
};

#define PROTO_BACKUP_CHUNK_FIXED (10 * 8)
#define PROTO_BACKUP_CHUNK_MAX   (PROTO_MAX_BODY - PROTO_BACKUP_CHUNK_FIXED)

size_t proto_write_backup(uint8_t *out, size_t cap, uint64_t id,
                          const struct proto_backup *b);
int proto_read_backup(const uint8_t *body, size_t len, struct proto_backup *b);
/* 0 when `len` exceeds PROTO_BACKUP_CHUNK_MAX or the chunk ends past
 * `size`. */
size_t proto_write_backup_chunk(uint8_t *out, size_t cap, uint64_t id,
                                const struct proto_backup_chunk *k);
/* The chunk's data borrowed from `body`. 0 or BATON_EMALFORMED. */
int proto_read_backup_chunk(const uint8_t *body, size_t len,
                            struct proto_backup_chunk *k);

#endif /* PROTO_BACKUP_H */
