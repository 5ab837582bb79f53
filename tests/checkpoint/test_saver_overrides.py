"""A saver subclass overriding LangGraph's saver methods (``checkpoint/saver_hooks.py``): what statehitl adds to
LangGraph's behaviour (a put that skips ``super()`` is refused, a file store written through an override, the
plain savers untouched, ``serde=``). LangGraph's own behaviour is compared in
``tests/graph/test_langgraph_parity_saver_subclass.py``."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from statehitl.checkpoint import FileCheckpointer
from statehitl.checkpoint.memory import InMemorySaver
from statehitl.checkpoint.saver import SaverWriteRefused
from statehitl.checkpoint.saver_hooks import SaverWriteSkipped
from statehitl.checkpoint.serde.jsonplus import JsonPlusSerializer
from statehitl.graph import START, StateGraph


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(checkpointer: Any) -> Any:
    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=checkpointer)


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_a_put_that_skips_super_stores_nothing_and_says_so() -> None:
    class Dropping(InMemorySaver):
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            return config

    app = _graph(Dropping())
    with pytest.raises(SaverWriteSkipped, match=r"Dropping.aput\(\) returned without calling super\(\).aput"):
        app.invoke({"log": []}, _config("1"))
    assert app.get_state(_config("1")).values == {}


def test_a_sync_put_fails_after_super_the_record_is_stored_and_the_error_is_the_runs() -> None:
    """``super().put`` stores the checkpoint; an error the override raises after it is still the run's error."""
    class Late(InMemorySaver):
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            stored = super().put(config, checkpoint, metadata, new_versions)
            assert stored["configurable"]["checkpoint_id"] == checkpoint["id"]
            raise RuntimeError("after the write")

    app = _graph(Late())
    with pytest.raises(RuntimeError, match="after the write"):
        app.invoke({"log": []}, _config("1"), durability="exit")
    assert app.get_state(_config("1")).values == {"log": ["a", "b"]}


def test_a_file_saver_subclass_writes_through_its_override(tmp_path: Path) -> None:
    seen: list[tuple[str, int, list[str] | None]] = []

    class Audited(FileCheckpointer):
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            seen.append((metadata["source"], metadata["step"], checkpoint["channel_values"].get("log")))
            return await super().aput(config, checkpoint, metadata, new_versions)

    app = _graph(Audited(tmp_path))
    assert app.invoke({"log": ["x"]}, _config("1")) == {"log": ["x", "a", "b"]}
    assert seen == [("input", -1, None), ("loop", 0, ["x"]), ("loop", 1, ["x", "a"]), ("loop", 2, ["x", "a", "b"])]
    reread = _graph(FileCheckpointer(tmp_path))  # another process: the records the override stored
    assert reread.get_state(_config("1")).values == {"log": ["x", "a", "b"]}


def test_an_async_get_override_is_awaited_before_the_run_reads() -> None:
    reads: list[Any] = []

    class Reading(InMemorySaver):
        async def aget_tuple(self, config: Any) -> Any:
            reads.append(config["configurable"]["thread_id"])
            return await super().aget_tuple(config)

    app = _graph(Reading())
    asyncio.run(app.ainvoke({"log": []}, _config("t")))
    assert reads == ["t"]


def test_called_directly_the_writes_are_still_refused() -> None:
    saver = InMemorySaver()
    with pytest.raises(SaverWriteRefused, match="put"):
        saver.put(_config("1"), {"id": "x"}, {}, {})
    with pytest.raises(SaverWriteRefused, match="aput_writes"):
        asyncio.run(saver.aput_writes(_config("1"), [("log", ["a"])], "task"))


def test_plain_savers_take_no_override_path(tmp_path: Path) -> None:
    class OnlyReads(InMemorySaver):
        def describe(self) -> str:
            return "not a saver method"

    assert InMemorySaver().saver_overrides is None
    assert FileCheckpointer(tmp_path).saver_overrides is None
    assert OnlyReads().saver_overrides is None


def test_serde_is_statehitls_json_or_refused() -> None:
    class Custom(JsonPlusSerializer):
        def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
            return "json", b"{}"

    assert isinstance(InMemorySaver(serde=JsonPlusSerializer()).serde, JsonPlusSerializer)
    with pytest.raises(TypeError, match=r"serde=Custom\(...\): statehitl's checkpointers store values"):
        InMemorySaver(serde=Custom())


def test_get_next_version_counts() -> None:
    saver = InMemorySaver()
    assert [saver.get_next_version(None), saver.get_next_version(1)] == [1, 2]
    with pytest.raises(TypeError, match="int versions"):
        saver.get_next_version("1.0")
