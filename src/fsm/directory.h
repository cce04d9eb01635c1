/* The replicated cluster directory: every member's raft and client address. */
#ifndef FSM_DIRECTORY_H
#define FSM_DIRECTORY_H

#include <stddef.h>
#include <stdint.h>

#include "../proto/command.h"

/*
 * Raft's configuration knows each member's raft address; clients need the
 * leader's *client* address, so MEMBER entries record it in the log and
 * every replica answers NOT_LEADER with the same address. Pure, like the
 * lock state machine: (directory, MEMBER entry) -> directory.
 */

#define DIRECTORY_MAX 16

struct directory_member {
        uint64_t id;
        char raft_address[COMMAND_ADDRESS_MAX + 1];   /* NUL-terminated */
        char client_address[COMMAND_ADDRESS_MAX + 1]; /* NUL-terminated */
};

struct directory {
        unsigned n;
        struct directory_member members[DIRECTORY_MAX]; /* by id */
};

void directory_init(struct directory *d);

/* Apply a decoded MEMBER command: set (insert or replace) or remove. 0,
 * BATON_EINVAL when all DIRECTORY_MAX places are taken, BATON_ENOTFOUND
 * for removing an unknown member. Nothing changes on error. */
int directory_apply(struct directory *d, const struct command *c);

const struct directory_member *directory_find(const struct directory *d,
                                              uint64_t id);

/*
 * Serialize: u8 count, then by id: u64 id, string raft, string client.
 * Returns the length written, or the length needed when `buf` is NULL or
 * too small (then nothing useful is written).
 */
size_t directory_encode(const struct directory *d, uint8_t *buf, size_t cap);

/* Load what directory_encode wrote; exactly `len` bytes. 0 or
 * BATON_ECORRUPT (d unchanged). */
int directory_decode(struct directory *d, const uint8_t *buf, size_t len);

#endif /* FSM_DIRECTORY_H */
