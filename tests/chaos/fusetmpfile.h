/* fusetmpfile: fuse_main for a FUSE file system of the chaos suite that
 * takes open(dir, O_TMPFILE), which libfuse 3.14 cannot pass on.
 *
 * Linux sends such an open as FUSE_TMPFILE (protocol 7.37); libfuse 3.14
 * has no operation for it and answers ENOSYS, so the open fails with
 * EOPNOTSUPP. fusetmpfile_main runs libfuse's session loop itself and
 * turns each FUSE_TMPFILE request into a FUSE_CREATE (same arguments, same
 * reply) of a new name FUSETMPFILE_PREFIX<n> in the same directory, n
 * counting from 0: the file system's create operation sees that name, and
 * is to hide it, remove it at the file's last close, and remove such names
 * left by an earlier run. libfuse must not splice requests
 * (FUSE_CAP_SPLICE_READ off in init), so that each is in memory.
 */
#ifndef CHAOS_FUSETMPFILE_H
#define CHAOS_FUSETMPFILE_H

#include <fuse.h>

#define FUSETMPFILE_PREFIX ".forgetfs-tmp-"

/* As fuse_main(argc, argv, ops, data): parses FUSE's options, mounts,
 * serves until unmounted or signalled, unmounts. 0, or 1 on failure
 * (printed). `ops` and `data` are borrowed until it returns. */
int fusetmpfile_main(int argc, char **argv, const struct fuse_operations *ops,
                     void *data);

#endif
