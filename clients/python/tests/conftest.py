"""Fixtures: real servers spawned from LEASEHOLD_BINARY, and clients whose every answer
is validated against docs/openapi.yaml (so a contract change breaks the tests)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import leasehold

REPO = Path(__file__).resolve().parents[3]
OPENAPI = REPO / "docs" / "openapi.yaml"
_BASE = "urn:leasehold-openapi"


def binary() -> str:
    path = os.environ.get("LEASEHOLD_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("LEASEHOLD_BINARY must name the leasehold executable (tests never skip)")
    return path


class Contract:
    """Validates answers against the OpenAPI document's response schemas."""

    def __init__(self) -> None:
        self.doc: dict[str, Any] = yaml.safe_load(OPENAPI.read_text())
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self.registry: Registry[Any] = Registry().with_resource(_BASE, resource)
        self.routes: list[tuple[re.Pattern[str], str]] = []
        for template in self.doc["paths"]:
            pattern = re.sub(
                r"\{[^}]+\}", "[^/]+", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")
            )
            self.routes.append((re.compile(f"^{pattern}$"), template))
        # Literal paths win over templates (/v1/records/{ns}/purge vs /{key}).
        self.routes.sort(key=lambda r: r[1].count("{"))
        self.failures: list[str] = []
        self.checked = 0

    def _resolve(self, obj: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in obj:
            node: Any = self.doc
            for part in obj["$ref"].removeprefix("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            obj = node
        return obj

    def check(self, method: str, path: str, status: int, content_type: str, body: bytes) -> None:
        if status == 307:  # a standby's redirect: api.md "Several nodes", for every path
            return
        for pattern, template in self.routes:
            if pattern.match(path) and method.lower() in self.doc["paths"][template]:
                break
        else:
            self.failures.append(f"{method} {path}: no such operation in openapi.yaml")
            return
        responses = self.doc["paths"][template][method.lower()]["responses"]
        spec = (
            responses.get(str(status))
            or responses.get(f"{status // 100}XX")
            or responses.get("default")
        )
        if spec is None:
            self.failures.append(f"{method} {template}: status {status} undocumented")
            return
        spec = self._resolve(spec)
        media = spec.get("content", {}).get("application/json")
        if media is None or "json" not in content_type:
            return
        pointer = "/".join(
            p.replace("~", "~0").replace("/", "~1")
            for p in (
                "paths",
                template,
                method.lower(),
                "responses",
                str(status) if str(status) in responses else "default",
                "content",
                "application/json",
                "schema",
            )
        )
        if "$ref" in responses.get(str(status), {}):
            ref = responses[str(status)]["$ref"].removeprefix("#/")
            pointer = ref + "/content/application~1json/schema"
        validator = Draft202012Validator({"$ref": f"{_BASE}#/{pointer}"}, registry=self.registry)
        errors = list(validator.iter_errors(json.loads(body) if body else None))
        self.checked += 1
        if errors:
            self.failures.append(f"{method} {template} {status}: {errors[0].message}")

    def hook(self, response: httpx.Response) -> None:
        if not _is_stream(response):
            response.read()
            self.check_response(response)

    async def ahook(self, response: httpx.Response) -> None:
        if not _is_stream(response):
            await response.aread()
            self.check_response(response)

    def check_response(self, response: httpx.Response) -> None:
        req = response.request
        self.check(
            req.method,
            req.url.path,
            response.status_code,
            response.headers.get("content-type", ""),
            response.content,
        )


def _is_stream(response: httpx.Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "")


_CONTRACT = Contract()


@pytest.fixture
def contract() -> Iterator[Contract]:
    _CONTRACT.failures.clear()
    yield _CONTRACT
    assert not _CONTRACT.failures, "answers outside docs/openapi.yaml:\n" + "\n".join(
        _CONTRACT.failures
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A `leasehold serve` of the test's own; kill9() and start() again on the same
    data directory and port for restart tests. ``args`` are more arguments of serve;
    with ``--tls-cert`` among them it serves https."""

    def __init__(
        self,
        root: Path,
        config: dict[str, Any] | None = None,
        store: str | None = None,
        args: list[str] | None = None,
    ) -> None:
        self.root = root
        self.port = free_port()
        self.config = config
        self.store = store
        self.args = list(args or [])
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        scheme = "https" if "--tls-cert" in self.args else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def start(self) -> None:
        args = [binary(), "serve", "--listen", f"127.0.0.1:{self.port}", "--log-level", "warn"]
        args += ["--store", self.store] if self.store else ["--data", str(self.root / "data")]
        if self.store == "memory":
            args += ["--clock", "manual"]
        if self.config is not None:
            cfg = self.root / "config.json"
            cfg.write_text(json.dumps(self.config))
            args += ["--config", str(cfg)]
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 - the process keeps it
        self.proc = subprocess.Popen([*args, *self.args], stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._ready():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"server did not start: {(self.root / 'server.log').read_text()}")

    def _ready(self) -> bool:
        """/healthz answers 200; over https (whose certificate may be one the tests
        mean to be refused) the port accepting connections is enough."""
        if self.url.startswith("https:"):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        try:
            return httpx.get(self.url + "/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def kill9(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill9()
            self.proc = None


@pytest.fixture
def make_server() -> Iterator[Any]:
    servers: list[Server] = []
    with tempfile.TemporaryDirectory(prefix="leasehold-test-") as tmp:

        def make(
            config: dict[str, Any] | None = None,
            store: str | None = None,
            args: list[str] | None = None,
        ) -> Server:
            root = Path(tmp) / str(len(servers))
            root.mkdir()
            server = Server(root, config, store, args)
            server.start()
            servers.append(server)
            return server

        yield make
        for s in servers:
            s.stop()


@pytest.fixture(scope="session")
def certs() -> Iterator[Path]:
    """The TLS tests' throwaway certificates, made by scripts/test-certs (its header
    lists them: ca.pem, server.pem, server-expired.pem, client-billing.pem, ...)."""
    with tempfile.TemporaryDirectory(prefix="leasehold-certs-") as tmp:
        subprocess.run([str(REPO / "scripts" / "test-certs"), tmp], check=True, capture_output=True)
        yield Path(tmp)


@pytest.fixture
def server(make_server: Any) -> Server:
    return make_server()  # type: ignore[no-any-return]


def hooked(client: leasehold.Client, contract: Contract) -> leasehold.Client:
    client._http.event_hooks["response"] = [contract.hook]
    return client


@pytest.fixture
def client(server: Server, contract: Contract) -> Iterator[leasehold.Client]:
    c = hooked(leasehold.Client(server.url, io_timeout=10.0), contract)
    yield c
    c.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def aclient(server: Server, contract: Contract) -> AsyncIterator[leasehold.AsyncClient]:
    c = leasehold.AsyncClient(server.url, io_timeout=10.0)
    c._http.event_hooks["response"] = [contract.ahook]
    yield c
    await c.aclose()
