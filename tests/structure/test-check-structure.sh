#!/usr/bin/env bash
# Self-test of scripts/check-structure, printing TAP: it builds a small fake
# tree in a temporary directory with one violation of each kind (and of each
# folder's caps: src/, tests/, bindings/) next to the allowed cases closest
# to them, and checks that exactly the violations are
# reported, each as `file:line: message`, with exit status 1; that the tree
# with the violations removed passes with exit status 0; that a copy of the
# real client core with a clock read added goes red; and --help.
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
mkdir -p "$tree"/{include/baton,src/client,src/proto,src/server/{raft,snap,gateway,net,attic},src/fsm,src/lib,tests/unit,tests/lib}
mkdir -p "$tree"/bindings/{c,python/pkg}

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

# d. batond's rooms: a lower room including a higher one (snap the
# gateway's, the gateway net's), a file outside any room and a room
# missing from the allow-table (violations); a room including its own
# header, a lower room and another layer, and main.c including any room
# (allowed).
printf '/* Snapshots. */\n#include "../gateway/pending.h"\n' >"$tree/src/server/snap/bad.c"
printf '/* The core. */\n#include "../net/conn.h"\n' >"$tree/src/server/gateway/bad.c"
printf '#include "pending.h"\n#include "../config/config.h"\n#include "../../proto/proto.h"\n' \
        >"$tree/src/server/gateway/ok.c"
printf '#include "conn.h"\n#include "../gateway/gwconn.h"\n' \
        >"$tree/src/server/net/ok.c"
echo '#include "gateway/gateway.h"' >"$tree/src/server/main.c"
echo '/* Nowhere. */' >"$tree/src/server/stray.c"
echo '/* A room nobody named. */' >"$tree/src/server/attic/old.c"

# e. The client API's baton.h below the client: two violations (a relative
# path and the installed form), and the allowed cases closest to them: a
# topic header of include/baton/, a name that only ends in baton.h, one in
# a comment, and baton.h in the client library and in a test.
cat >"$tree/src/fsm/codes.c" <<'EOF'
/* A state machine file that takes the whole client API for its codes. */
#include <stdint.h>
#include "../../include/baton/errors.h"
#include "../../include/baton.h"
EOF
echo '# include <baton.h>' >"$tree/src/server/net/conn.c"
cat >"$tree/src/lib/okerr.c" <<'EOF'
#include "../../include/baton/errors.h"
#include "../../include/baton/cluster.h"
#include "mybaton.h"
/* #include "../../include/baton.h" is only a comment */
EOF
echo '#include "../../include/baton.h"' >"$tree/src/client/api.c"
echo '#include "../../include/baton.h"' >"$tree/tests/unit/test_y.c"

# f. The client core's fence: the listed files of src/client/ may not call
# the clock, randomness, threads, sockets, files or TLS, nor include their
# headers. Violations: in outcome.c two includes (<pthread.h>, tls.h), a
# clock read, a pthread_ prefix call and time() with a space before its
# "("; in locks.c a write(); in notify.h <time.h>; in request.c two
# prefixed calls on one line (tls_, SSL_). Allowed, the cases closest to
# them: clock.h, names in a comment and in a string, calls through a
# member (s->random(), s->env.write()), longer names that merely contain
# a forbidden one, and an unlisted client file (loop.c) doing all of it.
core_clean_outcome() {
        cat <<'EOF'
/* A fenced file that asks its caller for the time. */
#include <string.h>
#include "clock.h"
/* #include <unistd.h> only in a comment; clock_now_ms() too */
static int64_t f(struct s *s, int64_t now)
{
        s->random(s->data);
        s->env.write(1);
        my_clock_now_ms();
        clock_now_ms_of(s);
        puts("getrandom(");
        registry_waiting(s);
        return clock_after(now, 5);
}
EOF
}
# Every file the script fences (--core) starts clean; some get violations.
core_list=$("$script" --core)
while read -r f; do
        echo "/* $f, fenced and clean. */" >"$tree/$f"
done <<<"$core_list"
cat >"$tree/src/client/outcome.c" <<'EOF'
/* A fenced file that reaches for its host. */
#include <string.h>
#include <pthread.h>
#include "../tls/tls.h"
#include "clock.h"
/* #include <unistd.h> only in a comment; clock_now_ms() too */
static int64_t f(struct s *s)
{
        int64_t now = clock_now_ms();
        pthread_mutex_lock(&s->mu);
        s->random(s->data);
        s->env.write(1);
        my_clock_now_ms();
        clock_now_ms_of(s);
        puts("getrandom(");
        registry_waiting(s);
        return clock_after(now, 5) + (int64_t)time (NULL);
}
EOF
printf '/* Holds. */\nstatic void f(int fd)\n{\n        (void)write(fd, "x", 1);\n}\n' \
        >"$tree/src/client/locks.c"
printf '/* Notices. */\n#include <time.h>\n' >"$tree/src/client/notify.h"
printf '/* Requests. */\nstatic void f(void *t)\n{\n        tls_conn_destroy(t); SSL_free(t);\n}\n' \
        >"$tree/src/client/request.c"
