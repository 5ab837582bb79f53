"""Exactly one resume of an interrupt proceeds; a dead resumer's claim is taken over after its lease."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileCheckpointer, FileStorage, MemoryStorage
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


RESUMER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pydantic import BaseModel
    from statehitl.checkpoint import FileCheckpointer
    from statehitl.errors import CheckpointConflict, NotInterruptedError
    from statehitl.graph import END, START, StateGraph

    store, actions, go, ready = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])

    class Job(BaseModel):  # the same machine as the test's: fingerprints must match to resume
        approved: bool = False
        done: bool = False

    def review(state, ctx):
        return {"approved": ctx.interrupt("approve") == "y"}

    def act(state):
        with actions.open("a") as f:
            f.write("deleted the files\\n")

    g = StateGraph(Job)
    g.add_node("review", review)
    g.add_node("act", act)
    g.add_edge(START, "review")
    g.add_edge("review", "act")
    g.add_edge("act", END)
    app = g.compile(checkpointer=FileCheckpointer(store))
    state = app.get_state("t")
    responses = [{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in state.interrupts]
    ready.touch()
    while not go.exists():
        time.sleep(0.001)
    try:
        app.invoke(responses, thread_id="t")
    except (CheckpointConflict, NotInterruptedError) as exc:  # lost the claim, or came after the winner
        print("conflict:", exc)
        sys.exit(3)
    print("resumed")
    """
)


@pytest.mark.slow
def test_concurrent_resumes_in_separate_processes_run_the_action_once(tmp_path: Path) -> None:
    store, actions, go = tmp_path / "store", tmp_path / "actions.txt", tmp_path / "go"
    script = tmp_path / "resume.py"
    script.write_text(RESUMER)
    paused = build(FileCheckpointer(store), []).invoke({}, thread_id="t")
    assert paused.stop_reason == "interrupt"
    readies = [tmp_path / f"ready-{n}" for n in range(6)]
    procs = [
        subprocess.Popen([sys.executable, str(script), str(store), str(actions), str(go), str(ready)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for ready in readies
    ]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        time.sleep(0.01)  # every process has loaded the interrupt and waits at the start line
    go.touch()
    outcomes = [(*p.communicate(timeout=120), p.returncode) for p in procs]
    codes = sorted(code for _, _, code in outcomes)
    assert codes == [0, 3, 3, 3, 3, 3], [err for _, err, _ in outcomes]
    assert actions.read_text() == "deleted the files\n"
    assert all("conflict:" in out for out, _, code in outcomes if code == 3)


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
