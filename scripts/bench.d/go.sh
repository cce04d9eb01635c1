# --go: the Go client (bindings/go) against libbaton, in one sitting.
# Builds baton-gobench (bindings/go/cmd/baton-gobench: baton-bench's
# uncontended and contended workloads through the Go client, the same
# per operation, with baton-bench's result line) into build/ with Go 1.23
# (/usr/lib/go-1.23/bin/go; GOCACHE, if unset, under build/), or runs
# GOBENCH=FILE instead (a Go client changed elsewhere). Then for each
# cluster size (--nodes, default 3 alone) a fresh cluster (TLS as users
# run it, unless --tls off) and, for each of uncontended at 1, 16 and 64
# clients and contended at 16, baton-bench and baton-gobench back to back,
# the first of the two alternating from one repetition to the next;
# --reps times (default 1; three or more for a figure worth quoting), each
# for --duration seconds (default 10) after --warmup (default 2). Prints
# one Markdown table: per figure the medians of C's and Go's ops/s, Go ÷ C
# of the medians and the range of the repetitions' own ratios, each one's
# p50 and p99 and the CPU its client process spent per op; writes every
# line to FILE, each with "client": "c" or "go".
# shellcheck shell=bash disable=SC2154,SC2016 # globals: scripts/bench; jq filters

go_figures="uncontended:1 uncontended:16 uncontended:64 contended:16"
gobench="$root/build/baton-gobench"

# go_check: --go's settings: one cluster size unless --nodes says more,
# and a Go to build with (or GOBENCH).
go_check() {
        [[ " $given " == *" --nodes "* ]] || sizes=3
        if [ -n "${GOBENCH:-}" ]; then
                [ -x "$GOBENCH" ] || usage_error "--go: GOBENCH=$GOBENCH is no executable"
        elif [ ! -x /usr/lib/go-1.23/bin/go ]; then
                die "--go: /usr/lib/go-1.23/bin/go is missing (scripts/setup installs golang-1.23-go)"
        fi
}

# build_gobench: GOBENCH, else baton-gobench built from bindings/go, into
# $gobench; as scripts/test builds the Go binding: no network, no other
# toolchain.
build_gobench() {
        if [ -n "${GOBENCH:-}" ]; then
                gobench=$GOBENCH
                return
        fi
        echo "bench: building $gobench" >&2
        (
                cd "$root/bindings/go" &&
                        GOTOOLCHAIN=local GOPROXY=off GOFLAGS='' \
                                GOCACHE="${GOCACHE:-$root/build/go-cache}" \
                                /usr/lib/go-1.23/bin/go build -o "$gobench" ./cmd/baton-gobench
        ) || die "--go: building baton-gobench failed"
}

# run_gobench NODES PREFIX ARGS...: baton-gobench against the running
# cluster, as run_bench runs baton-bench.
run_gobench() {
        bench=$gobench run_bench "$@"
}

# go_figure NODES WORKLOAD CLIENTS REP CLIENT: one figure by baton-bench
# (CLIENT c) or baton-gobench (go), recorded.
go_figure() {
        local n=$1 workload=$2 clients=$3 rep=$4 client=$5 run=run_bench line
        [ "$client" = c ] || run=run_gobench
        line=$("$run" "$n" "gocmp-$n-$workload-$clients-$rep-$client" \
                --workload "$workload" --clients "$clients" \
                --duration "$duration" 2>/dev/null || true)
        record "$line" '. + {rep: $rep, client: $client, go_cmp: true}' \
                --argjson rep "$rep" --arg client "$client"
}

experiment_go() {
        local failed
        build_gobench
        pair_figures go_figure go "$go_figures"
        summary_go "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed)"
        [ "$failed" -eq 0 ]
}
