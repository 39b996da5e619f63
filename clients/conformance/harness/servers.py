"""Real `leasehold serve` processes for the conformance suite.

A Server runs on SQLite in a data directory of its own and keeps its port
across restarts, so a client that knew it finds it again. A Cluster is two
nodes on one fresh PostgreSQL database; which one leads is found by asking
each node's /healthz, as a client would.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from . import tls


class HarnessError(Exception):
    """The harness itself could not do what a scenario asked."""


def http(
    port: int, method: str, path: str, body: Any = None, timeout: float = 5.0
) -> tuple[int, Any]:
    """One request straight to a server (never through a proxy or a client).

    Returns (status, decoded JSON body or None); status 0 when no answer came.
    """
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{tls.scheme()}://127.0.0.1:{port}{path}", data=data, method=method
    )
    if data is not None:
        request.add_header("Content-Type", "application/json")
    certificates = tls.certificates()
    opener = (
        urllib.request.build_opener(
            _KeepRedirects, urllib.request.HTTPSHandler(context=certificates.context())
        )
        if certificates
        else _NO_REDIRECTS
    )
    try:
        with opener.open(request, timeout=timeout) as answer:
            return answer.status, _decode(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, _decode(error.read())
    except (OSError, urllib.error.URLError):
        return 0, None


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a standby's 307 is an answer here, not a hop


_NO_REDIRECTS = urllib.request.build_opener(_KeepRedirects)


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


class Server:
    """One `leasehold serve`, restartable on the same port and data."""

    def __init__(
        self,
        binary: str,
        workdir: Path,
        name: str = "server",
        config: dict[str, Any] | None = None,
        store: str | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        self.binary = binary
        self.dir = workdir / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.port = 0
        self.store = store
        self.extra_args = extra_args or []
        self.config_path: Path | None = None
        if config:
            self.config_path = self.dir / "config.json"
            self.config_path.write_text(json.dumps(config))
        self.process: subprocess.Popen[bytes] | None = None
        self.incarnation = 0
        self.stopped = False

    @property
    def url(self) -> str:
        return f"{tls.scheme()}://127.0.0.1:{self.port}"

    def start(self, wait_healthy: bool = True) -> None:
        self.incarnation += 1
        port_file = self.dir / f"port-{self.incarnation}"
        args = [
            self.binary,
            "serve",
            "--listen",
            f"127.0.0.1:{self.port}",
            "--port-file",
            str(port_file),
        ]
        if self.store:
            args += ["--store", self.store]
        else:
            args += ["--data", str(self.dir / "data")]
        if self.config_path:
            args += ["--config", str(self.config_path)]
        args += self.extra_args
        if certificates := tls.certificates():
            args += certificates.server_args()
        log = open(self.dir / f"log-{self.incarnation}.txt", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        log.close()
        self.stopped = False
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if self.process.poll() is not None:
                raise HarnessError(f"{self.name} exited: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise HarnessError(f"{self.name} wrote no port file")
            time.sleep(0.01)
        self.port = int(port_file.read_text().strip())
        if wait_healthy:
            self.wait_healthy()

    def wait_healthy(self, within: float = 30.0) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.healthy():
                return
            time.sleep(0.02)
        raise HarnessError(f"{self.name} not healthy in {within} s: {self.log_tail()}")

    def healthy(self) -> bool:
        return http(self.port, "GET", "/healthz", timeout=1.0)[0] == 200

    def kill9(self) -> None:
        if self.process and self.process.poll() is None:
            if self.stopped:
                os.kill(self.process.pid, signal.SIGCONT)
            self.process.kill()
            self.process.wait()

    def signal(self, signo: int) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signo)
        self.stopped = signo == signal.SIGSTOP

    def close(self) -> None:
        if self.process and self.process.poll() is None:
            if self.stopped:
                os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, lines: int = 30) -> str:
        path = self.dir / f"log-{self.incarnation}.txt"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def psql(url: str, sql: str) -> None:
    psql_bin = os.environ.get("LEASEHOLD_PSQL", "/usr/lib/postgresql/15/bin/psql")
    if not Path(psql_bin).exists():
        psql_bin = "psql"
    done = subprocess.run(
        [psql_bin, url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise HarnessError(f"psql {sql!r}: {done.stderr.strip()}")


def postgres_url() -> str:
    """The tests' PostgreSQL cluster (scripts/pg-test-cluster): its URL file is
    named by LEASEHOLD_TEST_PG_URL_FILE, or the URL given in LEASEHOLD_TEST_PG_URL."""
    url = os.environ.get("LEASEHOLD_TEST_PG_URL")
    if url:
        return url
    url_file = os.environ.get("LEASEHOLD_TEST_PG_URL_FILE")
    if url_file and Path(url_file).exists():
        return Path(url_file).read_text().strip()
    raise HarnessError(
        "a cluster scenario needs PostgreSQL: set LEASEHOLD_TEST_PG_URL_FILE "
        "(scripts/pg-test-cluster start DIR writes DIR/url) or LEASEHOLD_TEST_PG_URL"
    )


def _with_database(url: str, database: str) -> str:
    base, _, query = url.partition("?")
    scheme_host = base.rsplit("/", 1)[0] if base.count("/") > 2 else base
    return f"{scheme_host}/{database}" + (f"?{query}" if query else "")


class Cluster:
    """Two nodes on one fresh PostgreSQL database, a short leader lease."""

    LEASE_MS = 1000

    def __init__(self, binary: str, workdir: Path, config: dict[str, Any] | None) -> None:
        admin_url = postgres_url()
        self.database = "conformance_" + uuid.uuid4().hex[:12]
        self.admin_url = admin_url
        psql(admin_url, f"CREATE DATABASE {self.database}")
        store = _with_database(admin_url, self.database)
        self.nodes = [
            Server(
                binary,
                workdir,
                name=f"n{i}",
                config=config,
                store=store,
                extra_args=["--leader-lease-ms", str(self.LEASE_MS), "--node", f"n{i}"],
            )
            for i in range(2)
        ]
        for node in self.nodes:
            node.start(wait_healthy=False)
        self.leader(within=30.0)

    def leader(self, within: float = 30.0) -> Server:
        deadline = time.monotonic() + within
        while True:
            for node in self.nodes:
                if node.process and node.process.poll() is None and node.healthy():
                    return node
            if time.monotonic() > deadline:
                logs = "\n".join(n.log_tail(10) for n in self.nodes)
                raise HarnessError(f"no node leads after {within} s:\n{logs}")
            time.sleep(0.02)

    def standby(self) -> Server:
        leader = self.leader()
        return next(n for n in self.nodes if n is not leader)

    def close(self) -> None:
        for node in self.nodes:
            node.close()
        with contextlib.suppress(HarnessError):
            psql(self.admin_url, f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")
