"""TLS for both clients: the ``ssl.SSLContext`` built once per client from its options
(or the environment), and which transport failures are TLS refusals.

The context always verifies the server's certificate chain and host name; there is no
way to turn that off (a context given that does not is refused)."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import ssl
import time
from typing import TypeAlias
from urllib.parse import urlsplit

from ._core import TlsRefused, make_error
from ._errors import LeaseholdError

ENV_CA_FILE, ENV_CERT, ENV_KEY = "LEASEHOLD_CA_FILE", "LEASEHOLD_CERT", "LEASEHOLD_KEY"

Path: TypeAlias = str | os.PathLike[str]


def bad_tls(message: str) -> LeaseholdError:
    return make_error(LeaseholdError, "bad_tls", message)


def _option(given: Path | None, env: str) -> str | None:
    """The option given, else the environment variable's value (unset or empty: None)."""
    if given is not None:
        return os.fspath(given)
    return os.environ.get(env) or None


def context(
    ca_file: Path | None = None,
    cert_file: Path | None = None,
    key_file: Path | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> ssl.SSLContext:
    """The client's TLS context: ``ssl_context`` as it is, or one that trusts
    ``ca_file`` (else the system's store) and presents ``cert_file`` with ``key_file``
    (else the key in ``cert_file``). Each file option left out is read from its
    environment variable: LEASEHOLD_CA_FILE, LEASEHOLD_CERT, LEASEHOLD_KEY. Raises
    LeaseholdError ``bad_tls`` for a file that cannot be used, a key without a
    certificate, or an ``ssl_context`` that does not verify the server."""
    if ssl_context is not None:
        if ca_file is not None or cert_file is not None or key_file is not None:
            raise bad_tls("give ssl_context, or ca_file/cert_file/key_file, not both")
        if ssl_context.verify_mode != ssl.CERT_REQUIRED or not ssl_context.check_hostname:
            raise bad_tls(
                "ssl_context must verify the server: verify_mode CERT_REQUIRED, check_hostname"
            )
        return ssl_context
    ca = _option(ca_file, ENV_CA_FILE)
    cert = _option(cert_file, ENV_CERT)
    key = _option(key_file, ENV_KEY)
    if key is not None and cert is None:
        raise bad_tls(f"a key ({key}) without a certificate: give cert_file or {ENV_CERT}")
    try:
        ctx = ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as e:
        raise bad_tls(f"cannot use the CA file {ca}: {_text(e)}") from None
    if cert is not None:
        try:
            ctx.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as e:
            raise bad_tls(
                f"cannot use the certificate {cert} (key {key or cert}): {_text(e)}"
            ) from None
    return ctx


# End-of-file and system-call errors are connections that broke, not refusals.
_NOT_REFUSALS = (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError)


def refusal(error: BaseException) -> TlsRefused | None:
    """The TLS refusal behind a transport error, or None: a certificate the client did
    not accept (unknown CA, expired, another host), or the server's alert refusing
    ours. The server acts on nothing sent over a connection whose handshake failed,
    even when (TLS 1.3) the alert arrives after the request was written."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, ssl.SSLError) and not isinstance(e, _NOT_REFUSALS):
            return TlsRefused(_describe(e))
        e = e.__cause__ or e.__context__
    return None


def _describe(e: ssl.SSLError) -> str:
    if isinstance(e, ssl.SSLCertVerificationError) and e.verify_message:
        return f"certificate verify failed: {e.verify_message}"
    return _text(e)


def _text(e: Exception) -> str:
    return str(e).split(" (_ssl.c:")[0]


def probe(node: str, ctx: ssl.SSLContext, timeout: float) -> TlsRefused | None:
    """Whether ``node`` refuses this client's TLS handshake, asked on a connection of its
    own that sends nothing. Under TLS 1.3 a server refuses a client certificate after
    the client's side of the handshake ended; a request written meanwhile can break the
    connection (EPIPE) before the alert is read, and that break alone cannot tell. None:
    the handshake was accepted (a session ticket or data came), or no answer in time."""
    u = urlsplit(node)
    host = u.hostname or ""
    deadline = time.monotonic() + timeout
    try:
        with (
            socket.create_connection((host, u.port or 443), timeout=timeout) as raw,
            ctx.wrap_socket(raw, server_hostname=host) as tls,
        ):
            tls.setblocking(False)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([tls], [], [], left)[0]:
                return None
            with contextlib.suppress(ssl.SSLWantReadError):  # a session ticket: accepted
                tls.recv(1)  # an alert raises
            return None
    except OSError as e:
        return refusal(e)
