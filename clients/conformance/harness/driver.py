"""A driver process (PROTOCOL.md) seen from the harness: requests out,
answers and events in, each event stamped with the time it arrived."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .servers import HarnessError


@dataclass
class Event:
    at: float  # time.monotonic() when it arrived
    line: dict[str, Any]


@dataclass
class Answer:
    at: float
    ok: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@dataclass
class _Pending:
    sent: float
    op: dict[str, Any]
    done: threading.Event = field(default_factory=threading.Event)
    answer: Answer | None = None


class DriverProcess:
    def __init__(self, command: str, stderr_path: Path, env: dict[str, str] | None = None) -> None:
        self.command = command
        self._stderr_path = stderr_path
        stderr = open(stderr_path, "wb")  # noqa: SIM115
        self._process = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **(env or {})},
        )
        stderr.close()
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._pending: dict[int, _Pending] = {}
        self.events: list[Event] = []
        self.garbage: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def send(self, op: dict[str, Any]) -> int:
        request_id = next(self._ids)
        line = json.dumps({"id": request_id, **op}) + "\n"
        with self._lock:
            self._pending[request_id] = _Pending(time.monotonic(), op)
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
        except OSError as error:
            raise HarnessError(f"driver gone: {error}; {self.stderr_tail()}") from error
        return request_id

    def answer(self, request_id: int, within: float) -> Answer:
        pending = self._pending[request_id]
        if not pending.done.wait(within):
            raise HarnessError(
                f"driver did not answer {pending.op.get('op')} within {within:.1f} s"
            )
        assert pending.answer is not None
        return pending.answer

    def request(self, op: dict[str, Any], within: float = 30.0) -> Answer:
        return self.answer(self.send(op), within)

    def wait_for(self, predicate: Callable[[Event], bool], count: int, until: float) -> list[Event]:
        """Waits until `count` events satisfy `predicate` or `until` passes;
        returns those that do (fewer on a time-out)."""
        with self._lock:
            while True:
                found = [e for e in self.events if predicate(e)]
                remaining = until - time.monotonic()
                if len(found) >= count or remaining <= 0:
                    return found
                self._lock.wait(min(remaining, 0.1))

    def close(self) -> int | None:
        if self._process.stdin:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            return self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
            return None

    def stderr_tail(self, lines: int = 40) -> str:
        text = self._stderr_path.read_text(errors="replace") if self._stderr_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _read(self) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            now = time.monotonic()
            try:
                line = json.loads(raw)
                if not isinstance(line, dict):
                    raise ValueError("not an object")
            except ValueError:
                with self._lock:
                    self.garbage.append(raw.decode(errors="replace").rstrip())
                continue
            with self._lock:
                if "id" in line:
                    pending = self._pending.get(line["id"])
                    if pending is None or pending.answer is not None:
                        self.garbage.append(f"unexpected answer {line}")
                    else:
                        pending.answer = Answer(now, line.get("ok"), line.get("error"))
                        if pending.answer.ok is None and pending.answer.error is None:
                            pending.answer.error = {"kind": "driver", "message": f"{line}"}
                        pending.done.set()
                elif "event" in line:
                    self.events.append(Event(now, line))
                else:
                    self.garbage.append(f"neither answer nor event: {line}")
                self._lock.notify_all()
