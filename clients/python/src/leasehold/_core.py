"""The sans-I/O core shared by the sync and the async client.

Every decision lives here as a generator ("plan") that yields actions (``Send``,
``Sleep``) and receives their outcomes (``Answer`` or a ``Failure``); the shells in
``_sync.py`` and ``_async.py`` only perform them. So the retry rule, leader finding,
ride-through and loss judgement are written once (docs/client.md).

Module-level functions are looked up at call time on purpose: the conformance
driver patches them to remove one behaviour at a time.
"""

from __future__ import annotations

import contextlib
import enum
import json
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

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

T = TypeVar("T")
Json = dict[str, Any]

CONNECT_TIMEOUT = 2.0  # a node that is down must not use up the call's time
MAX_NODES = 32
PAUSE_FIRST, PAUSE_MAX = 0.05, 0.4
WATCH_SILENCE = 45.0  # three missed pings (every 15 s)


class Retry(enum.Enum):
    """What may be done again with a request after a failure (docs/client.md)."""

    IDEMPOTENT = 1  # GET, keepalive, cancel, checkout with its own token
    WRITE = 2  # sent once; next node only when nothing was sent or on 503
    LOCK = 3  # sent once; a break or a 503 is a broken wait (ride-through)


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    body: bytes | None
    retry: Retry
    wait: float | None = 0.0  # server-side wait (lock timeout) in s; None: without limit


@dataclass(slots=True)
class Send:
    """Send ``request`` to ``node``; ``timeout`` None means the client's io_timeout,
    a negative one no read deadline."""

    node: str
    request: Request
    timeout: float | None
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


class Failure(enum.Enum):
    CONNECT = 1  # could not connect: nothing was sent
    NOT_SENT = 2  # the request was not completely written
    BROKEN = 3  # the connection broke after the request was written
    TIMEOUT = 4  # written, no answer within the deadline


@dataclass(frozen=True, slots=True)
class TlsRefused:
    """The TLS handshake failed: the server's certificate was not accepted (unknown CA,
    expired, another host) or the server refused ours. The server acted on nothing, as
    with ``Failure.CONNECT``; ``reason`` names the failure."""

    reason: str


@dataclass(slots=True)
class Answer:
    status: int
    location: str | None
    body: bytes
    stream: Any = None  # the open response of a streaming request answered 200


Action = Send | Sleep
Outcome = Answer | Failure | TlsRefused | None
Plan = Generator[Action, Outcome, T]


class WaitBroken(Exception):
    """Internal: a lock request's connection broke or it was answered 503."""


# ---------------------------------------------------------------- errors


def make_error(
    cls: type[LeaseholdError], code: str, message: str = "", status: int = 0, **extra: Any
) -> LeaseholdError:
    """Every error the client raises is built here (one place to type them)."""
    return cls(code, message, status, **extra)


_CODE_CLASS: dict[str, type[LeaseholdError]] = {
    "session_not_found": SessionLost,
    "stale_fence": StaleFence,
    "not_found": NotFound,
    "exists": Exists,
    "transaction_aborted": TransactionAborted,
    "transaction_expired": TransactionAborted,
    "transaction_lost": TransactionAborted,
}


