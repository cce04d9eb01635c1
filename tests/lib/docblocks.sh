# shellcheck shell=bash
# What the tests that run a page's shell examples as written share
# (tests/scripts/test-readme.sh, tests/http/test-http-doc.sh). Source it.
#
#   docblocks_split PAGE DIR     each ```sh block of PAGE, in order, into
#                                DIR/block-N.sh; prints how many
#   docblocks_free_base START OFFSET...
#                                a port base from START, moved on by 1000
#                                (eight tries) while any BASE+OFFSET port
#                                is listened on; status 1 when none is free

docblocks_split() {
        awk -v dir="$2" '
                /^```sh[[:space:]]*$/ { n++; out = sprintf("%s/block-%d.sh", dir, n); inblock = 1; next }
                /^```/ && inblock { inblock = 0; close(out); next }
                inblock { print > out }
        ' "$1"
        find "$2" -maxdepth 1 -name 'block-*.sh' | wc -l
}

docblocks_free_base() {
        local base=$1 try p busy
        shift
        for try in 0 1 2 3 4 5 6 7; do
                busy=0
                for p in "$@"; do
                        if ss -Htln "sport = :$((base + p))" 2>/dev/null | grep -q .; then
                                busy=1
                                break
                        fi
                done
                [ $busy -eq 0 ] && { echo "$base"; return 0; }
                base=$((base + 1000))
        done
        return 1
}
