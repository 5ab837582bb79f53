"""``statehitl.storage`` beside Strands 1.62's ``strands.storage``: one program of calls, the same outcomes.

The program (``storage_program.py``) writes, overwrites, lists by prefix, searches, works through
namespaces, and gives the keys Strands refuses; every store here must answer it as Strands' own
``InMemoryStorage`` does, values, orders, scores and error messages alike. Strands' ``LocalFileStorage``
keeps one file per key, so it cannot hold a key that is also a "directory" of others (``a`` beside
``a/b``: it fails to delete ``a`` then); statehitl's file store can, and answers as the in-memory ones.
Strands must be installed (the ``strands`` dependency group): without it these tests fail, never skip.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import strands.storage as strands_storage
from strands.types.exceptions import StorageError as StrandsStorageError

import statehitl.storage as statehitl_storage
from statehitl.errors import StorageError, StorageKeyError
from statehitl.types.exceptions import StorageError as StorageErrorByStrandsPath
from storage_program import BINARY, program, run


@pytest.fixture(scope="module")
def strands_outcomes() -> list[tuple[str, Any]]:
    return run(strands_storage.InMemoryStorage(), StrandsStorageError)


def test_the_in_memory_store_answers_every_call_as_strands_does(strands_outcomes: list[tuple[str, Any]]) -> None:
    ours = run(statehitl_storage.InMemoryStorage(), StorageError)
    assert ours == strands_outcomes
    # the program reached every kind of outcome, so the comparison above compared something
    outcomes = dict(strands_outcomes)
    assert outcomes["read ..x/y"] == BINARY
    assert outcomes["read missing"] is None
    assert outcomes["write a\\b"] == ("error", "Invalid storage key 'a\\b': backslashes are not allowed")
    assert outcomes["list a"] == ["a/b.md", "a/c", "ab"]
    assert outcomes["list a/"] == ["a/b.md", "a/c"]
    assert outcomes["search dark toggle"] == [("a/b.md", 2), ("notes/caf\u00e9 menu.txt", 1)]
    assert outcomes["list after deletes"] == ["..x/y", ".env", "a/b.md", "a/c", "notes/caf\u00e9 menu.txt", "z/@=_/x"]


def test_the_file_store_answers_as_strands_in_memory_store(tmp_path: Path,
                                                           strands_outcomes: list[tuple[str, Any]]) -> None:
    assert run(statehitl_storage.LocalFileStorage(tmp_path / "files"), StorageError) == strands_outcomes
    # and the same directory, opened again (another process), holds what was written
    again = statehitl_storage.LocalFileStorage(str(tmp_path / "files"))
    assert asyncio.run(again.read("..x/y")) == BINARY


def test_where_strands_file_store_can_hold_the_keys_both_file_stores_agree(tmp_path: Path) -> None:
    # its files cannot be both a key and a directory: leave out the steps that need that (deleting key ``a``,
    # a directory there, fails), and those that read what they would have written
    beside = {"write //a///c/", "namespace a: write c/d", "delete a (a/b.md and ab stay)"}
    flat = [step for step in program() if step[0] not in beside]
    theirs = run(strands_storage.LocalFileStorage(str(tmp_path / "strands")), StrandsStorageError, flat)
    ours = run(statehitl_storage.LocalFileStorage(tmp_path / "statehitl"), StorageError, flat)
    assert ours == theirs
    assert dict(theirs)["list ''"] == ["..x/y", ".env", "a/b.md", "ab", "notes/caf\u00e9 menu.txt", "z/@=_/x"]


def test_a_strands_except_clause_catches_statehitls_storage_errors() -> None:
    assert StorageErrorByStrandsPath is StorageError
    with pytest.raises(StorageErrorByStrandsPath, match=r"'\.\.' path segments are not allowed"):
        asyncio.run(statehitl_storage.InMemoryStorage().read("../etc/passwd"))
    assert issubclass(StorageKeyError, ValueError)


def test_the_stores_implement_the_protocol_and_namespaces_keep_their_class(tmp_path: Path) -> None:
    for store in (statehitl_storage.InMemoryStorage(), statehitl_storage.LocalFileStorage(tmp_path)):
        assert isinstance(store, statehitl_storage.Storage)
        view = store.namespace("x").namespace("y")
        assert type(view) is type(store)
        assert view.namespace_path == "x/y/"
    assert statehitl_storage.LocalFileStorage(tmp_path / "a" / ".." / "b").base_dir == str(tmp_path / "b")


def test_concurrent_writers_of_one_key_never_fail_and_the_last_write_stays(tmp_path: Path) -> None:
    async def race(store: Any) -> tuple[bytes | None, list[str]]:
        values = [f"writer {i}".encode() for i in range(20)]
        await asyncio.gather(*(store.write("hot/key", value) for value in values))
        await store.write("hot/key", b"final")
        return await store.read("hot/key"), await store.list("hot")

    for store in (statehitl_storage.InMemoryStorage(), statehitl_storage.LocalFileStorage(tmp_path)):
        assert asyncio.run(race(store)) == (b"final", ["hot/key"])


def test_a_search_strategy_sees_every_write_and_answers_the_search() -> None:
    from statehitl.storage.search import KeywordSearchStrategy, StorageSearchResult

    class Recording(KeywordSearchStrategy):
        def __init__(self) -> None:
            self.indexed: list[tuple[str, bytes]] = []

        async def index(self, storage: Any, key: str, data: bytes, **kwargs: Any) -> None:
            self.indexed.append((key, data))

        async def search(self, storage: Any, query: str, **kwargs: Any) -> list[StorageSearchResult]:
            return [StorageSearchResult(key=f"answer to {query}", score=1.0)]

    strategy = Recording()
    store = statehitl_storage.InMemoryStorage(search_strategy=strategy)

    async def scenario() -> list[StorageSearchResult]:
        await store.write("//k/", b"v")
        await store.namespace("ns").write("j", b"w")
        return await store.search("q")

    assert [r.key for r in asyncio.run(scenario())] == ["answer to q"]
    assert strategy.indexed == [("k", b"v"), ("j", b"w")]


def test_clear_empties_a_view_and_leaves_the_rest() -> None:
    store = statehitl_storage.InMemoryStorage()

    async def fill() -> None:
        await store.write("keep/1", b"1")
        await store.namespace("drop").write("1", b"1")

    asyncio.run(fill())
    store.namespace("drop").clear()
    assert asyncio.run(store.list("")) == ["keep/1"]
    store.clear()
    assert asyncio.run(store.list("")) == []


def test_a_failing_index_is_a_storage_error_after_the_value_is_stored() -> None:
    from statehitl.storage.search import KeywordSearchStrategy

    class Broken(KeywordSearchStrategy):
        async def index(self, storage: Any, key: str, data: bytes, **kwargs: Any) -> None:
            raise OSError("index full")

    store = statehitl_storage.InMemoryStorage(search_strategy=Broken())
    with pytest.raises(StorageError, match="Wrote 'k' but indexing failed"):
        asyncio.run(store.write("k", b"v"))
    assert asyncio.run(store.read("k")) == b"v"
