# What the package tests share; sourced (`source tests/package/common.sh
# NAME`) from the repository's root. Gives fail, a scratch directory $work
# that is removed on exit, the server they start ($server, killed on exit
# while set; cleanup_also runs first, for what a test adds), and
# await_port.
test_name=$1

fail() {
  echo "$test_name: FAILED: $*" >&2
  exit 1
}

work=$(mktemp -d)
server=""
cleanup_also() { :; }
cleanup() {
  if [ -n "$server" ]; then kill -KILL "$server" 2>/dev/null || true; fi
  cleanup_also
  rm -rf "$work"
}
trap cleanup EXIT

# await_port PORT_FILE ERR_FILE: waits (10 s at most) for $server to write
# its port to PORT_FILE and prints the port; fails, showing ERR_FILE (its
# stderr), when it exits first or never does.
await_port() {
  local i
  for i in $(seq 1 200); do
    [ -s "$1" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$2" >&2; fail "the server exited"; }
    sleep 0.05
  done
  [ -s "$1" ] || { cat "$2" >&2; fail "the server wrote no port file"; }
  cat "$1"
}

# stop_server ERR_FILE: SIGTERM to $server, which must exit 0.
stop_server() {
  local status=0
  kill -TERM "$server"
  wait "$server" || status=$?
  server=""
  [ "$status" -eq 0 ] || { cat "$1" >&2; fail "SIGTERM: exit $status"; }
}
