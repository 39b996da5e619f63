"""Runs one scenario (scenarios/*.json, format in README.md) against one
driver: starts the servers it asks for, sends the driver its operations,
injects its faults and checks every expectation. A failed expectation
raises ScenarioFailed, naming the step, what was expected and what came."""

from __future__ import annotations

import itertools
import json
import re
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from .driver import Answer, DriverProcess, Event
from .matching import Mismatch, match
from .proxy import FaultProxy
from .servers import Cluster, HarnessError, Server, http

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_STEP_KEYS = {"expect", "async", "save", "within_ms", "note"}


class ScenarioFailed(AssertionError):
    pass


def load(name: str) -> dict[str, Any]:
    with open(SCENARIOS / f"{name}.json") as f:
        scenario: dict[str, Any] = json.load(f)
    return scenario


def names() -> list[str]:
    return sorted(p.stem for p in SCENARIOS.glob("*.json"))


class Run:
    def __init__(self, name: str, driver_command: str, binary: str) -> None:
        self.name = name
        self.scenario = load(name)
        self.driver_command = driver_command
        self.binary = binary
        self.vars: dict[str, Any] = {}
        self.pending: dict[str, tuple[int, dict[str, Any]]] = {}
        self.server: Server | None = None
        self.cluster: Cluster | None = None
        self.proxy: FaultProxy | None = None
        self.driver: DriverProcess | None = None
        self.started = time.monotonic()
        self._probes = itertools.count(1)
        self._workdir = tempfile.TemporaryDirectory(prefix=f"conformance-{name}-")
        self.workdir = Path(self._workdir.name)

    # --- the whole run -------------------------------------------------

    def run(self) -> None:
        try:
            self._start_servers()
            self.driver = DriverProcess(self.driver_command, self.workdir / "driver.stderr")
            self._client()
            for index, step in enumerate(self.scenario["steps"]):
                try:
                    self._step(step)
                except (Mismatch, HarnessError) as error:
                    raise ScenarioFailed(self._report(index, step, str(error))) from None
            self._check_protocol()
        finally:
            self._stop()

    def _start_servers(self) -> None:
        spec = self.scenario.get("server", {})
        config = spec.get("config")
        if spec.get("kind", "single") == "cluster":
            self.cluster = Cluster(self.binary, self.workdir, config)
            return
        self.server = Server(self.binary, self.workdir, config=config)
        self.server.start()
        if spec.get("proxy"):
            server = self.server
            self.proxy = FaultProxy(lambda: server.port)

    def _client(self) -> None:
        spec = self.scenario.get("server", {})
        if self.cluster:
            leader = self.cluster.leader()
            standby = self.cluster.standby()
            order = [leader, standby]
            if spec.get("urls", "leader_first") == "standby_first":
                order.reverse()
            url = ",".join(n.url for n in order)
        else:
            assert self.server is not None
            url = self.proxy.url if self.proxy else self.server.url
        op = {"op": "client", "url": url, "io_timeout_ms": spec.get("io_timeout_ms", 10000)}
        self._expect_answer(self._driver().request(op), {"ok": {}}, "client")

    def _stop(self) -> None:
        if self.driver:
            self.driver.close()
        if self.proxy:
            self.proxy.close()
        if self.server:
            self.server.close()
        if self.cluster:
            self.cluster.close()
        self._workdir.cleanup()

    # --- steps ---------------------------------------------------------

    def _step(self, step: dict[str, Any]) -> None:
        step = self._resolve(step)
        if "op" in step:
            self._op(step)
        elif "await" in step:
            request_id, op = self.pending.pop(step["await"])
            answer = self._driver().answer(request_id, step.get("within_ms", 30000) / 1000)
            self._expect_answer(answer, step.get("expect", {"ok": {}}), op["op"], op, step)
        elif "fault" in step:
            self._fault(step)
        elif "sleep_ms" in step:
            time.sleep(step["sleep_ms"] / 1000)
        elif "http" in step:
            self._http(step)
        elif "events" in step:
            self._events(step)
        elif "watch_ready" in step:
            self._watch_ready(step["watch_ready"], step["ns"])
        elif "watch_sequence" in step:
            self._watch_sequence(step)
        else:
            raise HarnessError(f"unknown step {step}")

    def _op(self, step: dict[str, Any]) -> None:
        op = {k: v for k, v in step.items() if k not in _STEP_KEYS}
        if "async" in step:
            self.pending[step["async"]] = (self._driver().send(op), op)
            return
        answer = self._driver().request(op, step.get("within_ms", 30000) / 1000)
        self._expect_answer(answer, step.get("expect", {"ok": {}}), op["op"], op, step)

    def _expect_answer(
        self,
        answer: Answer,
        expect: dict[str, Any],
        what: str,
        op: dict[str, Any] | None = None,
        step: dict[str, Any] | None = None,
    ) -> None:
        got = {"ok": answer.ok} if answer.ok is not None else {"error": answer.error}
        match(expect, got, path=what)
        if answer.ok is not None and op is not None:
            if "as" in op:
                for key, value in answer.ok.items():
                    self.vars[f"{op['as']}.{key}"] = value
            for name, field in (step or {}).get("save", {}).items():
                self.vars[name] = answer.ok.get(field)

    def _fault(self, step: dict[str, Any]) -> None:
        fault = step["fault"]
        if fault == "kill9":
            self._single().kill9()
        elif fault == "restart":
            self._single().start()
        elif fault == "kill9_restart":
            self._single().kill9()
            self._single().start()
        elif fault == "stop":
            self._single().signal(signal.SIGSTOP)
        elif fault == "cont":
            self._single().signal(signal.SIGCONT)
        elif fault in ("freeze", "thaw", "cut"):
            getattr(self._proxy(), fault)()
        elif fault == "trickle":
            self._proxy().trickle = True
        elif fault == "end_session":
            status, body = self._leader_http("DELETE", f"/v1/sessions/{step['session']}")
            if status != 204:
                raise HarnessError(f"ending session {step['session']}: {status} {body}")
        elif fault == "kill_leader":
            assert self.cluster is not None
            old = self.cluster.leader()
            old.kill9()
            new = self.cluster.leader(within=30.0)
            if new is old:
                raise HarnessError("the killed leader still leads")
            if step.get("restart_old", False):
                old.start(wait_healthy=False)
        else:
            raise HarnessError(f"unknown fault {fault}")

    def _http(self, step: dict[str, Any]) -> None:
        spec = step["http"]
        expect = step.get("expect", {"status": 200})
        deadline = time.monotonic() + step.get("retry_ms", 0) / 1000
        while True:
            status, body = self._leader_http(
                spec.get("method", "GET"), spec["path"], spec.get("body")
            )
            try:
                match(expect, {"status": status, "body": body}, path=f"{spec['path']}")
                break
            except Mismatch:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        for name, field in step.get("save", {}).items():
            self.vars[name] = _dig(body, field)

    def _events(self, step: dict[str, Any]) -> None:
        """Waits for `count` events like `events` within `within_ms` of this
        step's start, then (with `quiet_ms`) waits on to see no more come."""
        want = step["events"]
        count = step.get("count", 1)
        started = time.monotonic()

        def like(event: Event) -> bool:
            return all(event.line.get(k) == v for k, v in want.items())

        driver = self._driver()
        found = driver.wait_for(like, count, started + step.get("within_ms", 5000) / 1000)
        if count == 0 or len(found) < count:
            quiet = step.get("for_ms", 0) / 1000
            if count == 0 and quiet:
                time.sleep(quiet)
                found = [e for e in driver.events if like(e)]
            if len(found) != count:
                raise Mismatch(
                    f"events {want}: expected {count} within {step.get('within_ms', 5000)} ms"
                    f"{' (and none for ' + str(step.get('for_ms')) + ' ms)' if count == 0 else ''},"
                    f" got {len(found)}: {[self._when(e) for e in found]}"
                )
        if step.get("quiet_ms"):
            time.sleep(step["quiet_ms"] / 1000)
            found = [e for e in driver.events if like(e)]
            if len(found) != count:
                raise Mismatch(
                    f"events {want}: expected exactly {count}, got {len(found)} "
                    f"{[self._when(e) for e in found]}"
                )

    def _watch_ready(self, handle: str, ns: str) -> None:
        """Until the watch reports a record this harness inserts, inserts one
        now and then: from then on the stream is known to be subscribed."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            key = f"__probe_{next(self._probes)}"
            status, body = self._leader_http("PUT", f"/v1/records/{ns}/{key}", {"body": "probe"})
            if status != 201:
                raise HarnessError(f"probe {key}: {status} {body}")

            def seen(event: Event, key: str = key) -> bool:
                line = event.line
                return (
                    line.get("event") == "watch"
                    and line.get("of") == handle
                    and (line.get("data") or {}).get("resource") == key
                )

            if self._driver().wait_for(seen, 1, time.monotonic() + 0.5):
                self.vars[f"{handle}.ready"] = len(self._driver().events)
                return
        raise HarnessError(f"watch {handle} reported none of the probes in 15 s")

    def _watch_sequence(self, step: dict[str, Any]) -> None:
        handle = step["watch_sequence"]
        types = set(step["types"])
        expected = step["expect"]
        start = self.vars.get(f"{handle}.ready", 0)

        def relevant(event: Event) -> bool:
            line = event.line
            return (
                line.get("event") == "watch"
                and line.get("of") == handle
                and line.get("type") in types
            )

        driver = self._driver()
        deadline = time.monotonic() + step.get("within_ms", 10000) / 1000
        while True:
            seen = [
                {"type": e.line["type"], **(e.line.get("data") or {})}
                for e in driver.events[start:]
                if relevant(e)
            ]
            if len(seen) >= len(expected) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        match(expected, seen, path=f"watch {handle}")

    # --- helpers -------------------------------------------------------

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        if isinstance(value, str):
            whole = _VARIABLE.fullmatch(value)
            if whole:
                return self._var(whole.group(1))
            return _VARIABLE.sub(lambda m: str(self._var(m.group(1))), value)
        return value

    def _var(self, name: str) -> Any:
        if name not in self.vars:
            raise HarnessError(f"no variable {name!r} (known: {sorted(self.vars)})")
        return self.vars[name]

    def _leader_http(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        server = self.cluster.leader() if self.cluster else self._single()
        return http(server.port, method, path, body)

    def _single(self) -> Server:
        if self.server is None:
            raise HarnessError("this fault needs a single server")
        return self.server

    def _proxy(self) -> FaultProxy:
        if self.proxy is None:
            raise HarnessError('this fault needs "proxy": true in the scenario\'s server')
        return self.proxy

    def _driver(self) -> DriverProcess:
        assert self.driver is not None
        return self.driver

    def _when(self, event: Event) -> str:
        return f"{event.line} at {event.at - self.started:.3f} s"

    def _check_protocol(self) -> None:
        driver = self._driver()
        if driver.garbage:
            raise ScenarioFailed(
                f"{self.name}: the driver wrote lines that break PROTOCOL.md: {driver.garbage[:5]}"
            )
        errors = [e.line for e in driver.events if e.line.get("event") == "driver_error"]
        if errors:
            raise ScenarioFailed(f"{self.name}: driver errors: {errors}")

    def _report(self, index: int, step: dict[str, Any], error: str) -> str:
        lines = [
            f"scenario {self.name}, step {index + 1} {json.dumps(step)}:",
            f"  {error}",
            f"  driver: {self.driver_command}",
            "  events so far:",
        ]
        lines += [f"    {self._when(e)}" for e in (self.driver.events if self.driver else [])][-20:]
        if self.driver:
            lines += ["  driver stderr (last lines):", self.driver.stderr_tail()]
        for server in (
            [self.server] if self.server else (self.cluster.nodes if self.cluster else [])
        ):
            lines += [f"  {server.name} log (last lines):", server.log_tail(15)]
        return "\n".join(lines)


def _dig(body: Any, field: str) -> Any:
    for part in field.split("."):
        if isinstance(body, list):
            body = body[int(part)]
        elif isinstance(body, dict):
            body = body.get(part)
        else:
            return None
    return body
