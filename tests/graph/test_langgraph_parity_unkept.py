"""What a run keeps only in memory: a channel declared ``Annotated[T, UntrackedValue]`` (any object, never
stored), and a run no checkpointer keeps, whose cancelled sync node's thread is left to end on its own. Programs
written once against each library's names, run on LangGraph and on statehitl, and compared."""

from __future__ import annotations

import asyncio
import operator
import threading
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import Log, config, langgraph_names, plain, statehitl_names

WAIT = 10.0
"""How long a program waits on an event that a wrong behaviour would never set (it then fails, not hangs)."""


def with_channels(names: SimpleNamespace, module: str) -> SimpleNamespace:
    channels = __import__(f"{module}.channels", fromlist=["UntrackedValue"])
    return SimpleNamespace(**vars(names), UntrackedValue=channels.UntrackedValue)


class Resource:
    """An object no checkpoint can hold (a lock inside)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()


def an_untracked_channel_holds_any_object(lg: SimpleNamespace) -> list[Any]:
    """``Annotated[Resource, UntrackedValue]`` (the class, as LangGraph's docs write it): a node writes an object
    no store can hold, the next node reads it, the run returns it; the thread's checkpoints leave it out."""

    State = TypedDict("State", {"log": Annotated[list[str], operator.add],  # noqa: UP013 (eager: names lg)
                                "resource": Annotated[Resource, lg.UntrackedValue]})

    def opens(state: Any) -> dict[str, Any]:
        return {"log": ["opened"], "resource": Resource("session")}

    def uses(state: Any) -> dict[str, Any]:
        return {"log": [f"used {state['resource'].name}"], "resource": Resource("next")}

    g = lg.StateGraph(State)
    g.add_node("opens", opens)
    g.add_node("uses", uses)
    g.add_edge(lg.START, "opens")
    g.add_edge("opens", "uses")
    app = g.compile(checkpointer=lg.InMemorySaver())
    result = app.invoke({"log": []}, config("1"))
    state = app.get_state(config("1"))
    history = [snapshot.values for snapshot in app.get_state_history(config("1"))]
    return [result["log"], result["resource"].name, state.values, history]


def a_cancelled_unkept_run_leaves_its_sync_nodes_thread(lg: SimpleNamespace) -> list[Any]:
    """Cancelling ``ainvoke`` of a graph with no checkpointer while a sync node sleeps in its worker thread:
    the caller is cancelled at once, the thread ends on its own afterwards, and the next node never runs."""
    timeline: list[str] = []
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow(state: Log) -> dict[str, Any]:
        timeline.append("node started")
        started.set()
        release.wait(WAIT)
        timeline.append("node ended")
        finished.set()
        return {"log": ["slow"]}

    g = lg.StateGraph(Log)
    g.add_node("slow", slow)
    g.add_node("after", lambda s: timeline.append("after ran") or {"log": ["after"]})
    g.add_edge(lg.START, "slow")
    g.add_edge("slow", "after")
    app = g.compile()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        call = asyncio.ensure_future(app.ainvoke({"log": []}))
        await loop.run_in_executor(None, started.wait, WAIT)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            timeline.append("caller cancelled")
        release.set()
        await loop.run_in_executor(None, finished.wait, WAIT)

    asyncio.run(main())
    return timeline


PROGRAMS = [an_untracked_channel_holds_any_object, a_cancelled_unkept_run_leaves_its_sync_nodes_thread]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_what_a_run_keeps_in_memory_is_as_on_langgraph(program: Any) -> None:
    ours = program(with_channels(statehitl_names(), "statehitl"))
    theirs = program(with_channels(langgraph_names(), "langgraph"))
    assert plain(ours) == plain(theirs)


def test_a_kept_run_waits_for_its_sync_nodes_thread() -> None:
    """statehitl's deliberate difference: a run a checkpointer keeps is cancelled only once its sync node's thread
    has ended (what the node returned is kept), so ``invoke(None)`` never runs the node again while it still
    runs (LangGraph leaves the thread behind there too: docs/langgraph.md, "Deliberate differences")."""
    names = statehitl_names()
    calls: list[str] = []
    started, release = threading.Event(), threading.Event()

    def slow(state: Log) -> dict[str, Any]:
        calls.append("slow")
        started.set()
        release.wait(WAIT)
        return {"log": ["slow"]}

    g = names.StateGraph(Log)
    g.add_node("slow", slow)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(names.START, "slow")
    g.add_edge("slow", "after")
    app = g.compile(checkpointer=names.InMemorySaver())

    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        call = asyncio.ensure_future(app.ainvoke({"log": []}, config("1")))
        await loop.run_in_executor(None, started.wait, WAIT)
        call.cancel()
        await asyncio.sleep(0.05)
        waiting = not call.done()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await call
        return [waiting, await app.ainvoke(None, config("1")), calls]

    assert asyncio.run(main()) == [True, {"log": ["slow", "after"]}, ["slow"]]
