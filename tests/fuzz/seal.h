/* Checksums put right, for the fuzz targets of snapshots and backups.
 *
 * Every layer of a snapshot carries a checksum a fuzzer could never
 * forge: the lock state's FNV-1a (src/fsm/snapshot.c), a version 2
 * container's CRCs (src/server/snap/snaptail.h), a backup's SHA-256. A
 * target that wants its mutations to reach the decoders behind them
 * rewrites the checksums of a copy first, as a hand-edited file would have
 * them. Each function rewrites in place what it recognises and leaves
 * anything else as it is; none reads out of bounds whatever the bytes. */
#ifndef BATON_TESTS_FUZZ_SEAL_H
#define BATON_TESTS_FUZZ_SEAL_H

#include <stddef.h>
#include <stdint.h>

/* The little-endian integer of `n` bytes at `p` (n <= 8). */
uint64_t seal_le(const uint8_t *p, unsigned n);

/* A lock state snapshot: its last 8 bytes become FNV-1a 64 of the rest. */
void seal_state(uint8_t *p, size_t len);

/* A plain image (raftfsm.c's encode_image()): u32 length and the
 * directory, the access list's section if there is one, then the lock
 * state, whose checksum is rewritten. A packed image (snapzip.h) keeps
 * lz4's own checksum. */
void seal_image(uint8_t *p, size_t len);

/* A snapshot as raft stores it: a container of an image and the entries
 * since (version 1 has no CRCs of its own, version 2 has), or an image
 * alone. */
void seal_snapshot(uint8_t *p, size_t len);

#endif
