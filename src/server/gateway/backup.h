/* Online backups (docs/operations.md, "Backup and restore"): the leader
 * pins a consistent snapshot of the state and hands it to an admin client
 * in BACKUP_CHUNK pieces that the client pulls one at a time. */
#ifndef SERVER_BACKUP_H
#define SERVER_BACKUP_H

#include <stdint.h>

#include "../../proto/proto.h"
#include "../../proto/backup.h"
#include "../net/conn.h"

struct gateway;
struct pending;
struct raft_buffer;

/* Backups a node pins at once; one more is BATON_EBUSY. Each shares the
 * kept snapshot image, so a pin costs little beyond its tail segments. */
#define BACKUP_MAX_PINNED 4
/* A pin no one has asked for a chunk of for this long is dropped. */
#define BACKUP_IDLE_MS 60000

/* One pinned backup: the snapshot's buffers and what the client is told
 * about them in every chunk. */
struct backup_pin {
        uint64_t id;       /* 0: a free slot */
        struct conn *conn; /* the only connection that may read it */
        struct raft_buffer *bufs;
        unsigned n_bufs;
        uint64_t last_ms; /* uv_now() of the last chunk asked for */
        struct proto_backup_chunk about;
};

struct backups {
        struct backup_pin pins[BACKUP_MAX_PINNED];
        uint64_t next_id;
        uint64_t taken; /* backups pinned since the start, for the log */
};

/*
 * A BACKUP frame from `c` (borrowed; `body` only during the call). The
 * first (backup 0) waits for the next read barrier, so that the state it
 * pins holds everything acknowledged before it arrived, and is answered
 * with the first chunk by backup_start(); later ones are answered at once
 * from the pin, BATON_ENOENT once it is gone (finished, dropped idle, or
 * another connection's). A malformed body fails the connection.
 */
void backup_on_frame(struct gateway *g, struct conn *c,
                     const struct proto_header *h, const uint8_t *body);

/* The barrier for the first BACKUP `p` has applied: pin the state and send
 * the first chunk (BATON_EBUSY while a snapshot image is being made: the
 * client asks again). Answers and frees `p`. */
void backup_start(struct gateway *g, struct pending *p);

/* Let go of every pin of `c`, or of every pin (c NULL, at close). */
void backup_forget_conn(struct backups *b, const struct conn *c);

#endif /* SERVER_BACKUP_H */
