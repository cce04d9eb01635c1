# shellcheck shell=bash
# scripts/chaos: a matrix's runs (--smoke, --all): each run in a child
# scripts/chaos of its own, one line per run, the count at the end.

M_PASSED=0
M_FAILED=0
M_SKIPPED=0
M_FAILURES=()
M_LISTED=0

# One run of a matrix in $MATRIX_DIR/LABEL, its console output kept in
# RUN/console; one line here. A label --only does not match is not run
# and not counted.
matrix_run() {
        local label=$1 dir con st t0 t1 summary
        shift
        if [ -n "${ONLY:-}" ] && ! [[ "$label" =~ $ONLY ]]; then
                return 0
        fi
        M_LISTED=$((M_LISTED + 1))
        if [ "${LIST_RUNS:-0}" = 1 ]; then
                echo "$label $*"
                return 0
        fi
        dir="$MATRIX_DIR/$label"
        con="$MATRIX_DIR/$label.console"
        t0=$(date +%s)
        run_forwarding_signals "$self" --matrix-child --run-dir "$dir" "${MATRIX_EXTRA[@]}" "$@" >"$con" 2>&1
        st=$?
        if [ "$st" -eq 130 ]; then
                echo "interrupted in $label ($dir)"
                exit 130
        fi
        t1=$(date +%s)
        if [ -d "$dir" ]; then
                mv "$con" "$dir/console"
                con="$dir/console"
        fi
        summary=$(tail -n 1 "$dir/summary" 2>/dev/null || true)
        case "$st" in
        0)
                M_PASSED=$((M_PASSED + 1))
                printf 'PASS %-32s %4ss  %s  (%s)\n' "$label" $((t1 - t0)) "$dir" "${summary:-no summary}"
                ;;
        77)
                M_SKIPPED=$((M_SKIPPED + 1))
                printf 'SKIP %-32s %s\n' "$label" "$(grep -m1 SKIP "$con" | sed 's/^chaos: SKIP //')"
                ;;
        *)
                M_FAILED=$((M_FAILED + 1))
                M_FAILURES+=("$label: $dir")
                printf 'FAIL %-32s %4ss  %s  (exit %s; %s)\n' "$label" $((t1 - t0)) "$dir" "$st" "${summary:-no summary}"
                ;;
        esac
}

# The count, last; status 1 if a run failed, or if --only left no run.
matrix_end() {
        if [ "${LIST_RUNS:-0}" = 1 ]; then
                echo "$M_LISTED runs"
                [ "$M_LISTED" -gt 0 ]
                return
        fi
        if [ "$M_LISTED" -eq 0 ]; then
                echo "no run's label matches --only '${ONLY:-}' (--list-runs shows them)"
                echo "0 passed, 0 failed"
                return 1
        fi
        # The figures of this sitting's runs (docs/chaos.md quotes them).
        if [ -n "${MATRIX_DIR:-}" ]; then
                "$root/tests/chaos/chaos-tally" "$MATRIX_DIR" | sed 's/^/  /'
        fi
        if [ ${#M_FAILURES[@]} -gt 0 ]; then
                echo "failed runs:"
                printf '  %s\n' "${M_FAILURES[@]}"
        fi
        if [ "$M_SKIPPED" -gt 0 ]; then
                echo "$M_PASSED passed, $M_FAILED failed, $M_SKIPPED skipped"
        else
                echo "$M_PASSED passed, $M_FAILED failed"
        fi
        [ "$M_FAILED" -eq 0 ]
}
