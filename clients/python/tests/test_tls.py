"""TLS against real servers (`serve --tls-cert ...`) with the throwaway certificates of
scripts/test-certs: verification of the server, mutual TLS, the environment variables,
and the redirect rule (never from https:// down to http://)."""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import Contract, Server, hooked

import leasehold
from leasehold import _core

BILLING = [
    {"subject": "worker.billing", "principal": "billing", "namespaces": ["*"], "role": "admin"}
]


def tls_args(certs: Path, server: str = "server", client_ca: bool = False) -> list[str]:
    args = ["--tls-cert", str(certs / f"{server}.pem"), "--tls-key", str(certs / f"{server}.key")]
    if client_ca:
        args += ["--tls-client-ca", str(certs / "ca.pem"), "--tls-require-client-certificate"]
    return args


def client_cert(certs: Path, name: str) -> dict[str, Any]:
    return {"cert_file": certs / f"{name}.pem", "key_file": certs / f"{name}.key"}


@pytest.fixture
def tls_server(make_server: Any, certs: Path) -> Server:
    return make_server(args=tls_args(certs))  # type: ignore[no-any-return]


@pytest.fixture
def mtls_server(make_server: Any, certs: Path) -> Server:
    """Requires a client certificate by the test CA; worker.billing is principal billing."""
    return make_server({"tokens": BILLING}, args=tls_args(certs, client_ca=True))  # type: ignore[no-any-return]


def server_context(certs: Path, name: str) -> ssl.SSLContext:
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(certs / f"{name}.pem", certs / f"{name}.key")
    return tls


@contextlib.contextmanager
def serving(make_server: Any, certs: Path, certificate: str) -> Iterator[str]:
    """The https URL of a real server presenting ``certificate``. `serve` refuses to
    start with an expired one: that one is presented by a TLS front relaying to it."""
    if certificate != "server-expired":
        yield make_server(args=tls_args(certs, certificate)).url
        return
    from proxy import TlsFront

    with TlsFront(make_server().port, server_context(certs, certificate)) as front:
        yield front.url


