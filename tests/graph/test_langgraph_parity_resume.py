"""How a stopped thread takes its next call, as LangGraph's own tests check it: programs written once against each
library's names, run on LangGraph and on statehitl, and compared.

New input on a thread stopped at a breakpoint starts a new run from its state (nothing was asked there, so no
answer is lost); a step that failed keeps its finished siblings' writes as pending, so continuing it runs only the
task that failed; a node that asked with ``interrupt()`` takes an answer, in an ``async`` program too.
"""

from __future__ import annotations

import asyncio
import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names


class Log(TypedDict):
    log: Annotated[list[str], operator.add]
    n: int


class Total(TypedDict):
    value: Annotated[int, operator.add]


def two_steps(lg: SimpleNamespace) -> Any:
    g = lg.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", lg.END)
    return g


def history(app: Any, cfg: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(h.metadata["step"], h.metadata["source"], h.next, h.values) for h in app.get_state_history(cfg)]


# -- the programs -----------------------------------------------------------------------------------


def new_input_at_a_breakpoint_starts_a_new_run(lg: SimpleNamespace) -> list[Any]:
    """At an ``interrupt_before``/``interrupt_after`` breakpoint, new input is applied to the thread's state and
    the graph runs from ``START`` again (the node it stopped before never runs for the old input); ``None`` then
    continues the new run past its own stop. The history shows both runs, each with its input checkpoint."""
    seen: list[Any] = []
    for stop in ({"interrupt_before": ["b"]}, {"interrupt_after": ["a"]}):
        app = two_steps(lg).compile(checkpointer=lg.InMemorySaver(), **stop)
        cfg = config("bp")
        seen.append(app.invoke({"log": ["in1"], "n": 1}, cfg))
        seen.append(app.invoke({"log": ["in2"], "n": 2}, cfg))
        state = app.get_state(cfg)
        seen.append((state.values, state.next, state.metadata["step"], state.metadata["source"]))
        seen.append(app.invoke(None, cfg))
        seen.append(history(app, cfg))
    return seen


def new_input_at_a_breakpoint_streams_and_runs_async(lg: SimpleNamespace) -> list[Any]:
    """The same from ``astream``: the new run's updates, its stop at the breakpoint (an empty ``__interrupt__``
    chunk), then ``ainvoke(None)`` finishing it."""

    async def main() -> list[Any]:
        app = two_steps(lg).compile(checkpointer=lg.InMemorySaver(), interrupt_before=["b"])
        cfg = config("bp-async")
        await app.ainvoke({"log": ["first"], "n": 1}, cfg)
        chunks = [chunk async for chunk in app.astream({"log": ["second"], "n": 2}, cfg)]
        return [chunks, await app.ainvoke(None, cfg), (await app.aget_state(cfg)).next]

    return asyncio.run(main())


def new_input_at_a_subgraphs_breakpoint_starts_the_parent_afresh(lg: SimpleNamespace) -> list[Any]:
    """A parent stopped because its subgraph's ``interrupt_before`` did takes new input as a new run of the
    parent; the subgraph, reached again, stops again, and ``None`` then runs it from the start (its node
    returns the subgraph's whole state, so the parent's reducer adds it again, in both libraries)."""

    class Shared(TypedDict):
        log: Annotated[list[str], operator.add]

    inner = lg.StateGraph(Shared)
    inner.add_node("x", lambda s: {"log": ["x"]})
    inner.add_node("y", lambda s: {"log": ["y"]})
    inner.add_edge(lg.START, "x")
    inner.add_edge("x", "y")
    g = lg.StateGraph(Shared)
    g.add_node("pre", lambda s: {"log": ["pre"]})
    g.add_node("sub", inner.compile(interrupt_before=["y"]))
    g.add_edge(lg.START, "pre")
    g.add_edge("pre", "sub")
    app, cfg = g.compile(checkpointer=lg.InMemorySaver()), config("sub-bp")
    seen: list[Any] = []
    for given in ({"log": ["one"]}, {"log": ["two"]}, None):
        seen.append(app.invoke(given, cfg))
        state = app.get_state(cfg)
        seen.append((state.values, state.next))
    return seen


