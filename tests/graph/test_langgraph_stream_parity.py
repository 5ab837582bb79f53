"""Streaming and cancellation as LangGraph does them: programs written once against each library's names,
run on LangGraph and on statehitl, and compared (as ``test_langgraph_parity``'s are).

What these programs observe never depends on a clock: a node that must still be running when something
happens waits on an event the reader (or a sibling) sets, with a generous timeout whose expiry shows up
in what the program returns, so a stream that is not incremental, or a sibling not cancelled, gives a
different answer instead of a slower one.
"""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from contextlib import aclosing
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.types import StreamWriter
from test_langgraph_parity import config, langgraph_names, plain, statehitl_names

WAIT = 10.0
"""How long a node waits for what the reader does; reached only when the stream holds chunks back."""

EAGER = ["custom"]
"""Asked for by a program whose node waits on the reader while a sibling's chunk is out: LangGraph's sync
stream hands a finished task's chunks over at once only when it watches its stream (``custom``,
``messages`` or subgraphs asked for); otherwise it may hold them until another task ends, by a race of its
own. No node of these programs writes custom chunks."""


def with_errors(names: SimpleNamespace, module: str) -> SimpleNamespace:
    errors = __import__(f"{module}.errors", fromlist=["NodeCancelledError"])
    return SimpleNamespace(**vars(names), NodeCancelledError=errors.NodeCancelledError)


class Log(TypedDict):
    log: Annotated[list, operator.add]


def shown(chunk: Any) -> Any:
    """A stream chunk without what each library makes its own way: task ids, clocks, checkpoint configs."""
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        mode, payload = chunk
        if mode in ("tasks", "debug"):
            inner = payload["payload"] if mode == "debug" else payload
            what = {k: [i["value"] for i in v] if k == "interrupts" else v for k, v in inner.items()
                    if k not in ("id", "config", "parent_config", "tasks", "metadata")}
            return (mode, payload["type"], payload["step"], what) if mode == "debug" else (mode, what)
        return (mode, plain(payload))
    return plain(chunk)


# -- the programs -----------------------------------------------------------------------------------


def sync_stream_is_incremental(lg: SimpleNamespace) -> list[Any]:
    """``stream()`` yields a node's chunk while the node still runs: the node goes on only once the reader
    has it."""
    reader_has_it = threading.Event()

    def node(state: Log, writer: StreamWriter) -> dict[str, Any]:
        writer("before the wait")
        writer(f"the reader had it: {reader_has_it.wait(WAIT)}")
        return {"log": ["node"]}

    g = lg.StateGraph(Log)
    g.add_node("node", node)
    g.add_edge(lg.START, "node")
    seen = []
    for chunk in g.compile().stream({"log": []}, stream_mode=["custom", "updates"]):
        seen.append(chunk)
        if chunk == ("custom", "before the wait"):
            reader_has_it.set()
    return seen


def subgraph_node_does_not_hold_up_a_sibling(lg: SimpleNamespace) -> list[Any]:
    """A sync node of a subgraph that blocks does not hold back its parent's other task's chunks: it waits
    for the reader to have seen them."""
    sibling_seen = threading.Event()

    def inner_slow(state: Log) -> dict[str, Any]:
        return {"log": [f"inner saw the sibling's chunk read: {sibling_seen.wait(WAIT)}"]}

    inner = lg.StateGraph(Log)
    inner.add_node("inner_slow", inner_slow)
    inner.add_edge(lg.START, "inner_slow")
    g = lg.StateGraph(Log)
    g.add_node("inner", inner.compile())
    g.add_node("sibling", lambda s: {"log": ["sibling"]})
    g.add_edge(lg.START, "inner")
    g.add_edge(lg.START, "sibling")
    seen = []
    for namespace, chunk in g.compile().stream({"log": []}, stream_mode="updates", subgraphs=True):
        seen.append((len(namespace), chunk))
        if "sibling" in chunk:
            sibling_seen.set()
    return seen


