"""LangGraph programs that read the checkpointer directly (``get_tuple``, ``list``, ``get`` and the async twins),
written once against a namespace of each library's names and a saver, run on LangGraph's ``InMemorySaver`` and on
each statehitl checkpointer (tests/graph/test_langgraph_parity_saver.py, tests/backends/test_saver_backends.py).

What each library makes its own way is taken out of what is compared: checkpoint ids and task ids (each id is
replaced by the order it was first seen in), times, channel versions, and LangGraph's internal ``branch:to:``
channels and writes (statehitl routes without channels).
"""

from __future__ import annotations

import asyncio
import importlib
import operator
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

NAMES = {"END": "graph", "START": "graph", "StateGraph": "graph", "interrupt": "types", "Command": "types"}


def names(lib: str) -> SimpleNamespace:
    """The names the programs use, from ``lib`` (``langgraph`` or ``statehitl``): the same module paths."""
    return SimpleNamespace(**{name: getattr(importlib.import_module(f"{lib}.{module}"), name)
                              for name, module in NAMES.items()})


class Seen:
    """What a program saw, with each library's own ids replaced by the order they were first seen in."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def label(self, value: str) -> str:
        return self.ids.setdefault(value, f"#{len(self.ids)}")

    def config(self, config: dict[str, Any] | None) -> Any:
        if config is None:
            return None
        configurable = dict(config["configurable"])
        if "checkpoint_id" in configurable:
            configurable["checkpoint_id"] = self.label(configurable["checkpoint_id"])
        return configurable

    def tuple(self, found: Any) -> Any:
        """A ``CheckpointTuple`` as compared: its config, checkpoint (id, format version, values and the
        channels its step wrote), metadata, parent config and pending writes (in a stable order)."""
        if found is None:
            return None
        checkpoint = found.checkpoint
        values = {k: v for k, v in checkpoint["channel_values"].items() if not k.startswith("branch:")}
        updated = sorted(c for c in checkpoint.get("updated_channels") or [] if not c.startswith("branch:"))
        return {"config": self.config(found.config), "id": self.label(checkpoint["id"]), "v": checkpoint["v"],
                "values": values, "updated": updated, "metadata": found.metadata,
                "parent": self.config(found.parent_config), "writes": self.writes(found.pending_writes)}

    def writes(self, writes: list[tuple[str, str, Any]]) -> list[Any]:
        """The writes in a stable order, tasks named by the order they first write in it. LangGraph's
        ``__resume__`` writes (the answers, which statehitl keeps as the next checkpoint's audit) are left out."""
        tasks: dict[str, str] = {}
        kept = sorted(((task, channel, _value(value)) for task, channel, value in writes
                       if not channel.startswith("branch:") and channel != "__resume__"), key=lambda w: repr(w[1:]))
        return [(tasks.setdefault(task, f"task{len(tasks)}"), channel, value) for task, channel, value in kept]


def _value(value: Any) -> Any:
    if isinstance(value, list) and value and all(type(v).__name__ == "Interrupt" for v in value):
        return [("interrupt", v.value) for v in value]
    return value


class Counter(TypedDict):
    value: Annotated[int, operator.add]


def _chain(lg: SimpleNamespace, saver: Any) -> Any:
    def one(state: Counter) -> dict[str, Any]:
        return {"value": 2}

    def two(state: Counter) -> dict[str, Any]:
        return {"value": 3}

    g = lg.StateGraph(Counter)
    g.add_node("one", one)
    g.add_node("two", two)
    g.add_edge(lg.START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", lg.END)
    return g.compile(checkpointer=saver)


def listed_history(lg: SimpleNamespace, saver: Any) -> list[Any]:
    """Two runs on a thread, one on another: ``list`` newest first, with ``limit``, ``before``, ``filter``, a
    config naming one checkpoint and no config (every thread); the tuples' configs and parents are those of
    ``get_state_history``."""
    app = _chain(lg, saver)
    t1, t2 = {"configurable": {"thread_id": "1"}}, {"configurable": {"thread_id": "2"}}
    app.invoke({"value": 1}, t1)
    app.invoke({"value": 10}, t1)
    app.invoke({"value": 5}, t2)
    seen = Seen()
    every = [seen.tuple(t) for t in saver.list(t1)]
    history = [(seen.config(s.config), seen.config(s.parent_config), s.metadata) for s in app.get_state_history(t1)]
    past = list(saver.list(t1))[3].config
    return [every, history, [seen.tuple(t) for t in saver.list(t1, limit=3)],
            [seen.tuple(t) for t in saver.list(t1, before=past)],
            [seen.tuple(t) for t in saver.list(t1, before=past, limit=2)],
            [seen.tuple(t) for t in saver.list(t1, filter={"source": "input"})],
            [seen.tuple(t) for t in saver.list(t1, filter={"step": 1, "source": "loop"})],
            [seen.tuple(t) for t in saver.list(past)],
            [seen.tuple(t) for t in saver.list(t2)],
            sorted(repr(seen.tuple(t)["metadata"]) for t in saver.list(None)), len(list(saver.list(None, limit=5))),
            list(saver.list({"configurable": {"thread_id": "unknown"}}))]


def read_one(lg: SimpleNamespace, saver: Any) -> list[Any]:
    """``get_tuple`` and ``get``: the current checkpoint for a config without an id, the one named by a config
    from ``get_state_history`` or ``list``, None for a thread or id that is not there."""
    app = _chain(lg, saver)
    t1 = {"configurable": {"thread_id": "1"}}
    app.invoke({"value": 1}, t1)
    seen = Seen()
    current = saver.get_tuple(t1)
    history = list(app.get_state_history(t1))
    named = [seen.tuple(saver.get_tuple(s.config)) for s in history]
    return [seen.tuple(current), seen.config(app.get_state(t1).config), named,
            [{k: v for k, v in saver.get(s.config)["channel_values"].items() if not k.startswith("branch:")}
             for s in history],
            [seen.label(saver.get(s.config)["id"]) == seen.label(s.config["configurable"]["checkpoint_id"])
             for s in history],
            saver.get(t1)["channel_values"], saver.get_tuple({"configurable": {"thread_id": "nobody"}}),
            saver.get({"configurable": {"thread_id": "nobody"}})]


class Pair(TypedDict):
    value: Annotated[int, operator.add]


def failed_step(lg: SimpleNamespace, saver: Any) -> list[Any]:
    """A step whose one task fails while its sibling finishes: the current checkpoint keeps the sibling's
    write and the error as pending writes (of two tasks), its values are those before the step. The failing
    task fails once its sibling has finished (a failure cancels the siblings still running, in both)."""
    finished = threading.Event()

    def good(state: Pair) -> dict[str, Any]:
        finished.set()
        return {"value": 2}

    def bad(state: Pair) -> dict[str, Any]:
        finished.wait(30)
        time.sleep(0.3)  # good's return reaches its step before the failure cancels what still runs
        raise ConnectionError("I'm not good")

    g = lg.StateGraph(Pair)
    g.add_node("good", good)
    g.add_node("bad", bad)
    g.add_edge(lg.START, "good")
    g.add_edge(lg.START, "bad")
    app = g.compile(checkpointer=saver)
    t1 = {"configurable": {"thread_id": "f"}}
    try:
        app.invoke({"value": 1}, t1)
    except ConnectionError as exc:
        raised = str(exc)
    seen = Seen()
    current = saver.get_tuple(t1)
    tasks = {w[1]: w[0] for w in current.pending_writes}
    return [raised, seen.tuple(current), tasks["value"] != tasks["__error__"], len(list(saver.list(t1)))]


class Asked(TypedDict):
    answer: str
    log: Annotated[list[str], operator.add]


def interrupted(lg: SimpleNamespace, saver: Any) -> list[Any]:
    """A node asks with ``interrupt()``: the checkpoint it stopped on keeps the question as a pending
    ``__interrupt__`` write; after the resume, the thread's checkpoints as ``list`` shows them."""
    def ask(state: Asked) -> dict[str, Any]:
        return {"answer": lg.interrupt("name?"), "log": ["asked"]}

    def done(state: Asked) -> dict[str, Any]:
        return {"log": [f"hello {state['answer']}"]}

    g = lg.StateGraph(Asked)
    g.add_node("ask", ask)
    g.add_node("done", done)
    g.add_edge(lg.START, "ask")
    g.add_edge("ask", "done")
    app = g.compile(checkpointer=saver)
    t1 = {"configurable": {"thread_id": "i"}}
    app.invoke({"log": ["start"]}, t1)
    seen = Seen()
    waiting = seen.tuple(saver.get_tuple(t1))
    app.invoke(lg.Command(resume="ann"), t1)
    return [waiting, [seen.tuple(t) for t in saver.list(t1)], saver.get(t1)["channel_values"]]


def async_twins(lg: SimpleNamespace, saver: Any) -> list[Any]:
    """``aget_tuple``, ``alist`` and ``aget`` give what their sync twins give."""
    app = _chain(lg, saver)
    t1 = {"configurable": {"thread_id": "a"}}

    async def read() -> list[Any]:
        await app.ainvoke({"value": 1}, t1)
        seen = Seen()
        listed = [t async for t in saver.alist(t1)]
        limited = [seen.tuple(t) async for t in saver.alist(t1, limit=2, filter={"source": "loop"})]
        return [[seen.tuple(t) for t in listed], limited, seen.tuple(await saver.aget_tuple(t1)),
                seen.tuple(await saver.aget_tuple(listed[2].config)), (await saver.aget(t1))["channel_values"],
                await saver.aget_tuple({"configurable": {"thread_id": "nobody"}}),
                await saver.aget({"configurable": {"thread_id": "nobody"}})]

    return asyncio.run(read())


PROGRAMS: list[Callable[[SimpleNamespace, Any], list[Any]]] = [listed_history, read_one, failed_step, interrupted,
                                                               async_twins]
