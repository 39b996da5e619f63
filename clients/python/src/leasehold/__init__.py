"""leasehold: the Python client of the leasehold coordination server.

``Client`` (blocking, thread-safe) and ``AsyncClient`` (asyncio) offer the same surface:
sessions kept alive in the background, application locks and semaphores taken through
them (context managers that raise on refusal and never run the body unlocked),
checkouts renewed in the background, records, fenced writes and event watches. Loss is
a signal (``lost`` events), refusals are typed exceptions under ``LeaseholdError``.
The behaviour follows docs/client.md of the server.
"""

from ._async import AsyncCheckout, AsyncClient, AsyncLock, AsyncSession, AsyncSlot, AsyncWatch
from ._core import Event, Record
from ._errors import (
    CycleEdge,
    Deadlock,
    Exists,
    LeaseholdError,
    LockCancelled,
    Locked,
    LockTimeout,
    Lost,
    NotFound,
    Refused,
    SessionLost,
    StaleFence,
    Unreachable,
)
from ._sync import Checkout, Client, Lock, Session, Slot, Watch

__version__ = "0.1.0"

__all__ = [
    "AsyncCheckout",
    "AsyncClient",
    "AsyncLock",
    "AsyncSession",
    "AsyncSlot",
    "AsyncWatch",
    "Checkout",
    "Client",
    "CycleEdge",
    "Deadlock",
    "Event",
    "Exists",
    "LeaseholdError",
    "Lock",
    "LockCancelled",
    "LockTimeout",
    "Locked",
    "Lost",
    "NotFound",
    "Record",
    "Refused",
    "Session",
    "SessionLost",
    "Slot",
    "StaleFence",
    "Unreachable",
    "Watch",
    "__version__",
]