def a_failure_cancels_running_siblings(lg: SimpleNamespace) -> list[Any]:
    """A node that raises cancels its siblings still running and surfaces at once; what a finished sibling
    wrote is kept, and the retry runs the failed node and the cancelled one."""
    log: list[str] = []
    run = {"first": True}

    async def main() -> list[Any]:
        fast_done = asyncio.Event()

        async def slow(state: Log) -> dict[str, Any]:
            try:
                if run["first"]:
                    await asyncio.sleep(WAIT)
                log.append("slow ran")
                return {"log": ["slow"]}
            except asyncio.CancelledError:
                log.append("slow cancelled")
                raise

        async def fast(state: Log) -> dict[str, Any]:
            fast_done.set()
            return {"log": ["fast"]}

        async def bad(state: Log) -> dict[str, Any]:
            await fast_done.wait()
            if run["first"]:
                raise ValueError("bad")
            return {"log": ["bad"]}

        g = lg.StateGraph(Log)
        for name, fn in (("slow", slow), ("fast", fast), ("bad", bad)):
            g.add_node(name, fn)
            g.add_edge(lg.START, name)
        app = g.compile(checkpointer=lg.InMemorySaver())
        try:
            await app.ainvoke({"log": []}, config("f"))
        except ValueError as exc:
            seen: list[Any] = [str(exc), list(log)]
        run["first"] = False
        state = await app.aget_state(config("f"))
        seen += [state.values, sorted(state.next), await app.ainvoke(None, config("f")), log]
        return seen

    return asyncio.run(main())


def a_failure_seen_in_the_stream(lg: SimpleNamespace) -> list[Any]:
    """The chunks of a step whose node fails: every task's start, the finished task's update and result, the
    failed task's result with its error; none for the cancelled one."""

    async def main() -> list[Any]:
        fast_done = asyncio.Event()

        async def slow(state: Log) -> None:
            await asyncio.sleep(WAIT)

        async def fast(state: Log) -> dict[str, Any]:
            fast_done.set()
            return {"log": ["fast"]}

        async def bad(state: Log) -> None:
            await fast_done.wait()
            raise ValueError("bad")

        g = lg.StateGraph(Log)
        for name, fn in (("slow", slow), ("fast", fast), ("bad", bad)):
            g.add_node(name, fn)
            g.add_edge(lg.START, name)
        chunks = []
        try:
            async for chunk in g.compile().astream({"log": []}, stream_mode=["updates", "tasks"]):
                chunks.append(shown(chunk))
        except ValueError as exc:
            chunks.append(repr(exc))
        return [{k: repr(v) if k == "error" else v for k, v in c[1].items()} if c[0] == "tasks" else c
                for c in chunks[:-1]] + chunks[-1:]

    return asyncio.run(main())


def closing_astream_cancels_and_keeps_finished_writes(lg: SimpleNamespace) -> list[Any]:
    """Closing ``astream`` early cancels the nodes still running and keeps what finished nodes wrote as the
    step's pending writes: the thread goes on from there with ``invoke(None, config)``."""
    log: list[str] = []
    first = [True]

    async def main() -> list[Any]:
        async def quick(state: Log) -> dict[str, Any]:
            log.append("quick")
            return {"log": ["quick"]}

        async def long(state: Log) -> dict[str, Any]:
            log.append("long started")
            try:
                if first.pop() if first else False:
                    await asyncio.sleep(WAIT)
            except asyncio.CancelledError:
                log.append("long cancelled")
                raise
            return {"log": ["long"]}

        g = lg.StateGraph(Log)
        g.add_node("quick", quick)
        g.add_node("long", long)
        g.add_node("after", lambda s: {"log": ["after"]})
        g.add_edge(lg.START, "quick")
        g.add_edge(lg.START, "long")
        g.add_edge("quick", "after")
        app = g.compile(checkpointer=lg.InMemorySaver())
        got = []
        async with aclosing(app.astream({"log": ["in"]}, config("c"))) as stream:
            async for chunk in stream:
                got.append(chunk)
                break
        state = await app.aget_state(config("c"))
        seen: list[Any] = [got, list(log), state.values, state.next, state.metadata["source"], state.metadata["step"]]
        seen += [await app.ainvoke(None, config("c")), log]
        return seen

    return asyncio.run(main())


