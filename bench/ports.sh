# Sourced by the benchmark scripts (peers.sh, ab.sh): a free loopback port.
# free_port: a port nothing accepts on, from 20000-39999; the server that
# binds it is the real check.
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}
