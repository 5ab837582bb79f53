"""The parts of the storage contract beyond the four primitives: the optional cleanup step, and that
``prune`` / ``sweep_expired`` reach it whatever wraps the store."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from statehitl.checkpoint import Checkpointer, FileStorage, MemoryStorage
from statehitl.checkpoint.storage import Storage, StorageFactory, SupportsCleanup
from statehitl.graph import END, START, StateGraph
from statehitl.testing import CountingStorage


class S(BaseModel):
    n: int = 0


def run_twice(checkpointer: Checkpointer, thread: str) -> None:
    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s.n + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    app = g.compile(checkpointer=checkpointer)
    app.invoke({}, thread_id=thread)
    app.invoke({}, thread_id=thread)


def plant_debris(root: Path, age: float) -> Path:
    """A temp file like the one a compaction killed mid-way leaves, last modified ``age`` seconds ago."""
    debris = root / "threads" / ".tmp-crashed-compaction"
    debris.parent.mkdir(parents=True, exist_ok=True)
    debris.write_bytes(b"half a log")
    then = time.time() - age
    os.utime(debris, (then, then))
    return debris


def test_the_backends_state_their_capabilities(tmp_path: Path) -> None:
    assert isinstance(FileStorage(tmp_path), Storage)
    assert isinstance(FileStorage(tmp_path), SupportsCleanup)
    assert isinstance(MemoryStorage(), Storage)
    assert not isinstance(MemoryStorage(), SupportsCleanup)  # nothing it holds can be left half-written
    for backend in (FileStorage, MemoryStorage):
        assert isinstance(backend, StorageFactory)


def test_prune_reaches_the_file_stores_cleanup_through_a_counting_wrapper(tmp_path: Path) -> None:
    counting = CountingStorage(FileStorage(tmp_path))
    checkpointer = Checkpointer(counting)
    run_twice(checkpointer, "t")
    old, fresh = plant_debris(tmp_path, age=7200), plant_debris(tmp_path / "index", age=0)
    counting.reset()
    # each run wrote one record: the older of the two goes
    assert asyncio.run(checkpointer.prune("t", keep_last=1)) == 1
    assert not old.exists(), "prune on a counted file store left the crash debris behind"
    assert fresh.exists(), "debris younger than an hour may belong to a compaction still running"
    assert counting.counts.calls["cleanup"] == 1


def test_sweep_expired_reaches_the_cleanup_through_a_counting_wrapper(tmp_path: Path) -> None:
    counting = CountingStorage(FileStorage(tmp_path))
    old = plant_debris(tmp_path, age=7200)
    assert asyncio.run(Checkpointer(counting, ttl=60).sweep_expired()) == []
    assert not old.exists()
    assert counting.counts.calls["cleanup"] == 1


def test_a_counted_store_without_cleanup_has_nothing_to_clean() -> None:
    counting = CountingStorage(MemoryStorage())
    checkpointer = Checkpointer(counting)
    run_twice(checkpointer, "t")
    counting.reset()
    assert asyncio.run(counting.cleanup()) == 0
    # each run wrote one record: the older of the two goes
    assert asyncio.run(checkpointer.prune("t", keep_last=1)) == 1
    assert "cleanup" not in counting.counts.calls  # no request reached a store, so none is counted


def test_cleanup_gets_the_max_age_it_is_given(tmp_path: Path) -> None:
    ages: list[Any] = []

    class Recording(MemoryStorage):
        async def cleanup(self, max_age: float = 3600.0) -> int:
            ages.append(max_age)
            return 2

    counting = CountingStorage(Recording())
    assert asyncio.run(counting.cleanup(max_age=5)) == 2
    assert asyncio.run(counting.cleanup()) == 2
    assert ages == [5, 3600.0]
