/* The Raft log entry that carries lock commands: one or more commands the
 * leader proposes together, applied in order under the entry's index. */
#ifndef FSM_ENTRY_H
#define FSM_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../proto/command.h"

/*
 * A log entry is either one command (command.h; every entry written before
 * batches existed, and MEMBER entries) or a batch, laid out little-endian:
 *
 *   u8  version   ENTRY_VERSION (2; 1 is still read, and 3, which no
 *                 node writes yet, means the same)
 *   u8  type      COMMAND_BATCH
 *   u16 flags     0
 *   u32 count     commands that follow, 0..ENTRY_MAX_COMMANDS
 *   u64 term      the term of the leader that proposed it
 *   count times:  u16 length, then that command's encoding (length bytes,
 *                 a multiple of 8, as command_encode() writes it)
 *   zero bytes up to the next multiple of 8, and the entry ends there
 *
 * Why batches: libraft 0.22.1 takes one buffer per raft_apply() and sends
 * every submitted entry to every follower at once, so an entry per command
 * costs a message per command per follower; one entry per loop iteration
 * costs one. Every command in a batch is applied with the entry's index, so
 * grants of different locks made by one entry share their token (as the
 * operations of one ZooKeeper multi share a zxid); the state machine never
 * grants the same lock twice in one entry (lockfsm.h).
 *
 * The padding of the whole entry to 8 bytes is for libraft, whose receiver
 * skips to a multiple of 8 after each entry of an AppendEntries while the
 * sender does not pad (docs/raft.md). A batch of 0 commands is valid: the
 * leader proposes one to deliver grants a previous entry had to defer.
 */

#define ENTRY_VERSION      2
#define ENTRY_HEADER_SIZE  16
#define ENTRY_MAX_COMMANDS 256
/* The largest batch: ENTRY_MAX_COMMANDS of the largest command (a
 * MULTI's; a batch of other commands is under 80 KiB). */
#define ENTRY_MAX_SIZE                                                         \
        (((ENTRY_HEADER_SIZE +                                                 \
           ENTRY_MAX_COMMANDS * (2 + COMMAND_ANY_MAX_SIZE)) +                  \
          7) /                                                                 \
         8 * 8)

/* Builds a batch in a caller-owned buffer. */
struct entry_writer {
        uint8_t *buf;
        size_t cap;
        size_t len;
        uint32_t count;
};

/* Start a batch proposed in `term` in `buf` (capacity `cap`, at least
 * ENTRY_HEADER_SIZE + 8; borrowed until entry_writer_finish()). */
void entry_writer_init(struct entry_writer *w, void *buf, size_t cap,
                       uint64_t term);

/* Whether a command of `len` encoded bytes still fits. */
bool entry_writer_fits(const struct entry_writer *w, size_t len);

/* Append one encoded command (`len` bytes, copied). False, with the batch
 * unchanged, when it does not fit, the batch is full, or `len` is not a
 * command's length (1..COMMAND_ANY_MAX_SIZE, a multiple of 8). */
bool entry_writer_add(struct entry_writer *w, const void *cmd, size_t len);

/* Pad and seal the batch; returns its length in bytes. */
size_t entry_writer_finish(struct entry_writer *w);

/* Walks the commands of a batch. */
struct entry_reader {
        const uint8_t *p;
        size_t left; /* bytes of command records still to read */
        uint32_t count;
        uint32_t next; /* commands read so far */
        uint64_t term;
};

/* True when `buf` starts like a batch (version and type); the rest is
 * checked by entry_reader_init(). */
bool entry_is_batch(const void *buf, size_t len);

/* The newest encoding version an entry uses: its first byte (a command's
 * or a batch's version) and, in a batch this build reads, each of its
 * commands' first bytes; 0 for an empty entry. Nothing else is checked.
 * Above COMMAND_VERSION, a node of a newer release wrote the entry. */
unsigned entry_max_version(const void *buf, size_t len);

/* The term a batch was proposed in, as its header says; 0 for an entry
 * that is no batch (or too short to say). */
uint64_t entry_term(const void *buf, size_t len);

/*
 * Check a whole batch's framing (version, flags, count, every record's
 * length, the padding) and position `r` before its first command. 0,
 * BATON_EVERSION, or BATON_EMALFORMED; the commands themselves are checked
 * when decoded. `buf` is borrowed for as long as `r` is used.
 */
int entry_reader_init(struct entry_reader *r, const void *buf, size_t len);

/* The next command's bytes (borrowed from the batch); false after the last. */
bool entry_reader_next(struct entry_reader *r, const uint8_t **cmd,
                       size_t *len);

#endif /* FSM_ENTRY_H */
