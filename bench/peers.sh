#!/usr/bin/env bash
# leasehold against the lock services people already run, in one run on one
# machine: Redis, PostgreSQL, SQLite and etcd beside a leasehold server, all
# on loopback, all driven by `leasehold-peers bench --target` (the same client
# code, concurrency and operation mix for each). The application-lock
# scenarios come in two sets: in memory (leasehold's "bench-memory"
# namespace, configured "locks": "memory", beside in-memory Redis) and
# durable (leasehold's default journaled locks beside Redis with
# appendfsync always, PostgreSQL's one-UPDATE lock and advisory locks,
# SQLite and etcd). The durable sets also run leasehold-pg: leasehold on
# the same PostgreSQL server (--store), beside PostgreSQL's own recipes.
# Installs the peers from
# Debian if missing, starts each with a throwaway data directory, runs every
# scenario against every target, interleaved, ROUNDS times, stops everything
# (also on Ctrl-C or error) and prints medians and leasehold's ratios.
# Not part of the test command; see docs/benchmarks.md.
#
# Usage: bench/peers.sh BINARY [ROUNDS]
#   BINARY   a Release build of leasehold, e.g. build-rel/src/exe/leasehold;
#            the load comes from the leasehold-peers tool of the same build
#            (BUILD/src/peers_cli/leasehold-peers; PEERS_BINARY to override)
#   ROUNDS   default 3
# Environment: WINDOW (measured, default 3s), WARMUP (default 500ms),
#   OUT_DIR (default: BINARY's build directory /peers), SCENARIOS (names
#   from the list below, space-separated; default all), TARGETS (the same
#   for targets, e.g. "leasehold-pg postgresql-update postgresql"; default
#   all), IDLE_LOCKS
#   (default 100000), LEASEHOLD_IO_THREADS (the server's I/O threads,
#   default 1).
# Writes OUT_DIR/peers.jsonl (one `leasehold-peers bench --json` object per run,
# plus round, scenario, target and load) and OUT_DIR/peers.md (the table).
set -euo pipefail

binary=$(realpath "${1:?usage: bench/peers.sh BINARY [ROUNDS]}")
rounds=${2:-3}
window=${WINDOW:-3s}
warmup=${WARMUP:-500ms}
idle_locks=${IDLE_LOCKS:-100000}
build_dir=$(dirname "$(dirname "$(dirname "$binary")")")
out_dir=${OUT_DIR:-$build_dir/peers}
tool=$(realpath -m "${PEERS_BINARY:-$build_dir/src/peers_cli/leasehold-peers}")
if [ ! -x "$tool" ]; then
  echo "peers: no leasehold-peers at $tool; build it (cmake --build BUILD --target leasehold-peers) or set PEERS_BINARY" >&2
  exit 1
fi
keys=100000
here=$(cd "$(dirname "$0")" && pwd)

# scenario label, `leasehold bench` scenario, clients, set (targets_for)
all_scenarios=(
  "applock-1 applock 1 memory"
  "applock-16 applock 16 memory"
  "applock-64 applock 64 memory"
  "applock-durable-16 applock 16 durable"
  "applock-durable-64 applock 64 durable"
  "hot-16 hot 16 memory"
  "checkout-16 checkout 16 durable"
  "checkout-64 checkout 64 durable"
  "idle-16 idle 16 memory"
)

