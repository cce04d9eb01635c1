#!/usr/bin/env bash
# Self-test of scripts/check-room-links, printing TAP: it compiles one tiny
# archive per room into a fake build directory, where the snap room calls a
# function of the gateway room (a call that runs back up) and the host
# room calls one of raft (allowed), and checks that exactly the first is
# reported and that the tree without it passes; then that the gateway's
# I/O ledger reports a libuv call it does not list and a listed call the
# room no longer makes.
set -u

script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-room-links"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-room-links.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# room_archive ROOM C-SOURCE: .libs/libbatonROOM.a holding the source's object.
room_archive() {
        mkdir -p "$tmp/build/.libs"
        printf '%s\n' "$2" >"$tmp/$1.c"
        "$cc" -c -o "$tmp/$1.o" "$tmp/$1.c" &&
                rm -f "$tmp/build/.libs/libbaton$1.a" &&
                ar rcs "$tmp/build/.libs/libbaton$1.a" "$tmp/$1.o"
}

rooms="base config disk net offline ops http"
for r in $rooms; do
        room_archive "$r" "int ${r}_thing(void) { return 0; }"
done
room_archive raft "int raft_apply(void) { return 1; }"
room_archive host "int raft_apply(void); int host_route(void) { return raft_apply(); }"
room_archive gateway "int gateway_route(void) { return 0; }"
room_archive snap "int gateway_route(void); int snap_save(void) { return gateway_route(); }"

export BATON_ROOM_IO_LEDGER="$tmp/ledger"
echo "# the fake gateway does no I/O" >"$BATON_ROOM_IO_LEDGER"
out=$("$script" "$tmp/build" 2>&1)
rc=$?
echo "# check-room-links on the fake build (exit $rc):"
echo "$out" | sed 's/^/#   /'
tap_check "a call from snap into gateway exits 1" test "$rc" -eq 1
tap_check "it names the object, both rooms and the symbol" \
        grep -q 'libbatonsnap.a:snap.o: room snap calls gateway_route of room gateway$' <<<"$out"
tap_check "the allowed call from host into raft is not reported" \
        test "$(wc -l <<<"$out")" -eq 1

room_archive snap "int snap_save(void) { return 0; }"
out=$("$script" "$tmp/build" 2>&1)
rc=$?
tap_check "without the call it exits 0" test "$rc" -eq 0
tap_check "and prints nothing" test -z "$out"

# The ledger: a gateway that reads libuv's clock, unlisted, then listed,
# then no longer calling it while still listed.
room_archive gateway "unsigned long uv_now(void *l); int gateway_route(void) { return (int)uv_now(0); }"
out=$("$script" "$tmp/build" 2>&1)
rc=$?
tap_check "an unlisted uv_now in the gateway exits 1" test "$rc" -eq 1
tap_check "it names the room and the call" \
        grep -q 'room gateway does I/O: uv_now ' <<<"$out"
echo "gateway uv_now" >>"$BATON_ROOM_IO_LEDGER"
out=$("$script" "$tmp/build" 2>&1)
rc=$?
tap_check "listed in the ledger, it passes" test "$rc" -eq 0 -a -z "$out"
room_archive gateway "int gateway_route(void) { return 0; }"
out=$("$script" "$tmp/build" 2>&1)
rc=$?
tap_check "a listed call the gateway no longer makes exits 1" test "$rc" -eq 1
tap_check "and says to take it out of the ledger" \
        grep -q 'room gateway no longer calls uv_now: take it out of ledger$' <<<"$out"

rm "$tmp/build/.libs/libbatonops.a"
"$script" "$tmp/build" >/dev/null 2>&1
rc=$?
tap_check "a missing room archive exits 2" test "$rc" -eq 2

tap_end
