"""The blocking client against real servers."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Contract, Server, hooked

import leasehold


def test_version_matches_the_project() -> None:
    cmake = (Path(__file__).resolve().parents[3] / "CMakeLists.txt").read_text()
    m = re.search(r"project\(leasehold VERSION ([0-9.]+)", cmake)
    assert m and m.group(1) == leasehold.__version__


def test_lock_fence_and_release(client: leasehold.Client) -> None:
    with client.session("worker", ttl=10.0) as s:
        with s.lock("app", "invoice:481", mode="Exclusive", timeout=5.0) as lk:
            assert lk.fence > 0 and lk.mode == "Exclusive" and not lk.waited
            holders = client.locks("app")[0]["granted"]
            assert holders[0]["session"] == s.id
        assert client.locks("app") == []


def test_timeout_raises_and_never_runs_the_body(client: leasehold.Client) -> None:
    ran = False
    with client.session("a") as a, client.session("b") as b, a.lock("app", "r"):
        with pytest.raises(leasehold.LockTimeout) as e, b.lock("app", "r", timeout=0.2):
            ran = True
        assert e.value.code == "timeout" and e.value.status == 409
    assert not ran


def test_waiter_granted_after_release(client: leasehold.Client) -> None:
    with client.session("a") as a, client.session("b") as b:
        held = a.lock("app", "r")
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(b.lock, "app", "r", timeout=5.0)
            time.sleep(0.2)
            held.release()
            lock = waiting.result()
        assert lock.waited and lock.fence > held.fence
        lock.release()


def test_deadlock_names_the_cycle(client: leasehold.Client) -> None:
    with client.session("a") as a, client.session("b") as b:
        a.lock("app", "X")
        b.lock("app", "Y")
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(a.lock, "app", "Y", timeout=5.0)
            time.sleep(0.2)
            try:
                b.lock("app", "X", timeout=5.0)
                victim: Any = first.exception()
            except leasehold.Deadlock as e:
                victim = e
        assert isinstance(victim, leasehold.Deadlock)
        assert {edge.resource for edge in victim.cycle} == {"X", "Y"}
        assert {edge.waiter for edge in victim.cycle} == {a.id, b.id}


def test_semaphore_limit(client: leasehold.Client) -> None:
    with (
        client.session("a") as a,
        client.session("b") as b,
        a.semaphore("app", "provider", limit=3, permits=2, timeout=1.0) as slot,
    ):
        assert slot.permits == 2 and slot.fence > 0
        with pytest.raises(leasehold.LockTimeout):
            b.semaphore("app", "provider", limit=3, permits=2, timeout=0.1)
        with b.semaphore("app", "provider", limit=3, permits=1, timeout=0.1) as other:
            assert other.permits == 1


def test_checkout_locked_save_and_renewal_past_ttl(client: leasehold.Client) -> None:
    client.put("docs", "17", "draft")
    with client.checkout("docs", "17", owner="Asha", ttl=1.5) as doc:
        with pytest.raises(leasehold.Locked) as e:
            client.checkout("docs", "17", owner="Bob")
        assert e.value.locked_by == "Asha" and e.value.expires_at
        time.sleep(2.5)  # past the ttl: only the renewals keep it
        assert not doc.lost.is_set()
        assert doc.save("text") == 2
    assert client.get("docs", "17").body == "text"


def test_broken_checkout_is_lost(client: leasehold.Client) -> None:
    client.put("docs", "18", "draft")
    doc = client.checkout("docs", "18", owner="Asha", ttl=1.5)
    assert client.break_checkout("docs", "18")
    assert doc.lost.wait(3)
    with pytest.raises(leasehold.Lost):
        doc.save("late")
    assert client.get("docs", "18").state == "free"  # the accidental new lease went back
    with pytest.raises(leasehold.Lost):
        doc.checkin()  # nothing to check in: the lease is gone


def test_stale_fence(client: leasehold.Client) -> None:
    with client.session("a") as a, client.session("b") as b:
        old = a.lock("app", "invoice")
        client.put("billing", "481", "draft")
        old.release()
        new = b.lock("app", "invoice")
        client.save("billing", "481", "paid", fence=new.fence)
        with pytest.raises(leasehold.StaleFence) as e:
            client.save("billing", "481", "late", fence=old.fence)
        assert e.value.code == "stale_fence"


def test_errors_are_typed(client: leasehold.Client) -> None:
    with pytest.raises(leasehold.NotFound):
        client.get("docs", "missing")
    client.put("docs", "x", "1")
    with pytest.raises(leasehold.Exists):
        client.put("docs", "x", "2")
    with pytest.raises(leasehold.LeaseholdError, match="bad_url"):
        leasehold.Client("ftp://nowhere")


def test_session_lost_on_admin_delete(client: leasehold.Client) -> None:
    s = client.session("victim", ttl=1.5)
    lk = s.lock("app", "r")
    client.end_session(s.id)
    assert s.lost.wait(3) and lk.lost.is_set()
    with pytest.raises(leasehold.SessionLost):
        s.lock("app", "other")
    s.close()


def test_a_broken_lock_is_lost_and_its_release_sends_nothing(
    client: leasehold.Client, server: Server
) -> None:
    s = client.session("worker", ttl=1.5)
    lk = s.lock("app", "job")
    slot = s.semaphore("app", "lanes", limit=2)
    with httpx.Client(base_url=server.url) as http:
        r = http.post("/v1/applocks/app/break", json={"session": s.id, "resource": "job"})
        assert r.status_code == 200, r.text
        assert r.json()["taken"][0]["owner"] == "Session"
    assert lk.lost.wait(3) and not slot.lost.is_set() and not s.lost.is_set()
    again = s.lock("app", "job", timeout=0)  # the session may take it again
    with pytest.raises(leasehold.Lost):
        lk.release()
    holders = next(lock for lock in client.locks("app") if lock["resource"] == "job")["granted"]
    assert [h["count"] for h in holders] == [1], "the old handle released nothing"
    again.release()
    slot.release()
    s.close()


def test_a_lock_past_its_hold_limit_is_lost(client: leasehold.Client) -> None:
    s = client.session("worker", ttl=1.5)
    lk = s.lock("app", "nightly", max_hold=0.3)
    holder = next(lock for lock in client.locks("app") if lock["resource"] == "nightly")
    assert holder["granted"][0]["hold_until"] is not None
    assert lk.lost.wait(3) and not s.lost.is_set()
    with pytest.raises(leasehold.Lost):
        lk.release()
    s.close()


def test_watch(client: leasehold.Client) -> None:
    seen: list[leasehold.Event] = []
    with client.watch("app") as w, client.session("a") as s:

        def read() -> None:
            for event in w:
                seen.append(event)
                if event.type == "applock.released":
                    return

        t = threading.Thread(target=read)
        t.start()
        time.sleep(0.2)
        s.lock("app", "watched").release()
        t.join(5)
    assert [e.type for e in seen][-2:] == ["applock.granted", "applock.released"]
    assert seen[-1].data["resource"] == "watched"


def test_sse_parser_joins_lines_across_reads() -> None:
    from leasehold._core import SseParser

    p = SseParser()
    assert p.feed(b"event: applock.gra") == []
    assert p.feed(b'nted\ndata: {"resource":') == []
    events = p.feed(b'"r"}\n\n: ping\n\n')
    assert [(e.type, e.data) for e in events] == [("applock.granted", {"resource": "r"})]


def test_kill9_restart_keeps_the_lock_and_rides_through_a_wait(
    server: Server, contract: Contract
) -> None:
    c = hooked(leasehold.Client(server.url, io_timeout=10.0), contract)
    a = c.session("holder", ttl=10.0)
    b = c.session("waiter", ttl=10.0)
    held = a.lock("app", "job")
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(b.lock, "app", "job", timeout=20.0)
        time.sleep(0.3)
        server.kill9()
        time.sleep(0.5)
        server.start()
        assert c.locks("app")[0]["granted"][0]["session"] == a.id  # kept across the restart
        held.release()
        lock = waiting.result(timeout=20)
    assert lock.fence > held.fence  # asked again after the restart, granted once
    assert not a.lost.is_set() and not b.lost.is_set()
    lock.release()
    a.close()
    b.close()


def test_memory_namespace_signals_locks_lost(make_server: Any, contract: Contract) -> None:
    server = make_server({"namespaces": {"mem": {"locks": "memory"}}})
    c = hooked(leasehold.Client(server.url, io_timeout=5.0), contract)
    s = c.session("m", ttl=3.0)
    s.lock("mem", "r")
    server.kill9()
    server.start()
    assert s.locks_lost.wait(5)
    assert not s.lost.is_set()
    s.close()


def test_post_is_not_resent_after_a_break_and_get_is(server: Server, contract: Contract) -> None:
    from proxy import BreakingProxy

    with BreakingProxy(server.port) as proxy:
        c = hooked(leasehold.Client(proxy.url, io_timeout=5.0), contract)
        proxy.break_next = 1
        with pytest.raises(leasehold.Unreachable):
            c.put("docs", "once", "body")
        assert proxy.requests == 1  # sent once, never again
        assert c.get("docs", "once").version == 1  # it did reach the server
        proxy.break_next = 1
        assert c.get("docs", "once").version == 1  # a GET is asked again
        assert proxy.requests == 4


def test_cluster_skips_a_dead_node_and_follows_redirects(
    server: Server, contract: Contract
) -> None:
    from proxy import Redirector, dead_url

    with Redirector(server.url) as standby:
        c = hooked(leasehold.Client(f"{dead_url()},{standby.url}", io_timeout=5.0), contract)
        assert c.put("docs", "c1", "x") == 1
        assert standby.redirects == 1
        assert c._nodes.leader == server.url  # learned from the redirect, asked first now
        c.get("docs", "c1")
        assert standby.redirects == 1


def test_unreachable_when_no_node_answers(contract: Contract) -> None:
    from proxy import dead_url

    c = leasehold.Client(f"{dead_url()},{dead_url()}", io_timeout=3.0)
    with pytest.raises(leasehold.Unreachable):
        c.session("nobody")
