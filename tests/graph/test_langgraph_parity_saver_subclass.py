"""A LangGraph user's saver subclass (``class MySaver(InMemorySaver)`` overriding ``get_tuple``, ``put``,
``put_writes``, ``get_next_version`` or their async twins): programs written once against each library's names,
run on LangGraph and on statehitl, and compared. The run reads and writes through the overrides: their errors
surface, their delays are awaited, a cancelled run's last write is not cut short."""

from __future__ import annotations

import asyncio
import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from test_langgraph_parity import Log, config, langgraph_names, plain, statehitl_names


class Text(TypedDict):
    text: Annotated[str, operator.add]


def _text_graph(lg: SimpleNamespace, *, parallel: bool = False) -> Any:
    g = lg.StateGraph(Text)
    g.add_node("agent", lambda s: {"text": "a"})
    g.add_edge(lg.START, "agent")
    if parallel:
        g.add_node("parallel", lambda s: {"text": "p"})
        g.add_edge(lg.START, "parallel")
    return g


def faulty_overrides_stop_the_run(lg: SimpleNamespace) -> list[Any]:
    """Each overridden method's error is the run's error, and a failed ``put`` stores nothing."""

    class FaultyGet(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def get_tuple(self, config: Any) -> Any:
            raise ValueError("faulty get_tuple")

    class FaultyPut(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            raise ValueError("faulty put")

    class FaultyWrites(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            raise ValueError("faulty put_writes")

    class FaultyVersion(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def get_next_version(self, current: Any, channel: Any = None) -> Any:
            raise ValueError("faulty get_next_version")

    seen: list[Any] = []
    for saver, parallel, durability in [(FaultyGet, False, None), (FaultyPut, False, None),
                                        (FaultyVersion, False, None), (FaultyWrites, True, "async")]:
        app = _text_graph(lg, parallel=parallel).compile(checkpointer=saver())
        try:
            app.invoke({"text": ""}, config("1"), durability=durability)
        except ValueError as exc:
            seen.append(str(exc))
        if saver is FaultyPut:
            state = app.get_state(config("1"))
            seen.append((state.values, state.next))
    return seen


def overrides_that_call_super_keep_the_thread(lg: SimpleNamespace) -> list[Any]:
    """A sync saver subclass passing every call on to ``super()``: the run and its thread as with the plain
    saver, and every checkpoint the run keeps went through ``put`` (its last one, the state ``get_state``
    reads)."""
    puts: list[Any] = []

    class Counting(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def get_tuple(self, config: Any) -> Any:
            return super().get_tuple(config)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            puts.append((metadata["source"], metadata["step"], checkpoint["channel_values"].get("text")))
            return super().put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            super().put_writes(config, writes, task_id, task_path)

    app = _text_graph(lg).compile(checkpointer=Counting())
    seen: list[Any] = [app.invoke({"text": "x"}, config("1"), durability="exit")]
    state = app.get_state(config("1"))
    seen.extend([(state.values, state.next), puts[-1], app.invoke({"text": "y"}, config("1"), durability="exit")])
    return seen


def async_overrides_see_each_step(lg: SimpleNamespace) -> list[Any]:
    """An async saver subclass logging what a run hands it: each checkpoint (source, step, channels; the run's
    input first) and, before it, the writes of the tasks that made it, for each durability (LangGraph's branch
    channels left out: statehitl keeps none)."""
    log: list[Any] = []

    class Logging(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            log.append(("put", metadata["source"], metadata["step"],
                        {k: v for k, v in checkpoint["channel_values"].items() if not k.startswith("branch:")}))
            return await super().aput(config, checkpoint, metadata, new_versions)

        async def aput_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            log.append(("writes", [(c, v) for c, v in writes if not c.startswith("branch:")]))
            await super().aput_writes(config, writes, task_id, task_path)

    g = lg.StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(lg.START, "a")
    g.add_edge("a", "b")
    app = g.compile(checkpointer=Logging())
    seen: list[Any] = []
    for durability in ("sync", "async", "exit"):
        log.clear()
        seen.extend([asyncio.run(app.ainvoke({"log": [durability]}, config(durability), durability=durability)),
                     list(log)])
    return seen


def a_cancelled_run_finishes_its_last_put(lg: SimpleNamespace) -> list[Any]:
    """Cancelling a run (its task, or the task reading its stream) while a node runs: the node is cancelled,
    then the run's checkpoint goes through the saver's slow ``aput`` to its end before the cancellation
    reaches the caller; ``invoke(None)`` then runs the node again."""
    logs: list[str] = []

    class SlowPut(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            logs.append("aput start")
            try:
                await asyncio.sleep(0.2)
                return await super().aput(config, checkpoint, metadata, new_versions)
            finally:
                logs.append("aput end")

    async def main() -> list[Any]:
        started = asyncio.Event()

        async def slow(state: Log) -> dict[str, Any]:
            logs.append("node start")
            started.set()
            try:
                await asyncio.sleep(5 if len(logs) < 4 else 0)
            finally:
                logs.append("node end")
            return {"log": ["slow"]}

        g = lg.StateGraph(Log)
        g.add_node("slow", slow)
        g.add_edge(lg.START, "slow")
        app = g.compile(checkpointer=SlowPut())
        seen: list[Any] = []
        for call in (lambda: app.ainvoke({"log": []}, config("1"), durability="exit"),
                     lambda: app.astream({"log": []}, config("2"), durability="exit").__anext__()):
            started.clear()
            logs.clear()
            task = asyncio.ensure_future(call())
            await started.wait()
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                seen.append(list(logs))
        seen.append(await app.ainvoke(None, config("1")))
        return seen

    return asyncio.run(main())


def an_interrupted_thread_through_a_saver_subclass(lg: SimpleNamespace) -> list[Any]:
    """Ask, answer, edit: the checkpoints of the stop, the resume and ``update_state`` all go through ``put``
    (statehitl's claim and answer records are its own, not checkpoints), and the thread reads as on LangGraph."""
    puts: list[Any] = []

    class Logging(lg.InMemorySaver):  # type: ignore[name-defined,misc]
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            puts.append((metadata["source"], metadata["step"], checkpoint["channel_values"].get("log")))
            return super().put(config, checkpoint, metadata, new_versions)

    g = lg.StateGraph(Log)
    g.add_node("ask", lambda s: {"log": [lg.interrupt("ok?")]})
    g.add_edge(lg.START, "ask")
    app = g.compile(checkpointer=Logging())
    seen: list[Any] = [app.invoke({"log": ["x"]}, config("1")), app.invoke(lg.Command(resume="yes"), config("1"))]
    app.update_state(config("1"), {"log": ["edit"]})
    return [*seen, app.get_state(config("1")).values, puts]


PROGRAMS = [faulty_overrides_stop_the_run, an_interrupted_thread_through_a_saver_subclass,
            overrides_that_call_super_keep_the_thread, async_overrides_see_each_step,
            a_cancelled_run_finishes_its_last_put]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_a_saver_subclass_is_used_as_on_langgraph(program: Any) -> None:
    ours = program(statehitl_names())
    theirs = program(langgraph_names())
    assert plain(ours) == plain(theirs)
