"""The Python share of bench/clients/run.sh: lock+release pairs through the
leasehold client or through bare httpx, 16 callers, one JSON line out.

  python py_bench.py DRIVER --url URL [--callers 16] [--seconds 3] [--warmup 0.5]
                     [--profile FILE]

DRIVER is one of
  client-sync   leasehold.Client, one thread per caller
  client-async  leasehold.AsyncClient, one asyncio task per caller
  httpx-sync    one shared httpx.Client, one thread per caller
  httpx-async   one shared httpx.AsyncClient, one asyncio task per caller

Each caller opens its own session (ttl 60 s), then loops acquire (Exclusive,
Session owner, timeout 0) + release of its own resource "r-<caller>" in
namespace "bench". The bare drivers check the status and parse the answer as
a client would. After --warmup seconds the pairs done and the process's CPU
(getrusage RUSAGE_SELF: user + sys, all threads) are read, and again
--seconds later: the difference is the figure. Exit 1 on any failed call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import pstats
import resource
import sys
import threading
import time
from typing import Any

NS = "bench"
PROFILE: str | None = None  # --profile: cProfile of the callers' loops
_profiles: list[cProfile.Profile] = []
_profiles_lock = threading.Lock()


@contextlib.contextmanager
def profiled() -> Any:
    """With --profile, profiles the block (per thread: cProfile sees one thread)."""
    if PROFILE is None:
        yield
        return
    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        with _profiles_lock:
            _profiles.append(prof)


def dump_profiles() -> None:
    """Merges the profiles into PROFILE and prints the top 30 by own time to stderr."""
    if PROFILE is None or not _profiles:
        return
    stats = pstats.Stats(_profiles[0], stream=sys.stderr)
    for p in _profiles[1:]:
        stats.add(p)
    stats.dump_stats(PROFILE)
    stats.sort_stats("tottime").print_stats(30)


def cpu_seconds() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


class Run:
    """Per-caller pair counters and the first error; read by the measurer."""

    def __init__(self, callers: int) -> None:
        self.pairs = [0] * callers
        self.stop = False
        self.error: str | None = None

    def fail(self, what: str, exc: BaseException) -> None:
        if self.error is None:
            self.error = f"{what}: {type(exc).__name__}: {exc}"
        self.stop = True


def report(driver: str, callers: int, pairs: int, wall: float, cpu: float) -> None:
    print(json.dumps({
        "driver": driver,
        "callers": callers,
        "pairs": pairs,
        "seconds": round(wall, 3),
        "pairs_per_s": round(pairs / wall, 1),
        "cpu_s": round(cpu, 3),
        "cpu_us_per_call": round(cpu * 1e6 / (2 * pairs), 2) if pairs else 0.0,
    }), flush=True)


# ---- threads ------------------------------------------------------------------

def measure_threads(run: Run, warmup: float, seconds: float) -> tuple[int, float, float]:
    time.sleep(warmup)
    t0, c0, p0 = time.monotonic(), cpu_seconds(), sum(run.pairs)
    time.sleep(seconds)
    p1, c1, t1 = sum(run.pairs), cpu_seconds(), time.monotonic()
    run.stop = True
    return p1 - p0, t1 - t0, c1 - c0


def drive_threads(name: str, args: argparse.Namespace,
                  loop: Any, close: Any) -> int:
    """Runs loop(run, i, ready) on one thread per caller (each waits at `ready`
    once its session is open), measures, closes and reports; 1 on a failure."""
    n = args.callers
    run = Run(n)
    ready = threading.Barrier(n + 1)
    threads = [threading.Thread(target=loop, args=(run, i, ready)) for i in range(n)]
    try:
        for t in threads:
            t.start()
        with contextlib.suppress(threading.BrokenBarrierError):
            ready.wait()
        pairs, wall, cpu = measure_threads(run, args.warmup, args.seconds)
        for t in threads:
            t.join()
    finally:
        close()
    if run.error:
        print(f"py_bench {name}: {run.error}", file=sys.stderr)
        return 1
    report(name, n, pairs, wall, cpu)
    return 0


def client_sync(args: argparse.Namespace) -> int:
    import leasehold

    client = leasehold.Client(args.url)

    def loop(run: Run, i: int, ready: threading.Barrier) -> None:
        r = f"r-{i}"
        try:
            with client.session(f"bench-py-{i}", ttl=60.0) as s:
                ready.wait()
                pairs = run.pairs
                with profiled():
                    while not run.stop:
                        lk = s.lock(NS, r, mode="Exclusive", timeout=0)
                        lk.release()
                        pairs[i] += 1
        except BaseException as e:  # noqa: BLE001 - reported, then exit 1
            run.fail("client-sync", e)
            ready.abort()

    return drive_threads("py-client-sync", args, loop, client.close)


def check(resp: Any, status: int, what: str) -> Any:
    if resp.status_code != status:
        raise RuntimeError(f"{what}: HTTP {resp.status_code} {resp.text[:200]}")
    return resp.json()


def httpx_sync(args: argparse.Namespace) -> int:
    import httpx

    n = args.callers
    http = httpx.Client(base_url=args.url, timeout=30.0,
                        limits=httpx.Limits(max_connections=n, max_keepalive_connections=n))
    acquire_url, release_url = f"/v1/applocks/{NS}/acquire", f"/v1/applocks/{NS}/release"

    def loop(run: Run, i: int, ready: threading.Barrier) -> None:
        r = f"r-{i}"
        try:
            sid = check(http.post("/v1/sessions", json={"name": f"bench-httpx-{i}",
                                                        "ttl_ms": 60000}), 201, "session")["id"]
            ready.wait()
            pairs = run.pairs
            with profiled():
                while not run.stop:
                    a = check(http.post(acquire_url, json={
                        "session": sid, "resource": r, "mode": "Exclusive",
                        "owner": "Session", "timeout_ms": 0}), 200, "acquire")
                    if a["result"] < 0:
                        raise RuntimeError(f"acquire: {a}")
                    b = check(http.post(release_url, json={
                        "session": sid, "resource": r, "owner": "Session"}), 200, "release")
                    if b["result"] != 0:
                        raise RuntimeError(f"release: {b}")
                    pairs[i] += 1
            http.delete(f"/v1/sessions/{sid}")
        except BaseException as e:  # noqa: BLE001
            run.fail("httpx-sync", e)
            ready.abort()

    return drive_threads("httpx-sync", args, loop, http.close)


# ---- asyncio ------------------------------------------------------------------

async def measure_tasks(run: Run, tasks: list[asyncio.Task[None]], warmup: float,
                        seconds: float) -> tuple[int, float, float]:
    async def sleep_unless_failed(t: float) -> None:
        done, _ = await asyncio.wait(tasks, timeout=t, return_when=asyncio.FIRST_COMPLETED)
        if done:  # a caller ended early: it failed
            run.stop = True

    await sleep_unless_failed(warmup)
    t0, c0, p0 = time.monotonic(), cpu_seconds(), sum(run.pairs)
    await sleep_unless_failed(seconds)
    p1, c1, t1 = sum(run.pairs), cpu_seconds(), time.monotonic()
    run.stop = True
    await asyncio.gather(*tasks)
    return p1 - p0, t1 - t0, c1 - c0


async def client_async(args: argparse.Namespace) -> int:
    import leasehold

    run = Run(args.callers)
    async with leasehold.AsyncClient(args.url) as client:
        started = asyncio.Event()

        async def loop(i: int) -> None:
            r = f"r-{i}"
            try:
                async with await client.session(f"bench-pyasync-{i}", ttl=60.0) as s:
                    await started.wait()
                    pairs = run.pairs
                    while not run.stop:
                        lk = await s.lock(NS, r, mode="Exclusive", timeout=0)
                        await lk.release()
                        pairs[i] += 1
            except BaseException as e:  # noqa: BLE001
                run.fail("client-async", e)

        tasks = [asyncio.create_task(loop(i)) for i in range(args.callers)]
        started.set()
        with profiled():  # one thread: every task's loop
            pairs, wall, cpu = await measure_tasks(run, tasks, args.warmup, args.seconds)
    if run.error:
        print(f"py_bench client-async: {run.error}", file=sys.stderr)
        return 1
    report("py-client-async", args.callers, pairs, wall, cpu)
    return 0


async def httpx_async(args: argparse.Namespace) -> int:
    import httpx

    n = args.callers
    run = Run(n)
    acquire_url, release_url = f"/v1/applocks/{NS}/acquire", f"/v1/applocks/{NS}/release"
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=args.url, timeout=30.0, limits=limits) as http:
        started = asyncio.Event()

        async def loop(i: int) -> None:
            r = f"r-{i}"
            try:
                sid = check(await http.post("/v1/sessions", json={
                    "name": f"bench-httpxasync-{i}", "ttl_ms": 60000}), 201, "session")["id"]
                await started.wait()
                pairs = run.pairs
                while not run.stop:
                    a = check(await http.post(acquire_url, json={
                        "session": sid, "resource": r, "mode": "Exclusive",
                        "owner": "Session", "timeout_ms": 0}), 200, "acquire")
                    if a["result"] < 0:
                        raise RuntimeError(f"acquire: {a}")
                    b = check(await http.post(release_url, json={
                        "session": sid, "resource": r, "owner": "Session"}), 200, "release")
                    if b["result"] != 0:
                        raise RuntimeError(f"release: {b}")
                    pairs[i] += 1
                await http.delete(f"/v1/sessions/{sid}")
            except BaseException as e:  # noqa: BLE001
                run.fail("httpx-async", e)

        tasks = [asyncio.create_task(loop(i)) for i in range(n)]
        started.set()
        with profiled():  # one thread: every task's loop
            pairs, wall, cpu = await measure_tasks(run, tasks, args.warmup, args.seconds)
    if run.error:
        print(f"py_bench httpx-async: {run.error}", file=sys.stderr)
        return 1
    report("httpx-async", n, pairs, wall, cpu)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("driver", choices=["client-sync", "client-async", "httpx-sync", "httpx-async"])
    p.add_argument("--url", required=True)
    p.add_argument("--callers", type=int, default=16)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--profile", metavar="FILE",
                   help="cProfile the callers' loops (figures then not comparable): "
                        "pstats to FILE, top 30 by own time to stderr")
    args = p.parse_args()
    global PROFILE
    PROFILE = args.profile
    if args.driver == "client-sync":
        rc = client_sync(args)
    elif args.driver == "httpx-sync":
        rc = httpx_sync(args)
    elif args.driver == "client-async":
        rc = asyncio.run(client_async(args))
    else:
        rc = asyncio.run(httpx_async(args))
    dump_profiles()
    return rc


if __name__ == "__main__":
    sys.exit(main())
