"""The asyncio client: the same plans as the blocking one, performed with
``httpx.AsyncClient``; renewals run as tasks and report loss through ``asyncio.Event``."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

import httpx

from . import _core
from ._core import Answer, Failure, Json, Plan, Send, Sleep, seg
from ._errors import LeaseholdError, Lost, SessionLost
from ._sync import _CONNECT_ERRORS, _NOT_SENT_ERRORS, _Held, _timeout

T = TypeVar("T")


class _Releasable(Protocol):
    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None: ...


H = TypeVar("H", bound=_Releasable)


class _Acquiring(Generic[H]):
    """``await`` it for the handle, or ``async with`` it to release on exit."""

    def __init__(self, acquire: Callable[[], Awaitable[H]]) -> None:
        self._acquire = acquire
        self._handle: H | None = None

    def __await__(self) -> Generator[Any, None, H]:
        return self._acquire().__await__()

    async def __aenter__(self) -> H:
        self._handle = await self._acquire()
        return self._handle

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._handle is not None
        await self._handle.__aexit__(et, e, tb)


class AsyncClient:
    """The asyncio twin of ``Client``: same arguments, same calls, awaited."""

    def __init__(self, url: str, *, token: str | None = None, io_timeout: float = 30.0) -> None:
        self._nodes = _core.Nodes(_core.parse_urls(url))
        self._io = io_timeout
        headers = {"content-type": "application/json", "accept": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        self._default_timeout = _timeout(io_timeout)
        self._forever = _timeout(-1)
        self._watch_timeout = _timeout(max(_core.WATCH_SILENCE, io_timeout))
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=self._default_timeout,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
            follow_redirects=False,
            trust_env=False,
        )

    async def _run(self, plan: Plan[T]) -> T:
        try:
            action = next(plan)
            while True:
                if isinstance(action, Sleep):
                    await asyncio.sleep(action.seconds)
                    action = plan.send(None)
                else:
                    action = plan.send(await self._send(action))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _send(self, s: Send) -> Answer | Failure:
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
        except _CONNECT_ERRORS:
            return Failure.CONNECT
        except _NOT_SENT_ERRORS:
            return Failure.NOT_SENT
        except httpx.TimeoutException:
            return Failure.TIMEOUT
        except httpx.TransportError:
            return Failure.BROKEN
        return Answer(r.status_code, r.headers.get("location"), r.content)

    async def aclose(self) -> None:
        """Closes the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def session(
        self, name: str | None = None, ttl: float = 30.0, *, deadlock_priority: int = 0
    ) -> AsyncSession:
        """As ``Client.session``; the keepalive is a task of the running loop."""
        doc = await self._run(
            _core.open_session(self._nodes, self._io, name, ttl, deadlock_priority)
        )
        return AsyncSession(self, doc, ttl)

    def checkout(
        self, ns: str, key: str, *, owner: str, ttl: float = 300.0, token: str | None = None
    ) -> _Acquiring[AsyncCheckout]:
        """As ``Client.checkout``: ``await`` it, or ``async with`` it."""
        tok = token or uuid.uuid4().hex

        async def acquire() -> AsyncCheckout:
            doc = await self._run(_core.checkout(self._nodes, self._io, ns, key, owner, ttl, tok))
            return AsyncCheckout(self, ns, key, owner, ttl, tok, doc)

        return _Acquiring(acquire)

    async def watch(self, ns: str | None) -> AsyncWatch:
        """As ``Client.watch``; iterate with ``async for``."""
        req = _core.Request("GET", _core.events_path(ns), None, _core.Retry.IDEMPOTENT)
        answer = await self._run(_core.call(self._nodes, req, self._io, stream=True))
        if answer.stream is None:
            raise _core.error_from_answer(answer.status, _core.loads(answer.body))
        return AsyncWatch(answer.stream)

    async def put(self, ns: str, key: str, body: str, *, fence: int | None = None) -> int:
        """As ``Client.put``."""
        doc = await self._run(_core.put(self._nodes, self._io, ns, key, body, fence))
        return int(doc["version"])

    async def get(self, ns: str, key: str) -> _core.Record:
        """As ``Client.get``."""
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
        """As ``Client.save``."""
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
        """As ``Client.delete``."""
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
        """As ``Client.records``."""
        doc = await self._run(
            _core.get(self._nodes, self._io, _core.records_path(ns, state, prefix, after, limit))
        )
        return [_core.Record.from_json(r) for r in doc.get("records", [])], doc.get("next")

    async def locks(self, ns: str) -> list[Json]:
        """As ``Client.locks``."""
        doc = await self._run(_core.get(self._nodes, self._io, f"/v1/applocks/{seg(ns)}"))
        return list(doc["locks"])

    async def end_session(self, session_id: str) -> None:
        """As ``Client.end_session``."""
        await self._run(_core.end_session(self._nodes, self._io, session_id))

    async def request(
        self, method: str, path: str, body: Json | None = None, ok: tuple[int, ...] = (200, 201)
    ) -> Json:
        """As ``Client.request``."""
        retry = _core.Retry.IDEMPOTENT if method == "GET" else _core.Retry.WRITE
        payload = _core.body(body) if body is not None else None
        return await self._run(
            _core.expect(self._nodes, _core.Request(method, path, payload, retry), self._io, ok)
        )


