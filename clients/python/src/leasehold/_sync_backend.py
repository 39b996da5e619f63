"""The blocking twin of ``_async_backend.py`` (same names): threads instead of tasks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

sleep = time.sleep
R = TypeVar("R")


def blocking(run: Callable[..., R], *args: Any) -> R:
    """``run(*args)``, here: this client blocks anyway."""
    return run(*args)


def spawn(run: Callable[[], None], name: str) -> threading.Thread:
    """Runs ``run()`` in the background, on a daemon thread."""
    thread = threading.Thread(target=run, daemon=True, name=name)
    thread.start()
    return thread


def join(thread: threading.Thread, *, cancel: bool) -> None:
    """Waits up to 5 s for ``thread`` to end (a thread cannot be cancelled)."""
    if thread is not threading.current_thread():
        thread.join(timeout=5)


def wait(event: threading.Event, seconds: float) -> bool:
    """Whether ``event`` is set, waiting for it up to ``seconds``."""
    return event.wait(seconds)


def mutex() -> threading.Lock:
    return threading.Lock()
