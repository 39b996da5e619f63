"""The asyncio client against a real server: the same surface, awaited."""

from __future__ import annotations

import asyncio

import pytest

import leasehold

pytestmark = pytest.mark.anyio


async def test_lock_semaphore_and_refusals(aclient: leasehold.AsyncClient) -> None:
    async with await aclient.session("a", ttl=5.0) as a, await aclient.session("b") as b:
        async with a.lock("app", "r", timeout=1.0) as lk:
            assert lk.fence > 0 and not lk.lost.is_set()
            ran = False
            with pytest.raises(leasehold.LockTimeout):
                async with b.lock("app", "r", timeout=0.1):
                    ran = True
            assert not ran
        waiting = asyncio.create_task(_take(b, "r2"))
        held = await a.lock("app", "r2")
        await asyncio.sleep(0.05)
        await held.release()
        got = await waiting
        assert got.fence > 0
        async with a.semaphore("app", "p", limit=2, permits=2) as slot:
            assert slot.permits == 2


async def _take(s: leasehold.AsyncSession, resource: str) -> leasehold.AsyncLock:
    await asyncio.sleep(0.1)
    return await s.lock("app", resource, timeout=5.0)


async def test_checkout_renewal_and_loss(aclient: leasehold.AsyncClient) -> None:
    await aclient.put("docs", "a1", "draft")
    async with aclient.checkout("docs", "a1", owner="Asha", ttl=1.5) as doc:
        await asyncio.sleep(2.2)
        assert not doc.lost.is_set()
        assert await doc.save("v2") == 2
        with pytest.raises(leasehold.Locked):
            await aclient.checkout("docs", "a1", owner="Bob")
    doc2 = await aclient.checkout("docs", "a1", owner="Asha", ttl=1.5)
    await aclient.request("POST", "/v1/records/docs/a1/break", None)
    await asyncio.wait_for(doc2.lost.wait(), 3)
    with pytest.raises(leasehold.Lost):
        await doc2.save("late")


async def test_session_lost_and_watch(aclient: leasehold.AsyncClient) -> None:
    w = await aclient.watch("app")
    s = await aclient.session("victim", ttl=1.5)
    lk = await s.lock("app", "x")
    await aclient.end_session(s.id)
    await asyncio.wait_for(s.lost.wait(), 3)
    assert lk.lost.is_set()
    types = []
    async for event in w:
        if event.type.startswith("applock."):
            types.append(event.type)
        if event.type == "applock.released":
            break
    await w.aclose()
    assert types == ["applock.granted", "applock.released"]
    with pytest.raises(leasehold.SessionLost):
        await s.lock("app", "y")


async def _finalize(s: leasehold.AsyncSession, invoice: str) -> tuple[object, list[str]]:
    op_id = f"finalize:{invoice}"
    async with s.transaction() as tx:  # rolled back unless committed
        lk = await tx.lock("billing", f"invoice:{invoice}", timeout=5.0)
        op = await tx.begin_operation("billing", op_id)
        if op.completed:
            return op.outcome, []
        await tx.save("billing", invoice, "final", fence=lk.fence)
        await tx.complete_operation("billing", op_id, {"total": 120})
        await tx.enqueue("billing", "emails", f"invoice-final:{invoice}", {"invoice": invoice})
        applied = await tx.commit()
        return {"total": 120}, [a.op for a in applied]


async def test_an_invoice_is_finalized_exactly_once(aclient: leasehold.AsyncClient) -> None:
    await aclient.put("billing", "9", "draft")
    async with await aclient.session("billing-worker") as s:
        assert await _finalize(s, "9") == ({"total": 120}, ["save", "complete", "enqueue"])
        assert await _finalize(s, "9") == ({"total": 120}, [])  # nothing applied again
        assert await aclient.locks("billing") == []  # the transaction's lock is released
    assert (await aclient.get("billing", "9")).body == "final"
    [m] = await aclient.claim("billing", "emails", consumer="mailer", lease=5.0)
    assert (m.key, m.payload, m.attempt) == ("invoice-final:9", {"invoice": "9"}, 1)
    await aclient.ack("billing", "emails", m)
    await aclient.ack("billing", "emails", m)  # harmless
    assert await aclient.claim("billing", "emails", consumer="mailer") == []


async def test_transaction_rollback_staging_and_locks(aclient: leasehold.AsyncClient) -> None:
    async with await aclient.session("a") as a, await aclient.session("b") as b:
        with pytest.raises(RuntimeError):
            async with a.transaction() as tx:
                await tx.lock("app", "r")
                await tx.put("docs", "k", "staged")
                raise RuntimeError("boom")
        with pytest.raises(leasehold.NotFound):
            await aclient.get("docs", "k")
        assert await aclient.locks("app") == []
        tx = await a.transaction()  # awaited rather than entered
        lk = await tx.lock("app", "r")
        await tx.put("docs", "k", "staged")
        with pytest.raises(leasehold.NotFound):
            await aclient.get("docs", "k")  # staged, not applied
        with pytest.raises(leasehold.LockTimeout):
            await b.lock("app", "r", timeout=0)
        assert [(x.op, x.version) for x in await tx.commit()] == [("insert", 1)]
        assert (await aclient.get("docs", "k")).body == "staged"
        async with b.lock("app", "r", timeout=0) as other:  # released by the commit
            assert other.fence > lk.fence
