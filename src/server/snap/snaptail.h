/* Snapshots made of an image and a tail: the state's bytes at an earlier
 * index (snapimage.h) and the entries applied since, in one container. */
#ifndef SERVER_SNAPTAIL_H
#define SERVER_SNAPTAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The container (docs/fsm.md, "Snapshots"), integers little-endian:
 *
 *   "BTNI"  u32 version (2)  u64 image index  u64 last index  u64 image length
 *           u32 CRC-32 of the entries  u32 CRC-32 of the 36 bytes before
 *   image   (a plain or packed snapshot, as raftfsm wrote before)
 *   entries until the end: u64 index, u32 length, that many bytes
 *
 * Restoring it restores the image and applies the entries in order; the
 * last one's index is `last index` (the image's own when there are none).
 * Version 1 (a 32-byte header without the two checksums) is still read:
 * a damaged entry of its tail is applied as it reads. A packed image
 * has its lz4 frame's own checksum; a plain one has none.
 */
#define SNAPTAIL_HEADER_SIZE    40
#define SNAPTAIL_HEADER_SIZE_V1 32
/* The container version written; 1 and this one are read, another is
 * BATON_EVERSION. */
#define SNAPTAIL_VERSION 2

/* The entries applied since an image was started, kept by the leader and
 * every follower alike. The buffer comes from raft_malloc. */
struct snaptail {
        uint8_t *buf;
        size_t len, cap;
        uint64_t last; /* index of the last entry added, 0 if none */
        uint64_t n;
};

void snaptail_init(struct snaptail *t);
/* Forget every entry (free the buffer). */
void snaptail_reset(struct snaptail *t);
/* Copy an applied entry in. 0 or BATON_ENOMEM (nothing added). */
int snaptail_add(struct snaptail *t, uint64_t index, const void *p, size_t n);
/* Hand the buffer over (raft_free it); the tail is empty afterwards. */
uint8_t *snaptail_detach(struct snaptail *t, size_t *len);

/* A header with both checksums 0: snaptail_seal() fills them. */
void snaptail_header(uint8_t out[SNAPTAIL_HEADER_SIZE], uint64_t image_index,
                     uint64_t last_index, uint64_t image_len);
/* CRC-32 (zlib's: reflected 0xedb88320) of `n` bytes more, from `crc` (0
 * to start). */
uint32_t snaptail_crc(uint32_t crc, const void *p, size_t n);
/* Write the entries' CRC `tail_crc` and the header's own into `out`. */
void snaptail_seal(uint8_t out[SNAPTAIL_HEADER_SIZE], uint32_t tail_crc);

/* A container being read: the image, then its entries one at a time. */
struct snaptail_reader {
        uint64_t image_index, last_index;
        const uint8_t *image;
        size_t image_len;
        const uint8_t *p; /* the next entry */
        size_t left;
        uint64_t prev; /* the index read last */
};

/* Whether `p` starts a container. */
bool snaptail_is(const void *p, size_t len);
/* 0, BATON_ECORRUPT (short, the lengths do not add up, or a version 2
 * checksum that does not match) or BATON_EVERSION. */
int snaptail_open(struct snaptail_reader *r, const void *p, size_t len);
/* The version a container's header says (0: too short to say), for
 * saying why one was refused. */
uint32_t snaptail_peek_version(const void *p, size_t len);
/* A lockfsm_entry_iter over the entries (`it` is the reader): each index
 * must be above the one before, and the last must be `last index`. */
int snaptail_next(void *it, uint64_t *index, const void **buf, size_t *len);

#endif /* SERVER_SNAPTAIL_H */
