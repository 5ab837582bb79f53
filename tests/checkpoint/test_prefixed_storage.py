"""``PrefixedStorage`` beyond the conformance kit: what it keeps apart, and what it passes through."""

from __future__ import annotations

import asyncio

import pytest

from statehitl.checkpoint import FileStorage, MemoryStorage
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.prefixed import PrefixedStorage
from statehitl.checkpoint.storage import ABSENT, has_list_versions, has_read_all, has_version
from statehitl.errors import InvalidThreadIdError, StorageConfigError


def test_two_prefixes_of_one_store_share_nothing_and_the_store_sees_both() -> None:
    store = MemoryStorage()
    a, b = PrefixedStorage(store, "tenant/a"), PrefixedStorage(store, "tenant/b")

    async def scenario() -> None:
        await a.write("threads/t/1", b"from a", expect=ABSENT)
        await b.write("threads/t/1", b"from b", expect=ABSENT)
        assert (await a.read("threads/t/1"))[0] == b"from a"  # type: ignore[index]
        assert await a.list("") == ["threads/t/1"]
        assert await store.list("tenant/") == ["tenant/a/threads/t/1", "tenant/b/threads/t/1"]
        assert await a.delete("threads/") == 1
        assert await b.list("") == ["threads/t/1"]

    asyncio.run(scenario())


@pytest.mark.parametrize("key", ["../b/threads/t/1", "/etc", "a/../../x", ".hidden"])
def test_a_key_cannot_climb_out_of_its_prefix(key: str) -> None:
    view = PrefixedStorage(MemoryStorage(), "tenant/a")
    with pytest.raises(InvalidThreadIdError):
        asyncio.run(view.write(key, b"x", expect=ABSENT))
    with pytest.raises(InvalidThreadIdError):
        asyncio.run(view.list(key))


@pytest.mark.parametrize("prefix", ["", "a//b", "../a", ".a", "a b", "a/"])
def test_a_prefix_that_is_not_key_segments_is_refused(prefix: str) -> None:
    with pytest.raises(StorageConfigError, match="storage prefix"):
        PrefixedStorage(MemoryStorage(), prefix)


def test_it_offers_the_optional_capabilities_of_the_store_under_it_and_no_others(tmp_path) -> None:
    class Plain:  # the four primitives only
        def __init__(self) -> None:
            self.inner = MemoryStorage()

        async def read(self, key: str):  # type: ignore[no-untyped-def]
            return await self.inner.read(key)

        async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
            return await self.inner.write(key, data, expect=expect, durable=durable)

        async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
            return await self.inner.list(prefix, limit=limit)

        async def delete(self, prefix: str) -> int:
            return await self.inner.delete(prefix)

    memory = PrefixedStorage(MemoryStorage(), "p")
    assert has_read_all(memory)
    assert has_version(memory)
    assert has_list_versions(memory)
    assert memory.keeps_records_in_process
    plain = PrefixedStorage(Plain(), "p")  # type: ignore[arg-type]
    assert not (has_read_all(plain))
    assert not (has_version(plain))
    assert not (has_list_versions(plain))
    assert getattr(plain, "cleanup", None) is None
    assert not plain.keeps_records_in_process
    files = PrefixedStorage(FileStorage(tmp_path), "p")
    assert callable(getattr(files, "cleanup", None))
    assert files.cache_scope == f"file:{tmp_path}/p"


def test_the_bulk_read_and_versions_answer_in_the_views_keys() -> None:
    store = MemoryStorage()
    view = PrefixedStorage(store, "v")

    async def scenario() -> None:
        token = await view.write("k/1", b"one", expect=ABSENT)
        await store.write("k/1", b"outside", expect=ABSENT)
        assert await view.read_all("k/") == {"k/1": (b"one", token)}
        assert await view.version("k/1") == token
        assert await view.list_versions("k") == [("k/1", token)]

    asyncio.run(scenario())


def test_a_checkpointer_runs_on_a_prefix_and_another_prefix_does_not_see_its_threads() -> None:
    from statehitl.graph import END, START, StateGraph

    store = MemoryStorage()

    def count(state: dict) -> dict:  # type: ignore[type-arg]
        return {"n": state["n"] + 1}

    builder = StateGraph(dict)  # type: ignore[type-var]
    builder.add_node("count", count)
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    graph = builder.compile(checkpointer=Checkpointer(PrefixedStorage(store, "tenant/a")))
    config = {"configurable": {"thread_id": "t1"}}
    assert graph.invoke({"n": 1}, config) == {"n": 2}
    other = Checkpointer(PrefixedStorage(store, "tenant/b"))
    assert asyncio.run(other.head("t1")) is None
    assert [t.thread_id for t in asyncio.run(Checkpointer(PrefixedStorage(store, "tenant/a")).threads())] == ["t1"]
