"""Notifications: each event reaches its sinks once, signed, across racing workers and redelivery.

The receiver is a real HTTP server on loopback that verifies every request's HMAC signature the way
docs/workers.md says a receiver should (``verify_signature`` over the raw body).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import pytest

from statehitl import inbox
from statehitl.checkpoint.engine import Checkpointer
from statehitl.worker import TOLERANCE, Event, Retrying, Webhook, Worker, sign, verify_signature, webhook_id
from statehitl.worker.notify import mark_key
from worker_app import Ledger, build
from worker_support import Receiver, wait_for, worker_env, workers

SECRET = b"shared-secret-for-tests"


def _answer(store: str, thread: str, response: object, responder: str = "ann") -> None:
    [item] = [p for p in inbox.pending(store) if p.thread_id == thread]
    inbox.answer(store, item.id, response, responder=responder)


def _hook(receiver: Receiver, **retrying: float) -> Webhook:
    return Webhook(receiver.url, SECRET, retrying=Retrying(**retrying) if retrying else None)


def test_the_signature_follows_standard_webhooks_and_a_stale_delivery_is_refused() -> None:
    body = b'{"event":"answer","id":"t/a.000000000001.v2:x"}'
    msg_id = webhook_id("t/a.000000000001.v2:x")
    assert msg_id.startswith("msg_")
    assert "." not in msg_id
    now = 1_800_000_000
    headers = {"webhook-id": msg_id, "webhook-timestamp": str(now),
               "webhook-signature": sign(SECRET, msg_id, now, body)}
    # What the Standard Webhooks libraries compute: HMAC-SHA256 of "id.timestamp.body", base64, after "v1,"
    expected = base64.b64encode(hmac.new(SECRET, f"{msg_id}.{now}.".encode() + body, hashlib.sha256).digest())
    assert headers["webhook-signature"] == "v1," + expected.decode()
    assert verify_signature(SECRET, body, headers, now=now + 10)
    assert verify_signature(SECRET, body, {k.upper(): v for k, v in headers.items()}, now=now)  # any case
    assert not verify_signature(SECRET, body, headers, now=now + TOLERANCE + 1)  # a replay, later: refused
    assert not verify_signature(SECRET, body.replace(b"answer", b"answeR"), headers, now=now)
    assert not verify_signature(b"another secret", body, headers, now=now)
    assert not verify_signature(SECRET, body, {**headers, "webhook-id": "msg_other"}, now=now)
    assert not verify_signature(SECRET, body, {}, now=now)
    rotated = {**headers, "webhook-signature": "v1,bm90IHRoaXM= " + headers["webhook-signature"]}
    assert verify_signature(SECRET, body, rotated, now=now)  # one of several signatures (a rotated secret)
    whsec = "whsec_" + base64.b64encode(SECRET).decode()  # the libraries' form of the same secret
    assert sign(whsec.encode(), msg_id, now, body) == headers["webhook-signature"]
    with pytest.raises(ValueError, match="needs a shared secret"):
        Webhook("http://127.0.0.1:9/", b"")


def test_two_workers_and_redelivery_send_each_event_once(app_store: str, ledger: Ledger) -> None:
    app = build("t")
    for thread in ("t1", "t2", "t3"):
        app.invoke({"item": thread}, thread_id=thread)
    _answer(app_store, "t1", "y")
    _answer(app_store, "t2", "n", responder="bob")

    async def both() -> None:
        with Receiver(SECRET) as receiver:
            racing = [Worker(app_store, build, on_interrupt=_hook(receiver), on_answer=_hook(receiver))
                      for _ in range(2)]
            for _ in range(2):  # the same index read twice by each: what a redelivered record does
                await asyncio.gather(*(worker.arun(once=True) for worker in racing))
            t3 = app.get_state("t3")
            key = f"threads/t3/a.{t3.checkpoint_id}.{t3.interrupts[0].id}"  # a stream record of no stored answer
            await racing[0].aapply_changes([key])
            found.extend(receiver.events)
            assert receiver.bad_signatures == 0

    found: list[dict[str, object]] = []
    asyncio.run(both())

    ids = [e["id"] for e in found]
    assert len(ids) == len(set(ids)), ids
    interrupts = sorted(str(e["thread_id"]) for e in found if e["event"] == "interrupt")
    assert interrupts == ["t1", "t2", "t3"]
    answers = {str(e["thread_id"]): e for e in found if e["event"] == "answer"}
    assert sorted(answers) == ["t1", "t2"]
    assert (answers["t2"]["response"], answers["t2"]["responder"], answers["t2"]["via"]) == ("n", "bob", "inbox")
    assert len(ledger.applied()) == len(ledger.attempts()) == 2


def test_worker_processes_send_each_event_once_to_a_webhook(app_store: str, ledger: Ledger, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET.decode() + "\n")
    secret_file.chmod(0o600)
    app = build("t")
    with Receiver(SECRET) as receiver:
        args = ["--app", "worker_app:build", "--store", app_store, "--interval", "0.05",
                "--on-interrupt", receiver.url, "--on-answer", receiver.url, "--webhook-secret-file", str(secret_file)]
        with workers(2, args, worker_env(app_store, ledger.root), tmp_path / "logs") as running:
            at = {thread: app.invoke({"item": thread}, thread_id=thread).checkpoint_id for thread in ("p1", "p2")}
            wait_for(lambda: len(receiver.ids("interrupt")) == 2, what="the interrupt events")
            _answer(app_store, "p1", "y")
            wait_for(lambda: len(receiver.ids("answer")) == 1 and len(ledger.applied()) == 1, what="p1's answer")
            time.sleep(0.3)  # both workers pass over the index a few more times
            for worker in running:
                assert worker.stop()[0] == 0, worker.log
        ids = receiver.ids()
        assert receiver.bad_signatures == 0
    assert len(ids) == len(set(ids)) == 3, ids
    assert sorted(ids) == sorted([f"p1/i.{at['p1']}", f"p2/i.{at['p2']}",
                                  f"p1/a.{at['p1']}.{app.audit('p1')[0].interrupt_id}"])


def test_a_webhook_that_fails_twice_then_succeeds_gets_the_event_once(app_store: str, ledger: Ledger) -> None:
    at = build("t").invoke({"item": "x"}, thread_id="x").checkpoint_id
    with Receiver(SECRET, fail=[503, 500]) as receiver:
        worker = Worker(app_store, build, on_interrupt=_hook(receiver, backoff=0.01, max_backoff=0.05))
        worker.run(once=True)
        assert receiver.requests == 3
        assert receiver.ids() == [f"x/i.{at}"]
        assert worker.notifier.sent == 1
        Worker(app_store, build, on_interrupt=_hook(receiver)).run(once=True)  # its marker says it was sent
        assert receiver.requests == 3


def test_a_webhook_that_refuses_is_logged_and_tried_again_from_the_outbox(
        app_store: str, ledger: Ledger, caplog: pytest.LogCaptureFixture) -> None:
    at = build("t").invoke({"item": "x"}, thread_id="x").checkpoint_id
    with Receiver(SECRET, fail=[400]) as receiver:
        first = Worker(app_store, build, on_interrupt=_hook(receiver, backoff=0.01), delivery_schedule=(0.05,))
        first.run(once=True)
        assert receiver.requests == 1  # a 400 ends the round at once: the same request would get the same answer
        assert "was not delivered" in caplog.text
        assert first.notifier.failed == 1
        time.sleep(0.07)  # the next round is due
        Worker(app_store, build, on_interrupt=_hook(receiver)).run(once=True)  # another worker, from the outbox
        assert receiver.ids() == [f"x/i.{at}"]


def test_callable_sinks_get_the_events_and_delete_thread_removes_the_markers(app_store: str, ledger: Ledger) -> None:
    got: list[Event] = []
    build("t").invoke({"item": "x"}, thread_id="x")
    _answer(app_store, "x", "y")
    Worker(app_store, build, on_interrupt=got.append, on_answer=got.append).run(once=True)

    assert [(e.kind, e.thread_id) for e in got] == [("interrupt", "x"), ("answer", "x")]
    payload = got[1].payload(sent_at=1.0)
    assert (payload["event"], payload["response"], payload["responder"]) == ("answer", "y", "ann")
    json.dumps(payload)
    checkpointer = Checkpointer.from_url(app_store)
    markers = [mark_key(e) for e in got]
    assert all(asyncio.run(checkpointer.storage.read(key)) is not None for key in markers)
    asyncio.run(checkpointer.delete_thread("x"))
    assert all(asyncio.run(checkpointer.storage.read(key)) is None for key in markers)
