"""The store contract (tests/store_contract.py) on the in-memory and file stores, and what only they do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from statehitl.checkpoint import MemoryStorage
from statehitl.store import FileStore, InMemoryStore, StorageStore
from store_contract import Clock, StoreContract


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def make_store(self) -> Any:
        storage = MemoryStorage()

        def make(index: Any = None, ttl: Any = None, clock: Clock | None = None) -> StorageStore:
            return StorageStore(storage, index=index, ttl=ttl, clock=clock or Clock())

        return make


class TestFileStore(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Any:
        def make(index: Any = None, ttl: Any = None, clock: Clock | None = None) -> StorageStore:
            return FileStore(tmp_path, index=index, ttl=ttl, clock=clock or Clock())

        return make


def test_in_memory_stores_share_nothing() -> None:
    first, second = InMemoryStore(), InMemoryStore()
    first.put(("n",), "k", {"v": 1})
    assert second.get(("n",), "k") is None
    assert repr(first) == "InMemoryStore()"


def test_a_store_opened_by_url_is_the_file_store_there(tmp_path: Path) -> None:
    FileStore(tmp_path / "memory").put(("users", "ann"), "prefs", {"theme": "dark"})
    for url in (f"file://{tmp_path}/memory", str(tmp_path / "memory"), f"file://{tmp_path}/memory?compress=false"):
        assert StorageStore.from_url(url).get(("users", "ann"), "prefs").value == {"theme": "dark"}


def test_items_live_apart_from_a_checkpointers_records(tmp_path: Path) -> None:
    from statehitl.checkpoint import FileCheckpointer

    store = FileStore(tmp_path)
    store.put(("threads",), "t1", {"v": 1})
    checkpointer = FileCheckpointer(tmp_path)
    import asyncio

    assert asyncio.run(checkpointer.threads()) == []
    assert store.list_namespaces() == [("threads",)]
