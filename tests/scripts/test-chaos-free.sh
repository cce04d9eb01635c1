#!/usr/bin/env bash
# Test that batond carries none of the chaos suite's code, printing TAP:
# its crash points (src/server/base/crashpoint.h) are linked only into
# batond-crashpoints and batond-trustimage, the servers the crash-point
# nemesis arms (docs/chaos.md, "Crash points"). Run in a build directory;
# skipped (77) without nm or the three programs.
set -u

bins="batond tests/chaos/batond-crashpoints tests/chaos/batond-trustimage"
for b in $bins; do
        if [ ! -x "$b" ] || ! command -v nm >/dev/null 2>&1; then
                echo "1..0 # SKIP no $b or no nm"
                exit 77
        fi
done

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# Whether program $1 defines crashpoint_hit; whether it has no symbol
# named crash-anything. Both called through tap_check().
# shellcheck disable=SC2317
has_points() { nm "$1" | grep -q ' [Tt] crashpoint_hit$'; }
# shellcheck disable=SC2317
no_crash_symbol() { ! nm "$1" | grep -qi crash; }

tap_check "batond has no crash-point code (nm batond | grep -i crash)" no_crash_symbol batond
tap_check "batond-crashpoints has the crash points" has_points tests/chaos/batond-crashpoints
tap_check "batond-trustimage has the crash points" has_points tests/chaos/batond-trustimage
tap_end
