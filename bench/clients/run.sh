#!/usr/bin/env bash
# The client benchmark: lock+release pairs/s and client CPU per call through
# each client (C++, Python sync and async, TypeScript) beside the same
# requests made with the bare HTTP library (httpx sync and async,
# node:http; fetch beside them),
# 16 concurrent callers each, against one `leasehold serve`, in one run.
#
#   bench/clients/run.sh [ROUNDS] [SECONDS]     (defaults 5 and 3)
#
# Every driver runs once per round, in alternating order (forward in odd
# rounds, backward in even ones, so a drift of the machine falls on all);
# the table gives per driver the median pairs/s and median client CPU µs per
# call (a call = one request, a pair = 2), and the CPU per call against the
# bare library and against the C++ client, each the median of the per-round
# ratios. Speed never fails the run: it exits non-zero only when a driver
# errs (a failed request, a crash, no figure) or the server does.
# `run.sh 1 1` is the short form for the test suite (well under 60 s).
#
# The server: the Release binary, listening on 127.0.0.1 (a free port), its
# data directory on tmpfs (/dev/shm when writable) and namespace "bench"
# configured {"locks":"memory"}, so no disk is in the path.
#
# Settings (environment):
#   LEASEHOLD_BIN   the server      (build-release/src/exe/leasehold)
#   CPP_BENCH       the C++ driver  (build-release/bench/clients/client_bench_cpp,
#                   `cmake --build build-release --target client_bench_cpp`)
#   PYTHON          the interpreter, with httpx (clients/python/.venv/bin/python)
#   LEASEHOLD_PYTHON_CLIENT_SRC  put first on PYTHONPATH (clients/python/src)
#   NODE            node (node)
#   LEASEHOLD_TS_CLIENT_DIST     the built TypeScript client (clients/typescript/dist)
#   DRIVERS         which to run, space-separated (all: cpp-client httpx-sync
#                   py-client-sync httpx-async py-client-async node-http fetch
#                   ts-client net-http go-client java-net-http java-client)
#   LEASEHOLD_JAVA_CLIENT_DIR    the compiled Java client (clients/java, setup.sh)
#   JAVA_WARMUP     the Java drivers' warm-up (5 s: the JIT's)
#   CALLERS (16), WARMUP (0.5 s before the clock starts in each driver)
#   OUT             the raw JSON lines (/tmp/leasehold-client-bench.jsonl)
# e.g. while the clients are on their branches:
#   PYTHON=/tmp/benchvenv/bin/python \
#   LEASEHOLD_PYTHON_CLIENT_SRC=/work/wt-python/clients/python/src \
#   LEASEHOLD_TS_CLIENT_DIST=/work/wt-typescript/clients/typescript/dist \
#   bench/clients/run.sh 5 3
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=${1:-5}
seconds=${2:-3}
server_bin=${LEASEHOLD_BIN:-$root/build-release/src/exe/leasehold}
cpp_bench=${CPP_BENCH:-$root/build-release/bench/clients/client_bench_cpp}
python=${PYTHON:-$root/clients/python/.venv/bin/python}
py_src=${LEASEHOLD_PYTHON_CLIENT_SRC:-$root/clients/python/src}
node=${NODE:-node}
ts_dist=${LEASEHOLD_TS_CLIENT_DIST:-$root/clients/typescript/dist}
java_dir=${LEASEHOLD_JAVA_CLIENT_DIR:-$root/clients/java}
java_warmup=${JAVA_WARMUP:-5}
callers=${CALLERS:-16}
warmup=${WARMUP:-0.5}
out=${OUT:-/tmp/leasehold-client-bench.jsonl}
read -r -a drivers <<<"${DRIVERS:-cpp-client httpx-sync py-client-sync httpx-async py-client-async node-http fetch ts-client net-http go-client java-net-http java-client}"

die() { echo "bench/clients/run.sh: $*" >&2; exit 1; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ $seconds =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "SECONDS must be a number"

# Each prerequisite is checked before the server starts: a missing one is
# an error (say DRIVERS=... to leave a driver out), not a silent skip.
need_python=0
for d in "${drivers[@]}"; do
  case $d in
    cpp-client) [[ -x $cpp_bench ]] ||
      die "no C++ driver at $cpp_bench (cmake --build build-release --target client_bench_cpp, or CPP_BENCH=)" ;;
    httpx-sync | httpx-async) need_python=1 ;;
    py-client-sync | py-client-async) need_python=1
      PYTHONPATH="$py_src${PYTHONPATH:+:$PYTHONPATH}" "$python" -c 'import leasehold; leasehold.Client; leasehold.AsyncClient' 2>/dev/null ||
        die "$python cannot import leasehold.Client/AsyncClient (LEASEHOLD_PYTHON_CLIENT_SRC=$py_src)" ;;
    node-http | fetch) command -v "$node" >/dev/null || die "no node ($node)" ;;
    ts-client) [[ -f $ts_dist/index.js ]] ||
      die "no $ts_dist/index.js (npm run build in clients/typescript, or LEASEHOLD_TS_CLIENT_DIST=)" ;;
    go-client | net-http) command -v go >/dev/null || die "no go" ;;
    java-client | java-net-http) [[ -f $java_dir/target/classpath.txt && -d $java_dir/target/classes ]] ||
      die "no compiled Java client in $java_dir (clients/java/setup.sh)" ;;
    *) die "unknown driver $d" ;;
  esac
