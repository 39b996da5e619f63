# The table of bench/peers.sh, from its peers.jsonl slurped (jq -s): one
# row per scenario × target with medians over the rounds, and leasehold's
# ratio to each. Pair latency is acquire + release (or checkout + check-in).
def median: map(select(. != null)) | sort
  | if length == 0 then null else .[(length - 1) / 2 | floor] end;
def lastphase: (.phases // []) | map(select(.timed)) | last;
def ms: if . == null then "-" else ((. / 10 | round) / 100 | tostring) end;
def whole: if . == null then "-" else (round | tostring) end;
def ratio($a; $b):
  if $a == null or $b == null or $b == 0 then "-"
  else (($a / $b * 100 | round) / 100 | tostring) + "×" end;
def ordered(f): reduce (.[] | f) as $x ([]; if any(.[]; . == $x) then . else . + [$x] end);

. as $runs
| ordered(.label) as $labels
| ($labels | map(. as $l | {($l): ($runs | map(select(.label == $l)) | ordered(.peer))}) | add) as $peers
| def cell($l; $p): [$runs[] | select(.label == $l and .peer == $p)];
  def rate($l; $p): cell($l; $p) | map(.pairs_per_s) | median;
"| scenario | target | durable | pairs/s, median (each round) | pair p50 / p99, ms | fairness: grants per client, min–max (fair share) | server CPU per operation, µs | leasehold ÷ target | errors |",
"|---|---|---|---:|---|---|---:|---:|---:|",
( $labels[] as $l
  | $peers[$l][] as $p
  | cell($l; $p) as $c
  | rate($l; "leasehold") as $lh
  | rate($l; $p) as $r
  | "| \($l) | \($p) | \($c[0].target.durability // "?") | **\($r | whole)** (\($c | map(.pairs_per_s | whole) | join(" / "))) | \($c | map(lastphase.latency_us.pair.p50) | median | ms) / \($c | map(lastphase.latency_us.pair.p99) | median | ms) | \(if ($l | startswith("hot")) then "\($c | map(.phases[0].fairness.min) | median | whole)–\($c | map(.phases[0].fairness.max) | median | whole) (\($c | map(.phases[0].fairness.fair_share) | median | whole))" else "" end) | \($c | map(.phases | map(select(.timed)) | last | .cpu.server_us_per_request) | median | whole) | \(if $p == "leasehold" then "" else ratio($lh; $r) end) | \($c | map(.errors // 1) | add) |"
),
"",
( if any($labels[]; . == "idle-16") and any($labels[]; . == "applock-16") then
    "Holding \($runs | map(select(.label == "idle-16") | .idle.locks) | first // "?") idle locks: applock-16 pairs/s while holding ÷ without (same round's applock-16), median; build time, median:",
    "",
    "| target | holding ÷ not | build s | server RSS before → after, MiB |",
    "|---|---:|---:|---|",
    ( $peers["idle-16"][] as $p
      | "| \($p) | \(ratio(rate("idle-16"; $p); rate("applock-16"; $p))) | \(cell("idle-16"; $p) | map(.idle.build_ms) | median | if . == null then "-" else ((. / 100 | round) / 10 | tostring) end) | \(cell("idle-16"; $p) | map(.idle.rss_bytes_before) | median | if . == null then "-" else (. / 1048576 | round | tostring) end) → \(cell("idle-16"; $p) | map(.idle.rss_bytes_after) | median | if . == null then "-" else (. / 1048576 | round | tostring) end) |"
    )
  else empty end)
,
( if any($runs[]; .store != null and .store.batches > 0) then
    "",
    "leasehold's group commit over each whole run (warm-up and the clients' sessions included), median: journal entries per commit (one fsync each), commits/s, mean commit (SQLite append + fsync) ms, and the share of the run the committer spent committing:",
    "",
    "| scenario | entries per commit | commits/s | mean commit, ms | committing |",
    "|---|---:|---:|---:|---:|",
    ( $labels[] as $l
      | cell($l; "leasehold") | map(select(.store != null and .store.batches > 0)) as $c
      | select($c | length > 0)
      | "| \($l) | \($c | map(.store.entries / .store.batches) | median | . * 10 | round / 10 | tostring) | \($c | map(.store.batches / .store.run_seconds) | median | whole) | \($c | map(.store.commit_seconds / .store.batches * 1e6) | median | ms) | \($c | map(.store.commit_seconds / .store.run_seconds * 100) | median | whole)% |"
    )
  else empty end)
,
( if any($runs[]; .peer == "leasehold-pg") then
    "",
    "leasehold on PostgreSQL (leasehold-pg: its store on the same PostgreSQL server, group commit in one transaction) ÷ PostgreSQL's own recipes there, medians of pairs/s (postgresql-update: one UPDATE per transaction; postgresql: advisory locks for application locks, one UPDATE for checkouts):",
    "",
    "| scenario | leasehold-pg pairs/s | ÷ postgresql-update | ÷ postgresql |",
    "|---|---:|---:|---:|",
    ( $labels[] as $l
      | select(any($peers[$l][]; . == "leasehold-pg"))
      | rate($l; "leasehold-pg") as $lp
      | "| \($l) | \($lp | whole) | \(ratio($lp; rate($l; "postgresql-update"))) | \(ratio($lp; rate($l; "postgresql"))) |"
    )
  else empty end)
