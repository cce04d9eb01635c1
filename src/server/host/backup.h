/* Online backups (docs/operations.md, "Backup and restore"): the leader
 * pins a consistent snapshot of the state and hands it to an admin client
 * in BACKUP_CHUNK pieces that the client pulls one at a time. */
#ifndef SERVER_BACKUP_H
#define SERVER_BACKUP_H

#include <stdint.h>

#include <uv.h>

#include "../../proto/proto.h"
#include "../../proto/backup.h"
#include "../net/conn.h"
#include "../raft/node.h"

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

/*
 * The pins of one node. The request core decides who may back up and
 * when (src/server/gateway/reads.h: the role and the serving leader, the
 * first BACKUP after a read barrier, its offset 0) and asks its host for
 * the rest (struct gateway_host's backup_start and backup_chunk), which
 * batond's host does here. Caller-allocated; used only from the loop's
 * thread.
 */
struct backups {
        struct backup_pin pins[BACKUP_MAX_PINNED];
        uv_loop_t *loop;   /* uv_now() for the idle time */
        struct node *node; /* pins its snapshots */
        uint64_t next_id;
        uint64_t taken; /* backups pinned since the start, for the log */
};

/* No pins yet, on `node` (`loop` and `node` borrowed for b's life). */
void backups_init(struct backups *b, uv_loop_t *loop, struct node *node);

/*
 * The read barrier of request `id`, the first BACKUP from `c` (borrowed,
 * and kept with the pin until backup_forget_conn()), has applied: pin the
 * state, which holds everything acknowledged before the request arrived,
 * and answer with the first chunk. 0 when answered (or `c` is closing);
 * else the status to answer with, writing nothing: BATON_ENOTREADY while
 * every pin is in use or a snapshot image is being made (the client asks
 * again), or what node_backup() failed with.
 */
int backup_start(struct backups *b, struct conn *c, uint64_t id);

/*
 * Request `id` from `c` asks for pin `req->backup` (not 0) from
 * `req->offset` on (`req` borrowed for the call): 0 when answered with
 * the chunk there (the last one lets go of the pin); else the status to
 * answer with, writing nothing: BATON_ENOBACKUP when the pin is gone
 * (finished, dropped idle, or another connection's), BATON_EINVAL when
 * the offset lies past its end.
 */
int backup_chunk(struct backups *b, struct conn *c, uint64_t id,
                 const struct proto_backup *req);

/* Let go of every pin of `c`, or of every pin (c NULL, at close). */
void backup_forget_conn(struct backups *b, const struct conn *c);

#endif /* SERVER_BACKUP_H */
