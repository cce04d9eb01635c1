/* A deliberate bug for the chaos suite's negative control batond-earlyack
 * (docs/chaos.md): raft's appends reported stored at once, before anything
 * is written, and handed to raft_uv a second later, as a disk cache that
 * acknowledges writes before they reach the platter would. Compiled only
 * into that variant (BATON_CHAOS_EARLYACK); a node killed with everyone
 * else loses up to a second of entries it acknowledged. */
#ifndef SERVER_EARLYACK_H
#define SERVER_EARLYACK_H

#include <raft.h>
#include <uv.h>

/* How long appends wait before they reach raft_uv. */
#define EARLYACK_DELAY_MS 1000

struct earlyack_append;

struct earlyack {
        uv_loop_t *loop;
        struct raft_io *io;
        int (*append)(struct raft_io *io, struct raft_io_append *req,
                      const struct raft_entry entries[], unsigned n,
                      raft_io_append_cb cb);
        int (*truncate)(struct raft_io *io, raft_index index);
        int (*snapshot_put)(struct raft_io *io, unsigned trailing,
                            struct raft_io_snapshot_put *req,
                            const struct raft_snapshot *snapshot,
                            raft_io_snapshot_put_cb cb);
        void (*close)(struct raft_io *io, raft_io_close_cb cb);
        uv_timer_t ack;   /* reports the appends acknowledged */
        uv_timer_t flush; /* hands the held appends to raft_uv */
        struct earlyack_append *unacked_head, *unacked_tail;
        struct earlyack_append *held_head, *held_tail;
        /* The index after the last entry appended, once a truncate told
         * where appends start; 0 before. */
        raft_index next_index;
};

/* Wrap `io`, the node's raft_uv I/O (node_core's heard.io: the wrappers
 * find `e`, node_core's `early`, from it), set up and not yet given to
 * raft_init(). 0 or a libuv code. */
int earlyack_wrap(struct earlyack *e, uv_loop_t *loop, struct raft_io *io);

#endif /* SERVER_EARLYACK_H */