# --- peers from Debian, if missing --------------------------------------
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v jq >/dev/null || missing+=(jq)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
if [ ${#missing[@]} -gt 0 ]; then
  echo "peers: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
  $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- a throwaway directory, everything stopped on exit -------------------
# shellcheck source=bench/scratch.sh
source "$(dirname "$0")/scratch.sh"
scratch peers
chmod 755 "$work"
pg_bin=/usr/lib/postgresql/15/bin
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u postgres --); fi
cleanup_also() {
  if [ -f "$work/pg/postmaster.pid" ]; then
    "${as_pg[@]}" "$pg_bin/pg_ctl" stop -D "$work/pg" -m fast -w >/dev/null 2>&1
  fi
}

# shellcheck source=bench/ports.sh
source "$(dirname "$0")/ports.sh"

wait_port() {  # PORT NAME: until something accepts on 127.0.0.1:PORT
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "peers: $2 did not start; its log:" >&2
  cat "$work/$2.log" >&2 || true
  exit 1
}

# --- start the targets ----------------------------------------------------
declare -A url pid_of

# leasehold with one I/O thread (LEASEHOLD_IO_THREADS; the server's default
# is 2): on 2 cores shared with the load generator, one thread that handles
# a whole batch of ready requests before answering them did best
# (docs/benchmarks.md, "Profiles, round 2").
# Its "bench" namespace journals locks (the default); "bench-memory" keeps
# them in memory, as leasehold did before locks were durable.
lh_port=$(free_port)
echo "{\"io_threads\": ${LEASEHOLD_IO_THREADS:-1}," \
  "\"namespaces\": {\"bench-memory\": {\"locks\": \"memory\"}}}" \
  >"$work/leasehold.json"
"$binary" serve --listen "127.0.0.1:$lh_port" --data "$work/leasehold" \
  --config "$work/leasehold.json" >"$work/leasehold.log" 2>&1 &
pids+=($!)
pid_of[leasehold]=$!
url[leasehold]="http://127.0.0.1:$lh_port"
wait_port "$lh_port" leasehold

start_redis() {  # NAME, then redis-server options
  local name=$1 port
  shift
  port=$(free_port)
  mkdir -p "$work/$name"
  redis-server --bind 127.0.0.1 --port "$port" --dir "$work/$name" \
    --save '' --daemonize no --protected-mode yes "$@" \
    >"$work/$name.log" 2>&1 &
  pids+=($!)
  pid_of[$name]=$!
  url[$name]="redis://127.0.0.1:$port"
  wait_port "$port" "$name"
}
# Not durable: in memory only (the usual cache/lock set-up).
start_redis redis --appendonly no
# Durable: every write appended and fsynced before the reply.
start_redis redis-aof --appendonly yes --appendfsync always

# PostgreSQL 15: fsync and synchronous_commit on (the defaults, said out
# loud); enough lock slots for the idle advisory locks (the shared lock
# table holds max_locks_per_transaction × max_connections entries).
pg_port=$(free_port)
mkdir -p "$work/pg"
if [ ${#as_pg[@]} -gt 0 ]; then chown postgres: "$work/pg"; fi
"${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg" -U postgres --auth=trust \
  --encoding=UTF8 >"$work/postgresql.log" 2>&1
"${as_pg[@]}" "$pg_bin/pg_ctl" start -D "$work/pg" -w -t 60 -l "$work/pg/server.log" \
  -o "-c listen_addresses=127.0.0.1 -c port=$pg_port -c unix_socket_directories='$work/pg' -c fsync=on -c synchronous_commit=on -c max_connections=150 -c max_locks_per_transaction=1024 -c shared_buffers=256MB" \
  >>"$work/postgresql.log" 2>&1
url[postgresql]="postgresql://postgres@127.0.0.1:$pg_port/postgres"
pid_of[postgresql]=0
# The same cluster, application locks as the one UPDATE (durable).
url[postgresql-update]="${url[postgresql]}?mode=update"
pid_of[postgresql-update]=0

# leasehold on that same PostgreSQL (docs/ha.md): its own database, one
# node, which leads once it has taken the leader lease (/healthz 200).
"${as_pg[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -q \
  -c "CREATE DATABASE leasehold" postgres >>"$work/postgresql.log" 2>&1
lhpg_port=$(free_port)
echo "{\"io_threads\": ${LEASEHOLD_IO_THREADS:-1}}" >"$work/leasehold-pg.json"
"$binary" serve --listen "127.0.0.1:$lhpg_port" \
  --store "postgresql://postgres@127.0.0.1:$pg_port/leasehold" \
  --config "$work/leasehold-pg.json" >"$work/leasehold-pg.log" 2>&1 &
pids+=($!)
pid_of[leasehold-pg]=$!
url[leasehold-pg]="http://127.0.0.1:$lhpg_port"
wait_port "$lhpg_port" leasehold-pg
for _ in $(seq 200); do
  if curl -fsS -o /dev/null "${url[leasehold-pg]}/healthz"; then break; fi
  sleep 0.05
done

url[sqlite]="sqlite:$work/sqlite.db"
pid_of[sqlite]=0

etcd_port=$(free_port)
etcd_peer=$(free_port)
etcd --name peers --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" \
  --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-cluster "peers=http://127.0.0.1:$etcd_peer" \
  >"$work/etcd.log" 2>&1 &
pids+=($!)
pid_of[etcd]=$!
url[etcd]="etcd://127.0.0.1:$etcd_port"
wait_port "$etcd_port" etcd

targets_for() {  # SCENARIO-KIND SET: the targets, leasehold first
  local all
  if [ "$1" = checkout ]; then
    all="leasehold leasehold-pg redis-aof postgresql sqlite etcd"
  elif [ "$2" = durable ]; then
    all="leasehold leasehold-pg redis-aof postgresql-update postgresql sqlite etcd"
  else
    all="leasehold redis postgresql sqlite etcd"
  fi
  local t kept=()
  for t in $all; do
    if [ -z "${TARGETS:-}" ] || [[ " $TARGETS " == *" $t "* ]]; then
      kept+=("$t")
    fi
  done
  echo "${kept[*]}"
}

# leasehold's group-commit counters from /metrics, as a JSON object ({}
# when it does not answer: the run goes on without them).
store_counters() {
  { curl -fsS "${url[leasehold]}/metrics" || true; } | jq -R -s '
    [splits("\n") | select(startswith("leasehold_store_")) | split(" ")
     | {(.[0] | ltrimstr("leasehold_store_")): (.[1] | tonumber)}] | add // {}'
}

# --- run ------------------------------------------------------------------
mkdir -p "$out_dir"
jsonl="$out_dir/peers.jsonl"
: >"$jsonl"
selected=()
for s in "${all_scenarios[@]}"; do
  read -r label _ _ _ <<<"$s"
  if [ -z "${SCENARIOS:-}" ] || [[ " $SCENARIOS " == *" $label "* ]]; then
    selected+=("$s")
  fi
done
started=$(date +%s)
echo "peers: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= rounds; ++round)); do
  for s in "${selected[@]}"; do
    read -r label kind clients set <<<"$s"
    read -r -a targets <<<"$(targets_for "$kind" "$set")"
    ns=bench
    if [ "$set" = memory ]; then ns=bench-memory; fi
    # Rotate the order each round: no target is always the first to run.
    n=${#targets[@]}
    for ((i = 0; i < n; ++i)); do
      t=${targets[$(((i + round - 1) % n))]}
      load=$(cut -d' ' -f1 /proc/loadavg)
      extra=()
      if [ "${pid_of[$t]}" != 0 ]; then extra=(--server-pid "${pid_of[$t]}"); fi
      before='{}'
      if [ "$t" = leasehold ]; then before=$(store_counters); fi
      run_started=$(date +%s.%N)
      result=$("$tool" bench --target "${url[$t]}" --scenario "$kind" \
        --connections "$clients" --duration "$window" --warmup "$warmup" \
        --keys "$keys" --hot-timeout 5s --idle-sessions $((idle_locks / 100)) \
        --locks-per-session 100 --ns "$ns" "${extra[@]}" --json) || true
      if ! jq -e . >/dev/null 2>&1 <<<"$result"; then
        result='{"ok":false,"errors":1,"phases":[]}'
      fi
      run_seconds=$(jq -n "$(date +%s.%N) - $run_started")
      after='{}'
      if [ "$t" = leasehold ]; then after=$(store_counters); fi
      # store: leasehold's commits over the whole run (warm-up included).
      jq -c --arg round "$round" --arg s "$label" --arg t "$t" \
        --arg load "$load" --argjson before "$before" --argjson after "$after" \
        --argjson run_seconds "$run_seconds" \
        '. + {round: ($round|tonumber), label: $s, peer: $t, load_before: ($load|tonumber)}
         + (if $before.batches_total and $after.batches_total then {store: {
             batches: ($after.batches_total - $before.batches_total),
             entries: ($after.entries_total - $before.entries_total),
             commit_seconds: ($after.commit_seconds_total - $before.commit_seconds_total),
             run_seconds: $run_seconds}}
            else {} end)' \
        <<<"$result" >>"$jsonl"
      tail -n1 "$jsonl" | jq -r '"  round \(.round) \(.label) \(.peer): \(.pairs_per_s // 0) pairs/s, errors \(.errors), load \(.load_before)"' >&2
    done
  done
done
elapsed=$(($(date +%s) - started))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- the table --------------------------------------------------------------
{
  echo "Run $(date -u +%Y-%m-%dT%H:%MZ), $rounds rounds, window $window after $warmup warmup, $elapsed s in all; load average at the end: $load_after."
  echo
  jq -s -r -f "$here/peers_table.jq" "$jsonl"
} | tee "$out_dir/peers.md"
echo "peers: raw results in $jsonl, table in $out_dir/peers.md" >&2