def loads(body: bytes) -> Json:
    try:
        value = json.loads(body)
    except ValueError as e:
        raise make_error(LeaseholdError, "bad_response", f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise make_error(LeaseholdError, "bad_response", "not a JSON object")
    return value


def error_from_answer(status: int, doc: Json) -> LeaseholdError:
    """The error for an answer in the API's error shape ``{"error":{"code","message"}}``."""
    err = doc.get("error")
    if isinstance(err, dict):
        code = str(err.get("code", "error"))
        message = str(err.get("message", ""))
    else:
        code, message = f"http_{status}", json.dumps(doc)[:200]
    return make_error(_CODE_CLASS.get(code, LeaseholdError), code, message, status)


def parse_cycle(deadlock: Any) -> list[CycleEdge]:
    if not isinstance(deadlock, dict):
        return []
    return [
        CycleEdge(
            waiter=str(e.get("waiter")),
            holder=str(e.get("holder")),
            resource=str(e.get("resource")),
            waiter_name=e.get("waiter_name"),
            holder_name=e.get("holder_name"),
            wanted=e.get("wanted"),
        )
        for e in deadlock.get("cycle", [])
        if isinstance(e, dict)
    ]


def lock_refusal(status: int, doc: Json) -> LeaseholdError:
    """The error for a 409 lock or semaphore answer (result -1/-2/-3 or an error)."""
    result = doc.get("result")
    if result == -1:
        return make_error(LockTimeout, "timeout", "not granted within the timeout", status)
    if result == -2:
        return make_error(LockCancelled, "cancelled", "the wait was cancelled", status)
    if result == -3:
        cycle = parse_cycle(doc.get("deadlock"))
        return make_error(
            Deadlock, "deadlock", "chosen as the deadlock victim", status, cycle=cycle
        )
    return error_from_answer(status, doc)


def unreachable(message: str, code: str = "unreachable") -> LeaseholdError:
    return make_error(Unreachable, code, message, 0)


def tls_failed(node: str, refused: TlsRefused) -> LeaseholdError:
    """Unreachable with code ``tls``: retrying does not help until a certificate changes."""
    return unreachable(f"TLS handshake with {node} failed: {refused.reason}", "tls")


# ---------------------------------------------------------------- paths and bodies


def seg(name: str) -> str:
    return quote(name, safe="")


def body(obj: Json) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def ms(seconds: float | None) -> int:
    """A timeout in s as the API's ms: None waits without limit (-1)."""
    if seconds is None or seconds < 0:
        return -1
    return int(seconds * 1000)


# ---------------------------------------------------------------- nodes


class Nodes:
    """The cluster's nodes: the one believed to lead is asked first, nodes that could
    not be connected (or did not answer in time) last, until they answer again."""

    def __init__(self, urls: list[str]) -> None:
        self._lock = threading.Lock()
        self.urls = list(urls)
        self.leader = urls[0]
        self._demoted: set[str] = set()
        self._order: tuple[str, ...] = ()
        self._reorder()

    def _reorder(self) -> None:
        first = [u for u in self.urls if u not in self._demoted]
        last = [u for u in self.urls if u in self._demoted]
        if self.leader in first:
            first.remove(self.leader)
            first.insert(0, self.leader)
        self._order = (*first, *last)

    def order(self) -> tuple[str, ...]:
        return self._order

    def answered(self, node: str) -> None:
        if node == self.leader and node not in self._demoted:
            return
        with self._lock:
            self.leader = node
            self._demoted.discard(node)
            self._reorder()

    def demote(self, node: str) -> None:
        with self._lock:
            self._demoted.add(node)
            self._reorder()

    def learn(self, node: str) -> bool:
        with self._lock:
            if node not in self.urls:
                if len(self.urls) >= MAX_NODES:
                    return False
                self.urls.append(node)
            self.leader = node
            self._reorder()
            return True


def parse_urls(url: str) -> list[str]:
    nodes = []
    for part in url.split(","):
        part = part.strip()
        if not part:
            continue
        u = urlsplit(part)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise make_error(LeaseholdError, "bad_url", f"not an http(s) URL: {part!r}")
        nodes.append(f"{u.scheme}://{u.netloc}")
    if not nodes:
        raise make_error(LeaseholdError, "bad_url", "no URL given")
    return nodes


def follow_redirect(nodes: Nodes, location: str | None) -> str | None:
    """The node a 307 names (learned if new), or None when it cannot be followed."""
    if not location:
        return None
    u = urlsplit(location)
    if u.scheme not in ("http", "https") or not u.netloc:
        return None
    node = f"{u.scheme}://{u.netloc}"
    return node if nodes.learn(node) else None


def insecure_redirect(node: str, location: str | None) -> LeaseholdError | None:
    """The error for a 307 from an https:// node to an http:// URL, which is never
    followed: it would send the request (and its token) in cleartext. None for any
    other redirect: to https:// always, to http:// from an http:// node."""
    if not location or not node.startswith("https://"):
        return None
    if urlsplit(location).scheme != "http":
        return None
    return make_error(
        LeaseholdError,
        "bad_url",
        f"{node} redirected to {location}: a redirect from https:// to http:// is not followed",
        307,
    )


def may_resend(request: Request, failure: Failure) -> bool:
    """Whether a request may be sent again (to this node or the next) after ``failure``:
    only when nothing reached the server, or the request is idempotent."""
    if failure in (Failure.CONNECT, Failure.NOT_SENT):
        return True
    return request.retry is Retry.IDEMPOTENT


# ---------------------------------------------------------------- the call


def call(
    nodes: Nodes,
    request: Request,
    io_timeout: float,
    *,
    stream: bool = False,
    attempt_timeout: float | None = None,
) -> Plan[Answer]:
    """Send ``request`` to the leader (finding it among ``nodes``) and answer its
    final answer (anything but 307/503; a 503 after the deadline). Raises
    Unreachable, or WaitBroken for a lock request that broke or got 503.

    ``attempt_timeout`` bounds each send (a keepalive gives up after ttl/6)."""
    start = time.monotonic()
    if request.wait is None:
        deadline: float | None = None  # a wait without limit: set after a 307/503 round
        read_timeout = -1.0
    else:
        deadline = start + io_timeout + request.wait
        read_timeout = io_timeout + request.wait
    if attempt_timeout is not None:
        deadline = start + attempt_timeout
        read_timeout = attempt_timeout
    first_timeout: float | None = (
        None if request.wait == 0.0 and attempt_timeout is None else read_timeout
    )
    pause = PAUSE_FIRST
    last_503: Answer | None = None
    tls: LeaseholdError | None = None  # the last TLS refusal, named if no node answers
    first_round = True
    while True:
        answered_any = False
        busy = False  # some node answered 307 or 503
        asked: set[str] = set()
        queue = list(nodes.order())
        while queue:
            node = queue.pop(0)
            if node in asked:
                continue
            asked.add(node)
            if first_round and len(asked) == 1:
                timeout = first_timeout
            else:
                timeout = (
                    read_timeout if deadline is None else max(0.001, deadline - time.monotonic())
                )
            resent = False
            while True:
                outcome = yield Send(node, request, timeout, stream)
                if isinstance(outcome, Answer) or outcome is None:
                    break
                if isinstance(outcome, TlsRefused):
                    tls = tls_failed(node, outcome)
                    nodes.demote(node)
                    break
                if outcome is Failure.CONNECT:
                    nodes.demote(node)
                    break
                if not may_resend(request, outcome):
                    if request.retry is Retry.LOCK:
                        raise WaitBroken()
                    if outcome is Failure.TIMEOUT:
                        raise unreachable("no answer in time", "timeout")
                    raise unreachable("the connection broke after the request was sent")
                if outcome is Failure.TIMEOUT:
                    nodes.demote(node)
                    break
                if resent:  # once on a fresh connection, then the next node
                    break
                resent = True
            if not isinstance(outcome, Answer):
                continue
            answered_any = True
            if outcome.status == 307:
                busy = True
                refused = insecure_redirect(node, outcome.location)
                if refused is not None:
                    raise refused
                target = follow_redirect(nodes, outcome.location)
                if target is not None:
                    queue.insert(0, target)
                    continue
                return outcome
            if outcome.status == 503:
                if request.retry is Retry.LOCK:
                    raise WaitBroken()
                busy = True
                last_503 = outcome
                continue
            nodes.answered(node)
            return outcome
        first_round = False
        if not answered_any:
            if tls is not None:
                raise tls
            raise unreachable(f"no node answered ({', '.join(nodes.order())})")
        now = time.monotonic()
        if deadline is None and busy:
            deadline = now + io_timeout
        if deadline is not None and now + pause >= deadline:
            if last_503 is not None:
                return last_503
            raise unreachable("no node leads (redirects went round)")
        yield Sleep(pause)
        pause = min(pause * 2, PAUSE_MAX)


def call_json(
    nodes: Nodes, request: Request, io_timeout: float, attempt_timeout: float | None = None
) -> Plan[tuple[int, Json]]:
    """``call``, then the answer parsed once; error shapes (4xx/5xx) are left to the caller."""
    answer = yield from call(nodes, request, io_timeout, attempt_timeout=attempt_timeout)
    if answer.status == 204 or not answer.body:
        return answer.status, {}
    return answer.status, loads(answer.body)


def expect(
    nodes: Nodes,
    request: Request,
    io_timeout: float,
    ok: tuple[int, ...] = (200,),
) -> Plan[Json]:
    """A call whose statuses other than ``ok`` are errors."""
    status, doc = yield from call_json(nodes, request, io_timeout)
    if status not in ok:
        raise error_from_answer(status, doc)
    return doc


# ---------------------------------------------------------------- health


def wait_healthy(nodes: Nodes, until: float) -> Plan[bool]:
    """Ask each node's /healthz in turn until one answers 200 (it leads) or ``until``.
    Raises Unreachable (code ``tls``) after a round in which no node answered and one
    refused TLS: waiting does not mend a certificate."""
    pause = PAUSE_FIRST
    req = Request("GET", "/healthz", None, Retry.IDEMPOTENT)
    while True:
        tls: LeaseholdError | None = None
        answered = False
        for node in nodes.order():
            left = until - time.monotonic()
            if left <= 0:
                return False
            outcome = yield Send(node, req, min(left, 2.0))
            if isinstance(outcome, Answer):
                if outcome.status == 200:
                    nodes.answered(node)
                    return True
                answered = True
            elif isinstance(outcome, TlsRefused):
                tls = tls_failed(node, outcome)
        if tls is not None and not answered:
            raise tls
        if time.monotonic() + pause >= until:
            return False
        yield Sleep(pause)
        pause = min(pause * 2, PAUSE_MAX)


# ---------------------------------------------------------------- locks


@dataclass(frozen=True, slots=True)
class Grant:
    fence: int
    mode: str
    count: int
    permits: int
    waited: bool


def acquire_lock_request(
    ns: str,
    session: str,
    resource: str,
    mode: str,
    timeout: float | None,
    principal: str,
    owner: str = "Session",
    max_hold: float | None = None,
) -> Request:
    doc: Json = {
        "session": session,
        "resource": resource,
        "mode": mode,
        "owner": owner,
        "timeout_ms": ms(timeout),
        "principal": principal,
    }
    if max_hold is not None:
        doc["max_hold_ms"] = ms(max_hold)
    wait = None if timeout is None or timeout < 0 else timeout
    return Request("POST", f"/v1/applocks/{seg(ns)}/acquire", body(doc), Retry.LOCK, wait)


def acquire_semaphore_request(
    ns: str,
    session: str,
    name: str,
    limit: int,
    permits: int,
    timeout: float | None,
    principal: str,
    max_hold: float | None = None,
) -> Request:
    doc: Json = {
        "session": session,
        "limit": limit,
        "permits": permits,
        "owner": "Session",
        "timeout_ms": ms(timeout),
        "principal": principal,
    }
    if max_hold is not None:
        doc["max_hold_ms"] = ms(max_hold)
    wait = None if timeout is None or timeout < 0 else timeout
    return Request(
        "POST", f"/v1/semaphores/{seg(ns)}/{seg(name)}/acquire", body(doc), Retry.LOCK, wait
    )


def grant_from(status: int, doc: Json) -> Grant:
    if status != 200:
        if status == 409 and "result" in doc:
            raise lock_refusal(status, doc)
        raise error_from_answer(status, doc)
    return Grant(
        fence=int(doc.get("fence", 0)),
        mode=str(doc.get("mode", "")),
        count=int(doc.get("count", 0)),
        permits=int(doc.get("permits", 0)),
        waited=doc.get("result") == 1,
    )


def rides_through(held_already: bool, timeout: float | None) -> bool:
    """Whether a broken wait is asked again (docs/client.md, "Restarts")."""
    return not held_already and timeout != 0


@dataclass(frozen=True, slots=True)
class Target:
    """What a broken wait asked for, to find it in the holdings."""

    ns: str
    session: str
    name: str
    principal: str
    mode: str | None  # a lock's mode; None for a semaphore
    permits: int = 0
    max_hold: float | None = None  # s; None: the namespace's hold limit


def read_holdings(nodes: Nodes, target: Target, io_timeout: float) -> Plan[Grant | bool | None]:
    """After a break: the grant the session holds (adopted), None when it holds none
    (ask again), or False when it holds something else (report the break)."""
    if target.mode is not None:
        doc = yield from expect(
            nodes,
            Request("GET", f"/v1/applocks/{seg(target.ns)}", None, Retry.IDEMPOTENT),
            io_timeout,
        )
        for entry in doc.get("locks", []):
            if (
                entry.get("resource") != target.name
                or str(entry.get("principal", "")).lower() != target.principal.lower()
            ):
                continue
            for h in entry.get("granted", []):
                if str(h.get("session")) == target.session and h.get("owner") == "Session":
                    if h.get("mode") != target.mode:
                        return False
                    return Grant(
                        int(h.get("fence", 0)), str(h["mode"]), int(h.get("count", 1)), 0, True
                    )
        return None
    path = f"/v1/semaphores/{seg(target.ns)}/{seg(target.name)}?principal={seg(target.principal)}"
    status, doc = yield from call_json(
        nodes, Request("GET", path, None, Retry.IDEMPOTENT), io_timeout
    )
    if status == 404:
        return None
    if status != 200:
        raise error_from_answer(status, doc)
    for h in doc.get("holders", []):
        if str(h.get("session")) == target.session and h.get("owner") == "Session":
            if int(h.get("permits", 0)) != target.permits:
                return False
            return Grant(int(h.get("fence", 0)), "", 0, target.permits, True)
    return None


def acquire(
    nodes: Nodes,
    io_timeout: float,
    target: Target,
    timeout: float | None,
    held_already: bool,
    limit: int = 0,
) -> Plan[Grant]:
    """Acquire a lock (``target.mode``) or permits for the session, riding through a
    restart or failover (docs/client.md, "Restarts")."""
    lock_deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
    left = timeout
    while True:
        if target.mode is not None:
            req = acquire_lock_request(
                target.ns,
                target.session,
                target.name,
                target.mode,
                left,
                target.principal,
                max_hold=target.max_hold,
            )
        else:
            req = acquire_semaphore_request(
                target.ns,
                target.session,
                target.name,
                limit,
                target.permits,
                left,
                target.principal,
                target.max_hold,
            )
        try:
            status, doc = yield from call_json(nodes, req, io_timeout)
            return grant_from(status, doc)
        except WaitBroken:
            if not rides_through(held_already, left):
                raise unreachable("the wait broke; the lock may or may not be held") from None
        broke_at = time.monotonic()
        until = (lock_deadline if lock_deadline is not None else broke_at) + io_timeout
        if not (yield from wait_healthy(nodes, until)):
            raise unreachable("no server came back in time")
        held = yield from read_holdings(nodes, target, io_timeout)
        if isinstance(held, Grant):
            return held
        if held is False:
            raise unreachable("the wait broke and the session holds another grant")
        if lock_deadline is not None:
            left = max(0.0, lock_deadline - time.monotonic())


def release_lock(
    nodes: Nodes, io_timeout: float, ns: str, session: str, resource: str, principal: str
) -> Plan[None]:
    doc = {"session": session, "resource": resource, "owner": "Session", "principal": principal}
    yield from expect(
        nodes,
        Request("POST", f"/v1/applocks/{seg(ns)}/release", body(doc), Retry.WRITE),
        io_timeout,
    )


def release_semaphore(
    nodes: Nodes, io_timeout: float, ns: str, session: str, name: str, permits: int, principal: str
) -> Plan[None]:
    doc = {"session": session, "permits": permits, "owner": "Session", "principal": principal}
    yield from expect(
        nodes,
        Request("POST", f"/v1/semaphores/{seg(ns)}/{seg(name)}/release", body(doc), Retry.WRITE),
        io_timeout,
    )


# ---------------------------------------------------------------- sessions and renewals


class Verdict(enum.Enum):
    OK = 1
    LOST = 2
    LOCKS_LOST = 3
    RETRY = 4


def judge_keepalive(error: LeaseholdError | None, doc: Json | None) -> Verdict:
    """A keepalive's meaning: only ``session_not_found`` loses the session; a network
    failure is retried at the next period."""
    if error is not None:
        return Verdict.LOST if error.code == "session_not_found" else Verdict.RETRY
    return Verdict.LOCKS_LOST if doc and doc.get("locks_lost") is True else Verdict.OK


HeldKey = tuple[str, str, str, str]  # (ns, principal, name, "lock" | "semaphore")


def taken_back(doc: Json | None) -> list[HeldKey]:
    """What a keepalive says the server took back from the session's own handles (a
    hold limit, a break; docs/api.md, "Hold limits and breaks"): Session-owned only."""
    out: list[HeldKey] = []
    for h in (doc or {}).get("lost") or []:
        if isinstance(h, dict) and h.get("owner") == "Session":
            kind = "semaphore" if h.get("kind") == "semaphore" else "lock"
            out.append((str(h["ns"]), str(h["principal"]).lower(), str(h["resource"]), kind))
    return out


def keepalive(
    nodes: Nodes, io_timeout: float, session: str, give_up: float
) -> Plan[tuple[Verdict, list[HeldKey]]]:
    """The keepalive's verdict, and what the server took back since it was last told."""
    req = Request("POST", f"/v1/sessions/{seg(session)}/keepalive", None, Retry.IDEMPOTENT)
    try:
        status, doc = yield from call_json(nodes, req, io_timeout, attempt_timeout=give_up)
        if status != 200:
            return judge_keepalive(error_from_answer(status, doc), None), []
    except LeaseholdError as e:
        return judge_keepalive(e, None), []
    return judge_keepalive(None, doc), taken_back(doc)


def renewal_give_up(ttl: float) -> float:
    """Each keepalive and renewal gives up after half its period (ttl/6, at least 1 s)."""
    return max(ttl / 6, 1.0)


def open_session(
    nodes: Nodes, io_timeout: float, name: str | None, ttl: float, deadlock_priority: int
) -> Plan[Json]:
    doc: Json = {"ttl_ms": ms(ttl), "deadlock_priority": deadlock_priority}
    if name is not None:
        doc["name"] = name
    return (
        yield from expect(
            nodes, Request("POST", "/v1/sessions", body(doc), Retry.WRITE), io_timeout, (201, 200)
        )
    )


def end_session(nodes: Nodes, io_timeout: float, session: str) -> Plan[None]:
    yield from expect(
        nodes,
        Request("DELETE", f"/v1/sessions/{seg(session)}", None, Retry.WRITE),
        io_timeout,
        (204, 200),
    )


# ---------------------------------------------------------------- checkouts


def checkout_request(ns: str, key: str, owner: str, ttl: float, token: str) -> Request:
    doc = {"owner": owner, "ttl_ms": ms(ttl), "token": token}
    # A checkout with its own token is idempotent: asking twice grants once.
    return Request(
        "POST", f"/v1/records/{seg(ns)}/{seg(key)}/checkout", body(doc), Retry.IDEMPOTENT
    )


def checkout(
    nodes: Nodes, io_timeout: float, ns: str, key: str, owner: str, ttl: float, token: str
) -> Plan[Json]:
    status, doc = yield from call_json(
        nodes, checkout_request(ns, key, owner, ttl, token), io_timeout
    )
    if status == 423:
        raise make_error(
            Locked,
            "locked",
            f"held by {doc.get('locked_by')}",
            status,
            locked_by=doc.get("locked_by"),
            expires_at=doc.get("lock_expires_at"),
        )
    if status != 200:
        raise error_from_answer(status, doc)
    return doc


def judge_renewal(error: LeaseholdError | None, doc: Json | None) -> Verdict:
    """A renewal's meaning: refused (423), or granted as a *new* lease, is lost."""
    if error is not None:
        return Verdict.LOST if error.code == "locked" else Verdict.RETRY
    return Verdict.OK if doc and doc.get("renewed") is True else Verdict.LOST


def renew(
    nodes: Nodes, io_timeout: float, ns: str, key: str, owner: str, ttl: float, token: str
) -> Plan[Verdict]:
    req = checkout_request(ns, key, owner, ttl, token)
    try:
        status, doc = yield from call_json(
            nodes, req, io_timeout, attempt_timeout=renewal_give_up(ttl)
        )
    except LeaseholdError as e:
        return judge_renewal(e, None)
    if status == 423:
        return judge_renewal(make_error(Locked, "locked", "", status), None)
    if status != 200:
        return judge_renewal(error_from_answer(status, doc), None)
    verdict = judge_renewal(None, doc)
    if verdict is Verdict.LOST and doc.get("granted") is True:
        # The old lease was broken or ran out and this is a new one: give it back.
        with contextlib.suppress(LeaseholdError):
            yield from checkin(nodes, io_timeout, ns, key, token)
    return verdict


def write_refusal(status: int, doc: Json, flag: str) -> LeaseholdError:
    if status in (412, 423) and doc.get(flag) is False:
        reason = str(doc.get("reason", "refused"))
        return make_error(Refused, reason, f"{flag} refused: {reason}", status)
    return error_from_answer(status, doc)


def checkin(nodes: Nodes, io_timeout: float, ns: str, key: str, token: str) -> Plan[None]:
    req = Request(
        "POST", f"/v1/records/{seg(ns)}/{seg(key)}/checkin", body({"token": token}), Retry.WRITE
    )
    status, doc = yield from call_json(nodes, req, io_timeout)
    if status != 200:
        raise write_refusal(status, doc, "released")


# ---------------------------------------------------------------- records


def proof(fence: int | None, token: str | None, owner: str | None) -> Json:
    doc: Json = {}
    if fence is not None:
        doc["fence"] = fence
    if token is not None:
        doc["token"] = token
    if owner is not None:
        doc["owner"] = owner
    return doc


def put(
    nodes: Nodes,
    io_timeout: float,
    ns: str,
    key: str,
    text: str,
    fence: int | None,
    session: str | None = None,
) -> Plan[Json]:
    doc = proof(fence, None, None)
    doc["body"] = text
    if session is not None:
        doc["session"] = session
    return (
        yield from expect(
            nodes,
            Request("PUT", f"/v1/records/{seg(ns)}/{seg(key)}", body(doc), Retry.WRITE),
            io_timeout,
            (201, 202),
        )
    )


def save(
    nodes: Nodes,
    io_timeout: float,
    ns: str,
    key: str,
    text: str,
    fence: int | None,
    token: str | None,
    owner: str | None,
    if_version: int | None,
    session: str | None = None,
) -> Plan[Json]:
    doc = proof(fence, token, owner)
    doc["body"] = text
    if if_version is not None:
        doc["if_version"] = if_version
    if session is not None:
        doc["session"] = session
    req = Request("POST", f"/v1/records/{seg(ns)}/{seg(key)}/save", body(doc), Retry.WRITE)
    status, answer = yield from call_json(nodes, req, io_timeout)
    if status not in (200, 202):
        raise write_refusal(status, answer, "saved")
    return answer


def delete(
    nodes: Nodes,
    io_timeout: float,
    ns: str,
    key: str,
    fence: int | None,
    token: str | None,
    owner: str | None,
    session: str | None = None,
) -> Plan[Json]:
    doc = proof(fence, token, owner)
    if session is not None:
        doc["session"] = session
    req = Request("DELETE", f"/v1/records/{seg(ns)}/{seg(key)}", body(doc), Retry.WRITE)
    status, answer = yield from call_json(nodes, req, io_timeout)
    if status not in (200, 202):
        raise write_refusal(status, answer, "deleted")
    return answer


def get(nodes: Nodes, io_timeout: float, path: str, ok: tuple[int, ...] = (200,)) -> Plan[Json]:
    return (yield from expect(nodes, Request("GET", path, None, Retry.IDEMPOTENT), io_timeout, ok))


def post(
    nodes: Nodes,
    io_timeout: float,
    path: str,
    doc: Json | None,
    ok: tuple[int, ...] = (200,),
    retry: Retry = Retry.WRITE,
) -> Plan[Json]:
    payload = body(doc) if doc is not None else None
    return (yield from expect(nodes, Request("POST", path, payload, retry), io_timeout, ok))


# ---------------------------------------------------------------- transactions and the outbox
# Every call here is sent once (Retry.WRITE): after a break it raises Unreachable and
# the transaction's fate is read from the server, never guessed by sending it again.


def transaction_path(session: str, action: str = "") -> str:
    return f"/v1/sessions/{seg(session)}/transaction" + (f"/{action}" if action else "")


def begin_transaction(nodes: Nodes, io_timeout: float, session: str) -> Plan[Json]:
    return (yield from post(nodes, io_timeout, transaction_path(session), None, (201,)))


def commit_transaction(nodes: Nodes, io_timeout: float, session: str) -> Plan[Json]:
    return (yield from post(nodes, io_timeout, transaction_path(session, "commit"), None))


def rollback_transaction(nodes: Nodes, io_timeout: float, session: str) -> Plan[None]:
    yield from post(nodes, io_timeout, transaction_path(session, "rollback"), None)


def transaction_lock(
    nodes: Nodes,
    io_timeout: float,
    ns: str,
    session: str,
    resource: str,
    mode: str,
    timeout: float | None,
    principal: str,
) -> Plan[Grant]:
    """An application lock owned by the session's transaction. Unlike a session's
    lock it is not ridden through: a restart loses the transaction (and its locks)."""
    req = acquire_lock_request(ns, session, resource, mode, timeout, principal, "Transaction")
    try:
        status, doc = yield from call_json(nodes, req, io_timeout)
    except WaitBroken:
        raise unreachable("the wait broke; the lock may or may not be held") from None
    return grant_from(status, doc)


def begin_operation(
    nodes: Nodes, io_timeout: float, ns: str, op_id: str, session: str
) -> Plan[Json]:
    path = f"/v1/operations/{seg(ns)}/{seg(op_id)}/begin"
    return (yield from post(nodes, io_timeout, path, {"session": session}))


def complete_operation(
    nodes: Nodes, io_timeout: float, ns: str, op_id: str, session: str, outcome: Any
) -> Plan[Json]:
    path = f"/v1/operations/{seg(ns)}/{seg(op_id)}/complete"
    return (yield from post(nodes, io_timeout, path, {"session": session, "outcome": outcome}))


def enqueue(
    nodes: Nodes,
    io_timeout: float,
    ns: str,
    topic: str,
    key: str,
    payload: Any,
    session: str | None,
) -> Plan[Json]:
    doc: Json = {"key": key, "payload": payload}
    if session is not None:
        doc["session"] = session
    path = f"/v1/outbox/{seg(ns)}/{seg(topic)}"
    return (yield from post(nodes, io_timeout, path, doc, (201, 200)))


def claim(
    nodes: Nodes, io_timeout: float, ns: str, topic: str, consumer: str, max: int, lease: float
) -> Plan[Json]:
    doc = {"consumer": consumer, "max": max, "lease_ms": ms(lease)}
    path = f"/v1/outbox/{seg(ns)}/{seg(topic)}/claim"
    return (yield from post(nodes, io_timeout, path, doc))


def ack(
    nodes: Nodes, io_timeout: float, ns: str, topic: str, id: int, claim_token: str
) -> Plan[Json]:
    """Acks a claimed message. A repeated ack with the same token changes nothing, so
    this one may be sent again after a break (Retry.IDEMPOTENT)."""
    req = Request(
        "POST",
        f"/v1/outbox/{seg(ns)}/{seg(topic)}/ack",
        body({"id": id, "claim_token": claim_token}),
        Retry.IDEMPOTENT,
    )
    status, doc = yield from call_json(nodes, req, io_timeout)
    if status == 423:
        reason = str(doc.get("reason", "not_owner"))
        raise make_error(Lost, reason, f"the claim of message {id} is no longer ours", status)
    if status != 200:
        raise error_from_answer(status, doc)
    return doc


# ---------------------------------------------------------------- server-sent events


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a watch: ``type`` (``applock.granted``, ...) and its ``data`` object."""

    type: str
    data: Json


class SseParser:
    """Incremental text/event-stream parser: lines may be split across reads."""

    def __init__(self) -> None:
        self._rest = b""
        self._type = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[Event]:
        lines = (self._rest + chunk).split(b"\n")
        self._rest = lines.pop()  # an unfinished line waits for the next read
        return self.lines(lines)

    def lines(self, lines: list[bytes]) -> list[Event]:
        events: list[Event] = []
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8", "replace")
            if not line:
                if self._data:
                    events.append(self._dispatch())
                self._type = ""
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                self._type = value
            elif field == "data":
                self._data.append(value)
        return events

    def _dispatch(self) -> Event:
        text = "\n".join(self._data)
        self._data = []
        try:
            data = json.loads(text)
        except ValueError:
            data = {"text": text}
        if not isinstance(data, dict):
            data = {"value": data}
        return Event(self._type or str(data.get("type", "message")), data)


def events_path(ns: str | None) -> str:
    return "/v1/events" if ns is None else f"/v1/events?ns={seg(ns)}"


# ---------------------------------------------------------------- answers as values


@dataclass(frozen=True, slots=True)
class Record:
    """A record or a lease-only key, as ``GET /v1/records/{ns}/{key}`` answers it."""

    key: str
    version: int
    body: str | None
    state: str
    locked_by: str | None
    lock_expires_at: str | None
    fence: int
    write_fence: int
    has_record: bool

    @classmethod
    def from_json(cls, doc: Json) -> Record:
        return cls(
            key=str(doc.get("key", "")),
            version=int(doc.get("version", 0)),
            body=doc.get("body"),
            state=str(doc.get("state", "")),
            locked_by=doc.get("locked_by"),
            lock_expires_at=doc.get("lock_expires_at"),
            fence=int(doc.get("fence") or 0),
            write_fence=int(doc.get("write_fence") or 0),
            has_record=bool(doc.get("has_record", True)),
        )


def records_path(
    ns: str, state: str | None, prefix: str | None, after: str | None, limit: int | None
) -> str:
    query = [
        f"{k}={seg(str(v))}"
        for k, v in (("state", state), ("prefix", prefix), ("after", after), ("limit", limit))
        if v is not None
    ]
    return f"/v1/records/{seg(ns)}" + ("?" + "&".join(query) if query else "")


def checked_in_or_gone(error: LeaseholdError) -> bool:
    """A check-in refused because the lease is no longer ours changes nothing."""
    return error.code in ("not_owner", "expired")


@dataclass(frozen=True, slots=True)
class TransactionLock:
    """A lock owned by a transaction (released at its commit or rollback): ``fence``
    (pass it to the writes the lock guards), ``mode`` (combined), ``count``, ``waited``."""

    ns: str
    resource: str
    fence: int
    mode: str
    count: int
    waited: bool


@dataclass(frozen=True, slots=True)
class Operation:
    """What ``begin_operation`` found in the committed state: ``state`` ``"new"``, or
    ``"completed"`` with the stored ``outcome`` (any JSON value) and ``completed_at``."""

    state: str
    outcome: Any = None
    completed_at: str | None = None

    @property
    def completed(self) -> bool:
        return self.state == "completed"

    @classmethod
    def from_json(cls, doc: Json) -> Operation:
        return cls(str(doc.get("state", "")), doc.get("outcome"), doc.get("completed_at"))


@dataclass(frozen=True, slots=True)
class Enqueued:
    """An outbox message enqueued (or staged): its ``id``; ``duplicate`` when its key
    was enqueued before (``id`` is then the existing message's)."""

    id: int
    duplicate: bool
    staged: bool

    @classmethod
    def from_json(cls, doc: Json) -> Enqueued:
        return cls(int(doc["id"]), bool(doc.get("duplicate")), bool(doc.get("staged")))


@dataclass(frozen=True, slots=True)
class Applied:
    """One write a commit applied, in the order staged: ``op`` is ``insert``, ``save``,
    ``delete`` (with the record's ``version`` for insert and save), ``complete`` (``key``
    is the operation id) or ``enqueue`` (``topic``, message ``id``, ``duplicate``)."""

    op: str
    ns: str
    key: str
    version: int | None = None
    topic: str | None = None
    id: int | None = None
    duplicate: bool | None = None

    @classmethod
    def from_json(cls, doc: Json) -> Applied:
        return cls(
            op=str(doc.get("op", "")),
            ns=str(doc.get("ns", "")),
            key=str(doc.get("key", "")),
            version=doc.get("version"),
            topic=doc.get("topic"),
            id=doc.get("id"),
            duplicate=doc.get("duplicate"),
        )


@dataclass(frozen=True, slots=True)
class Message:
    """An outbox message claimed by a consumer: ``payload`` (the JSON enqueued),
    ``attempt`` (1 on the first claim), and the ``claim_token`` that acks it until
    ``lease_expires_at``."""

    id: int
    key: str
    payload: Any
    attempt: int
    claim_token: str
    lease_expires_at: str

    @classmethod
    def from_json(cls, doc: Json) -> Message:
        return cls(
            id=int(doc["id"]),
            key=str(doc["key"]),
            payload=doc.get("payload"),
            attempt=int(doc.get("attempt", 1)),
            claim_token=str(doc["claim_token"]),
            lease_expires_at=str(doc.get("lease_expires_at", "")),
        )


def transaction_gone(error: LeaseholdError) -> bool:
    """A rollback refused because there is no transaction any more changes nothing."""
    return isinstance(error, (TransactionAborted, SessionLost)) or error.code == "no_transaction"
