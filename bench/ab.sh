#!/usr/bin/env bash
# Two (or more) leasehold servers against each other, with the SAME load tool,
# in one run: the question "is this change no slower?" asked of the server
# alone. Each binary gets its own server (own data directory, own port,
# started once); every round runs every scenario against every server,
# the order of servers rotating each round; then medians per scenario and
# server, and each server's ratio to the first. Not part of the test command.
#
# Usage: bench/ab.sh ROUNDS BINARY_A BINARY_B [BINARY…]
#   each BINARY a Release `leasehold`; the first is the baseline
# Environment: TOOL (the leasehold-peers binary; default the one beside
#   BINARY_B's build, BUILD/src/peers_cli/leasehold-peers), SCENARIOS
#   (default "applock-16 checkout-64"; a label is SCENARIO-CLIENTS, with
#   applock-durable-N for journaled application locks), WINDOW (3s),
#   WARMUP (500ms), CONFIG (JSON for --config; default one I/O thread and
#   the bench-memory namespace in memory, as bench/peers.sh; use '{"io_threads":1}'
#   for a binary older than memory namespaces; CONFIG_0, CONFIG_1, … give
#   one binary its own), SERVER_ENV (an environment
#   assignment for every server, e.g. VAR=1), OUT (results file, default
#   /tmp/leasehold-ab.jsonl).
# The memory scenarios (applock-N) use namespace bench-memory, the durable
# ones (applock-durable-N, checkout-N) use bench.
set -euo pipefail

rounds=${1:?usage: bench/ab.sh ROUNDS BINARY_A BINARY_B [BINARY…]}
shift
[ $# -ge 2 ] || { echo "ab: give at least two binaries" >&2; exit 2; }
binaries=()
for b in "$@"; do binaries+=("$(realpath "$b")"); done
default_tool=$(dirname "$(dirname "$(dirname "${binaries[1]}")")")/src/peers_cli/leasehold-peers
tool=$(realpath -m "${TOOL:-$default_tool}")
[ -x "$tool" ] || { echo "ab: no leasehold-peers at $tool; set TOOL" >&2; exit 1; }
scenarios=${SCENARIOS:-applock-16 checkout-64}
window=${WINDOW:-3s}
warmup=${WARMUP:-500ms}
config=${CONFIG:-'{"io_threads": 1, "namespaces": {"bench-memory": {"locks": "memory"}}}'}
out=${OUT:-/tmp/leasehold-ab.jsonl}
command -v jq >/dev/null || { echo "ab: needs jq" >&2; exit 1; }

# shellcheck source=bench/scratch.sh
source "$(dirname "$0")/scratch.sh"
scratch ab

# shellcheck source=bench/ports.sh
source "$(dirname "$0")/ports.sh"

urls=()
for i in "${!binaries[@]}"; do
  own=CONFIG_$i
  echo "${!own:-$config}" >"$work/config$i.json"
  port=$(free_port)
  # shellcheck disable=SC2086  # SERVER_ENV is a list of assignments
  env ${SERVER_ENV:-} "${binaries[$i]}" serve --listen "127.0.0.1:$port" \
    --data "$work/data$i" --config "$work/config$i.json" >"$work/server$i.log" 2>&1 &
  pids+=($!)
  urls+=("http://127.0.0.1:$port")
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.05
  done
done

: >"$out"
n=${#binaries[@]}
echo "ab: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= rounds; ++round)); do
  for label in $scenarios; do
    kind=${label%-*}
    clients=${label##*-}
    ns=bench
    case $kind in
      applock-durable) kind=applock ;;
      applock | hot | idle) ns=bench-memory ;;
    esac
    for ((k = 0; k < n; ++k)); do
      i=$(((k + round - 1) % n))
      result=$("$tool" bench --target "${urls[$i]}" --scenario "$kind" \
        --connections "$clients" --duration "$window" --warmup "$warmup" \
        --keys 100000 --ns "$ns" --server-pid "${pids[$i]}" --json) || true
      jq -e . >/dev/null 2>&1 <<<"$result" || result='{"ok":false,"pairs_per_s":0}'
      jq -c --arg l "$label" --argjson s "$i" --argjson r "$round" \
        '{label: $l, server: $s, round: $r, pairs_per_s, ok, cpu}' <<<"$result" >>"$out"
      echo "  round $round $label server $i: $(jq -r .pairs_per_s <<<"$result") pairs/s" >&2
    done
  done
done

echo "ab: load after: $(cut -d' ' -f1-3 /proc/loadavg); servers:" >&2
for i in "${!binaries[@]}"; do echo "  $i ${binaries[$i]}" >&2; done
jq -s -r '
  def median: sort | if length == 0 then 0 else .[(length - 1) / 2 | floor] end;
  group_by(.label)[] as $g
  | ($g | map(select(.server == 0) | .pairs_per_s) | median) as $base
  | $g | group_by(.server)[]
  | (map(.pairs_per_s) | median) as $m
  | "\(.[0].label)\tserver \(.[0].server)\tmedian \($m | floor) pairs/s\t\(if $base > 0 then ($m / $base * 100 | floor) / 100 else "-" end)x\truns \(map(.pairs_per_s | floor) | join(" "))"
' "$out"
