/* The check of raft's files in a data directory before raft loads them:
 * the damage libraft 0.22.1 would trust, drop silently or crash on. */
#ifndef SERVER_DISKSCAN_H
#define SERVER_DISKSCAN_H

#include <limits.h>
#include <stddef.h>

/*
 * libraft 0.22.1's files (docs/raft.md, "What Baton checks of raft's
 * files"): segments (a format word, then batches: CRC32 of the header,
 * CRC32 of the data, the entry count, one 16-byte header per entry, the
 * entries), snapshot-T-I-M.meta (a CRC32 over the configuration) beside
 * its snapshot-T-I-M, and metadata1/metadata2 (format, version, term,
 * vote: no checksum; odd versions go to metadata1, even ones to 2).
 *
 * What libraft does with damage, and so what is refused here:
 *
 * - An open segment whose batch fails its checksum is cut there and its
 *   later batches are dropped, with a trace line at most: the node
 *   forgets entries it acknowledged. A torn last write (a crash in the
 *   middle of one) looks the same, so a damaged batch is refused only
 *   when a valid batch follows it; an open segment that ends inside a
 *   batch was truncated (libraft 0.22.1 aborts on it: a double free).
 * - A snapshot's .meta that fails its checksum is skipped: an older
 *   snapshot, or none, is loaded instead.
 * - A metadata file shorter than 32 bytes is deleted, and the other one's
 *   older term and vote are taken: the node forgets its vote. Refused
 *   when the other file's version shows this one had been written whole.
 *   Two files whose versions are not consecutive, or a version in the
 *   wrong file, mean one was rolled back or damaged; a term below the
 *   term of the log's last entry or of the newest snapshot means the
 *   metadata lost a write.
 * - Closed segments are refused by libraft itself (auto-recovery is off,
 *   node.c); checked here all the same, to say it in the same words.
 *
 * Refused though nothing acknowledged is lost: a power cut on a disk that
 * persists the blocks of one write out of order can leave a bad batch
 * before a valid one within the last write (a kill cannot: the write is
 * the kernel's by then). The node is then wiped and added back for
 * nothing worse than a lost write.
 *
 * Not seen: a bit flipped in a term or vote (no checksum), a rolled-back
 * open segment (an older copy of valid batches), damage in an open
 * segment's last batch (a torn write looks the same), a whole directory
 * rolled back, and a snapshot's own bytes (read and checked by the
 * restore: its lz4 frame has a checksum, its tail has none).
 */

struct diskscan {
        unsigned n_segments;  /* closed and open segments read */
        unsigned n_snapshots; /* .meta files read */
        /* A torn last write in an open segment, which raft drops: said,
         * not refused ("" when none). */
        char note[PATH_MAX + 256];
        /* The damage: "FILE at byte N: what" ("" when none). */
        char errmsg[PATH_MAX + 512];
};

/*
 * Read raft's files in directory `dir`, writing nothing. 0 when raft may
 * load them; BATON_ECORRUPT with the first damage in s->errmsg; BATON_EIO
 * when a file cannot be read (s->errmsg says which).
 */
int diskscan_check(struct diskscan *s, const char *dir);

#endif /* SERVER_DISKSCAN_H */
