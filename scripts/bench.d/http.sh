# --http: the HTTP/JSON API (docs/http.md) against the binary protocol, in
# one sitting: for each cluster size (--nodes, default 3 alone) a fresh
# cluster (TLS as users run it) and, for each of uncontended at 1, 16 and
# 64 clients and contended at 16, baton-bench through libbaton and
# baton-bench --http (the same operations as HTTP requests, each client a
# session of its own on one keep-alive connection) back to back, the
# first alternating from one repetition to the next; --reps times. Prints
# one Markdown table as --go does (HTTP ÷ C); writes every line to FILE,
# each with "client": "c" or "http".
# shellcheck shell=bash disable=SC2154 # globals: scripts/bench

http_figures="uncontended:1 uncontended:16 uncontended:64 contended:16"

http_check() {
        [[ " $given " == *" --nodes "* ]] || sizes=3
        [ "$tls" = on ] || usage_error "--http: the HTTP API's clients need TLS (--tls on)"
}

# The HTTP API's endpoints of the running cluster: the client endpoints'
# hosts with scripts/cluster's HTTP ports (client port + 200).
http_endpoints() {
        local e out="" ep
        IFS=',' read -ra e <<<"$("$cluster" env | sed -n 's/^export BATON_ENDPOINTS=//p')"
        for ep in "${e[@]}"; do
                out="$out${out:+,}${ep%:*}:$((${ep##*:} + 200))"
        done
        echo "$out"
}

# http_figure NODES WORKLOAD CLIENTS REP CLIENT: one figure through
# libbaton (CLIENT c) or the HTTP API (http), recorded.
http_figure() {
        local n=$1 workload=$2 clients=$3 rep=$4 client=$5 line extra=()
        [ "$client" = c ] || extra=(--http "$(http_endpoints)")
        line=$(run_bench "$n" "httpcmp-$n-$workload-$clients-$rep-$client" \
                --workload "$workload" --clients "$clients" \
                --duration "$duration" "${extra[@]}" 2>/dev/null || true)
        record "$line" '. + {rep: $rep, client: $client, http_cmp: true}' \
                --argjson rep "$rep" --arg client "$client"
}

experiment_http() {
        local failed
        pair_figures http_figure http "$http_figures"
        summary_http "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed)"
        [ "$failed" -eq 0 ]
}
