#!/usr/bin/env bash
# Runs `leasehold bench --spawn` RUNS times per scenario (each run on a fresh
# server in a temporary directory) and prints the median of each figure.
# Raw JSON, one line per run, goes to OUT (default /tmp/leasehold-bench.jsonl).
#
# Usage: bench/server_bench.sh BINARY [RUNS] [SCENARIO...]
#   e.g. bench/server_bench.sh build-rel/src/exe/leasehold 3 applock checkout hot idle
# Extra `leasehold bench` options can be given in BENCH_ARGS, e.g.
#   BENCH_ARGS="--connections 50 --duration 10s" bench/server_bench.sh ...
set -euo pipefail
binary=${1:?usage: server_bench.sh BINARY [RUNS] [SCENARIO...]}
runs=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
scenarios=("${@:-applock checkout hot idle}")
# shellcheck disable=SC2206
scenarios=(${scenarios[*]})
out=${OUT:-/tmp/leasehold-bench.jsonl}
: >"$out"

median() { jq -s 'sort | .[(length - 1) / 2 | floor]'; }

for s in "${scenarios[@]}"; do
  for ((i = 1; i <= runs; ++i)); do
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086
    "$binary" bench --spawn --scenario "$s" --json ${BENCH_ARGS:-} |
      jq -c --arg load "$load" '. + {load_before: ($load | tonumber)}' >>"$out" || true
    tail -n1 "$out" | jq -r '"  \(.scenario) run: \(.pairs_per_s) pairs/s, errors \(.errors), load \(.load_before)"' >&2
  done
done

for s in "${scenarios[@]}"; do
  sel() { jq "select(.scenario == \"$s\") | $1" "$out" | median; }
  last='(.phases | map(select(.timed)) | last)'
  printf '%s (median of %s): pairs/s %s, req/s %s, request p50/p99/p99.9 us %s/%s/%s, pair p50/p99/p99.9 us %s/%s/%s, errors (max) %s\n' \
    "$s" "$runs" "$(sel .pairs_per_s)" "$(sel .requests_per_s)" \
    "$(sel "$last.latency_us.request.p50")" "$(sel "$last.latency_us.request.p99")" \
    "$(sel "$last.latency_us.request.p999")" "$(sel "$last.latency_us.pair.p50")" \
    "$(sel "$last.latency_us.pair.p99")" "$(sel "$last.latency_us.pair.p999")" \
    "$(jq "select(.scenario == \"$s\") | .errors" "$out" | jq -s max)"
  if [ "$s" = hot ]; then
    printf '  fairness: min %s max %s fair share %s jain_ppm %s\n' \
      "$(sel '.phases[0].fairness.min')" "$(sel '.phases[0].fairness.max')" \
      "$(sel '.phases[0].fairness.fair_share')" "$(sel '.phases[0].fairness.jain_ppm')"
  fi
  if [ "$s" = idle ]; then
    printf '  idle: build ms %s, RSS MiB before %s after %s; applock pairs/s before %s, holding %s\n' \
      "$(sel .idle.build_ms)" \
      "$(sel '.idle.rss_bytes_before / 1048576 | floor')" \
      "$(sel '.idle.rss_bytes_after / 1048576 | floor')" \
      "$(sel '.phases[0].pairs_per_s')" "$(sel '.phases[2].pairs_per_s')"
  fi
done
