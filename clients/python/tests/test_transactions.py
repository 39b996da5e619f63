"""Transactions, operation records and the outbox, with the blocking client against a
real server (docs/api.md "Transactions", "Idempotent operations and the outbox")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Contract, Server, hooked

import leasehold

README = Path(__file__).resolve().parents[1] / "README.md"


def finalize(s: leasehold.Session, invoice: str, applied: list[leasehold.Applied]) -> Any:
    """The README's walkthrough, keeping what the commit applied."""
    op_id = f"finalize:{invoice}"
    with s.transaction() as tx:
        lk = tx.lock("billing", f"invoice:{invoice}", timeout=5.0)
        op = tx.begin_operation("billing", op_id)
        if op.completed:
            return op.outcome
        tx.save("billing", invoice, "final", fence=lk.fence)
        outcome = {"total": 120, "currency": "EUR"}
        tx.complete_operation("billing", op_id, outcome)
        tx.enqueue("billing", "emails", f"invoice-final:{invoice}", {"invoice": invoice})
        applied.extend(tx.commit())
        return outcome


def test_an_invoice_is_finalized_exactly_once(client: leasehold.Client) -> None:
    client.put("billing", "481", "draft")
    with client.session("billing-worker") as s:
        first: list[leasehold.Applied] = []
        assert finalize(s, "481", first) == {"total": 120, "currency": "EUR"}
        assert [(a.op, a.ns, a.key) for a in first] == [
            ("save", "billing", "481"),
            ("complete", "billing", "finalize:481"),
            ("enqueue", "billing", "invoice-final:481"),
        ]
        assert first[0].version == 2
        assert first[2].topic == "emails" and first[2].id and first[2].duplicate is False
        again: list[leasehold.Applied] = []
        assert finalize(s, "481", again) == {"total": 120, "currency": "EUR"}
        assert again == []  # found completed: rolled back, nothing applied or enqueued
        assert client.locks("billing") == []  # the transaction's lock went with it
    assert client.get("billing", "481").body == "final"
    messages = client.claim("billing", "emails", consumer="mailer")
    assert [(m.key, m.payload, m.id) for m in messages] == [
        ("invoice-final:481", {"invoice": "481"}, first[2].id)
    ]


def test_the_readme_walkthrough_runs(client: leasehold.Client) -> None:
    text = README.read_text()
    section = text[text.index("### An invoice finalized exactly once") :]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m is not None
    mails: list[Any] = []
    printed: list[Any] = []
    scope = {"leasehold": leasehold, "client": client, "send_mail": mails.append}
    scope["print"] = printed.append
    exec(compile(m.group(1), "README.md", "exec"), scope)
    assert printed == [{"total": 120, "currency": "EUR"}] * 2
    assert mails == [{"invoice": "481"}]  # one e-mail, however often it was finalized
    assert client.claim("billing", "emails", consumer="mailer") == []  # acked


def test_an_exception_rolls_back(client: leasehold.Client) -> None:
    with client.session("w") as s:
        with pytest.raises(RuntimeError), s.transaction() as tx:
            tx.lock("app", "r")
            tx.put("docs", "k", "staged")
            tx.enqueue("app", "t", "m1", {"n": 1})
            raise RuntimeError("boom")
        with pytest.raises(leasehold.NotFound):
            client.get("docs", "k")
        assert client.claim("app", "t", consumer="c") == []
        assert client.locks("app") == []
        # Falling off the end without commit() rolls back too.
        with s.transaction() as tx:
            tx.put("docs", "k", "staged")
        with pytest.raises(leasehold.NotFound):
            client.get("docs", "k")
        with pytest.raises(leasehold.LeaseholdError) as e:
            tx.put("docs", "k", "after")  # the handle is over
        assert e.value.code == "no_transaction"
        with s.transaction() as tx2:  # no transaction is left open
            assert tx2.number > tx.number
            tx2.rollback()


def test_staged_writes_apply_only_at_commit(client: leasehold.Client) -> None:
    client.put("docs", "old", "v1")
    with client.session("w") as s, s.transaction() as tx:
        lk = tx.lock("docs", "guard")
        tx.put("docs", "new", "fresh")
        tx.save("docs", "old", "v2", fence=lk.fence, if_version=1)
        with pytest.raises(leasehold.Exists):
            tx.put("docs", "old", "again")  # refused when staged, as the direct write
        assert client.get("docs", "old").body == "v1"  # reads never see staged writes
        with pytest.raises(leasehold.NotFound):
            client.get("docs", "new")
        applied = tx.commit()
        assert [(a.op, a.key, a.version) for a in applied] == [
            ("insert", "new", 1),
            ("save", "old", 2),
        ]
    assert client.get("docs", "new").body == "fresh"
    assert client.get("docs", "old").body == "v2"
    with client.session("w2") as s, s.transaction() as tx:
        tx.delete("docs", "new", fence=tx.lock("docs", "guard").fence)
        assert client.get("docs", "new").version == 1
        assert [a.op for a in tx.commit()] == ["delete"]
    gone = client.get("docs", "new")  # the key keeps its write fence, not its record
    assert not gone.has_record and gone.body is None


