"""The exceptions of the client: one base, a subclass per refusal a caller branches on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CycleEdge:
    """One edge of a deadlock cycle: ``waiter`` waits for ``holder`` on ``resource``."""

    waiter: str
    holder: str
    resource: str
    waiter_name: str | None = None
    holder_name: str | None = None
    wanted: str | None = None


class LeaseholdError(Exception):
    """The base of every error the client raises.

    ``code`` is the API's error code (``not_found``, ``exists``, ...) or the client's
    own (``unreachable``, ``timeout``, ``tls``, ``lost``, ``bad_url``, ``bad_tls``);
    ``status`` the HTTP status, 0 when no answer arrived; ``message`` says what
    happened, for people.
    """

    def __init__(self, code: str, message: str = "", status: int = 0) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code
        self.status = status
        self.message = message


class LockTimeout(LeaseholdError):
    """A lock or semaphore was not granted within its timeout (result -1)."""


class LockCancelled(LeaseholdError):
    """The wait was cancelled (result -2): the session was cancelled."""


class Deadlock(LeaseholdError):
    """This request was chosen as a deadlock victim (result -3); ``cycle`` lists the edges."""

    cycle: list[CycleEdge]

    def __init__(
        self,
        code: str,
        message: str = "",
        status: int = 0,
        cycle: list[CycleEdge] | None = None,
    ) -> None:
        super().__init__(code, message, status)
        self.cycle = cycle or []


class SessionLost(LeaseholdError):
    """The session is gone (``session_not_found``), or was used after its loss."""


class Locked(LeaseholdError):
    """A checkout is held by someone else: ``locked_by`` until ``expires_at``."""

    locked_by: str | None
    expires_at: str | None

    def __init__(
        self,
        code: str,
        message: str = "",
        status: int = 0,
        locked_by: str | None = None,
        expires_at: str | None = None,
    ) -> None:
        super().__init__(code, message, status)
        self.locked_by = locked_by
        self.expires_at = expires_at


class Refused(LeaseholdError):
    """A save, check-in or delete refused as a normal flow; ``code`` is its reason
    (``not_owner``, ``expired``, ``token_required``, ``version_mismatch``)."""


class StaleFence(LeaseholdError):
    """A fenced write refused: a newer fence has written the record."""


class NotFound(LeaseholdError):
    """The record, semaphore or path does not exist (``not_found``)."""


class Exists(LeaseholdError):
    """The record (or the operation) exists already (``exists``)."""


class TransactionAborted(LeaseholdError):
    """The transaction is over and nothing of it was applied; ``code`` says why:
    ``transaction_aborted`` (a staged write no longer held at commit, or another
    transaction completed the operation first), ``transaction_expired`` (open past the
    namespace's ``max_transaction_ms``), ``transaction_lost`` (a server restart). Its
    transaction-owned locks are released: begin a new transaction and do it again."""


class Unreachable(LeaseholdError):
    """No server could be reached, or the connection broke (or no answer came in time)
    and the request could not be sent again safely: it may or may not have been done.
    ``code`` ``tls``: no node completed the TLS handshake (a certificate refused, the
    server's or ours; the message names it), so nothing was done."""


class Lost(LeaseholdError):
    """A handle (a checkout, a lock) was used after its lease or lock was lost."""
