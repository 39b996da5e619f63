"""leasehold: the Python client of the leasehold coordination server.

``Client`` (blocking, thread-safe) and ``AsyncClient`` (asyncio) offer the same surface:
sessions kept alive in the background, application locks and semaphores taken through
them (context managers that raise on refusal and never run the body unlocked),
checkouts renewed in the background, records, fenced writes, transactions with
operation records and the outbox (``session.transaction()``, ``client.claim``/``ack``)
and event watches. Loss is
a signal (``lost`` events), refusals are typed exceptions under ``LeaseholdError``.
The behaviour follows docs/client.md of the server.
"""

from ._async import (
    AsyncCheckout,
    AsyncClient,
    AsyncLock,
    AsyncSession,
    AsyncSlot,
    AsyncTransaction,
    AsyncWatch,
)
from ._core import Applied, Enqueued, Event, Message, Operation, Record, TransactionLock
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
    TransactionAborted,
    Unreachable,
)
from ._sync import Checkout, Client, Lock, Session, Slot, Transaction, Watch

__version__ = "0.1.0"

__all__ = [
    "Applied",
    "AsyncCheckout",
    "AsyncClient",
    "AsyncLock",
    "AsyncSession",
    "AsyncSlot",
    "AsyncTransaction",
    "AsyncWatch",
    "Checkout",
    "Client",
    "CycleEdge",
    "Deadlock",
    "Enqueued",
    "Event",
    "Exists",
    "LeaseholdError",
    "Lock",
    "LockCancelled",
    "LockTimeout",
    "Locked",
    "Lost",
    "Message",
    "NotFound",
    "Operation",
    "Record",
    "Refused",
    "Session",
    "SessionLost",
    "Slot",
    "StaleFence",
    "Transaction",
    "TransactionAborted",
    "TransactionLock",
    "Unreachable",
    "Watch",
    "__version__",
]
