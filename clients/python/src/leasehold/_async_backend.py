"""What the asyncio client does its own way: tasks, sleeping, waiting on an event, and
acquisitions that are awaited or entered. ``_sync_backend.py`` is its blocking twin with
the same names, so ``_sync.py`` is generated from ``_async.py`` by substitution alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

sleep = asyncio.sleep
R = TypeVar("R")


async def blocking(run: Callable[..., R], *args: Any) -> R:
    """``run(*args)``, on a worker thread: it blocks."""
    return await asyncio.to_thread(run, *args)


def spawn(run: Callable[[], Coroutine[Any, Any, None]], name: str) -> asyncio.Task[None]:
    """Runs ``run()`` in the background, as a task of the running loop."""
    return asyncio.get_running_loop().create_task(run(), name=name)


async def join(task: asyncio.Task[None], *, cancel: bool) -> None:
    """Waits for ``task`` to end (cancelled first if ``cancel``); what it raised is dropped."""
    if task is asyncio.current_task():
        return
    if cancel:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


async def wait(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set, waiting for it up to ``seconds``."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
    return event.is_set()


def mutex() -> contextlib.nullcontext[None]:
    # The loop runs one task at a time and no critical section awaits: nothing to exclude.
    return contextlib.nullcontext()


class _Releasable(Protocol):
    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None: ...


H = TypeVar("H", bound=_Releasable)


class Acquiring(Generic[H]):
    """``await`` it for the handle, or ``async with`` it to release on exit. (The blocking
    client answers the handle itself: scripts/unasync.py turns ``Acquiring[X]`` into ``X``.)"""

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