def test_a_transaction_lock_is_held_until_commit(client: leasehold.Client) -> None:
    with client.session("a") as a, client.session("b") as b:
        with a.transaction() as tx:
            lk = tx.lock("app", "r", mode="Update", timeout=1.0)
            assert lk.fence > 0 and lk.mode == "Update" and not lk.waited
            [holder] = client.locks("app")[0]["granted"]
            assert holder["session"] == a.id and holder["owner"] == "Transaction"
            with pytest.raises(leasehold.LockTimeout):
                b.lock("app", "r", timeout=0)
            assert tx.commit() == []
        with b.lock("app", "r", timeout=0) as other:  # released by the commit
            assert other.fence > lk.fence


def test_a_concurrent_completion_aborts_the_commit(client: leasehold.Client) -> None:
    with client.session("a") as a, client.session("b") as b:
        with a.transaction() as ta, b.transaction() as tb:
            assert not ta.begin_operation("billing", "op").completed
            assert not tb.begin_operation("billing", "op").completed
            ta.complete_operation("billing", "op", 1)
            tb.complete_operation("billing", "op", 2)
            tb.enqueue("billing", "emails", "k", {})
            assert [a.op for a in ta.commit()] == ["complete"]
            with pytest.raises(leasehold.TransactionAborted) as e:
                tb.commit()
            assert e.value.code == "transaction_aborted" and e.value.status == 409
        with b.transaction() as tx:
            op = tx.begin_operation("billing", "op")
            assert op.state == "completed" and op.outcome == 1 and op.completed_at
            with pytest.raises(leasehold.Exists):
                tx.complete_operation("billing", "op", 3)
    assert client.claim("billing", "emails", consumer="c") == []


def test_claim_and_ack(client: leasehold.Client) -> None:
    with client.session("w") as s, s.transaction() as tx:
        first = tx.enqueue("q", "jobs", "a", {"n": 1})
        assert first.staged and not first.duplicate
        assert tx.enqueue("q", "jobs", "a", {"n": 9}).id == first.id  # staged once per key
        tx.enqueue("q", "jobs", "b", [2])
        tx.commit()
    with client.session("w") as s, s.transaction() as tx:
        dup = tx.enqueue("q", "jobs", "a", {"n": 1})
        assert dup.duplicate and dup.id == first.id
        tx.rollback()
    batch = client.claim("q", "jobs", consumer="c", max=1, lease=5.0)
    assert [(m.key, m.payload, m.attempt) for m in batch] == [("a", {"n": 1}, 1)]
    rest = client.claim("q", "jobs", consumer="c", max=10, lease=5.0)
    assert [(m.key, m.payload) for m in rest] == [("b", [2])]
    assert rest[0].claim_token != batch[0].claim_token and rest[0].lease_expires_at
    client.ack("q", "jobs", batch[0])
    client.ack("q", "jobs", batch[0])  # a repeated ack is harmless
    stranger = leasehold.Message(rest[0].id, "b", None, 1, "not-the-token", "")
    with pytest.raises(leasehold.Lost) as e:
        client.ack("q", "jobs", stranger)
    assert e.value.code == "not_owner" and e.value.status == 423
    client.ack("q", "jobs", rest[0])
    assert client.claim("q", "jobs", consumer="c") == []
    assert client.request("GET", "/v1/outbox/q/jobs")["pending"] == 0


def test_a_commit_is_sent_once(server: Server, contract: Contract) -> None:
    from proxy import BreakingProxy

    with BreakingProxy(server.port) as proxy:
        c = hooked(leasehold.Client(proxy.url, io_timeout=5.0), contract)
        with c.session("w") as s:
            with s.transaction() as tx:
                tx.begin_operation("ops", "once")
                tx.complete_operation("ops", "once", "done")
                sent = proxy.requests
                proxy.break_next = 1
                with pytest.raises(leasehold.Unreachable):
                    tx.commit()
                assert proxy.requests == sent + 1  # sent once, never again
            with s.transaction() as tx:  # its fate is read, not guessed
                assert tx.begin_operation("ops", "once").outcome == "done"
        c.close()


def test_a_restart_loses_the_transaction(server: Server, contract: Contract) -> None:
    c = hooked(leasehold.Client(server.url, io_timeout=10.0), contract)
    s = c.session("w", ttl=10.0)
    tx = s.transaction()
    tx.lock("app", "r")
    tx.put("docs", "k", "staged")
    server.kill9()
    server.start()
    with pytest.raises(leasehold.TransactionAborted) as e:
        tx.enqueue("app", "t", "k", None)
    assert e.value.code == "transaction_lost"
    with pytest.raises(leasehold.LeaseholdError) as e2:
        tx.commit()
    assert e2.value.code == "no_transaction"
    assert c.locks("app") == []
    with s.transaction() as tx2:
        tx2.put("docs", "k", "again")
        tx2.commit()
    assert c.get("docs", "k").body == "again"
    s.close()
    c.close()
