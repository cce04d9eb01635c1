#!/usr/bin/env bash
# Test of the fuzz targets' harness, printing TAP, run by make check in a
# build directory:
#   - scripts/fuzz refuses an unknown target, flag or a bad number with
#     exit status 2 and a message naming it, before it installs or builds
#     anything;
#   - every target scripts/fuzz --list names has its source, a non-empty
#     corpus, a dictionary and a place in Makefile.am's fuzz_tests, and
#     every tests/fuzz/fuzz_*.c is such a target (none forgotten);
#   - the negative control: fuzz_reader_broken, fuzz_reader linked with a
#     frame reader that drops one-byte body chunks, fails the replay of the
#     reader's corpus, naming the broken invariant, while fuzz_reader
#     passes it; and a replay of a missing corpus fails (a replay of
#     nothing checks nothing).
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
script=$root/scripts/fuzz

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# refused WHAT NAMED ARGS...: scripts/fuzz ARGS exits 2 and its message
# contains NAMED.
refused() {
        local what=$1 named=$2 err rc
        shift 2
        err=$("$script" "$@" 2>&1 >/dev/null)
        rc=$?
        echo "# scripts/fuzz $* -> exit $rc: $err"
        tap_check "$what: exit 2" test "$rc" -eq 2
        tap_check "$what: the message names $named" grep -qF -- "$named" <<<"$err"
}

refused "an unknown target" "no target 'nosuch'" --target nosuch
refused "an unknown flag" "unknown argument '--fast'" --fast
refused "--time 0" "'0' is not a positive whole number" --time 0
refused "--runs with a word" "'many' is not a positive whole number" --runs many

targets=$("$script" --list)
tap_check "--list names targets" test -n "$targets"
fuzz_tests=$(sed -n '/^fuzz_tests = /,/^[^\t]/p' "$root/Makefile.am")
for t in $targets; do
        tap_check "$t: tests/fuzz/fuzz_$t.c" test -f "$root/tests/fuzz/fuzz_$t.c"
        tap_check "$t: a corpus" test -n "$(ls -A "$root/tests/fuzz/corpus/$t" 2>/dev/null)"
        tap_check "$t: a dictionary" test -s "$root/tests/fuzz/dict/$t.dict"
        tap_check "$t: in fuzz_tests" grep -qE "tests/fuzz/fuzz_$t( |\\\\|\$)" <<<"$fuzz_tests"
done
for f in "$root"/tests/fuzz/fuzz_*.c; do
        t=$(basename "$f" .c)
        t=${t#fuzz_}
        tap_check "tests/fuzz/fuzz_$t.c is a target of scripts/fuzz" \
                grep -qx -- "$t" <<<"$targets"
done

export srcdir=${srcdir:-$root}
out=$(tests/fuzz/fuzz_reader 2>&1)
rc=$?
echo "# fuzz_reader: exit $rc: $(tail -n 1 <<<"$out")"
tap_check "the reader's corpus replays" test "$rc" -eq 0
out=$(tests/fuzz/fuzz_reader_broken 2>&1)
rc=$?
echo "# fuzz_reader_broken: exit $rc: $(grep -v '^ok\|^1\.\.' <<<"$out" | head -n 3)"
tap_check "negative control: the broken reader fails the replay" test "$rc" -ne 0
tap_check "negative control: the failure names the body not copied" \
        grep -q "body is not the stream's" <<<"$out"
out=$(srcdir=/nonexistent tests/fuzz/fuzz_reader 2>&1)
rc=$?
tap_check "a missing corpus fails the replay" test "$rc" -ne 0
tap_check "a missing corpus says so" grep -q "^not ok" <<<"$out"

tap_end
