#!/usr/bin/env bash
# leasehold over TLS beside plaintext, in one run: the same binary serves
# twice (one port plaintext, one TLS with certificates made for the run by
# scripts/test-certs, each with one I/O thread and the memory namespace
# bench-memory, as bench/ab.sh), and every round loads both, in alternating
# order, with the same `leasehold bench`:
#   kept-alive  application locks (acquire + release) on 16 kept-alive
#               connections: pairs/s, and the server's CPU per request
#   handshakes  the same, but a new connection (over TLS: a full handshake)
#               for every request: connections per second
# Then the medians per mode and scheme, and TLS's ratio to plaintext.
#
# Usage: bench/tls.sh BINARY [ROUNDS]      (BINARY: a Release `leasehold`)
# Environment: CLIENTS (16), WINDOW (3s), WARMUP (500ms), IO_THREADS (each
#   server's, 1), OUT (results, default /tmp/leasehold-tls.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."

binary=$(realpath "${1:?usage: bench/tls.sh BINARY [ROUNDS]}")
rounds=${2:-5}
clients=${CLIENTS:-16}
window=${WINDOW:-3s}
warmup=${WARMUP:-500ms}
out=${OUT:-/tmp/leasehold-tls.jsonl}
command -v jq >/dev/null || { echo "tls.sh: needs jq" >&2; exit 1; }

# shellcheck source=bench/scratch.sh
source "$(dirname "$0")/scratch.sh"
scratch tls

scripts/test-certs "$work/certs" >/dev/null
io_threads=${IO_THREADS:-1}
[[ $io_threads =~ ^[1-9][0-9]*$ ]] || { echo "tls.sh: IO_THREADS must be a positive integer" >&2; exit 2; }
echo "{\"io_threads\": $io_threads, \"namespaces\": {\"bench-memory\": {\"locks\": \"memory\"}}}" \
  >"$work/config.json"
# serve NAME [FLAGS…]: a server writing its port to $work/NAME.port.
serve() {
  local name=$1
  shift
  "$binary" serve --listen 127.0.0.1:0 --port-file "$work/$name.port" \
    --data "$work/$name" --config "$work/config.json" "$@" \
    >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do
    [ -s "$work/$name.port" ] && return 0
    sleep 0.05
  done
  echo "tls.sh: $name did not start: $(cat "$work/$name.log")" >&2
  exit 1
}
serve plain
serve tls --tls-cert "$work/certs/server.pem" --tls-key "$work/certs/server.key"
urls=("http://127.0.0.1:$(cat "$work/plain.port")"
  "https://localhost:$(cat "$work/tls.port")")
names=(plaintext tls)

: >"$out"
echo "tls.sh: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= rounds; ++round)); do
  for mode in kept-alive handshakes; do
    extra=()
    [ "$mode" = handshakes ] && extra=(--new-connection-per-request)
    for ((k = 0; k < 2; ++k)); do
      i=$(((k + round - 1) % 2))
      result=$("$binary" bench --url "${urls[$i]}" --ca-file "$work/certs/ca.pem" \
        --scenario applock --connections "$clients" --ns bench-memory \
        --duration "$window" --warmup "$warmup" --server-pid "${pids[$i]}" \
        "${extra[@]}" --json 2>/dev/null) || true
      jq -e .pairs_per_s >/dev/null 2>&1 <<<"$result" ||
        result='{"ok":false,"pairs_per_s":0,"requests_per_s":0,"phases":[]}'
      jq -c --arg m "$mode" --arg s "${names[$i]}" --argjson r "$round" '
        (.phases | map(select(.timed)) | last // {}) as $p
        | {mode: $m, scheme: $s, round: $r, ok, pairs_per_s, requests_per_s,
           server_us_per_request: ($p.cpu.server_us_per_request // 0)}' \
        <<<"$result" >>"$out"
      echo "  round $round $mode ${names[$i]}: $(jq -r .requests_per_s <<<"$result") requests/s" >&2
    done
  done
done

echo "tls.sh: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
jq -s -r '
  def median: sort | if length == 0 then 0 else .[(length - 1) / 2 | floor] end;
  group_by(.mode)[] as $g
  | ($g | map(select(.scheme == "plaintext") | .requests_per_s) | median) as $base
  | $g | group_by(.scheme)[]
  | (map(.requests_per_s) | median) as $m
  | "\(.[0].mode)\t\(.[0].scheme)\tmedian \($m | floor) requests/s\t\(if $base > 0 then ($m / $base * 100 | floor) / 100 else "-" end)x plaintext\tserver CPU \(map(.server_us_per_request) | median) us/request\truns \(map(.requests_per_s | floor) | join(" "))"
' "$out"
# Fails when a run failed (a refused handshake, an error answer).
jq -s -e 'all(.ok)' "$out" >/dev/null