printf '/* Not fenced. */\n#include <pthread.h>\nstatic long f(void)\n{\n        return clock_now_ms();\n}\n' \
        >"$tree/src/client/loop.c"

# b. A file of 901 lines, one of 900, and one of 1000 that says why; and in
# include/, a header of 901 lines and one of 900.
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
{
        echo "/* A public header too long to read. */"
        filler 900
} >"$tree/include/baton/huge.h"
{
        echo "/* A public header just short enough. */"
        filler 899
} >"$tree/include/baton/edge.h"

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
# b and c in tests/: looser caps. A file of 1001 lines (violation), one of
# 1000 (allowed); functions of 121 lines (violation), 120 (allowed, though
# over src/'s 80) and 121 with a reason right above (allowed).
{
        echo "/* Too long even for a test. */"
        filler 1000
} >"$tree/tests/unit/test_big.c"
{
        echo "/* Just short enough for a test. */"
        filler 999
} >"$tree/tests/lib/edge.c"
{
        echo "/* Test functions. */"
        echo
        func test_too_long 121 # line 3
        echo
        func test_just_right 120
        echo
        echo "/* Long because the scenario is one story. */"
        func test_explained 121
} >"$tree/tests/unit/test_funcs.c"

# b and c in bindings/: src/'s caps, Python files by line count. Violations:
# a .py of 901 lines, a .c of 901 lines and a C function of 81 lines;
# allowed: a .py of 900 lines, one of 1000 whose docstring says why and one
# of 1000 whose # comment says why, and a 2000-line header under include/
# (not size-checked).
{
        echo '"""Too long."""'
        for ((i = 1; i < 901; i++)); do echo "x = $i"; done
} >"$tree/bindings/python/pkg/big.py"
{
        echo '"""Just short enough."""'
        for ((i = 1; i < 900; i++)); do echo "x = $i"; done
} >"$tree/bindings/python/pkg/edge.py"
{
        echo '"""The generated table of every call.'
        echo
        echo 'This module is long because the table is generated."""'
        for ((i = 3; i < 1000; i++)); do echo "x = $i"; done
} >"$tree/bindings/python/pkg/table.py"
{
        echo '# Every error: long because'
        echo '# the list is the whole API.'
        for ((i = 2; i < 1000; i++)); do echo "x = $i"; done
} >"$tree/bindings/python/pkg/errs.py"
{
        echo "/* A binding's glue, too long. */"
        filler 900
} >"$tree/bindings/c/big.c"
{
        echo "/* A binding's function. */"
        func glue_too_long 81 # line 2
} >"$tree/bindings/c/funcs.c"

lines_before() { # the line number where function $1 starts in funcs.c
        grep -n "^static int $1(\|^$1(" "$tree/src/client/funcs.c" | cut -d: -f1
}
two_lines_at=$(($(lines_before two_lines) - 1)) # its attribute line

