"""The thread index under contention: a writer that keeps losing its compare-and-set retries until its
entry (or a newer one) holds, and says so when a store never lets it win."""

from __future__ import annotations

import asyncio
import time

import pytest

from statehitl.checkpoint import Checkpointer, CheckpointRecord, MemoryStorage
from statehitl.checkpoint.index import ATTEMPTS, index_key
from statehitl.errors import CheckpointConflict, StorageError
from statehitl.graph import Status


class ContendedIndex(MemoryStorage):
    """Memory storage where another writer gets in first on the next ``conflicts`` index writes.

    Just before each of those writes lands, the rival rewrites the entry as it stands (newer-wins lets
    it: it writes nothing newer), so the write's token is stale, as with a process racing on the key.
    With ``rival_wins=False`` the store rejects the write without any rival: a broken store.
    """

    def __init__(self) -> None:
        super().__init__()
        self.conflicts = 0
        self.rival_wins = True
        self.attempts = 0

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        if key.startswith("index/") and self.conflicts > 0:
            self.conflicts -= 1
            self.attempts += 1
            current = await self.read(key)
            if self.rival_wins and current is not None:
                await super().write(key, current[0], expect=current[1])
            else:
                raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read")
        return await super().write(key, data, expect=expect, durable=durable)


def record(seq: int, status: Status) -> CheckpointRecord:
    return CheckpointRecord(thread_id="t", seq=seq, created_at=time.time(), machine="m", fingerprint="f",
                            status=status.value, step=seq, values={})


def test_a_writer_outraced_many_times_still_leaves_its_entry() -> None:
    storage = ContendedIndex()
    checkpointer = Checkpointer(storage)
    asyncio.run(checkpointer.write_index(record(3, Status.INTERRUPTED)))
    storage.conflicts = 20  # more than any fixed small retry budget
    asyncio.run(checkpointer.write_index(record(5, Status.COMPLETED)))
    entry = asyncio.run(checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.seq, entry.status) == (5, "completed"), "the listing still shows the thread waiting"
    assert storage.attempts == 20


def test_newer_entries_still_win_over_a_contended_older_writer() -> None:
    storage = ContendedIndex()
    checkpointer = Checkpointer(storage)
    asyncio.run(checkpointer.write_index(record(7, Status.COMPLETED)))
    storage.conflicts = 3
    asyncio.run(checkpointer.write_index(record(5, Status.INTERRUPTED)))
    entry = asyncio.run(checkpointer.thread_info("t"))
    assert entry is not None
    assert entry.seq == 7
    assert storage.attempts == 0  # it saw the newer entry and wrote nothing


def test_a_store_that_never_lets_the_write_win_is_an_error() -> None:
    storage = ContendedIndex()
    checkpointer = Checkpointer(storage)
    asyncio.run(checkpointer.write_index(record(3, Status.INTERRUPTED)))
    storage.conflicts, storage.rival_wins = 10**6, False
    with pytest.raises(StorageError) as err:
        asyncio.run(checkpointer.write_index(record(5, Status.COMPLETED)))
    message = str(err.value)
    assert "could not update the index entry of thread 't' to checkpoint 000000000005" in message
    assert f"{ATTEMPTS} compare-and-set writes of {index_key('t')!r} in a row lost" in message
    assert "The checkpoint itself is committed" in message
    assert storage.attempts == ATTEMPTS
    entry = asyncio.run(checkpointer.thread_info("t"))
    assert entry is not None
    assert entry.seq == 3
