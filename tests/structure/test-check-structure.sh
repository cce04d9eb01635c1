#!/usr/bin/env bash
# Self-test of scripts/check-structure, printing TAP: it builds a small fake
# tree in a temporary directory with one violation of each kind next to the
# allowed cases closest to them, and checks that exactly the violations are
# reported, each as `file:line: message`, with exit status 1; that the tree
# with the violations removed passes with exit status 0; and --help.
set -u

script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-structure"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-structure.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() {
        n=$((n + 1))
        echo "ok $n - $1"
}
not_ok() {
        n=$((n + 1))
        failed=$((failed + 1))
        echo "not ok $n - $1"
}
check() { # description, then a command that must succeed
        local what=$1
        shift
        if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# `count` lines of filler code, each a statement.
filler() {
        local i
        for ((i = 0; i < $1; i++)); do
                echo "        x += $i;"
        done
}

# A function whose `{` to `}` spans `len` lines, both braces included.
func() { # name, len
        echo "static int $1(int x)"
        echo "{"
        filler $(($2 - 3))
        echo "        return x;"
        echo "}"
}

tree=$tmp/tree
mkdir -p "$tree"/{include,src/client,src/proto,src/server/{raft,snap,gateway,attic},src/fsm,src/lib,tests/unit}

# a. Includes of src/fsm/ headers: two violations, three allowed.
cat >"$tree/src/client/bad.c" <<'EOF'
/* A client file that reaches into the state machine. */
#include <stdio.h>
#include "../fsm/lockfsm.h"
/* #include "../proto/command.h" is only a comment */
EOF
cat >"$tree/include/pub.h" <<'EOF'
#ifndef PUB_H
#define PUB_H
#  include <fsm/command.h>
#endif
EOF
echo '#include "../fsm/lockfsm.h"' >"$tree/src/server/raft/node.c"
echo '#include "../../src/fsm/lockfsm.h"' >"$tree/tests/unit/test_x.c"
echo '#include "../proto/proto.h"' >"$tree/src/proto/ok.c"

# d. batond's rooms: a lower room including a higher one, a file outside
# any room and a room missing from the allow-table (violations); a room
# including its own header, a lower room and another layer, and main.c
# including any room (allowed).
printf '/* Snapshots. */\n#include "../gateway/pending.h"\n' >"$tree/src/server/snap/bad.c"
printf '#include "pending.h"\n#include "../raft/node.h"\n#include "../../proto/proto.h"\n' \
        >"$tree/src/server/gateway/ok.c"
echo '#include "gateway/gateway.h"' >"$tree/src/server/main.c"
echo '/* Nowhere. */' >"$tree/src/server/stray.c"
echo '/* A room nobody named. */' >"$tree/src/server/attic/old.c"

# b. A file of 901 lines, one of 900, and one of 1000 that says why.
{
        echo "/* Too long. */"
        filler 900
} >"$tree/src/lib/big.c"
{
        echo "/* Just short enough. */"
        filler 899
} >"$tree/src/lib/edge.c"
{
        echo "/* The table of every key: this file is long because"
        echo " * splitting the table would hide its order. */"
        filler 998
} >"$tree/src/fsm/table.c"

# c. Functions: 81 lines (violation), 80 (allowed), 81 with a reason right
# above (allowed), 81 with the reason separated by a blank line and one
# with an attribute and a signature over two lines, and one with a comment
# right above that gives no reason (violations), and a
# "long because" only in a string (no reason).
{
        echo "/* Functions. */"
        echo "#include <stdio.h>"
        echo
        func too_long 81 # line 4
        echo
        func just_right 80
        echo
        echo "/* One pass over the table: long because the cases share state"
        echo " * that would otherwise go in a struct. */"
        func explained 81
        echo
        echo "/* Not right above: long because of nothing. */"
        echo
        func detached 81
        echo
        echo "/* Right above, but no reason. */"
        func unexplained 81
        echo
        echo "__attribute__((format(printf, 2, 3))) static int"
        echo "two_lines(int x,"
        echo "          const char *fmt, ...)"
        echo "{"
        echo '        const char *s = "long because {";'
        filler 77
        echo "        return x;"
        echo "}"
} >"$tree/src/client/funcs.c"
lines_before() { # the line number where function $1 starts in funcs.c
        grep -n "^static int $1(\|^$1(" "$tree/src/client/funcs.c" | cut -d: -f1
}
two_lines_at=$(($(lines_before two_lines) - 1)) # its attribute line

expected=$(
        cat <<EOF
include/pub.h:3:
src/client/bad.c:3:
src/client/funcs.c:4:
src/client/funcs.c:$(lines_before detached):
src/client/funcs.c:$(lines_before unexplained):
src/client/funcs.c:$two_lines_at:
src/lib/big.c:1:
src/server/attic/old.c:1:
src/server/snap/bad.c:2:
src/server/stray.c:1:
EOF
)

out=$("$script" "$tree" 2>&1)
rc=$?
echo "# check-structure on the fake tree (exit $rc):"
echo "$out" | sed 's/^/#   /'
check "a tree with violations exits 1" test "$rc" -eq 1
while read -r want; do
        check "reported: $want" grep -q "^$want " <<<"$out"
done <<<"$expected"
got=$(echo "$out" | grep -c '^[^ :]*:[0-9][0-9]*: ')
check "nothing else reported ($got lines, $(wc -l <<<"$expected") expected)" \
        test "$got" -eq "$(wc -l <<<"$expected")"
check "every line is file:line: message" \
        test "$(echo "$out" | grep -vc '^[^ :]*:[0-9][0-9]*: .')" -eq 0
check "the long function is named, with its length" \
        grep -q "^src/client/funcs.c:4: function too_long is 81 lines" <<<"$out"
check "a two-line signature after an attribute is named" \
        grep -q "function two_lines is 81 lines" <<<"$out"
check "the long file says its length" \
        grep -q "^src/lib/big.c:1: 901 lines" <<<"$out"
check "the wrong include names both rooms" \
        grep -q "^src/server/snap/bad.c:2: room snap includes a header of room gateway" <<<"$out"

# The same tree with the violations taken out passes.
rm "$tree/src/client/bad.c" "$tree/include/pub.h" "$tree/src/lib/big.c" \
        "$tree/src/client/funcs.c" "$tree/src/server/snap/bad.c" \
        "$tree/src/server/stray.c" "$tree/src/server/attic/old.c"
{
        func just_right 80
        echo
        echo "/* Long because it says so. */"
        func explained 81
} >"$tree/src/client/funcs.c"
out=$("$script" "$tree" 2>&1)
rc=$?
check "the tree without violations exits 0" test "$rc" -eq 0
check "and prints nothing" test -z "$out"

out=$("$script" --help 2>&1)
rc=$?
check "--help exits 0 and describes the four rules" \
        test "$rc" -eq 0 -a "$(grep -c '^  [abcd]\. ' <<<"$out")" -eq 4
out=$("$script" --rooms 2>&1)
check "--rooms prints the allow-table, snap on base alone" grep -qx 'snap: base' <<<"$out"
"$script" --no-such-option >/dev/null 2>&1
rc=$?
check "an unknown option exits 2" test "$rc" -eq 2

echo "1..$n"
exit $((failed > 0))
