/* The file `batonctl snapshot save` writes and `batond --restore` reads:
 * a header that says what the backup holds, a SHA-256 over the header and
 * the snapshot, then the snapshot's bytes as the leader handed them over
 * (docs/operations.md, "Backup and restore"). Pure code over memory, but
 * for backupfile_read(), which both sides use to load a file. */
#ifndef PROTO_BACKUPFILE_H
#define PROTO_BACKUPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../../include/baton/cluster.h"
#include "../../include/baton/errors.h"

#define BACKUPFILE_MAGIC  "BATONBAK"
#define BACKUPFILE_FORMAT 1
#define BACKUPFILE_DIGEST 32
/* magic, u32 format, u32 header size, 8 x u64, the digest */
#define BACKUPFILE_HEADER (8 + 4 + 4 + 8 * 8 + BACKUPFILE_DIGEST)

/* What a backup holds is struct baton_backup_info (include/baton/cluster.h):
 * its fields, in order, are the header's u64s, little-endian. */

/* Digest state for a backup being written: the header's fields, then the
 * snapshot's bytes as they come. NULL when out of memory. */
struct backupfile_digest;
struct backupfile_digest *
backupfile_digest_new(const struct baton_backup_info *info);
/* 0, or BATON_ENOMEM (the digest is then unusable: free it). */
int backupfile_digest_add(struct backupfile_digest *d, const void *p, size_t n);
/* Write the header with the digest of everything added into `out`
 * (BACKUPFILE_HEADER bytes), and free `d`. 0 or BATON_ENOMEM. */
int backupfile_digest_finish(struct backupfile_digest *d,
                             const struct baton_backup_info *info,
                             uint8_t out[BACKUPFILE_HEADER]);
void backupfile_digest_free(struct backupfile_digest *d);

/*
 * Check a whole backup file's bytes: its magic, format, sizes and digest.
 * 0 with `info` filled and `*snapshot` pointing into `buf`;
 * BATON_EVERSION for a format this build does not read; BATON_ECORRUPT
 * for anything else wrong (truncated, a byte changed); BATON_ENOMEM.
 */
int backupfile_check(const uint8_t *buf, size_t len,
                     struct baton_backup_info *info, const uint8_t **snapshot);

/* The whole file at `path` in a malloc'd buffer (the caller frees it):
 * 0, BATON_EIO (errno says why: that of the call that failed) or
 * BATON_ENOMEM. */
int backupfile_read(const char *path, uint8_t **buf, size_t *len);

#endif /* PROTO_BACKUPFILE_H */
