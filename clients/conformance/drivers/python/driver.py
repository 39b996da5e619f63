#!/usr/bin/env python3
"""The Python client's conformance driver (clients/conformance/PROTOCOL.md).

JSON lines on stdin, answers and events on stdout. Each request runs on a thread of
its own (``--async``: a task of one asyncio loop, on ``AsyncClient``). The driver only
translates: every behaviour is the client's. ``--mutant NAME`` patches the client from
here to remove one behaviour (clients/conformance/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

import leasehold
from leasehold import _core

Json = dict[str, Any]
T = TypeVar("T")

# Kinds by exception class, most specific first.
KINDS: list[tuple[type[leasehold.LeaseholdError], str]] = [
    (leasehold.LockTimeout, "timeout"),
    (leasehold.Deadlock, "deadlock"),
    (leasehold.LockCancelled, "cancelled"),
    (leasehold.Locked, "locked"),
    (leasehold.SessionLost, "session_lost"),
    (leasehold.Lost, "lost"),
    (leasehold.StaleFence, "stale_fence"),
    (leasehold.Unreachable, "unreachable"),
]


class DriverError(Exception):
    """A bad request line or an unknown handle."""


def error_json(e: BaseException) -> Json:
    if not isinstance(e, leasehold.LeaseholdError):
        kind = (
            "driver" if isinstance(e, (DriverError, KeyError, ValueError, TypeError)) else "error"
        )
        return {"kind": kind, "code": type(e).__name__, "status": 0, "message": str(e)}
    kind = next((k for cls, k in KINDS if isinstance(e, cls)), "error")
    out: Json = {"kind": kind, "code": e.code, "status": e.status, "message": e.message}
    if isinstance(e, leasehold.Deadlock):
        out["cycle"] = [
            {"waiter": c.waiter, "holder": c.holder, "resource": c.resource} for c in e.cycle
        ]
    return out


def seconds(value: Any) -> float | None:
    return None if value is None or int(value) < 0 else int(value) / 1000


class Output:
    def __init__(self) -> None:
        self._mutex = threading.Lock()

    def write(self, obj: Json) -> None:
        line = json.dumps(obj, separators=(",", ":")) + "\n"
        with self._mutex:
            sys.stdout.write(line)
            sys.stdout.flush()


# ---------------------------------------------------------------- mutants


def _nothing(*args: Any, **kwargs: Any) -> Generator[Any, Any, None]:
    return None
    yield


def _renewed_without_asking(*args: Any, **kwargs: Any) -> Generator[Any, Any, _core.Verdict]:
    return _core.Verdict.OK
    yield


def _holds_nothing(*args: Any, **kwargs: Any) -> Generator[Any, Any, None]:
    return None
    yield


def apply_mutant(name: str) -> None:
    keepalive, renewal = _core.judge_keepalive, _core.judge_renewal
    if name == "no_release":
        _core.release_lock = _nothing
        _core.release_semaphore = _nothing
    elif name == "untyped_errors":

        def untyped(
            cls: Any, code: str, message: str = "", status: int = 0, **extra: Any
        ) -> leasehold.LeaseholdError:
            return leasehold.LeaseholdError(code, message, status)

        _core.make_error = untyped
    elif name == "no_cycle":
        _core.parse_cycle = lambda deadlock: []
    elif name == "no_renewal":
        _core.renew = _renewed_without_asking
    elif name == "loss_on_network_error":
        _core.judge_keepalive = lambda error, doc: (
            _core.Verdict.LOST if error else keepalive(error, doc)
        )
        _core.judge_renewal = lambda error, doc: (
            _core.Verdict.LOST if error else renewal(error, doc)
        )
    elif name == "ignore_session_not_found":
        _core.judge_keepalive = lambda error, doc: (
            _core.Verdict.RETRY
            if error is not None and error.code == "session_not_found"
            else keepalive(error, doc)
        )
    elif name == "ignore_locks_lost":
        _core.judge_keepalive = lambda error, doc: (
            _core.Verdict.OK
            if keepalive(error, doc) is _core.Verdict.LOCKS_LOST
            else keepalive(error, doc)
        )
    elif name == "ignore_taken_back":
        _core.taken_back = lambda doc: []
    elif name == "no_ride_through":
        _core.rides_through = lambda held_already, timeout: False
    elif name == "reask_blindly":
        _core.read_holdings = _holds_nothing
    elif name == "resend_posts":
        _core.may_resend = lambda request, failure: True
    elif name == "first_url_only":
        _core.Nodes.order = lambda self: (self.urls[0],)  # type: ignore[method-assign]
        _core.follow_redirect = lambda nodes, location: None
    elif name == "sse_chunk_lines":

        def chunk_lines(self: _core.SseParser, chunk: bytes) -> list[_core.Event]:
            lines = chunk.split(b"\n")
            lines.pop()  # a line split across reads is dropped
            return self.lines(lines)

        _core.SseParser.feed = chunk_lines  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown mutant {name!r}")


# ---------------------------------------------------------------- ops


class Driver:
    """The ops, written once for both clients: ``await self.done(x)`` is ``x`` itself on
    the blocking client, ``x`` awaited on the asyncio one."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.client: Any = None
        self.handles: dict[str, Any] = {}

    async def done(self, x: Any) -> Any:
        raise NotImplementedError

    def new_client(self, url: str, io_timeout: float) -> Any:
        raise NotImplementedError

    def signal(self, event: Any, kind: str, of: str) -> None:
        raise NotImplementedError

    def pump_in_background(self, w: Any, name: str) -> None:
        raise NotImplementedError

    async def stop_watch(self, w: Any) -> None:
        raise NotImplementedError

    def c(self) -> Any:
        if self.client is None:
            raise DriverError("no client op yet")
        return self.client

    def h(self, req: Json, field: str) -> Any:
        name = req.get(field)
        if name not in self.handles:
            raise DriverError(f"unknown handle {name!r}")
        return self.handles[name]

    def parse(self, line: str) -> Json | None:
        """The request on ``line``; None for a blank line or a bad one (answered here)."""
        if not line.strip():
            return None
        try:
            req: Json = json.loads(line)
        except ValueError as e:
            self.out.write({"id": None, "error": {"kind": "driver", "message": str(e)}})
            return None
        return req

    def watched(self, name: str, event: leasehold.Event) -> None:
        self.out.write({"event": "watch", "of": name, "type": event.type, "data": event.data})

    def watch_ended(self, name: str, e: Exception | None) -> None:
        self.out.write({"event": "watch_end", "of": name, "error": error_json(e) if e else None})

    async def handle(self, req: Json) -> Json:
        op = req.get("op")
        if op == "client":
            io = req.get("io_timeout_ms")
            self.client = self.new_client(req["url"], io / 1000 if io else 30.0)
            return {}
        if op == "session":
            s = await self.done(self.c().session(req.get("name"), ttl=req["ttl_ms"] / 1000))
            self.handles[req["as"]] = s
            self.signal(s.lost, "lost", req["as"])
            self.signal(s.locks_lost, "locks_lost", req["as"])
            return {"session": s.id}
        if op == "end_session":
            await self.done(self.h(req, "session").end())
            return {}
        if op == "lock":
            lk = await self.done(
                self.h(req, "session").lock(
                    req["ns"],
                    req["resource"],
                    mode=req["mode"],
                    timeout=seconds(req.get("timeout_ms", -1)),
                )
            )
            self.handles[req["as"]] = lk
            self.signal(lk.lost, "lost", req["as"])
            return {"fence": lk.fence, "mode": lk.mode, "waited": lk.waited}
        if op == "semaphore":
            slot = await self.done(
                self.h(req, "session").semaphore(
                    req["ns"],
                    req["name"],
                    limit=req["limit"],
                    permits=req.get("permits", 1),
                    timeout=seconds(req.get("timeout_ms", -1)),
                )
            )
            self.handles[req["as"]] = slot
            self.signal(slot.lost, "lost", req["as"])
            return {"fence": slot.fence, "permits": slot.permits, "waited": slot.waited}
        if op == "release":
            await self.done(self.h(req, "handle").release())
            return {}
        if op == "checkout":
            doc = await self.done(
                self.c().checkout(
                    req["ns"], req["key"], owner=req["owner"], ttl=req["ttl_ms"] / 1000
                )
            )
            self.handles[req["as"]] = doc
            self.signal(doc.lost, "lost", req["as"])
            return {"token": doc.token, "fence": doc.fence}
        if op == "save":
            return {"version": await self.done(self.h(req, "handle").save(req["body"]))}
        if op == "checkin":
            await self.done(self.h(req, "handle").checkin())
            return {}
        if op == "put":
            return {"version": await self.done(self.c().put(req["ns"], req["key"], req["body"]))}
        if op == "get":
            r = await self.done(self.c().get(req["ns"], req["key"]))
            return {
                "body": r.body,
                "version": r.version,
                "locked_by": r.locked_by,
                "state": r.state,
            }
        if op == "fenced_save":
            saved = self.c().save(req["ns"], req["key"], req["body"], fence=req["fence"])
            return {"version": await self.done(saved)}
        if op == "watch":
            w = await self.done(self.c().watch(req["ns"]))
            self.handles[req["as"]] = w
            self.pump_in_background(w, req["as"])
            return {}
        if op == "stop_watch":
            await self.stop_watch(self.h(req, "handle"))
            return {}
        raise DriverError(f"unknown op {op!r}")


