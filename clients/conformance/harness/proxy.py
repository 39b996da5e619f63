"""A TCP proxy in front of a server, for the faults a network makes.

- freeze: the server's bytes stop reaching the client (held back), while
  the client's still reach the server: a request is carried out, its answer
  is not seen. thaw lets them through again.
- cut: every open connection is closed at both ends at once: the client
  sees its connection break, whatever it had sent.
- trickle: the server's bytes reach the client a few at a time, so a line
  of the event stream arrives split across reads.

It connects to the server's port anew for each connection, so it keeps
working across a restart of the server on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

from . import tls


class FaultProxy:
    TRICKLE_BYTES = 5

    def __init__(self, upstream_port: Callable[[], int]) -> None:
        self._upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._frozen = threading.Event()
        self._thawed = threading.Condition(self._lock)
        self.trickle = False
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{tls.scheme()}://127.0.0.1:{self.port}"

    def freeze(self) -> None:
        self._frozen.set()

    def thaw(self) -> None:
        with self._lock:
            self._frozen.clear()
            self._thawed.notify_all()

    def cut(self) -> None:
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
            self._frozen.clear()
            self._thawed.notify_all()
        for s in sockets:
            _close(s)

    def close(self) -> None:
        self._closed = True
        _close(self._listener)
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self._upstream_port()), timeout=2)
                server.settimeout(None)
            except OSError:
                _close(client)  # the server is down: the client sees it at once
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets.update((client, server))
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, to_client: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if to_client:
                    self._hold_while_frozen(sink)
                    if sink not in self._sockets:
                        break  # cut while held: the answer is never seen
                    if self.trickle:
                        for i in range(0, len(data), self.TRICKLE_BYTES):
                            sink.sendall(data[i : i + self.TRICKLE_BYTES])
                            time.sleep(0.002)
                        continue
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._sockets.discard(source)
                self._sockets.discard(sink)
            _close(source)
            _close(sink)

    def _hold_while_frozen(self, sink: socket.socket) -> None:
        with self._lock:
            while self._frozen.is_set() and sink in self._sockets:
                self._thawed.wait(0.05)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
