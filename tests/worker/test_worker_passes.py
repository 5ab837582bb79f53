"""The worker on the file store, in-process: what one pass over the index does, and a polling worker.

Answers stored through the inbox are applied; expiry defaults are applied once when due (the clock is
the worker's, so no test waits for a deadline); answers given to the app's own call are left to it for
a lease; several apps are routed by machine name; agents are resumed as StateGraphs are.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from statehitl import inbox
from statehitl.checkpoint import FileStorage
from statehitl.checkpoint.answer_records import record_answer
from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import AppLoadError
from statehitl.testing import CountingStorage
from statehitl.worker import Worker
from worker_app import APPROVAL, Ledger, build, build_agent, build_refunds, graph
from worker_support import wait_for


def _answer(store: str, thread: str, response: object, responder: str = "ann") -> None:
    [item] = [p for p in inbox.pending(store) if p.thread_id == thread]
    inbox.answer(store, item.id, response, responder=responder)


def test_a_pass_resumes_what_the_inbox_answered_and_leaves_the_rest_waiting(app_store: str, ledger: Ledger) -> None:
    app = build("t")
    for thread in ("t1", "t2", "t3"):
        app.invoke({"item": thread}, thread_id=thread)
    _answer(app_store, "t1", "y")
    _answer(app_store, "t3", "n", responder="bob")

    report = Worker(app_store, build).run(once=True)

    assert report.counts["resumed"] == 2
    assert sorted(ledger.applied().values()) == ["t1 ship y", "t3 ship n"]
    assert [p.thread_id for p in inbox.pending(app_store)] == ["t2"]
    assert [(e.responder, e.via, e.outcome) for e in app.audit("t3")] == [("bob", "inbox", "applied")]
    assert Worker(app_store, build).run(once=True).counts["resumed"] == 0  # nothing is applied twice
    assert len(ledger.attempts()) == 2


def test_an_expiry_default_is_applied_when_due_and_once(app_store: str, ledger: Ledger) -> None:
    app = build("t")
    app.invoke({"item": "soon", "expires_in": 60, "on_expire": "timed out"}, thread_id="soon")
    app.invoke({"item": "later", "expires_in": 3600}, thread_id="later")

    early = Worker(app_store, build).run(once=True)
    assert (early.resumed, early.expired) == (0, 0)
    after = Worker(app_store, build, clock=lambda: time.time() + 120).run(once=True)

    assert (after.resumed, after.expired) == (1, 1)
    assert list(ledger.applied().values()) == ["soon ship timed out"]
    [entry] = app.audit("soon")
    assert (entry.responder, entry.via, entry.response) == ("expiry", "expiry", "timed out")
    again = Worker(app_store, build, clock=lambda: time.time() + 120).run(once=True)
    assert (again.resumed, again.expired) == (0, 0)
    assert [p.thread_id for p in inbox.pending(app_store)] == ["later"]


def test_a_reviewer_who_answers_before_the_worker_sees_the_deadline_wins(app_store: str, ledger: Ledger) -> None:
    app = build("t")
    app.invoke({"item": "race", "expires_in": 60}, thread_id="race")
    _answer(app_store, "race", "approved late", responder="ann")  # stored just before the deadline passed

    report = Worker(app_store, build, clock=lambda: time.time() + 120).run(once=True)

    assert (report.resumed, report.expired) == (1, 0)
    assert list(ledger.applied().values()) == ["race ship approved late"]
    assert [(e.responder, e.via) for e in app.audit("race")] == [("ann", "inbox")]


def test_an_answer_given_to_the_app_is_left_to_its_call_for_a_lease(app_store: str, ledger: Ledger) -> None:
    """The app's own call stores its answer and claims the thread right after; a worker must not race it.
    Only if that call died in between does the worker apply the answer, once the lease has run out."""
    app = build("t")
    waiting = app.invoke({"item": "x"}, thread_id="x")
    checkpointer = Checkpointer.from_url(app_store)
    record = asyncio.run(checkpointer.latest("x"))
    assert record is not None
    # what app.invoke([... "y" ...]) stores first, as if its process had died right after
    asyncio.run(record_answer(checkpointer, record, record.interrupts[0], "y", responder="app-user", via="app"))
    assert waiting.interrupts[0].name == APPROVAL

    soon = Worker(app_store, build, lease_seconds=30).arun  # the answer is a second old: its call may be at work
    assert asyncio.run(soon(once=True)).resumed == 0
    inbox_marks = Worker(app_store, build, lease_seconds=30, clock=lambda: time.time() + 31)
    # a polling pass does not see it (only the inbox's answers are marked in the index) ...
    assert inbox_marks.run(once=True).resumed == 0
    # ... a stream record of the answer does, and applies it once the call's lease is over
    report = asyncio.run(inbox_marks.aapply_changes([f"threads/x/a.{record.seq:012d}.{record.interrupts[0].id}"]))
    assert report.resumed == 1
    assert list(ledger.applied().values()) == ["x ship y"]
    assert [(e.responder, e.via) for e in app.audit("x")] == [("app-user", "app")]


def test_agents_are_resumed_like_graphs(app_store: str, ledger: Ledger) -> None:
    agent = build_agent("cleanup-1")
    assert agent("clean up").stop_reason == "interrupt"
    _answer(app_store, "cleanup-1", "y")

    assert Worker(app_store, build_agent).run(once=True).resumed == 1

    assert list(ledger.applied().values()) == ["cleanup-1 delete y"]
    assert build_agent("cleanup-1").messages[-1]["content"][0]["text"] == "done"


def test_several_apps_are_routed_by_the_machine_that_stopped_each_thread(app_store: str, ledger: Ledger) -> None:
    build("t").invoke({"item": "ship me"}, thread_id="ship")
    build_refunds("t").invoke({"item": "refund me"}, thread_id="refund")
    _answer(app_store, "ship", "y")
    _answer(app_store, "refund", "y")

    report = Worker(app_store, [build_refunds, build]).run(once=True)

    assert report.resumed == 2
    assert sorted(ledger.applied().values()) == ["refund ship y", "ship ship y"]


def test_a_thread_no_app_serves_is_named_and_left_waiting(app_store: str, ledger: Ledger) -> None:
    build_refunds("t").invoke({"item": "refund me"}, thread_id="refund")
    _answer(app_store, "refund", "y")

    report = Worker(app_store, [build, build_agent], app_names=["worker_app:build", "worker_app:build_agent"]
                    ).run(once=True)

    assert report.resumed == 0
    error = report.failed["refund"]
    assert error.startswith("AppLoadError: thread 'refund' was stopped by machine 'RefundGraph', and no app")
    assert "worker_app:build builds 'ShipGraph'" in error
    assert ledger.applied() == {}
    with pytest.raises(AppLoadError, match="at least one app"):
        Worker(app_store, [])


def test_a_polling_worker_resumes_answers_as_they_come(app_store: str, ledger: Ledger) -> None:
    app = build("t")
    worker = Worker(app_store, build, interval=0.05)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    running = threading.Thread(target=lambda: loop.run_until_complete(worker.arun(stop=stop)))
    running.start()
    try:
        for n in range(3):
            app.invoke({"item": f"o{n}"}, thread_id=f"o{n}")
            _answer(app_store, f"o{n}", "y")
            wait_for(lambda n=n: len(ledger.applied()) == n + 1)
    finally:
        loop.call_soon_threadsafe(stop.set)
        running.join(timeout=60)
        loop.close()
    assert sorted(ledger.applied().values()) == ["o0 ship y", "o1 ship y", "o2 ship y"]
    assert worker.report.resumed == 3


def test_with_one_app_a_resume_reads_the_thread_once(app_store: str, ledger: Ledger) -> None:
    """The worker reads the thread (head and answers) through the app's checkpointer to decide, and the
    app's resume goes on from that read instead of making it again."""
    build("t").invoke({"item": "t1"}, thread_id="t1")
    _answer(app_store, "t1", "y")
    counted = CountingStorage(FileStorage(app_store.removeprefix("file://")))
    app = graph().compile(checkpointer=Checkpointer(counted))  # a new process's: nothing of t1 in its cache

    outcome = asyncio.run(Worker(app_store, lambda thread: app).aprocess("t1"))

    assert outcome.what == "resumed"
    assert list(ledger.applied().values()) == ["t1 ship y"]
    reads = {op: n for op, n in counted.counts.calls.items() if op not in ("write", "create")}
    assert reads == {"read_all": 1, "read": 1}  # the thread's one bulk read; the index entry before its update


