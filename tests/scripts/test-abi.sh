#!/usr/bin/env bash
# Test of libbaton's ABI, printing TAP: the shared library exports exactly
# the functions include/ declares with BATON_API, no more (a module of the
# client core or its host leaking out, say registry_submit) and no fewer
# (a public call lost in a refactoring). The symbols are read with
# `nm -D --defined-only`; LIBBATON=path checks another build's library
# (default: .libs/libbaton.so of the build directory the test runs in).
# Skipped (77) when there is no shared library or no nm.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
lib=${LIBBATON:-.libs/libbaton.so}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if [ ! -e "$lib" ] || ! command -v nm >/dev/null 2>&1; then
        echo "1..0 # SKIP no $lib or no nm"
        exit 77
fi

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# The functions include/ declares public: the name of each declaration that
# begins with BATON_API, one a line, sorted.
grep -rh '^BATON_API' "$root/include" | grep -o 'baton_[a-z0-9_]*(' |
        tr -d '(' | LC_ALL=C sort -u >"$tmp/declared"
# What the library exports: its defined dynamic symbols, sorted.
nm -D --defined-only "$lib" | awk '{print $NF}' | LC_ALL=C sort -u \
        >"$tmp/exported"

# Print what differs between the declared list $1 and the exported list $2,
# one "exported but not declared: X" or "declared but not exported: X" a
# line; succeed when nothing does.
differ() {
        local out
        out=$(LC_ALL=C comm -3 "$1" "$2" |
                sed -e 's/^\t\(.*\)/exported but not declared: \1/' \
                        -e 't' -e 's/^/declared but not exported: /')
        [ -z "$out" ] && return 0
        echo "$out" | sed 's/^/# /'
        return 1
}

tap_check "include/ declares some public calls" test -s "$tmp/declared"
tap_check "$lib exports exactly what include/ declares with BATON_API" \
        differ "$tmp/declared" "$tmp/exported"

# The check goes red: a core function leaking out, and a public call lost.
{
        cat "$tmp/exported"
        echo registry_submit
} | LC_ALL=C sort -u >"$tmp/leaky"
out=$(differ "$tmp/declared" "$tmp/leaky")
rc=$?
tap_check "a leaked registry_submit is refused" test "$rc" -ne 0
tap_check "and named" grep -q 'exported but not declared: registry_submit' <<<"$out"
grep -vx baton_acquire "$tmp/exported" >"$tmp/short"
out=$(differ "$tmp/declared" "$tmp/short")
tap_check "a lost baton_acquire is named" \
        grep -q 'declared but not exported: baton_acquire' <<<"$out"

tap_end
