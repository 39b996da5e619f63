"""Prints bench/clients/run.sh's table from its JSON lines (one per driver run).

  python summarize.py /tmp/leasehold-client-bench.jsonl

Per driver: the median pairs/s (and its ratio to the C++ client's) and CPU
µs per call over the rounds, and the CPU per call against the bare HTTP
library and against the C++ client, each
the median of the per-round ratios (both drivers of a ratio ran in the same
round, close in time), with the lowest and highest round in brackets. The
goal column reads the median against 1.25x; it is a reading, never a
failure.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

ORDER = ["cpp-client", "httpx-sync", "py-client-sync", "httpx-async", "py-client-async",
         "node-http", "fetch", "ts-client", "net-http", "go-client", "java-net-http", "java-client"]
BARE = {"py-client-sync": "httpx-sync", "py-client-async": "httpx-async", "ts-client": "node-http",
        "go-client": "net-http", "java-client": "java-net-http"}
GOAL = 1.25


def ratio_cell(runs: dict[int, dict[str, dict]], name: str, base: str,
               field: str = "cpu_us_per_call") -> tuple[str, float | None]:
    ratios = [r[name][field] / r[base][field]
              for r in runs.values() if name in r and base in r and r[base][field] > 0]
    if not ratios:
        return "", None
    m = statistics.median(ratios)
    if len(ratios) == 1:
        return f"{m:.2f}x", m
    return f"{m:.2f}x ({min(ratios):.2f}-{max(ratios):.2f})", m


def main() -> int:
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    by_round: dict[int, dict[str, dict]] = defaultdict(dict)
    by_name: dict[str, list[dict]] = defaultdict(list)
    for d in rows:
        by_round[d["round"]][d["name"]] = d
        by_name[d["name"]].append(d)
    names = [n for n in ORDER if n in by_name] + sorted(set(by_name) - set(ORDER))
    header = ["driver", "runs", "pairs/s", "pairs/s vs C++ client", "CPU us/call",
              "CPU/call vs bare lib", "CPU/call vs C++ client", "<= 1.25x bare"]
    table = []
    for n in names:
        runs = by_name[n]
        pps = statistics.median(d["pairs_per_s"] for d in runs)
        cpu = statistics.median(d["cpu_us_per_call"] for d in runs)
        bare, goal = "", ""
        if n in BARE:
            bare, m = ratio_cell(by_round, n, BARE[n])
            bare = f"{bare} vs {BARE[n]}" if bare else ""
            goal = "" if m is None else ("yes" if m <= GOAL else "no")
        cpp = "" if n == "cpp-client" else ratio_cell(by_round, n, "cpp-client")[0]
        speed = "" if n == "cpp-client" else ratio_cell(
            by_round, n, "cpp-client", "pairs_per_s")[0]
        table.append([n, str(len(runs)), f"{pps:.0f}", speed, f"{cpu:.1f}", bare, cpp, goal])
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
