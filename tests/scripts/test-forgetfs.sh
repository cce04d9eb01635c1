#!/usr/bin/env bash
# tests/chaos/forgetfs (docs/chaos.md, "Forgotten writes and failed
# syncs") takes snapshot files written the way libraft 0.22.1 writes them
# (UvFsCreateTempFile, UvFsFinalizeTempFile): open(dir, O_TMPFILE),
# posix_fallocate, pwritev, fsync, linkat of /proc/self/fd/N with
# AT_SYMLINK_FOLLOW. Printing TAP, on a forgetfs mounted over a temporary
# directory: the synced file is linked, read back and in the backing
# directory; one linked without a sync keeps its name but not its bytes
# after a drop; one never linked leaves nothing; the hidden names are
# neither listed nor left behind; a sync in a fail-fsync window fails with
# EIO. And batond's snapshot image (src/server/snap/snapimage.c): an
# O_TMPFILE file in the data dir, written, then read through a shared
# mmap(2), which FUSE refuses on a direct_io file. Needs root and /dev/fuse (skipped otherwise). FORGETFS=path runs
# another forgetfs (an older one, say); the default is the build dir's.
set -u

forgetfs=${FORGETFS:-$PWD/tests/chaos/forgetfs}
if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
        echo "1..0 # SKIP needs root and /dev/fuse to mount forgetfs"
        exit 0
fi
if [ ! -x "$forgetfs" ]; then
        echo "1..0 # SKIP $forgetfs is not built (libfuse3-dev)"
        exit 0
fi
if ! command -v python3 >/dev/null; then
        echo "1..0 # SKIP python3 is missing (scripts/setup installs it)"
        exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-forgetfs.XXXXXX") || exit 1
back=$tmp/back
mnt=$tmp/mnt
mkdir "$back" "$mnt"
pid=
cleanup() {
        if grep -qF " $mnt " /proc/mounts; then
                umount "$mnt" 2>/dev/null || umount -l "$mnt"
        fi
        if [ -n "$pid" ]; then
                kill "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT

"$forgetfs" "$back" "$mnt" -f >"$tmp/forgetfs.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
        [ -e "$mnt/.forgetfs" ] && break
        sleep 0.1
done
if [ ! -e "$mnt/.forgetfs" ]; then
        echo "1..0 # SKIP forgetfs did not mount: $(cat "$tmp/forgetfs.out")"
        exit 0
fi

# snapwrite NAME BYTES SYNC LINK: libraft's snapshot file, printing the
# first failure as "CALL: strerror" or "ok".
snapwrite() {
        python3 - "$mnt" "$@" <<'EOF'
import os, sys
mnt, name, data, sync, link = sys.argv[1:6]
data = data.encode()
step = "open O_TMPFILE"
try:
    fd = os.open(mnt, os.O_TMPFILE | os.O_WRONLY, 0o600)
    step = "posix_fallocate"
    os.posix_fallocate(fd, 0, len(data))
    step = "pwritev"
    if os.pwritev(fd, [data], 0) != len(data):
        raise OSError(0, "short write")
    if sync == "sync":
        step = "fsync"
        os.fsync(fd)
    if link == "link":
        step = "linkat"
        # A src_dir_fd makes Python call linkat(2), not link(2) (which
        # would link the /proc symlink itself: EXDEV).
        root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        os.link("/proc/self/fd/%d" % fd, os.path.join(mnt, name),
                src_dir_fd=root, follow_symlinks=True)
        os.close(root)
    os.close(fd)
    print("ok")
except OSError as e:
    print("%s: %s" % (step, e.strerror))
EOF
}

# image BYTES: batond's snapshot image, printing its bytes as read through
# a shared mapping, or the first failure as "CALL: strerror".
image() {
        python3 - "$mnt" "$@" <<'EOF'
import mmap, os, sys
mnt, data = sys.argv[1], sys.argv[2].encode()
step = "open O_TMPFILE"
try:
    fd = os.open(mnt, os.O_TMPFILE | os.O_RDWR, 0o600)
    step = "write"
    os.write(fd, data)
    step = "mmap"
    m = mmap.mmap(fd, len(data), mmap.MAP_SHARED, mmap.PROT_READ)
    os.close(fd)
    print(m[:].decode())
    m.close()
except OSError as e:
    print("%s: %s" % (step, e.strerror))
EOF
}

n=0
failed=0
is() { # description, got, want
        n=$((n + 1))
        if [ "$2" = "$3" ]; then
                echo "ok $n - $1"
        else
                failed=$((failed + 1))
                echo "not ok $n - $1: got '$2', want '$3'"
        fi
}
ctl() { echo "$1" >"$mnt/.forgetfs"; }

out=$(snapwrite snapshot-1-2-3 synced-bytes sync link)
is "a synced O_TMPFILE file is linked" "$out" ok
is "it reads back through its name" "$(cat "$mnt/snapshot-1-2-3" 2>&1)" \
        synced-bytes
is "its bytes are in the backing file" "$(cat "$back/snapshot-1-2-3" 2>&1)" \
        synced-bytes

out=$(snapwrite snapshot-1-2-4 unsynced-bytes nosync link)
is "an unsynced O_TMPFILE file is linked" "$out" ok
is "its bytes read back before a drop" \
        "$(cat "$mnt/snapshot-1-2-4" 2>&1)" unsynced-bytes
ctl drop
is "after a drop its name stays, its bytes are zeros (as allocated)" \
        "$(od -An -c "$mnt/snapshot-1-2-4" 2>&1 | tr -d ' \n')" \
        "$(printf '\\0%.0s' $(seq 14))"
is "the drop forgot its 14 bytes" \
        "$(grep -o 'dropped_bytes=[0-9]*' "$mnt/.forgetfs")" dropped_bytes=14

out=$(snapwrite never-linked some-bytes sync nolink)
is "an O_TMPFILE file closed unlinked" "$out" ok
is "the backing directory holds the two linked files only" \
        "$(ls -A "$back" | tr '\n' ' ')" "snapshot-1-2-3 snapshot-1-2-4 "
is "the mount lists them and the control file is hidden" \
        "$(ls -A "$mnt" | tr '\n' ' ')" "snapshot-1-2-3 snapshot-1-2-4 "

is "a snapshot image reads back through a shared mapping" \
        "$(image image-bytes)" image-bytes
is "and leaves no file behind" "$(ls -A "$back" | tr '\n' ' ')" \
        "snapshot-1-2-3 snapshot-1-2-4 "

ctl "fail-fsync 60000"
out=$(snapwrite snapshot-1-2-5 doomed sync link)
ctl heal
is "in a fail-fsync window the snapshot's fsync fails" "$out" \
        "fsync: Input/output error"

echo "1..$n"
[ "$failed" = 0 ]
