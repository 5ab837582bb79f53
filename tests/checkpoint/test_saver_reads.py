"""The saver read side (``get_tuple``, ``list``, ``get``) where statehitl has more to say than LangGraph: a saver
that never saw the graph, values JSON cannot hold, the writes it refuses, configs it cannot read."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import operator
import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint import FileCheckpointer
from statehitl.checkpoint.base import CheckpointTuple
from statehitl.checkpoint.memory import InMemorySaver
from statehitl.checkpoint.saver import SaverWriteRefused
from statehitl.graph import END, START, StateGraph


class Counter(TypedDict):
    value: Annotated[int, operator.add]


def _counter_app(saver: Any) -> Any:
    g = StateGraph(Counter)
    g.add_node("one", lambda state: {"value": 2})
    g.add_edge(START, "one")
    g.add_edge("one", END)
    return g.compile(checkpointer=saver)


def _shown(found: CheckpointTuple) -> tuple[Any, ...]:
    return found.config, found.metadata, found.parent_config, found.checkpoint["channel_values"]


def test_a_saver_that_never_saw_the_graph_reads_what_get_state_history_shows(tmp_path: Path) -> None:
    app = _counter_app(FileCheckpointer(tmp_path))
    thread = {"configurable": {"thread_id": "t"}}
    app.invoke({"value": 1}, thread)
    app.invoke({"value": 10}, thread)
    reader = FileCheckpointer(tmp_path)  # another process's saver: no graph compiled on it

    listed = list(reader.list(thread))
    history = list(app.get_state_history(thread))
    assert [(t.config, t.metadata, t.parent_config) for t in listed] == \
        [(s.config, s.metadata, s.parent_config) for s in history]
    own = [t.checkpoint["channel_values"] for t in listed if t.metadata["source"] != "input"]
    # a record's own checkpoints read the same; the second run's first step shows its input written over the
    # channels (the reducer, the graph's, is unknown here), where the graph's saver applies it
    assert own == [{"value": 15}, {"value": 10}, {"value": 3}, {"value": 1}]
    assert [_shown(t) for t in app.checkpointer.list(thread)][1][3] == {"value": 13}
    assert reader.get(thread) == app.checkpointer.get(thread)


class Anything(TypedDict):
    value: Any


@dataclasses.dataclass
class Unregistered:
    name: str


class Named(TypedDict):
    value: Unregistered | float


def test_a_class_the_schema_names_is_read_by_its_graph_s_saver_and_shown_as_stored_by_another(tmp_path: Path) -> None:
    g = StateGraph(Named)
    g.add_node("keep", lambda state: {"value": Unregistered("x")})
    g.add_edge(START, "keep")
    app = g.compile(checkpointer=FileCheckpointer(tmp_path))
    thread = {"configurable": {"thread_id": "n"}}
    app.invoke({"value": 1.5}, thread)
    assert app.checkpointer.get(thread)["channel_values"] == {"value": Unregistered("x")}
    stored = FileCheckpointer(tmp_path).get(thread)
    assert stored is not None
    assert stored["channel_values"] == {"value": {"$t": "model", "v": {"type": f"{__name__}.Unregistered",
                                                                      "fields": {"name": "x"}}}}


def test_values_json_cannot_hold_read_back_and_an_unknown_class_is_never_built() -> None:
    saver = InMemorySaver()
    when, key = datetime.datetime(2026, 1, 2, 3, 4, 5, 6), uuid.UUID(int=7)
    g = StateGraph(Anything)
    g.add_node("keep", lambda state: {"value": {"when": when, "key": key, "tags": {"a"}, "pair": (1, 2)}})
    g.add_edge(START, "keep")
    app = g.compile(checkpointer=saver)
    app.invoke({"value": None}, {"configurable": {"thread_id": "v"}})
    stored = saver.get({"configurable": {"thread_id": "v"}})
    assert stored is not None
    assert stored["channel_values"]["value"] == {"when": when, "key": key, "tags": {"a"}, "pair": (1, 2)}

    other = InMemorySaver()
    g = StateGraph(Anything)
    g.add_node("keep", lambda state: {"value": Unregistered("x")})
    g.add_edge(START, "keep")
    app = g.compile(checkpointer=other)
    with pytest.raises(Exception, match="Unregistered"):  # refused where it is written, as for any unknown class
        app.invoke({"value": None}, {"configurable": {"thread_id": "u"}})


def test_writes_are_refused_naming_why_and_nothing_changes() -> None:
    saver = InMemorySaver()
    app = _counter_app(saver)
    thread = {"configurable": {"thread_id": "w"}}
    app.invoke({"value": 1}, thread)
    before = list(saver.list(thread))
    with pytest.raises(SaverWriteRefused, match=r"put\(\) is LangGraph's saver write.*update_state"):
        saver.put(thread, {}, {}, {})
    with pytest.raises(SaverWriteRefused, match=r"put_writes\(\)"):
        saver.put_writes(thread, [("value", 1)], "task")
    with pytest.raises(NotImplementedError, match=r"aput\(\)"):
        asyncio.run(saver.aput(thread, {}, {}, {}))
    with pytest.raises(NotImplementedError, match=r"aput_writes\(\)"):
        asyncio.run(saver.aput_writes(thread, [], "task"))
    assert list(saver.list(thread)) == before


def test_configs_it_cannot_read_get_a_clear_error() -> None:
    saver = InMemorySaver()
    with pytest.raises(ValueError, match="thread_id"):
        saver.get_tuple({"configurable": {}})
    with pytest.raises(ValueError, match=r"checkpoint_ns 'inner:1'.*get_state"):
        saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": "inner:1"}})
    with pytest.raises(ValueError, match="limit"):
        list(saver.list(None, limit=-1))
    with pytest.raises(TypeError, match="checkpoint id"):
        saver.get("t")  # type: ignore[call-overload]


def test_get_with_a_thread_id_still_reads_a_record_and_an_unknown_id_is_none() -> None:
    saver = InMemorySaver()
    app = _counter_app(saver)
    thread = {"configurable": {"thread_id": 5}}
    app.invoke({"value": 1}, thread)
    current = saver.get_tuple(thread)
    assert current is not None
    assert current.config["configurable"]["thread_id"] == "5"
    record = asyncio.run(saver.get("5", current.config["configurable"]["checkpoint_id"]))
    assert record.values == {"value": 3}
    other = {"configurable": {"thread_id": "other", "checkpoint_id": "000000000000"}}
    assert saver.get_tuple(other) is None
    assert saver.get_tuple({"configurable": {"thread_id": "5", "checkpoint_id": "999"}}) is None
    assert saver.get_tuple({"configurable": {"thread_id": "5", "checkpoint_id": "not an id"}}) is None