@pytest.fixture
def no_tls_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("LEASEHOLD_CA_FILE", "LEASEHOLD_CERT", "LEASEHOLD_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield


def assert_tls_refused(e: pytest.ExceptionInfo[leasehold.LeaseholdError], *words: str) -> None:
    assert isinstance(e.value, leasehold.Unreachable)
    assert e.value.code == "tls" and e.value.status == 0
    assert "TLS handshake" in e.value.message
    for word in words:
        assert word in e.value.message.lower(), e.value.message


def test_a_lock_over_https(
    tls_server: Server, certs: Path, contract: Contract, no_tls_env: None
) -> None:
    assert tls_server.url.startswith("https://127.0.0.1:")
    c = hooked(leasehold.Client(tls_server.url, ca_file=certs / "ca.pem"), contract)
    with c.watch("app") as events, c.session("worker") as s:
        with s.lock("app", "invoice:481", timeout=5.0) as lk:
            assert lk.fence > 0
            assert c.locks("app")[0]["granted"][0]["session"] == s.id
        types = []
        for event in events:  # the event stream over TLS
            types.append(event.type)
            if event.type == "applock.released":
                break
    assert types[-2:] == ["applock.granted", "applock.released"]
    assert c.healthy()
    c.close()


def test_localhost_and_a_ca_given_as_ssl_context(
    tls_server: Server, certs: Path, no_tls_env: None
) -> None:
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    c = leasehold.Client(f"https://localhost:{tls_server.port}", ssl_context=ctx)
    assert c.put("docs", "1", "over TLS") == 1
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    with pytest.raises(leasehold.LeaseholdError) as e:
        leasehold.Client(tls_server.url, ssl_context=unverified)
    assert e.value.code == "bad_tls"


@pytest.mark.parametrize(
    ("certificate", "words"),
    [
        ("server-other-ca", ("certificate verify failed", "issuer")),
        ("server-expired", ("certificate verify failed", "expired")),
        ("server-wrong-host", ("certificate verify failed", "mismatch")),
    ],
)
def test_a_server_certificate_not_trusted_is_refused(
    make_server: Any, certs: Path, certificate: str, words: tuple[str, ...], no_tls_env: None
) -> None:
    with serving(make_server, certs, certificate) as url:
        c = leasehold.Client(url, ca_file=certs / "ca.pem", io_timeout=5.0)
        started = time.monotonic()
        with pytest.raises(leasehold.LeaseholdError) as e:
            c.session("worker")  # a POST: refused before anything was sent, not "sent once"
        assert_tls_refused(e, *words)
        with pytest.raises(leasehold.LeaseholdError) as e:
            c.healthy(timeout=3.0)  # no waiting for a certificate to mend
        assert_tls_refused(e)
        assert time.monotonic() - started < 2.0


def test_the_system_store_does_not_know_the_test_ca(tls_server: Server, no_tls_env: None) -> None:
    with pytest.raises(leasehold.LeaseholdError) as e:
        leasehold.Client(tls_server.url).get("docs", "1")
    assert_tls_refused(e, "certificate verify failed")


def test_mutual_tls_names_the_principal(
    mtls_server: Server, certs: Path, contract: Contract, no_tls_env: None
) -> None:
    c = hooked(
        leasehold.Client(
            mtls_server.url, ca_file=certs / "ca.pem", **client_cert(certs, "client-billing")
        ),
        contract,
    )
    with c.session("worker") as s:
        [mine] = [x for x in c.sessions() if x["id"] == s.id]
        assert mine["opened_by"] == "billing"
        with s.lock("billing", "invoice:1", timeout=5.0) as lk:
            assert lk.fence > 0


@pytest.mark.parametrize(
    ("certificate", "words"),
    [
        (None, ("certificate required",)),
        ("client-other-ca", ("unknown ca",)),
        ("client-expired", ("expired",)),
    ],
)
def test_mutual_tls_refuses_a_missing_or_untrusted_client_certificate(
    mtls_server: Server,
    certs: Path,
    certificate: str | None,
    words: tuple[str, ...],
    no_tls_env: None,
) -> None:
    extra = client_cert(certs, certificate) if certificate else {}
    c = leasehold.Client(mtls_server.url, ca_file=certs / "ca.pem", io_timeout=5.0, **extra)
    with pytest.raises(leasehold.LeaseholdError) as e:
        c.put("billing", "1", "draft")
    assert_tls_refused(e, *words)


def test_an_unknown_subject_is_not_a_principal(
    mtls_server: Server, certs: Path, no_tls_env: None
) -> None:
    c = leasehold.Client(
        mtls_server.url, ca_file=certs / "ca.pem", **client_cert(certs, "client-unknown")
    )
    with pytest.raises(leasehold.LeaseholdError) as e:
        c.session("worker")  # the handshake passes: the server's CA signed it
    assert e.value.code == "unauthorized" and e.value.status == 401


def test_the_environment_variables_are_used_when_no_option_is(
    mtls_server: Server, certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEASEHOLD_CA_FILE", str(certs / "ca.pem"))
    monkeypatch.setenv("LEASEHOLD_CERT", str(certs / "client-billing.pem"))
    monkeypatch.setenv("LEASEHOLD_KEY", str(certs / "client-billing.key"))
    c = leasehold.Client(mtls_server.url)
    with c.session("from-env") as s:
        assert [x["opened_by"] for x in c.sessions() if x["id"] == s.id] == ["billing"]
    # An option given wins over its variable.
    other = leasehold.Client(mtls_server.url, **client_cert(certs, "client-other-ca"))
    with pytest.raises(leasehold.LeaseholdError) as e:
        other.get("billing", "1")
    assert_tls_refused(e, "unknown ca")
    monkeypatch.setenv("LEASEHOLD_CA_FILE", str(certs / "missing.pem"))
    with pytest.raises(leasehold.LeaseholdError) as e:
        leasehold.Client(mtls_server.url)
    assert e.value.code == "bad_tls" and "missing.pem" in e.value.message


def test_plaintext_is_unchanged_with_the_variables_set(
    server: Server, certs: Path, contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEASEHOLD_CA_FILE", str(certs / "ca.pem"))
    c = hooked(leasehold.Client(server.url), contract)
    with c.session("plain") as s, s.lock("app", "r") as lk:
        assert lk.fence > 0


def test_a_node_refusing_tls_is_passed_over_in_a_mixed_list(
    make_server: Any, server: Server, certs: Path, no_tls_env: None
) -> None:
    other = make_server(args=tls_args(certs, "server-other-ca"))
    c = leasehold.Client(f"{other.url},{server.url}", ca_file=certs / "ca.pem")
    assert c.put("docs", "mixed", "x") == 1
    assert c._nodes.leader == server.url


def test_no_redirect_from_https_down_to_http(
    server: Server, tls_server: Server, certs: Path, no_tls_env: None
) -> None:
    from proxy import Redirector

    tls = server_context(certs, "server")
    ca = certs / "ca.pem"
    with Redirector(server.url, tls) as standby:  # https, naming an http:// leader
        c = leasehold.Client(standby.url, ca_file=ca, io_timeout=5.0)
        with pytest.raises(leasehold.LeaseholdError) as e:
            c.put("docs", "r", "never in cleartext")
        assert e.value.code == "bad_url" and e.value.status == 307
        assert "https:// to http://" in e.value.message
        assert standby.redirects == 1
        assert c._nodes.urls == [standby.url]  # not learned
    with pytest.raises(leasehold.NotFound):
        leasehold.Client(server.url).get("docs", "r")  # it never got there
    with Redirector(tls_server.url) as standby:  # http up to https: followed
        c = leasehold.Client(standby.url, ca_file=ca, io_timeout=5.0)
        assert c.put("docs", "up", "x") == 1
        assert c._nodes.leader == tls_server.url
    with Redirector(tls_server.url, tls) as standby:  # https to https: followed
        c = leasehold.Client(standby.url, ca_file=ca, io_timeout=5.0)
        assert c.put("docs", "across", "x") == 1


def test_the_redirect_rule_in_the_core() -> None:
    assert _core.insecure_redirect("https://a:1", "http://b:2/v1/x") is not None
    assert _core.insecure_redirect("https://a:1", "HTTP://b:2/v1/x") is not None
    assert _core.insecure_redirect("https://a:1", "https://b:2/v1/x") is None
    assert _core.insecure_redirect("http://a:1", "http://b:2/v1/x") is None
    assert _core.insecure_redirect("http://a:1", "https://b:2/v1/x") is None
    assert _core.insecure_redirect("https://a:1", None) is None
    nodes = _core.Nodes(["https://a:1"])
    plan = _core.call(nodes, _core.Request("GET", "/x", None, _core.Retry.IDEMPOTENT), 5.0)
    assert isinstance(next(plan), _core.Send)
    with pytest.raises(leasehold.LeaseholdError) as e:
        plan.send(_core.Answer(307, "http://b:2/x", b"{}"))
    assert e.value.code == "bad_url"
    assert nodes.urls == ["https://a:1"]


def test_a_wait_broken_by_a_restart_with_a_bad_certificate_stops_at_once(
    make_server: Any, certs: Path, no_tls_env: None
) -> None:
    server = make_server(args=tls_args(certs))
    c = leasehold.Client(server.url, ca_file=certs / "ca.pem", io_timeout=30.0)
    a, b = c.session("holder", ttl=60.0), c.session("waiter", ttl=60.0)
    a.lock("app", "job")
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(b.lock, "app", "job", timeout=60.0)
        time.sleep(0.3)
        server.kill9()
        server.args = tls_args(certs, "server-wrong-host")
        server.start()
        started = time.monotonic()
        with pytest.raises(leasehold.LeaseholdError) as e:
            waiting.result(timeout=20)
    assert_tls_refused(e, "mismatch")
    assert time.monotonic() - started < 5.0  # not the 60 s wait plus io_timeout
    c.close()


@pytest.mark.anyio
async def test_async_over_https_and_refused(
    make_server: Any, certs: Path, no_tls_env: None
) -> None:
    server = make_server({"tokens": BILLING}, args=tls_args(certs, client_ca=True))
    ca = certs / "ca.pem"
    async with (
        leasehold.AsyncClient(server.url, ca_file=ca, **client_cert(certs, "client-billing")) as c,
        await c.session("async") as s,
        s.lock("billing", "r", timeout=5.0) as lk,
    ):
        assert lk.fence > 0
        assert [x["opened_by"] for x in await c.sessions() if x["id"] == s.id] == ["billing"]
    async with leasehold.AsyncClient(server.url, ca_file=ca, io_timeout=5.0) as c:
        with pytest.raises(leasehold.LeaseholdError) as e:
            await c.session("no certificate")
        assert_tls_refused(e, "certificate required")
