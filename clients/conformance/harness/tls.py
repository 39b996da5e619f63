"""The suite over TLS: with LEASEHOLD_CONFORMANCE_TLS=1 (or --tls) every
server serves HTTPS with certificates made for the run by scripts/test-certs
(127.0.0.1 is among their names), every URL a driver gets is https://, and
drivers learn the CA from LEASEHOLD_CA_FILE, as any client of leasehold
does. The fault proxy relays the TLS bytes as it relays plaintext."""

from __future__ import annotations

import os
import ssl
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Certificates:
    dir: Path

    @property
    def ca(self) -> Path:
        return self.dir / "ca.pem"

    def server_args(self) -> list[str]:
        return [
            "--tls-cert",
            str(self.dir / "server.pem"),
            "--tls-key",
            str(self.dir / "server.key"),
        ]

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


_certificates: Certificates | None = None
_made: tempfile.TemporaryDirectory[str] | None = None


def enable() -> Certificates:
    """Turns TLS on for the rest of the run (idempotent)."""
    global _certificates, _made
    if _certificates is None:
        _made = tempfile.TemporaryDirectory(prefix="conformance-certs-")
        subprocess.run(
            [str(REPO / "scripts" / "test-certs"), _made.name], check=True, capture_output=True
        )
        _certificates = Certificates(Path(_made.name))
        os.environ["LEASEHOLD_CA_FILE"] = str(_certificates.ca)
    return _certificates


def certificates() -> Certificates | None:
    """The run's certificates when it is over TLS, else None."""
    return _certificates


def scheme() -> str:
    return "https" if _certificates else "http"