def closing_stream_waits_for_a_running_sync_node(lg: SimpleNamespace) -> list[Any]:
    """Breaking out of ``stream()`` returns once a sync node still running in its worker thread has ended
    (it cannot be stopped), and what it wrote is kept with the finished node's."""
    calls: list[str] = []
    reader_has_quick = threading.Event()

    def quick(state: Log) -> dict[str, Any]:
        calls.append("quick")
        return {"log": ["quick"]}

    def slow(state: Log) -> dict[str, Any]:
        calls.append("slow started")
        reader_has_quick.wait(WAIT)
        time.sleep(0.05)  # still running when the reader leaves
        calls.append("slow ended")
        return {"log": ["slow"]}

    g = lg.StateGraph(Log)
    g.add_node("quick", quick)
    g.add_node("slow", slow)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(lg.START, "quick")
    g.add_edge(lg.START, "slow")
    g.add_edge("quick", "after")
    app = g.compile(checkpointer=lg.InMemorySaver())
    got = []
    for chunk in app.stream({"log": []}, config("s"), stream_mode=[*EAGER, "updates"]):
        got.append(chunk)
        reader_has_quick.set()
        break
    seen: list[Any] = [got, sorted(calls)]
    state = app.get_state(config("s"))
    seen += [state.values, state.next, app.invoke(None, config("s")), sorted(calls)]
    return seen


def resumes_yield_finished_work_again(lg: SimpleNamespace) -> list[Any]:
    """On each resume a step's finished tasks' updates come first, marked cached; each interrupting task
    has chunks of its own; the step's tasks all start before any of them runs; updates come before their
    task's result; a step's values before its checkpoint."""
    fast_seen, a_seen = threading.Event(), threading.Event()

    def ask_a(state: Log) -> dict[str, Any]:
        fast_seen.wait(WAIT)  # the tasks end in one order in every run: fast, a, b
        return {"log": [lg.interrupt("a")]}

    def ask_b(state: Log) -> dict[str, Any]:
        a_seen.wait(WAIT)
        return {"log": [lg.interrupt("b")]}

    g = lg.StateGraph(Log)
    g.add_node("fast", lambda s: {"log": ["fast"]})
    g.add_node("ask_a", ask_a)
    g.add_node("ask_b", ask_b)
    g.add_node("after", lambda s: {"log": ["after"]})
    for name in ("fast", "ask_a", "ask_b"):
        g.add_edge(lg.START, name)
        g.add_edge(name, "after")
    app = g.compile(checkpointer=lg.InMemorySaver())

    def run(given: Any) -> list[Any]:
        for event in (fast_seen, a_seen):
            event.clear()
        chunks = []
        for mode, chunk in app.stream(given, config("r"), stream_mode=[*EAGER, "updates", "values", "tasks", "debug"]):
            if mode == "updates":
                (fast_seen if "fast" in chunk else a_seen if "ask_a" in chunk or "__interrupt__" in chunk
                 else threading.Event()).set()
            if mode != "debug" or chunk["type"] != "checkpoint":
                chunks.append(shown((mode, chunk)))
        return chunks

    seen = [run({"log": ["in"]})]
    for value in ("a", "b"):
        waiting = {i.value: i.id for i in app.get_state(config("r")).interrupts}
        seen.append(run(lg.Command(resume={waiting[value]: value.upper()})))
    return seen


def checkpoints_come_after_values(lg: SimpleNamespace) -> list[Any]:
    """``debug`` chunks in LangGraph's order: the input checkpoint, the input's values, the first step's
    checkpoint, the tasks; after each step its values, then its checkpoint; on a resume the checkpoint it
    goes on from again."""
    g = lg.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=lg.InMemorySaver())

    def kinds(given: Any) -> list[Any]:
        return [(mode, chunk["type"], chunk["step"]) if mode == "debug" else (mode, plain(chunk))
                for mode, chunk in app.stream(given, config("k"), stream_mode=["debug", "values"])]

    return [kinds({"log": ["in"]}), kinds(lg.Command(resume="yes"))]


def no_values_chunk_for_an_input_of_nothing(lg: SimpleNamespace) -> list[Any]:
    g = lg.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = [list(app.stream({}, config("e"), stream_mode=["updates", "values"])),
            list(app.stream(lg.Command(resume="fine"), config("e"), stream_mode=["updates", "values"])),
            list(app.stream({"log": []}, config("n"), stream_mode="values"))]
    return seen


