/* Snapshot compression: Baton's own lz4 framing of the state machine's
 * snapshot, since libraft 0.22.1 writes snapshots as they are given. */
#ifndef SERVER_SNAPZIP_H
#define SERVER_SNAPZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "../../lib/mem.h"

/*
 * Layout: the magic "BTNZ", u32 0 (reserved), u64 length of the data
 * before compression (little-endian), then one LZ4 frame of that data.
 * The magic is not LZ4's, so libraft's loader, which decompresses files
 * that start with an LZ4 frame (snapshots written by libraft 0.15.0 with
 * compression on), passes these through untouched, and the state machine's
 * restore sees the same bytes whether a snapshot comes from disk or from a
 * leader's InstallSnapshot.
 */
#define SNAPZIP_HEADER_SIZE 16

/*
 * Compress the concatenation of `n` parts into one buffer allocated from
 * `mem`, owned by the caller. 0 or BATON_ENOMEM.
 */
int snapzip_pack(const struct mem *mem, const struct iovec *parts, unsigned n,
                 void **out, size_t *out_len);

/* Whether `buf` starts like a packed snapshot. */
bool snapzip_is_packed(const void *buf, size_t len);

/*
 * Decompress a packed snapshot into a buffer allocated from `mem`, owned by
 * the caller. 0, BATON_ECORRUPT (bad header, a length that does not match
 * the frame, a damaged frame) or BATON_ENOMEM.
 */
int snapzip_unpack(const struct mem *mem, const void *buf, size_t len,
                   void **out, size_t *out_len);

#endif /* SERVER_SNAPZIP_H */
