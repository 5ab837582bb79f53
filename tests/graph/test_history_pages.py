"""A page of history (``limit=``, ``before=``) is read record by record from the newest, and cut from the
current checkpoint's channels where it can: whatever the thread's shape, every page is the matching slice of the
whole history, read in one bulk read."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint import FileCheckpointer, MemoryCheckpointer
from statehitl.graph import END, START, StateGraph
from statehitl.testing import CountingStorage
from statehitl.types import Command, interrupt


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    count: int


def graph() -> StateGraph[Any]:
    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"], "count": s.get("count", 0) + 1})
    g.add_node("ask", lambda s: {"log": [f"ask:{interrupt('ok?')}"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "ask")
    g.add_edge("ask", "b")
    g.add_edge("b", END)
    return g


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def shown(snapshot: Any) -> tuple[Any, ...]:
    return (snapshot.config, snapshot.parent_config, snapshot.metadata, snapshot.next, snapshot.values,
            [(t.name, [i.value for i in t.interrupts], t.result) for t in snapshot.tasks], snapshot.created_at)


def branched_thread(app: Any) -> None:
    """Two runs, an answered interrupt, a replay of the question (a fork), an edit of an earlier checkpoint
    (another fork) run on, and the first branch answered once more: records of three branches interleave."""
    app.invoke({"log": ["in"]}, config("t"))
    app.invoke(Command(resume="y"), config("t"))
    history = list(app.get_state_history(config("t")))
    asked = next(h for h in history if h.tasks and h.tasks[0].interrupts)
    app.invoke(None, asked.config)  # a replay: asks afresh, on a branch of its own
    app.invoke(Command(resume="n"), config("t"))
    first_step = next(h for h in history if h.metadata["source"] == "loop" and h.next == ("a",))
    edited = app.update_state(first_step.config, {"log": ["edited"]})
    app.invoke(None, edited)
    app.invoke(Command(resume="maybe"), config("t"))
    app.invoke({"log": ["again"]}, config("t"))


@pytest.mark.parametrize("store", ["memory", "file"])
def test_every_page_is_the_slice_of_the_whole_history(store: str, tmp_path: Path) -> None:
    app = graph().compile(checkpointer=MemoryCheckpointer() if store == "memory" else FileCheckpointer(tmp_path))
    branched_thread(app)
    whole = [shown(s) for s in app.get_state_history(config("t"))]
    assert len(whole) > 12
    for limit in range(1, len(whole) + 1):
        assert [shown(s) for s in app.get_state_history(config("t"), limit=limit)] == whole[:limit]
    for i, snapshot in enumerate(app.get_state_history(config("t"))):
        page = [shown(s) for s in app.get_state_history(config("t"), before=snapshot.config, limit=3)]
        assert page == whole[i + 1:i + 4]
    # a new app (nothing known of the thread in it) pages the same
    again = graph().compile(checkpointer=app.checkpointer)
    assert [shown(s) for s in again.get_state_history(config("t"), limit=7)] == whole[:7]


def test_a_page_reads_what_it_shows_not_the_thread(tmp_path: Path) -> None:
    storage = CountingStorage(FileCheckpointer(tmp_path).storage)
    from statehitl.checkpoint import Checkpointer

    app = graph().compile(checkpointer=Checkpointer(storage))
    for turn in range(40):
        app.invoke({"log": [f"turn {turn}"]}, config("t"))
        app.invoke(Command(resume="y"), config("t"))
    storage.reset()
    page = list(app.get_state_history(config("t"), limit=5))
    counts = storage.reset()
    assert [s.metadata["source"] for s in page] == ["loop", "loop", "loop", "loop", "input"]
    assert counts.calls["read_all"] == 0  # never the whole thread
    assert counts.calls["read"] <= 8  # the page's records, and the one each names as its parent
    assert page[0].values["log"][-1] == "b"


class Counter(TypedDict, total=False):
    count: int
    note: str


def counter_graph() -> StateGraph[Any]:
    g = StateGraph(Counter)
    g.add_node("bump", lambda s: {"count": s.get("count", 0) + 1, "note": f"at {s.get('count', 0) + 1}"})
    g.add_edge(START, "bump")
    g.add_edge("bump", END)
    return g


def test_a_cold_process_reads_an_ordinary_state_from_the_newest_record(tmp_path: Path) -> None:
    """A state with no append-only channel is whole in every record: a process that knows nothing of the thread
    reads the newest alone (a listing and one read), not the thread; a state with one reads the chain."""
    from statehitl.checkpoint import Checkpointer

    for turns in (3, 60):
        app = counter_graph().compile(checkpointer=FileCheckpointer(tmp_path / str(turns)))
        for _ in range(turns):
            app.invoke({}, config("t"))
        storage = CountingStorage(app.checkpointer.storage)
        cold = counter_graph().compile(checkpointer=Checkpointer(storage))
        snapshot = cold.get_state(config("t"))
        assert snapshot.values == {"count": turns, "note": f"at {turns}"}
        assert snapshot == app.get_state(config("t"))
        assert storage.counts.calls["read_all"] == 0
        assert storage.counts.calls["list"] + storage.counts.calls["read"] <= 3
        assert cold.invoke({}, config("t")) == {"count": turns + 1, "note": f"at {turns + 1}"}
    appended = CountingStorage(FileCheckpointer(tmp_path / "log").storage)
    logged = graph().compile(checkpointer=Checkpointer(appended))
    logged.invoke({"log": ["in"]}, config("t"))
    cold_log = graph().compile(checkpointer=Checkpointer(appended))
    appended.reset()
    assert cold_log.get_state(config("t")).values["log"] == ["in", "a"]
    assert appended.reset().calls["read_all"] == 1
