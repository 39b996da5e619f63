"""Small TCP and HTTP stand-ins for faults: a proxy that breaks a connection after the
request reached the server, a TLS front with a certificate the server would refuse, a
standby that redirects, and a URL nobody listens on."""

from __future__ import annotations

import http.server
import socket
import ssl
import threading
from typing import Any, TypeVar

from conftest import free_port


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def read_request(conn: socket.socket) -> bytes:
    """One whole HTTP request (headers and Content-Length body), or b"" at the end."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        rest += chunk
    return head + b"\r\n\r\n" + rest


_F = TypeVar("_F", bound="_Front")


class _Front:
    """Listens on a loopback port of its own (``url``, with ``scheme``) and serves each
    connection on a thread of its own with ``_serve``, toward the server on ``port``;
    closing it (``with``) stops the accepting."""

    def __init__(self, port: int, scheme: str) -> None:
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"{scheme}://127.0.0.1:{self.listener.getsockname()[1]}"

    def _start(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def __enter__(self: _F) -> _F:
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()


class BreakingProxy(_Front):
    """Forwards each connection to the server; the next ``break_next`` requests are
    forwarded and then their connection is closed before the answer comes back."""

    def __init__(self, port: int) -> None:
        super().__init__(port, "http")
        self.break_next = 0
        self.requests = 0
        self._mutex = threading.Lock()
        self._start()

    def _serve(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target))
        try:
            while True:
                data = read_request(conn)
                if not data:
                    return
                with self._mutex:
                    if data.split(b" ", 1)[0] in (b"GET", b"POST", b"PUT", b"DELETE"):
                        self.requests += 1
                    broken = self.break_next > 0
                    if broken:
                        self.break_next -= 1
                upstream.sendall(data)
                answer = upstream.recv(65536)
                if broken:
                    return
                conn.sendall(answer)
        except OSError:
            return
        finally:
            conn.close()
            upstream.close()


class TlsFront(_Front):
    """Terminates TLS with ``tls`` (a server context holding its certificate) and relays
    the bytes to the plaintext server on ``port``: a server presenting a certificate that
    `leasehold serve` refuses to start with (an expired one)."""

    def __init__(self, port: int, tls: ssl.SSLContext) -> None:
        super().__init__(port, "https")
        self.tls = tls
        self._start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            client = self.tls.wrap_socket(conn, server_side=True)
        except OSError:  # the handshake failed: what the tests are after
            conn.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.target))
        threading.Thread(target=_relay, args=(upstream, client), daemon=True).start()
        _relay(client, upstream)


def _relay(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        source.close()
        sink.close()


class Redirector:
    """A standby: answers every request 307 to ``leader``; over https with ``tls`` (a
    server context holding its certificate)."""

    def __init__(self, leader: str, tls: ssl.SSLContext | None = None) -> None:
        outer = self
        self.redirects = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def _redirect(self) -> None:
                outer.redirects += 1
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                body = b'{"leader":"%s","message":"standby"}' % leader.encode()
                self.send_response(307)
                self.send_header("Location", leader + self.path)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _redirect

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def __enter__(self) -> Redirector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