class AsyncSession:
    """As ``Session``, with ``asyncio.Event``s; the keepalive is a task."""

    def __init__(self, client: AsyncClient, doc: Json, ttl: float) -> None:
        self._client = client
        self.id: str = str(doc["id"])
        self.name: str | None = doc.get("name")
        self.ttl = ttl
        self.lost = asyncio.Event()
        self.locks_lost = asyncio.Event()
        self._handles: set[AsyncLock | AsyncSlot] = set()
        self._held = _Held()
        self._stop = asyncio.Event()
        self._closed = False
        self._task = asyncio.get_running_loop().create_task(self._keep_alive())

    async def _keep_alive(self) -> None:
        period = self.ttl / 3
        give_up = _core.renewal_give_up(self.ttl)
        c = self._client
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), period)
            if self._stop.is_set():
                return
            verdict = await c._run(_core.keepalive(c._nodes, c._io, self.id, give_up))
            if verdict is _core.Verdict.LOST:
                self._mark_lost()
                return
            if verdict is _core.Verdict.LOCKS_LOST:
                self.locks_lost.set()

    def _mark_lost(self) -> None:
        if self.lost.is_set():
            return
        self.lost.set()
        for h in list(self._handles):
            h.lost.set()

    async def _acquire(
        self, target: _core.Target, timeout: float | None, limit: int = 0
    ) -> _core.Grant:
        if self.lost.is_set() or self._closed:
            raise _core.make_error(
                SessionLost, "session_not_found", f"session {self.id} is lost or closed", 0
            )
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

    def _register(self, handle: AsyncLock | AsyncSlot) -> None:
        self._handles.add(handle)
        self._held.add(handle._key, 1)
        if self.lost.is_set():
            handle.lost.set()

    def _unregister(self, handle: AsyncLock | AsyncSlot) -> None:
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
    ) -> _Acquiring[AsyncLock]:
        """As ``Session.lock``: ``await`` it for the lock, or ``async with`` it."""

        async def acquire() -> AsyncLock:
            grant = await self._acquire(
                _core.Target(ns, self.id, resource, principal, mode), timeout
            )
            lock = AsyncLock(self, ns, resource, principal, grant)
            self._register(lock)
            return lock

        return _Acquiring(acquire)

    def semaphore(
        self,
        ns: str,
        name: str,
        *,
        limit: int,
        permits: int = 1,
        timeout: float | None = None,
        principal: str = "public",
    ) -> _Acquiring[AsyncSlot]:
        """As ``Session.semaphore``."""

        async def acquire() -> AsyncSlot:
            target = _core.Target(ns, self.id, name, principal, None, permits)
            grant = await self._acquire(target, timeout, limit)
            slot = AsyncSlot(self, ns, name, principal, grant, permits)
            self._register(slot)
            return slot

        return _Acquiring(acquire)

    async def end(self) -> None:
        """Ends the session; raises what the server answered."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._handles.clear()
        c = self._client
        await c._run(_core.end_session(c._nodes, c._io, self.id))

    async def aclose(self) -> None:
        """Ends the session, best effort."""
        with contextlib.suppress(LeaseholdError):
            await self.end()

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _AsyncHeld:
    _key: tuple[str, str, str, str]
    lost: asyncio.Event
    session: AsyncSession
    _released: bool

    async def _send_release(self) -> None:
        raise NotImplementedError

    async def release(self) -> None:
        """Releases it (once; later calls do nothing); raises what the server answered."""
        if self._released:
            return
        self._released = True
        self.session._unregister(self)  # type: ignore[arg-type]
        await self._send_release()

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self.release()
        except LeaseholdError:
            if et is None and not self.lost.is_set():
                raise


class AsyncLock(_AsyncHeld):
    """As ``Lock``."""

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


class AsyncSlot(_AsyncHeld):
    """As ``Slot``."""

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


class AsyncCheckout:
    """As ``Checkout``; renewed by a task."""

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
        self._task = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        c = self._client
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.ttl / 3)
            if self._stop.is_set():
                return
            verdict = await c._run(
                _core.renew(c._nodes, c._io, self.ns, self.key, self.owner, self.ttl, self.token)
            )
            if verdict is _core.Verdict.LOST and not self._stop.is_set():
                self.lost.set()
                return

    async def save(self, body: str, *, if_version: int | None = None) -> int:
        """As ``Checkout.save``."""
        if self.lost.is_set():
            raise _core.make_error(Lost, "lost", f"the checkout of {self.key} was lost", 0)
        c = self._client
        doc = await c._run(
            _core.save(c._nodes, c._io, self.ns, self.key, body, None, self.token, None, if_version)
        )
        return int(doc["version"])

    async def checkin(self) -> None:
        """As ``Checkout.checkin``."""
        if self._done:
            return
        self._done = True
        self._stop.set()
        if self._task is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self.lost.is_set():
            raise _core.make_error(Lost, "lost", f"the checkout of {self.key} was lost", 0)
        c = self._client
        await c._run(_core.checkin(c._nodes, c._io, self.ns, self.key, self.token))

    async def __aenter__(self) -> AsyncCheckout:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(LeaseholdError):
            await self.checkin()


class AsyncWatch:
    """As ``Watch``; iterate with ``async for``; ``aclose()`` stops it."""

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