def several_modes_in_order(lg: SimpleNamespace) -> list[Any]:
    """``values``, ``updates`` and ``debug`` together: a step's tasks first, each task's update before its
    result, the step's values last (no checkpointer: no checkpoint chunks)."""
    two_seen = threading.Event()

    def one(state: Log) -> dict[str, Any]:
        two_seen.wait(WAIT)  # ends once the reader has two's end: its update comes second
        return {"log": ["one"]}

    g = lg.StateGraph(Log)
    g.add_node("first", lambda s: {"log": ["first"]})
    g.add_node("one", one)
    g.add_node("two", lambda s: {"log": ["two"]})
    g.add_edge(lg.START, "first")
    g.add_edge("first", "one")
    g.add_edge("first", "two")
    seen = []
    for chunk in g.compile().stream({"log": ["in"]}, stream_mode=[*EAGER, "values", "updates", "debug"]):
        seen.append(shown(chunk))
        if chunk[0] == "debug" and chunk[1]["type"] == "task_result" and chunk[1]["payload"]["name"] == "two":
            two_seen.set()
    return seen


def subgraph_chunks_only_with_subgraphs(lg: SimpleNamespace) -> list[Any]:
    """A subgraph's custom chunks and interrupts reach the reader under its namespace with ``subgraphs=True``,
    and not at all without it."""

    def inner_a(state: Log) -> dict[str, Any]:
        lg.get_stream_writer()("from inner")
        return {"log": ["ia"]}

    inner = lg.StateGraph(Log)
    inner.add_node("inner_a", inner_a)
    inner.add_node("inner_ask", lambda s: {"log": [lg.interrupt("q")]})
    inner.add_edge(lg.START, "inner_a")
    inner.add_edge("inner_a", "inner_ask")
    g = lg.StateGraph(Log)
    g.add_node("outer", lambda s: (lg.get_stream_writer()("from outer"), {"log": ["o"]})[1])
    g.add_node("inner", inner.compile())
    g.add_edge(lg.START, "outer")
    g.add_edge("outer", "inner")
    app = g.compile(checkpointer=lg.InMemorySaver())
    seen = []
    for sub in (False, True):
        for given in ({"log": ["x"]}, lg.Command(resume="A")):
            chunks = app.stream(given, config(str(sub)), stream_mode=["custom", "updates", "values"], subgraphs=sub)
            seen.append([(len(c[0]), *plain(c[1:])) if sub else plain(c) for c in chunks])
    return seen


def a_node_raising_cancelled_error_fails_the_run(lg: SimpleNamespace) -> list[Any]:
    """A node that raises ``asyncio.CancelledError`` itself fails the run with ``NodeCancelledError``."""

    async def boom(state: Log) -> None:
        raise asyncio.CancelledError("my own")

    async def ok(state: Log) -> dict[str, Any]:
        return {"log": ["ok"]}

    seen = []
    for siblings in (False, True):
        g = lg.StateGraph(Log)
        g.add_node("boom", boom)
        g.add_edge(lg.START, "boom")
        if siblings:
            g.add_node("ok", ok)
            g.add_edge(lg.START, "ok")
        try:
            asyncio.run(g.compile().ainvoke({"log": []}))
        except lg.NodeCancelledError as exc:
            seen.append(("NodeCancelledError", exc.node))
    return seen


PROGRAMS = [sync_stream_is_incremental, subgraph_node_does_not_hold_up_a_sibling, a_failure_cancels_running_siblings,
            a_failure_seen_in_the_stream, closing_astream_cancels_and_keeps_finished_writes,
            closing_stream_waits_for_a_running_sync_node, resumes_yield_finished_work_again,
            checkpoints_come_after_values, no_values_chunk_for_an_input_of_nothing, several_modes_in_order,
            subgraph_chunks_only_with_subgraphs, a_node_raising_cancelled_error_fails_the_run]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_the_program_sees_what_it_sees_on_langgraph(program: Any) -> None:
    ours = program(with_errors(statehitl_names(), "statehitl"))
    theirs = program(with_errors(langgraph_names(), "langgraph"))
    assert plain(ours) == plain(theirs)