expected=$(
        cat <<EOF
bindings/c/big.c:1:
bindings/c/funcs.c:2:
bindings/python/pkg/big.py:1:
include/baton/huge.h:1:
include/pub.h:3:
src/client/bad.c:3:
src/client/funcs.c:4:
src/client/funcs.c:$(lines_before detached):
src/client/funcs.c:$(lines_before unexplained):
src/client/funcs.c:$two_lines_at:
src/client/locks.c:4:
src/client/notify.h:2:
src/client/outcome.c:3:
src/client/outcome.c:4:
src/client/outcome.c:9:
src/client/outcome.c:10:
src/client/outcome.c:17:
src/client/request.c:4:
src/client/request.c:4:
src/fsm/codes.c:4:
src/lib/big.c:1:
src/server/attic/old.c:1:
src/server/gateway/bad.c:2:
src/server/net/conn.c:1:
src/server/snap/bad.c:2:
src/server/stray.c:1:
tests/unit/test_big.c:1:
tests/unit/test_funcs.c:3:
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
check "a test file is held to 1000 lines" \
        grep -q "^tests/unit/test_big.c:1: 1001 lines (over 1000)" <<<"$out"
check "a test function is held to 120 lines" \
        grep -q "^tests/unit/test_funcs.c:3: function test_too_long is 121 lines (over 120)" <<<"$out"
check "a Python file in bindings/ is held to 900 lines" \
        grep -q "^bindings/python/pkg/big.py:1: 901 lines (over 900)" <<<"$out"
check "a C function in bindings/ is held to 80 lines" \
        grep -q "^bindings/c/funcs.c:2: function glue_too_long is 81 lines (over 80)" <<<"$out"

check "the wrong include names both rooms" \
        grep -q "^src/server/snap/bad.c:2: room snap includes a header of room gateway" <<<"$out"
check "the request core may not include the network's headers" \
        grep -q "^src/server/gateway/bad.c:2: room gateway includes a header of room net (#include \"../net/conn.h\"): gateway may include only base config$" <<<"$out"
check "the long public header says its length" \
        grep -q "^include/baton/huge.h:1: 901 lines" <<<"$out"
check "the include of baton.h is named, with where the codes are" \
        grep -q '^src/fsm/codes.c:4: includes baton.h (#include "../../include/baton.h"): .*baton/errors.h' <<<"$out"
check "the client core's clock read is named, with what it reaches" \
        grep -q '^src/client/outcome.c:9: calls clock_now_ms (the clock): the client core (rule f) takes the time' <<<"$out"
check "a prefix names the whole call" \
        grep -q '^src/client/outcome.c:10: calls pthread_mutex_lock (threads): ' <<<"$out"
check "two calls on one line are two reports" \
        test "$(grep -c '^src/client/request.c:4: calls \(tls_conn_destroy\|SSL_free\) (TLS): ' <<<"$out")" -eq 2
check "a forbidden header is named, in a fenced header too" \
        grep -q '^src/client/notify.h:2: includes time.h (the clock): ' <<<"$out"
check "the unfenced client file may do it all" \
        test -z "$(grep '^src/client/loop.c:' <<<"$out")"

# The same tree with the violations taken out passes.
rm "$tree/src/client/bad.c" "$tree/include/pub.h" "$tree/src/lib/big.c" \
        "$tree/src/client/funcs.c" "$tree/src/server/snap/bad.c" \
        "$tree/src/server/gateway/bad.c" \
        "$tree/src/server/stray.c" "$tree/src/server/attic/old.c" \
        "$tree/include/baton/huge.h" "$tree/src/fsm/codes.c" \
        "$tree/src/server/net/conn.c" \
        "$tree/tests/unit/test_big.c" "$tree/tests/unit/test_funcs.c" \
        "$tree/bindings/python/pkg/big.py" "$tree/bindings/c/big.c" \
        "$tree/bindings/c/funcs.c"
{
        func just_right 80
        echo
        echo "/* Long because it says so. */"
        func explained 81
} >"$tree/src/client/funcs.c"
func test_just_right 120 >"$tree/tests/unit/test_funcs.c"
core_clean_outcome >"$tree/src/client/outcome.c"
for f in locks.c notify.h request.c; do
        echo "/* $f, fenced and clean. */" >"$tree/src/client/$f"
done
out=$("$script" "$tree" 2>&1)
rc=$?
check "the tree without violations exits 0" test "$rc" -eq 0
check "and prints nothing" test -z "$out"

check "--core lists the fenced files, the lock table among them" \
        grep -qx 'src/client/locks.c' <<<"$core_list"
# A fenced file gone (renamed, say) would leave the fence: reported.
rm "$tree/src/client/notify.h"
out=$("$script" "$tree" 2>&1)
rc=$?
check "a missing file of the client core exits 1" test "$rc" -eq 1
check "and is named" \
        grep -q '^src/client/notify.h:1: listed in check-structure.s client core (rule f) but missing' <<<"$out"

# The real client core, copied: it passes as it is, and a clock read added
# to one of its files goes red, naming the file, the line and the call.
real=$(cd "$(dirname "$0")/../.." && pwd)
copy=$tmp/copy
mkdir -p "$copy/src"
cp -r "$real/src/client" "$copy/src/client"
out=$("$script" "$copy" 2>&1)
rc=$?
check "a copy of the real client passes" test "$rc" -eq 0 -a -z "$out"
at=$(($(wc -l <"$copy/src/client/outcome.c") + 4))
printf '\nstatic int64_t leak(void)\n{\n        return clock_now_ms();\n}\n' \
        >>"$copy/src/client/outcome.c"
out=$("$script" "$copy" 2>&1)
rc=$?
echo "# check-structure on the copy with a clock read added (exit $rc):"
echo "$out" | sed 's/^/#   /'
check "with a clock read added to outcome.c it exits 1" test "$rc" -eq 1
check "naming the file, the line and the call" \
        test "$out" = "src/client/outcome.c:$at: calls clock_now_ms (the clock): the client core (rule f) takes the time, randomness and secrets as arguments and leaves threads, sockets, files and TLS to its host"

out=$("$script" --help 2>&1)
rc=$?
check "--help exits 0 and describes the six rules" \
        test "$rc" -eq 0 -a "$(grep -c '^  [abcdef]\. ' <<<"$out")" -eq 6
out=$("$script" --rooms 2>&1)
check "--rooms prints the allow-table, snap on base alone" grep -qx 'snap: base' <<<"$out"
check "the request core's host may include the core" \
        grep -qx 'host: base config disk snap net raft gateway' <<<"$out"
check "and nothing below it may include the host: only the HTTP API, above it" \
        test -z "$(grep -v '^host:' <<<"$out" | grep -v '^http:' | grep -w host)"
"$script" --no-such-option >/dev/null 2>&1
rc=$?
check "an unknown option exits 2" test "$rc" -eq 2

echo "1..$n"
exit $((failed > 0))
