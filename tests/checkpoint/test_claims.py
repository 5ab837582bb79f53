"""Exactly one resume of an interrupt proceeds; a dead resumer's claim is taken over after its lease."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import socket
import time
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from pydantic import BaseModel

from resume_processes import assert_one_winner, park_for_race, race_resumes
from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.checkpoint.claims import owner_id
from statehitl.errors import CheckpointConflict
from statehitl.graph import END, START, NodeContext, StateGraph


class Job(BaseModel):
    approved: bool = False
    done: bool = False


def build(checkpointer: Checkpointer, calls: list[str]):
    def review(state: Job, ctx: NodeContext) -> dict[str, bool]:
        calls.append("review")
        return {"approved": ctx.interrupt("approve") == "y"}

    def act(state: Job) -> dict[str, bool]:
        calls.append("act")
        return {"done": state.approved}

    g = StateGraph(Job)
    g.add_node("review", review)
    g.add_node("act", act)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    return g.compile(checkpointer=checkpointer)


@pytest.fixture(params=["memory", "file"])
def make_checkpointer(request: pytest.FixtureRequest, tmp_path: Path):
    """Builds checkpointers on the backend under test (all on one store per test)."""
    storage = MemoryStorage() if request.param == "memory" else FileStorage(tmp_path / "store")
    return lambda **options: Checkpointer(storage, **options)


def answer(result, response="y"):
    return [{"interruptResponse": {"interruptId": i.id, "response": response}} for i in result.interrupts]


def test_a_live_claim_stops_a_second_resume_before_anything_runs(make_checkpointer) -> None:
    checkpointer = make_checkpointer()
    calls: list[str] = []
    app = build(checkpointer, calls)
    paused = app.invoke({}, thread_id="t")
    head = asyncio.run(checkpointer.head("t"))
    assert head is not None
    asyncio.run(checkpointer.claim(head, "other-process"))  # another resumer got there first
    before = list(calls)
    with pytest.raises(CheckpointConflict, match="being resumed by another process"):
        app.invoke(answer(paused), thread_id="t")
    assert calls == before  # no node, hook or tool ran


def test_a_dead_resumers_claim_is_taken_over_after_its_lease(make_checkpointer) -> None:
    checkpointer = make_checkpointer(lease_seconds=0.05)
    calls: list[str] = []
    app = build(checkpointer, calls)
    paused = app.invoke({}, thread_id="t")
    head = asyncio.run(checkpointer.head("t"))
    assert head is not None
    asyncio.run(checkpointer.claim(head, "crashed-process"))
    time.sleep(0.06)
    done = app.invoke(answer(paused), thread_id="t")
    assert done.stop_reason == "end"
    assert done.state.done is True
    assert calls.count("act") == 1


def test_the_same_interrupt_cannot_be_answered_twice(make_checkpointer) -> None:
    checkpointer = make_checkpointer()
    calls: list[str] = []
    app = build(checkpointer, calls)
    paused = app.invoke({}, thread_id="t")
    app.invoke(answer(paused), thread_id="t")
    with pytest.raises(ValueError, match="not waiting on any interrupt"):
        app.invoke(answer(paused), thread_id="t")
    assert calls.count("act") == 1


@pytest.mark.slow
def test_concurrent_resumes_in_separate_processes_run_the_action_once(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    park_for_race(store)
    assert_one_winner(*race_resumes(store, tmp_path))


def test_a_resume_that_fails_releases_its_claim_for_an_immediate_retry(make_checkpointer) -> None:
    checkpointer = make_checkpointer()
    calls: list[str] = []
    app = build(checkpointer, calls)
    paused = app.invoke({}, thread_id="t")
    broken = [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}]
    failing = StateGraph(Job)

    def review(state: Job, ctx: NodeContext) -> None:
        ctx.interrupt("approve")
        raise RuntimeError("the approval service is down")

    failing.add_node("review", review)
    failing.add_node("act", lambda s: None)
    failing.add_edge(START, "review")
    failing.add_edge("review", "act")
    failing.add_edge("act", END)
    with pytest.raises(RuntimeError, match="service is down"):
        failing.compile(checkpointer=checkpointer).invoke(broken, thread_id="t")
    done = app.invoke(answer(paused), thread_id="t")  # at once, not after the 60 s lease
    assert done.state.done is True


def test_a_live_run_started_with_input_cannot_be_taken_over(make_checkpointer) -> None:
    import threading

    checkpointer = make_checkpointer()
    started, release = threading.Event(), threading.Event()
    runs: list[str] = []

    def first(state: Job) -> None:
        runs.append("first")

    def slow(state: Job) -> None:
        runs.append("slow")
        started.set()
        release.wait(10)

    g = StateGraph(Job)
    g.add_node("first", first)
    g.add_node("slow", slow)
    g.add_edge(START, "first")
    g.add_edge("first", "slow")
    g.add_edge("slow", END)
    app = g.compile(checkpointer=checkpointer)
    worker = threading.Thread(target=lambda: app.invoke({}, thread_id="t"))
    worker.start()
    assert started.wait(10)
    try:
        with pytest.raises(CheckpointConflict, match="running in another process"):
            g.compile(checkpointer=checkpointer).invoke(None, thread_id="t")
    finally:
        release.set()
        worker.join(10)
    assert runs == ["first", "slow"]


def test_an_owner_names_host_and_process_and_differs_per_call() -> None:
    first, second = owner_id(), owner_id()
    named, _, machine = first.partition("@")  # after "@": this boot of this machine and its pid namespace (Linux)
    host, pid, nonce = named.rsplit(":", 2)
    assert (host, int(pid)) == (socket.gethostname(), os.getpid())
    assert len(nonce) == 8
    assert second.partition("@")[0].rsplit(":", 1)[0] == f"{host}:{pid}"
    assert second.partition("@")[2] == machine
    assert second != first


def _send_owner(conn: Connection) -> None:
    conn.send(owner_id())
    conn.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_worker_names_its_own_pid() -> None:
    """Host and pid are looked up once per process: a child forked after the parent's lookup must not
    claim threads under its parent's pid."""
    owner_id()  # the parent has looked them up
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_send_owner, args=(send,))
    child.start()
    send.close()
    owner = receive.recv()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert owner.rsplit(":", 2)[:2] == [socket.gethostname(), str(child.pid)]


def test_an_answer_while_another_resume_acts_on_the_interrupt_says_it_was_taken(make_checkpointer) -> None:
    """The winner's run is past the interrupted step (its held checkpoint is the head, executing): a second
    answer is told the interrupt was taken, not just that the thread "is executing"."""
    from statehitl.errors import NotInterruptedError

    checkpointer = make_checkpointer()
    calls: list[str] = []
    app = build(checkpointer, calls)
    paused = app.invoke({}, thread_id="t")
    seen: list[str] = []

    def act(state: Job) -> dict[str, bool]:  # runs while the winner holds the thread: the loser answers now
        with pytest.raises(NotInterruptedError, match="another resume took its interrupts") as lost:
            app.invoke(answer(paused), thread_id="t")
        seen.append(str(lost.value))
        return {"done": True}

    g = StateGraph(Job)
    g.add_node("review", lambda s, ctx: {"approved": ctx.interrupt("approve") == "y"})
    g.add_node("act", act)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    winner = g.compile(checkpointer=checkpointer)
    assert winner.invoke(answer(paused), thread_id="t").state.done
    assert len(seen) == 1
