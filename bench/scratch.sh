# Sourced by the benchmark scripts (ab.sh, peers.sh, tls.sh): `scratch NAME`
# makes $work (/tmp/leasehold-NAME-XXXXXX) and $pids, the processes a
# script starts (append each); on exit, an interrupt or a SIGTERM,
# cleanup_also (define it for more, e.g. a database to stop) runs, then
# every process in $pids is stopped and waited for and $work removed.
cleanup_also() { :; }
scratch() {
  work=$(mktemp -d "/tmp/leasehold-$1-XXXXXX")
  pids=()
  trap scratch_cleanup EXIT INT TERM
}
scratch_cleanup() {
  set +e
  cleanup_also
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