def test_a_thread_whose_build_keeps_failing_is_tried_again_with_growing_pauses(
        app_store: str, ledger: Ledger, caplog: pytest.LogCaptureFixture) -> None:
    """A polling worker passes over the index every ``interval``; a thread whose ``build`` keeps failing is
    not built again at every pass but after pauses that double (each drawn between half and all of it), and
    its error is logged once. The worker's clock is a counter, so the test waits for nothing."""
    build("t").invoke({"item": "x"}, thread_id="x")
    _answer(app_store, "x", "y")
    builds: list[str] = []

    def broken(thread_id: str) -> object:
        builds.append(thread_id)
        raise ConnectionError("the database is restarting")

    now = [time.time()]
    worker = Worker(app_store, broken, interval=1.0, clock=lambda: now[0])

    async def a_minute_of_passes() -> None:
        for _ in range(240):  # a pass every 0.25 s of the worker's clock
            await worker.apass()
            now[0] += 0.25

    asyncio.run(a_minute_of_passes())

    # pauses of 0.5-1, 1-2, 2-4, 4-8, 8-16, 16-32 s after the builds: 6 or 7 builds in 60 s, never 240
    assert 6 <= len(builds) <= 7, builds
    assert [r.levelname for r in caplog.records if "the database is restarting" in r.getMessage()] == ["ERROR"]
    assert worker.report.counts["failed"] == len(builds)
    assert Worker(app_store, build).run(once=True).resumed == 1  # the database is back: applied at once
    assert list(ledger.applied().values()) == ["x ship y"]