class Sometimes:
    """A node that returns ``result`` or raises it after counting the call (a test reads ``calls``)."""

    def __init__(self, result: dict[str, Any] | Exception) -> None:
        self.result = result
        self.calls = 0

    def __call__(self, state: Total) -> dict[str, Any]:
        self.calls += 1
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def a_failed_step_keeps_its_finished_siblings_writes(lg: SimpleNamespace) -> list[Any]:
    """Two nodes run in one step and one fails (after its retries): the thread's state shows the finished one's
    write applied and the failed one next, with each task's result or error; the config of that state reads the
    checkpoint without them. Continuing runs only the failed node, and once it succeeds both writes count. Under
    each durability the number of checkpoints is LangGraph's."""
    seen: list[Any] = []
    for durability in ("sync", "async", "exit"):
        one, two = Sometimes({"value": 2}), Sometimes(ConnectionError("not now"))
        g = lg.StateGraph(Total)
        g.add_node("one", one)
        g.add_node("two", two, retry_policy=lg.RetryPolicy(max_attempts=2, initial_interval=0, jitter=False))
        g.add_edge(lg.START, "one")
        g.add_edge(lg.START, "two")
        saver = lg.InMemorySaver()
        app, cfg = g.compile(checkpointer=saver), config("failed")
        for given in ({"value": 1}, None):  # the run, then continuing it (the failing node fails again)
            try:
                app.invoke(given, cfg, durability=durability)
            except ConnectionError as exc:
                seen.append(("raised", str(exc), one.calls, two.calls))
            state = app.get_state(cfg)
            seen.append((state.values, state.next, state.metadata,
                         [(t.name, t.error, t.result) for t in state.tasks]))
            before = app.get_state(state.config)
            seen.append((before.values, before.next))
        seen.append(sorted((channel, repr(value)) for _, channel, value in saver.get_tuple(cfg).pending_writes))
        two.result = {"value": 3}
        seen.append(app.invoke(None, cfg, durability=durability))
        seen.append(([c.metadata for c in saver.list(cfg)], one.calls, two.calls))
    return seen


def an_async_node_asks_and_takes_the_answer(lg: SimpleNamespace) -> list[Any]:
    """An async node with a ``RetryPolicy`` that calls ``interrupt()`` is not retried for it; the stream stops
    with the interrupt, the thread waits on that node, and ``Command(resume=)`` is what the node returns."""
    calls: list[str] = []

    class Market(TypedDict):
        my_key: Annotated[str, operator.add]
        market: str

    async def ask(state: Market) -> dict[str, Any]:
        calls.append(state["market"])
        return {"my_key": lg.interrupt("why?") if state["market"] == "DE" else " fine"}

    g = lg.StateGraph(Market)
    g.add_node("ask", ask, retry_policy=lg.RetryPolicy())
    g.add_edge(lg.START, "ask")
    app = g.compile(checkpointer=lg.InMemorySaver())

    async def main() -> list[Any]:
        cfg = config("asks")
        stopped = [chunk async for chunk in app.astream({"my_key": "v", "market": "DE"}, cfg)]
        state = await app.aget_state(cfg)
        waiting = (state.values, state.next, [(t.name, len(t.interrupts)) for t in state.tasks])
        answered = [chunk async for chunk in app.astream(lg.Command(resume=" yes"), cfg)]
        return [stopped, waiting, answered, (await app.aget_state(cfg)).values, list(calls)]

    return asyncio.run(main())


PROGRAMS = [new_input_at_a_breakpoint_starts_a_new_run, new_input_at_a_breakpoint_streams_and_runs_async,
            new_input_at_a_subgraphs_breakpoint_starts_the_parent_afresh,
            a_failed_step_keeps_its_finished_siblings_writes, an_async_node_asks_and_takes_the_answer]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    assert plain(program(statehitl_names())) == plain(program(langgraph_names()))