def finish(coro: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine that never suspends (the ops on the blocking client) to its end."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("an op on the blocking client suspended")


# ---------------------------------------------------------------- sync


class SyncDriver(Driver):
    async def done(self, x: Any) -> Any:
        return x

    def new_client(self, url: str, io_timeout: float) -> leasehold.Client:
        return leasehold.Client(url, io_timeout=io_timeout)

    def signal(self, event: threading.Event, kind: str, of: str) -> None:
        def wait() -> None:
            event.wait()
            self.out.write({"event": kind, "of": of})

        threading.Thread(target=wait, daemon=True).start()

    def pump_in_background(self, w: leasehold.Watch, name: str) -> None:
        threading.Thread(target=self.pump, args=(w, name), daemon=True).start()

    async def stop_watch(self, w: leasehold.Watch) -> None:
        w.close()

    def pump(self, w: leasehold.Watch, name: str) -> None:
        try:
            for event in w:
                self.watched(name, event)
        except Exception as e:
            self.watch_ended(name, e)
        else:
            self.watch_ended(name, None)

    def run_one(self, req: Json) -> None:
        try:
            self.out.write({"id": req.get("id"), "ok": finish(self.handle(req))})
        except Exception as e:
            self.out.write({"id": req.get("id"), "error": error_json(e)})

    def close_all(self) -> None:
        for h in list(self.handles.values()):
            with contextlib.suppress(Exception):
                if isinstance(h, leasehold.Checkout):
                    h.checkin()
                elif isinstance(h, leasehold.Watch | leasehold.Session):
                    h.close()

    def main(self) -> None:
        for line in sys.stdin:
            if (req := self.parse(line)) is None:
                continue
            if req.get("op") == "client":  # first, before anything that needs it
                self.run_one(req)
                continue
            threading.Thread(target=self.run_one, args=(req,), daemon=True).start()
        closer = threading.Thread(target=self.close_all, daemon=True)
        closer.start()
        closer.join(timeout=3)


# ---------------------------------------------------------------- async


class AsyncDriver(Driver):
    def __init__(self, out: Output) -> None:
        super().__init__(out)
        self.tasks: set[asyncio.Task[None]] = set()

    async def done(self, x: Any) -> Any:
        return await x

    def new_client(self, url: str, io_timeout: float) -> leasehold.AsyncClient:
        return leasehold.AsyncClient(url, io_timeout=io_timeout)

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def signal(self, event: asyncio.Event, kind: str, of: str) -> None:
        async def wait() -> None:
            await event.wait()
            self.out.write({"event": kind, "of": of})

        self.spawn(wait())

    def pump_in_background(self, w: leasehold.AsyncWatch, name: str) -> None:
        self.spawn(self.pump(w, name))

    async def stop_watch(self, w: leasehold.AsyncWatch) -> None:
        await w.aclose()

    async def pump(self, w: leasehold.AsyncWatch, name: str) -> None:
        try:
            async for event in w:
                self.watched(name, event)
        except Exception as e:
            self.watch_ended(name, e)
        else:
            self.watch_ended(name, None)

    async def run_one(self, req: Json) -> None:
        try:
            self.out.write({"id": req.get("id"), "ok": await self.handle(req)})
        except Exception as e:
            self.out.write({"id": req.get("id"), "error": error_json(e)})

    async def close_all(self) -> None:
        for h in list(self.handles.values()):
            with contextlib.suppress(Exception):
                if isinstance(h, leasehold.AsyncCheckout):
                    await h.checkin()
                elif isinstance(h, leasehold.AsyncWatch | leasehold.AsyncSession):
                    await h.aclose()

    async def main(self) -> None:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, daemon=True).start()
        while (line := await lines.get()) is not None:
            if (req := self.parse(line)) is None:
                continue
            if req.get("op") == "client":  # first, before anything that needs it
                await self.run_one(req)
                continue
            self.spawn(self.run_one(req))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.close_all(), 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--async",
        dest="use_async",
        action="store_true",
        help="run the ops on AsyncClient in an asyncio loop",
    )
    parser.add_argument("--mutant", help="remove one behaviour of the client")
    args = parser.parse_args(argv)
    if args.mutant:
        apply_mutant(args.mutant)
    out = Output()
    if args.use_async:
        asyncio.run(AsyncDriver(out).main())
    else:
        SyncDriver(out).main()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
