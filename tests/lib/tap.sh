# shellcheck shell=bash
# TAP for the shell tests. Source it, then for each check
#   tap_check DESCRIPTION COMMAND [ARGS...]
# prints "ok N - DESCRIPTION" when COMMAND succeeds, else "not ok N - ...";
# end the script with tap_end, which prints the plan ("1..N") and returns
# non-zero when a check failed: its status is the test's.
tap_n=0
tap_failed=0

tap_check() {
        local what=$1
        shift
        tap_n=$((tap_n + 1))
        if "$@"; then
                echo "ok $tap_n - $what"
        else
                tap_failed=$((tap_failed + 1))
                echo "not ok $tap_n - $what"
        fi
}

tap_end() {
        echo "1..$tap_n"
        [ "$tap_failed" -eq 0 ]
}
