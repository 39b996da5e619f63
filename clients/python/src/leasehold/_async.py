"""The clients' shells: they perform the core's plans over httpx, keep sessions and
checkouts alive in the background and report loss through events.

``_async.py`` is the source, written for asyncio; ``scripts/unasync.py`` generates its
blocking twin, ``_sync.py``, from it. What differs (tasks or threads, sleeping, waiting)
sits in the two backend modules, under the same names."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, TypeVar

import httpx

from . import _async_backend as backend
from . import _core, _tls
from ._core import Answer, Failure, Json, Plan, Send, Sleep, TlsRefused, seg
from ._errors import LeaseholdError, Lost, SessionLost, TransactionAborted

T = TypeVar("T")

_CONNECT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_NOT_SENT_ERRORS = (httpx.WriteError, httpx.WriteTimeout)


def _timeout(seconds: float) -> httpx.Timeout:
    if seconds < 0:
        return httpx.Timeout(None, connect=_core.CONNECT_TIMEOUT)
    return httpx.Timeout(seconds, connect=min(_core.CONNECT_TIMEOUT, seconds))


def _failure(error: Exception) -> Failure | TlsRefused:
    """What a transport error means for the core: a TLS refusal first (nothing was
    acted on, whenever it arrived), then by when it happened."""
    refused = _tls.refusal(error)
    if refused is not None:
        return refused
    if isinstance(error, _CONNECT_ERRORS):
        return Failure.CONNECT
    if isinstance(error, _NOT_SENT_ERRORS):
        return Failure.NOT_SENT
    if isinstance(error, httpx.TimeoutException):
        return Failure.TIMEOUT
    return Failure.BROKEN


class AsyncClient:
    """A leasehold client: one keep-alive pool per client, cheap to share (the blocking
    one across threads).

    ``url`` is one server or a cluster's nodes, comma-separated, in any order, each
    ``http://`` or ``https://`` (port 443 by default). ``token`` is sent as
    ``Authorization: Bearer``. ``io_timeout`` (s) bounds each call; a lock wait adds its
    own timeout.

    TLS (README, "TLS"): the server's certificate and host name are always verified,
    against ``ca_file`` (PEM) or else the system's store; ``cert_file`` (PEM, may hold
    the chain) and ``key_file`` (PEM; default: the key in ``cert_file``) are presented
    when a server asks for a client certificate. Each left out is read from
    LEASEHOLD_CA_FILE, LEASEHOLD_CERT, LEASEHOLD_KEY. Or give ``ssl_context`` instead
    (it must verify: CERT_REQUIRED and check_hostname).

    Raises ``LeaseholdError`` ``bad_url`` for a bad URL, ``bad_tls`` for TLS files or a
    context that cannot be used.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        io_timeout: float = 30.0,
        ca_file: _tls.Path | None = None,
        cert_file: _tls.Path | None = None,
        key_file: _tls.Path | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._nodes = _core.Nodes(_core.parse_urls(url))
        self._io = io_timeout
        headers = {"content-type": "application/json", "accept": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self._default_timeout = _timeout(io_timeout)
        self._forever = _timeout(-1)
        self._watch_timeout = _timeout(max(_core.WATCH_SILENCE, io_timeout))
        self._ssl = _tls.context(ca_file, cert_file, key_file, ssl_context)
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=self._default_timeout,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            follow_redirects=False,
            trust_env=False,
            verify=self._ssl,
        )

    # -- plumbing

    async def _run(self, plan: Plan[T]) -> T:
        try:
            action = next(plan)
            while True:
                if isinstance(action, Sleep):
                    await backend.sleep(action.seconds)
                    action = plan.send(None)
                else:
                    action = plan.send(await self._send(action))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _send(self, s: Send) -> Answer | Failure | TlsRefused:
        req = s.request
        if s.stream:
            timeout = self._watch_timeout
        elif s.timeout is None:
            timeout = self._default_timeout
        elif s.timeout < 0:
            timeout = self._forever
        else:
            timeout = _timeout(s.timeout)
        try:
            if s.stream:
                built = self._http.build_request(req.method, s.node + req.path, timeout=timeout)
                r = await self._http.send(built, stream=True)
                if r.status_code == 200:
                    return Answer(200, None, b"", r)
                try:
                    await r.aread()
                finally:
                    await r.aclose()
            else:
                r = await self._http.request(
                    req.method, s.node + req.path, content=req.body, timeout=timeout
                )
        except (httpx.TransportError, ssl.SSLError) as e:  # an alert read may come raw
            return await self._failed(s, e)
        return Answer(r.status_code, r.headers.get("location"), r.content)

    async def _failed(self, s: Send, error: Exception) -> Failure | TlsRefused:
        failure = _failure(error)
        if failure in (Failure.BROKEN, Failure.NOT_SENT) and s.node.startswith("https://"):
            # Was it a refusal of our certificate whose alert the break swallowed?
            refused = await backend.blocking(_tls.probe, s.node, self._ssl, _core.CONNECT_TIMEOUT)
            if refused is not None:
                return refused
        return failure

    async def aclose(self) -> None:
        """Closes the connection pool. Handles still open stop working."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- sessions, checkouts, watches

    async def session(
        self, name: str | None = None, ttl: float = 30.0, *, deadlock_priority: int = 0
    ) -> AsyncSession:
        """Opens a session kept alive every ttl/3 in the background. Raises Unreachable
        or LeaseholdError. Close it (or use ``async with``) to end it."""
        doc = await self._run(
            _core.open_session(self._nodes, self._io, name, ttl, deadlock_priority)
        )
        return AsyncSession(self, doc, ttl)

    def checkout(
        self, ns: str, key: str, *, owner: str, ttl: float = 300.0, token: str | None = None
    ) -> backend.Acquiring[AsyncCheckout]:
        """Checks ``key`` out (a visible lock with an expiry), renewed every ttl/3 with its
        token (generated unless given). Answers the AsyncCheckout (``async with`` checks
        it in). Raises Locked when someone else holds it."""
        tok = token or uuid.uuid4().hex

        async def acquire() -> AsyncCheckout:
            doc = await self._run(_core.checkout(self._nodes, self._io, ns, key, owner, ttl, tok))
            return AsyncCheckout(self, ns, key, owner, ttl, tok, doc)

        return backend.Acquiring(acquire)

    async def watch(self, ns: str | None) -> AsyncWatch:
        """Streams the events of ``ns`` (None: every namespace). Iterate it with
        ``async for``; ``aclose()`` it (or use ``async with``) to stop. A stream silent
        for 45 s raises Unreachable."""
        req = _core.Request("GET", _core.events_path(ns), None, _core.Retry.IDEMPOTENT)
        answer = await self._run(_core.call(self._nodes, req, self._io, stream=True))
        if answer.stream is None:
            raise _core.error_from_answer(answer.status, _core.loads(answer.body))
        return AsyncWatch(answer.stream)

    # -- records

    async def put(self, ns: str, key: str, body: str, *, fence: int | None = None) -> int:
        """Creates a record; answers its version (1). Raises Exists, StaleFence."""
        doc = await self._run(_core.put(self._nodes, self._io, ns, key, body, fence))
        return int(doc["version"])

    async def get(self, ns: str, key: str) -> _core.Record:
        """Reads a record. Raises NotFound."""
        doc = await self._run(_core.get(self._nodes, self._io, f"/v1/records/{seg(ns)}/{seg(key)}"))
        return _core.Record.from_json(doc)

    async def save(
        self,
        ns: str,
        key: str,
        body: str,
        *,
        fence: int | None = None,
        token: str | None = None,
        owner: str | None = None,
        if_version: int | None = None,
    ) -> int:
        """Saves a record with a proof (a lock's ``fence``, a checkout's ``token`` or
        ``owner``); answers the new version. Raises StaleFence, Refused, NotFound."""
        doc = await self._run(
            _core.save(self._nodes, self._io, ns, key, body, fence, token, owner, if_version)
        )
        return int(doc["version"])

    async def delete(
        self,
        ns: str,
        key: str,
        *,
        fence: int | None = None,
        token: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Deletes a record with a proof, as ``save``."""
        await self._run(_core.delete(self._nodes, self._io, ns, key, fence, token, owner))

    async def records(
        self,
        ns: str,
        *,
        state: str | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> tuple[list[_core.Record], str | None]:
        """One page of records (without bodies) and the key to pass as ``after`` next."""
        doc = await self._run(
            _core.get(self._nodes, self._io, _core.records_path(ns, state, prefix, after, limit))
        )
        return [_core.Record.from_json(r) for r in doc.get("records", [])], doc.get("next")

    async def break_checkout(self, ns: str, key: str) -> bool:
        """The administrator's forced release of a checkout; True when one was broken."""
        doc = await self._run(
            _core.post(self._nodes, self._io, f"/v1/records/{seg(ns)}/{seg(key)}/break", None)
        )
        return bool(doc.get("broken"))

    # -- the outbox

    async def claim(
        self, ns: str, topic: str, *, consumer: str, max: int = 10, lease: float = 30.0
    ) -> list[_core.Message]:
        """Leases up to ``max`` (1..1000) pending messages of ``topic`` to ``consumer``
        for ``lease`` s, under one claim token; answers them oldest first (maybe none).
        Sent once: a break raises Unreachable (the messages come back when the lease
        runs out). Perform each effect idempotently (by its ``key``), then ``ack`` it."""
        doc = await self._run(_core.claim(self._nodes, self._io, ns, topic, consumer, max, lease))
        return [_core.Message.from_json(m) for m in doc.get("messages", [])]

    async def ack(self, ns: str, topic: str, message: _core.Message) -> None:
        """Acks a claimed message once its effect is done. A repeated ack is harmless
        (and is sent again after a break). Raises Lost (``code`` ``not_owner`` or
        ``expired``) when the claim ran out or the message was claimed again, NotFound
        for an unknown id."""
        await self._run(
            _core.ack(self._nodes, self._io, ns, topic, message.id, message.claim_token)
        )

    # -- listings and operating

    async def locks(self, ns: str) -> list[Json]:
        """The application locks of ``ns`` (holders and waiters), as the API lists them."""
        doc = await self._run(_core.get(self._nodes, self._io, f"/v1/applocks/{seg(ns)}"))
        return list(doc["locks"])

    async def semaphores(self, ns: str) -> list[Json]:
        """The semaphores in use in ``ns``."""
        doc = await self._run(_core.get(self._nodes, self._io, f"/v1/semaphores/{seg(ns)}"))
        return list(doc["semaphores"])

    async def sessions(self) -> list[Json]:
        """The caller's sessions (every session for a token over every namespace)."""
        doc = await self._run(_core.get(self._nodes, self._io, "/v1/sessions"))
        return list(doc["sessions"])

    async def end_session(self, session_id: str) -> None:
        """Ends any session by id (an administrator's override for someone else's)."""
        await self._run(_core.end_session(self._nodes, self._io, session_id))

    async def healthy(self, timeout: float = 0.0) -> bool:
        """Whether some node answers /healthz 200 (it leads), asking until ``timeout``.
        Raises Unreachable (code ``tls``) when no node answered and one refused TLS."""
        deadline = time.monotonic() + max(timeout, 0.5)
        return await self._run(_core.wait_healthy(self._nodes, deadline))

    async def request(
        self, method: str, path: str, body: Json | None = None, ok: tuple[int, ...] = (200, 201)
    ) -> Json:
        """Any API call through the leader finding (sent once unless it is a GET): the
        parsed answer, or the API's error raised. For calls this client has no method for."""
        retry = _core.Retry.IDEMPOTENT if method == "GET" else _core.Retry.WRITE
        payload = _core.body(body) if body is not None else None
        return await self._run(
            _core.expect(self._nodes, _core.Request(method, path, payload, retry), self._io, ok)
        )


class _Held:
    """Counts the session's handles on each lock or semaphore (ride-through needs it)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str, str], int] = {}

    def holds(self, key: tuple[str, str, str, str]) -> bool:
        return self.counts.get(key, 0) > 0

    def add(self, key: tuple[str, str, str, str], delta: int) -> None:
        self.counts[key] = self.counts.get(key, 0) + delta


class AsyncSession:
    """A session kept alive in the background. ``lost`` is set once when the server
    no longer knows it (every lock and slot taken through it is lost then too);
    ``locks_lost`` once when a restart of a ``"locks":"memory"`` namespace took its locks
    there. Handles belong to one thread; the events may be waited on from any."""

    def __init__(self, client: AsyncClient, doc: Json, ttl: float) -> None:
        self._client = client
        self.id: str = str(doc["id"])
        self.name: str | None = doc.get("name")
        self.ttl = ttl
        self.lost = asyncio.Event()
        self.locks_lost = asyncio.Event()
        self._mutex = backend.mutex()
        self._handles: set[_Handle] = set()
        self._held = _Held()
        self._stop = asyncio.Event()
        self._closed = False
        self._task = backend.spawn(self._keep_alive, f"leasehold-keepalive-{self.id}")

    async def _keep_alive(self) -> None:
        period = self.ttl / 3
        give_up = _core.renewal_give_up(self.ttl)
        c = self._client
        while not await backend.wait(self._stop, period):
            try:
                verdict, taken = await c._run(_core.keepalive(c._nodes, c._io, self.id, give_up))
            except Exception:  # a closed pool: nothing to keep alive any more
                return
            if verdict is _core.Verdict.LOST:
                self._mark_lost()
                return
            if verdict is _core.Verdict.LOCKS_LOST:
                self.locks_lost.set()
            if taken:
                self._mark_taken_back(set(taken))

    def _mark_taken_back(self, keys: set[_core.HeldKey]) -> None:
        """The server took these back (a hold limit, a break): their handles are lost,
        and no longer count as held; their release sends nothing."""
        with self._mutex:
            handles = [h for h in self._handles if h._key in keys]
            for h in handles:
                self._handles.discard(h)
                self._held.add(h._key, -1)
                h._taken_back = True
        for h in handles:
            h.lost.set()

    def _mark_lost(self) -> None:
        with self._mutex:
            if self.lost.is_set():
                return
            self.lost.set()
            handles = list(self._handles)
        for h in handles:
            h.lost.set()

    def _check(self) -> None:
        if self.lost.is_set() or self._closed:
            raise _core.make_error(
                SessionLost, "session_not_found", f"session {self.id} is lost or closed", 0
            )

    async def _acquire(
        self, target: _core.Target, timeout: float | None, limit: int = 0
    ) -> _core.Grant:
        self._check()
        key = (
            target.ns,
            target.principal.lower(),
            target.name,
            "lock" if target.mode is not None else "semaphore",
        )
        c = self._client
        try:
            return await c._run(
                _core.acquire(c._nodes, c._io, target, timeout, self._held.holds(key), limit)
            )
        except LeaseholdError as e:
            if e.code == "session_not_found":
                self._mark_lost()
            raise

    def _register(self, handle: _Handle) -> None:
        with self._mutex:
            self._handles.add(handle)
            self._held.add(handle._key, 1)
            lost = self.lost.is_set()
        if lost:
            handle.lost.set()

    def _unregister(self, handle: _Handle) -> None:
        with self._mutex:
            self._handles.discard(handle)
            self._held.add(handle._key, -1)

    def lock(
        self,
        ns: str,
        resource: str,
        *,
        mode: str = "Exclusive",
        timeout: float | None = None,
        principal: str = "public",
        max_hold: float | None = None,
    ) -> backend.Acquiring[AsyncLock]:
        """Takes an application lock owned by the session, waiting up to ``timeout`` s
        (None: as long as it takes; 0: never). Answers the held AsyncLock (``async with``
        releases it). Raises LockTimeout, Deadlock, LockCancelled, SessionLost,
        Unreachable; a wait broken by a restart or failover is ridden through.
        ``max_hold`` (s) asks the server to take it back after that long (None: the
        namespace's ``max_hold_ms``, if any); the loss is then signalled on ``lost``."""

        async def acquire() -> AsyncLock:
            target = _core.Target(ns, self.id, resource, principal, mode, max_hold=max_hold)
            grant = await self._acquire(target, timeout)
            lock = AsyncLock(self, ns, resource, principal, grant)
            self._register(lock)
            return lock

        return backend.Acquiring(acquire)

    def semaphore(
        self,
        ns: str,
        name: str,
        *,
        limit: int,
        permits: int = 1,
        timeout: float | None = None,
        principal: str = "public",
        max_hold: float | None = None,
    ) -> backend.Acquiring[AsyncSlot]:
        """Takes ``permits`` of the semaphore ``name`` of ``limit`` permits, as ``lock``."""

        async def acquire() -> AsyncSlot:
            target = _core.Target(ns, self.id, name, principal, None, permits, max_hold)
            grant = await self._acquire(target, timeout, limit)
            slot = AsyncSlot(self, ns, name, principal, grant, permits)
            self._register(slot)
            return slot

        return backend.Acquiring(acquire)

    def transaction(self) -> backend.Acquiring[AsyncTransaction]:
        """Begins the session's transaction (one at a time: ``transaction_open``). Answers
        the AsyncTransaction; ``async with`` it to roll back unless committed: leaving the
        block without ``commit()`` (an exception, an early return) rolls it back. Raises
        SessionLost, LeaseholdError, or Unreachable (a break after the request was sent:
        the transaction may be open; ending the session rolls it back)."""

        async def begin() -> AsyncTransaction:
            doc = await self._call(
                _core.begin_transaction(self._client._nodes, self._client._io, self.id)
            )
            return AsyncTransaction(self, doc)

        return backend.Acquiring(begin)

    async def _call(self, plan: Plan[T]) -> T:
        """A call on the session's behalf: refused once it is lost, and noting its loss."""
        self._check()
        try:
            return await self._client._run(plan)
        except LeaseholdError as e:
            if e.code == "session_not_found":
                self._mark_lost()
            raise

    async def aclose(self) -> None:
        """Ends the session (its locks are released by the server); best effort."""
        with contextlib.suppress(LeaseholdError):
            await self.end()

    async def end(self) -> None:
        """Ends the session; raises what the server answered (SessionLost when gone)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        await backend.join(self._task, cancel=True)
        with self._mutex:
            self._handles.clear()
        c = self._client
        await c._run(_core.end_session(c._nodes, c._io, self.id))

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Handle:
    """What a lock and a slot share: release, once, on exit or when asked."""

    session: AsyncSession
    lost: asyncio.Event
    _key: tuple[str, str, str, str]
    _released: bool
    _taken_back: bool = False  # by the server: a hold limit, a break

    async def _send_release(self) -> None:
        raise NotImplementedError

    async def release(self) -> None:
        """Releases it (once; later calls do nothing). Raises what the server answered
        (SessionLost when the session is gone), or Lost without a request when the
        server took it back (the session may hold the name again through another)."""
        if self._released:
            return
        self._released = True
        if self._taken_back:
            raise _core.make_error(Lost, "lost", f"{self._key[2]} was taken back by the server", 0)
        self.session._unregister(self)
        await self._send_release()

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self.release()
        except LeaseholdError:
            if et is None and not self.lost.is_set():
                raise


class AsyncLock(_Handle):
    """A held application lock: ``fence``, ``mode`` (combined), ``count``, ``waited``;
    ``lost`` is set once when its session is lost. A context manager that releases it."""

    def __init__(
        self, session: AsyncSession, ns: str, resource: str, principal: str, grant: _core.Grant
    ) -> None:
        self.session = session
        self.ns, self.resource, self.principal = ns, resource, principal
        self.fence, self.mode, self.count, self.waited = (
            grant.fence,
            grant.mode,
            grant.count,
            grant.waited,
        )
        self.lost = asyncio.Event()
        self._key = (ns, principal.lower(), resource, "lock")
        self._released = False

    async def _send_release(self) -> None:
        c = self.session._client
        await c._run(
            _core.release_lock(
                c._nodes, c._io, self.ns, self.session.id, self.resource, self.principal
            )
        )

    async def __aenter__(self) -> AsyncLock:
        return self


class AsyncSlot(_Handle):
    """Permits held of a semaphore: ``fence``, ``permits`` (this handle's), ``waited``,
    ``lost``. A context manager that gives them back."""

    def __init__(
        self,
        session: AsyncSession,
        ns: str,
        name: str,
        principal: str,
        grant: _core.Grant,
        permits: int,
    ) -> None:
        self.session = session
        self.ns, self.name, self.principal = ns, name, principal
        self.fence, self.permits, self.waited = grant.fence, permits, grant.waited
        self.lost = asyncio.Event()
        self._key = (ns, principal.lower(), name, "semaphore")
        self._released = False

    async def _send_release(self) -> None:
        c = self.session._client
        await c._run(
            _core.release_semaphore(
                c._nodes, c._io, self.ns, self.session.id, self.name, self.permits, self.principal
            )
        )

    async def __aenter__(self) -> AsyncSlot:
        return self


class AsyncTransaction:
    """The open transaction of a session (docs/api.md, "Transactions"): locks it owns,
    staged record writes, operation records and outbox messages, all applied at once by
    ``commit()`` or none of them. ``number`` is the server's transaction number,
    ``deadline`` when ``max_transaction_ms`` rolls it back (None: unbounded).

    Commit is explicit: ``async with`` rolls the transaction back when the block is left
    without ``commit()`` (by an exception, a return, or falling off its end); errors of
    that rollback are dropped after an exception. Reads never see staged writes.

    Every call is sent once: a connection that broke after the request was sent raises
    Unreachable (it may or may not have been done; the commit's fate is then in the
    records and the operation, never guessed by sending it again). TransactionAborted
    (``transaction_aborted``, ``transaction_expired``, ``transaction_lost``) means
    nothing was applied and the transaction is over: begin a new one. After commit or
    rollback (or such an error) the handle refuses further calls (``no_transaction``)."""

    def __init__(self, session: AsyncSession, doc: Json) -> None:
        self.session = session
        self.number = int(doc["transaction"])
        self.deadline: str | None = doc.get("deadline")
        self._finished = False

    async def _call(self, plan: Plan[T], *, last: bool = False) -> T:
        if self._finished:
            plan.close()
            raise _core.make_error(
                LeaseholdError, "no_transaction", f"transaction {self.number} is over", 0
            )
        if last:  # a commit or rollback ends the handle, whatever it answers
            self._finished = True
        try:
            return await self.session._call(plan)
        except TransactionAborted:
            self._finished = True
            raise

    def _ids(self) -> tuple[_core.Nodes, float, str]:
        c = self.session._client
        return c._nodes, c._io, self.session.id

    async def lock(
        self,
        ns: str,
        resource: str,
        *,
        mode: str = "Exclusive",
        timeout: float | None = None,
        principal: str = "public",
    ) -> _core.TransactionLock:
        """Takes an application lock owned by the transaction, waiting up to ``timeout``
        s (None: as long as it takes; 0: never); commit and rollback release it. Raises
        LockTimeout, Deadlock, LockCancelled, and Unreachable for a broken wait (not
        ridden through: a restart loses the transaction and its locks)."""
        nodes, io, sid = self._ids()
        grant = await self._call(
            _core.transaction_lock(nodes, io, ns, sid, resource, mode, timeout, principal)
        )
        return _core.TransactionLock(
            ns, resource, grant.fence, grant.mode, grant.count, grant.waited
        )

    async def begin_operation(self, ns: str, op_id: str) -> _core.Operation:
        """Looks idempotent operation ``op_id`` up in the committed state: ``new``, or
        ``completed`` with its stored ``outcome`` (then do nothing again)."""
        nodes, io, sid = self._ids()
        doc = await self._call(_core.begin_operation(nodes, io, ns, op_id, sid))
        return _core.Operation.from_json(doc)

    async def complete_operation(self, ns: str, op_id: str, outcome: Any) -> None:
        """Stages the completion of ``op_id`` with ``outcome`` (any JSON value). Raises
        Exists when it is completed already (or earlier in this transaction); another
        transaction completing it first aborts this one's commit."""
        nodes, io, sid = self._ids()
        await self._call(_core.complete_operation(nodes, io, ns, op_id, sid, outcome))

    async def enqueue(self, ns: str, topic: str, key: str, payload: Any) -> _core.Enqueued:
        """Stages an outbox message (``payload``: any JSON value), enqueued at commit. A
        ``key`` enqueued before is not enqueued again (``duplicate``)."""
        nodes, io, sid = self._ids()
        doc = await self._call(_core.enqueue(nodes, io, ns, topic, key, payload, sid))
        return _core.Enqueued.from_json(doc)

    async def put(self, ns: str, key: str, body: str, *, fence: int | None = None) -> None:
        """Stages the creation of a record (checked now and again at commit, as
        ``Client.put``); its version is in the commit's ``applied``."""
        nodes, io, sid = self._ids()
        await self._call(_core.put(nodes, io, ns, key, body, fence, sid))

    async def save(
        self,
        ns: str,
        key: str,
        body: str,
        *,
        fence: int | None = None,
        token: str | None = None,
        owner: str | None = None,
        if_version: int | None = None,
    ) -> None:
        """Stages a save with its proof, as ``Client.save`` (a refusal raises now; one
        that no longer holds at commit aborts the commit)."""
        nodes, io, sid = self._ids()
        await self._call(_core.save(nodes, io, ns, key, body, fence, token, owner, if_version, sid))

    async def delete(
        self,
        ns: str,
        key: str,
        *,
        fence: int | None = None,
        token: str | None = None,
        owner: str | None = None,
    ) -> None:
        """Stages the deletion of a record with its proof, as ``Client.delete``."""
        nodes, io, sid = self._ids()
        await self._call(_core.delete(nodes, io, ns, key, fence, token, owner, sid))

    async def commit(self) -> list[_core.Applied]:
        """Applies every staged write at once and releases the transaction's locks;
        answers what was applied, in the order staged. Raises TransactionAborted when a
        staged write no longer held (nothing applied), Unreachable when the answer was
        lost (it may have committed: read the operation or the records to know)."""
        nodes, io, sid = self._ids()
        doc = await self._call(_core.commit_transaction(nodes, io, sid), last=True)
        return [_core.Applied.from_json(a) for a in doc.get("applied", [])]

    async def rollback(self) -> None:
        """Drops every staged write and releases the transaction's locks."""
        nodes, io, sid = self._ids()
        await self._call(_core.rollback_transaction(nodes, io, sid), last=True)

    async def __aenter__(self) -> AsyncTransaction:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._finished:
            return
        try:
            await self.rollback()
        except LeaseholdError as err:
            if et is None and not _core.transaction_gone(err):
                raise


class AsyncCheckout:
    """A checkout renewed every ttl/3 in the background: ``token``, ``fence``,
    ``expires_at``; ``lost`` is set once when a renewal is refused or granted as a new
    lease. A context manager that checks it in."""

    def __init__(
        self, client: AsyncClient, ns: str, key: str, owner: str, ttl: float, token: str, doc: Json
    ) -> None:
        self._client = client
        self.ns, self.key, self.owner, self.ttl, self.token = ns, key, owner, ttl, token
        self.fence: int = int(doc.get("fence", 0))
        self.expires_at: str | None = doc.get("expires_at")
        self.lost = asyncio.Event()
        self._stop = asyncio.Event()
        self._done = False
        self._task = backend.spawn(self._renew, f"leasehold-checkout-{ns}/{key}")

    async def _renew(self) -> None:
        c = self._client
        while not await backend.wait(self._stop, self.ttl / 3):
            try:
                verdict = await c._run(
                    _core.renew(
                        c._nodes, c._io, self.ns, self.key, self.owner, self.ttl, self.token
                    )
                )
            except Exception:  # a closed pool: nothing to renew any more
                return
            if self._stop.is_set():
                return
            if verdict is _core.Verdict.LOST:
                self.lost.set()
                return

    def _check(self) -> None:
        if self.lost.is_set():
            raise _core.make_error(Lost, "lost", f"the checkout of {self.key} was lost", 0)

    async def save(self, body: str, *, if_version: int | None = None) -> int:
        """Saves the record under this lease; answers the new version. Raises Lost after
        the lease was lost, Refused (expired, version_mismatch), NotFound."""
        self._check()
        c = self._client
        doc = await c._run(
            _core.save(c._nodes, c._io, self.ns, self.key, body, None, self.token, None, if_version)
        )
        return int(doc["version"])

    async def checkin(self) -> None:
        """Checks the key in (once). Raises Lost when the lease was lost meanwhile."""
        if self._done:
            return
        self._done = True
        self._stop.set()
        await backend.join(self._task, cancel=False)  # a renewal under way may still lose it
        self._check()
        c = self._client
        await c._run(_core.checkin(c._nodes, c._io, self.ns, self.key, self.token))

    async def __aenter__(self) -> AsyncCheckout:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(LeaseholdError):
            await self.checkin()


class AsyncWatch:
    """The event stream of a namespace: iterate it for ``Event``s; ``aclose()`` stops it
    (also while another caller iterates it). Iteration raises Unreachable when the stream
    breaks or stays silent for 45 s, and stops when it ends or is closed."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self._chunks: AsyncIterator[bytes] = response.aiter_raw()
        self._parser = _core.SseParser()
        self._pending: deque[_core.Event] = deque()
        self._closed = False

    def __aiter__(self) -> AsyncWatch:
        return self

    async def __anext__(self) -> _core.Event:
        while not self._pending:
            if self._closed:
                raise StopAsyncIteration
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._closed = True
                raise
            except httpx.TimeoutException:
                await self.aclose()
                raise _core.unreachable("the event stream was silent for too long") from None
            except (httpx.HTTPError, httpx.StreamError, OSError, RuntimeError):
                if self._closed:
                    raise StopAsyncIteration from None
                await self.aclose()
                raise _core.unreachable("the event stream broke") from None
            self._pending.extend(self._parser.feed(chunk))
        return self._pending.popleft()

    async def aclose(self) -> None:
        """Stops the stream."""
        self._closed = True
        await self._response.aclose()

    async def __aenter__(self) -> AsyncWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