def test_an_answered_thread_a_pass_cannot_resume_for_a_minute_is_warned_of_with_what_it_found(
        app_store: str, ledger: Ledger, caplog: pytest.LogCaptureFixture) -> None:
    """A thread held by another live process is "busy" to every pass: normal for a moment while workers race,
    a stuck answer if it lasts. The worker says so once it has been due for a minute (and not before), naming
    what it found, and says nothing more once the thread is resumed."""
    from statehitl._sync import run_sync
    from statehitl.checkpoint.claims import owner_id

    build("t").invoke({"item": "held"}, thread_id="held")
    _answer(app_store, "held", "y")
    checkpointer = Checkpointer.from_url(app_store)
    head = run_sync(checkpointer.head("held"))
    assert head is not None
    run_sync(checkpointer.claim(head, owner_id()))  # another run of this live process holds the thread
    now = [time.time()]
    worker = Worker(app_store, build, clock=lambda: now[0])

    with caplog.at_level("WARNING", logger="statehitl.worker"):
        assert worker.run(once=True).counts["busy"] == 1
        now[0] += 59
        worker.run(once=True)
        assert "still not resumed" not in caplog.text
        now[0] += 2
        worker.run(once=True)
    [warning] = [r.getMessage() for r in caplog.records if "still not resumed" in r.getMessage()]
    assert warning.startswith("thread held: answered and due for 61s, still not resumed; the last look found busy: "
                              "thread 'held' is being resumed by another process")
    assert ledger.applied() == {}