done
if ((need_python)); then
  "$python" -c 'import httpx' 2>/dev/null || die "$python has no httpx (PYTHON=)"
fi
[[ -x $server_bin ]] || die "no server binary at $server_bin (LEASEHOLD_BIN=)"

base=/dev/shm
[[ -d $base && -w $base ]] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/leasehold-client-bench.XXXXXX")
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
printf '{"namespaces":{"bench":{"locks":"memory"}}}\n' >"$work/config.json"
"$server_bin" serve --listen 127.0.0.1:0 --port-file "$work/port" \
  --data "$work/data" --config "$work/config.json" --log-level warn \
  2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
  [[ -s $work/port ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; die "the server did not start"; }
  sleep 0.1
done
[[ -s $work/port ]] || die "the server wrote no port file"
url="http://127.0.0.1:$(cat "$work/port")"
# The Go drivers, built once per run (the module cache makes it quick).
for d in "${drivers[@]}"; do
  case $d in
    go-client | net-http)
      (cd "$here/go" && go build -o "$work/go_bench" .) || die "go build of bench/clients/go failed"
      break ;;
  esac
done

common=(--url "$url" --callers "$callers" --seconds "$seconds" --warmup "$warmup")
with_src=(env "PYTHONPATH=$py_src${PYTHONPATH:+:$PYTHONPATH}")
driver_command() {  # sets cmd
  case $1 in
    cpp-client) cmd=("$cpp_bench" "${common[@]}") ;;
    httpx-sync | httpx-async) cmd=("$python" "$here/py_bench.py" "$1" "${common[@]}") ;;
    py-client-sync) cmd=("${with_src[@]}" "$python" "$here/py_bench.py" client-sync "${common[@]}") ;;
    py-client-async) cmd=("${with_src[@]}" "$python" "$here/py_bench.py" client-async "${common[@]}") ;;
    node-http | fetch) cmd=("$node" "$here/ts_bench.mjs" "$1" "${common[@]}") ;;
    ts-client) cmd=("$node" "$here/ts_bench.mjs" client "${common[@]}" --dist "$ts_dist") ;;
    go-client | net-http) cmd=("$work/go_bench" "$1" "${common[@]}") ;;
    java-client | java-net-http)  # the JIT needs a longer warm-up
      cmd=(java -cp "$java_dir/target/classes:$(cat "$java_dir/target/classpath.txt")"
        "$here/java/JavaBench.java" "$1" --url "$url" --callers "$callers"
        --seconds "$seconds" --warmup "$java_warmup") ;;
  esac
}

: >"$out"
errors=0
limit=$(awk -v s="$seconds" -v w="$warmup" -v j="$java_warmup" 'BEGIN { printf "%d", s + w + j + 60 }')
echo "server $url (data on $base, namespace bench in memory); $rounds rounds of $seconds s, $callers callers; raw lines: $out" >&2
for ((round = 1; round <= rounds; ++round)); do
  order=("${drivers[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((i = ${#drivers[@]} - 1; i >= 0; --i)); do order+=("${drivers[i]}"); done
  fi
  for d in "${order[@]}"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    driver_command "$d"
    if line=$(timeout "$limit" "${cmd[@]}" 2>"$work/driver.err" | tail -n1) &&
      [[ $line == '{'*'}' ]]; then
      printf '%s\n' "$line" | "$python" -c '
import json, sys
d = json.loads(sys.stdin.read())
d.update(name=sys.argv[1], round=int(sys.argv[2]), load_before=float(sys.argv[3]))
with open(sys.argv[4], "a") as out:
    print(json.dumps(d), file=out)
print("  round %d %-16s %9.1f pairs/s %8.1f CPU us/call  (load %s)" % (
    d["round"], d["name"], d["pairs_per_s"], d["cpu_us_per_call"], d["load_before"]),
    file=sys.stderr)' "$d" "$round" "$load" "$out"
    else
      errors=$((errors + 1))
      echo "  round $round $d: FAILED" >&2
      sed 's/^/    /' "$work/driver.err" >&2
    fi
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; die "the server died"; }
    # Sessions a failed driver left behind would hold its callers' locks
    # (r-0 … r-15) from the next driver: end every session between runs.
    "$python" - "$url" <<'PY' || die "could not end the sessions left"
import json, sys, urllib.request
url = sys.argv[1]
with urllib.request.urlopen(url + "/v1/sessions") as answer:
    sessions = json.load(answer)["sessions"]
for s in sessions:
    urllib.request.urlopen(urllib.request.Request(url + "/v1/sessions/" + s["id"], method="DELETE"))
PY
  done
done

"$python" "$here/summarize.py" "$out"
if ((errors)); then
  echo "bench/clients/run.sh: $errors driver run(s) failed" >&2
  exit 1
fi
