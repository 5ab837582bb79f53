"""The thread index under contention: a writer that keeps losing its compare-and-set retries until its
entry (or a newer one) holds, and says so when a store never lets it win; a writer that knows the
entry's version writes without reading it first."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

from statehitl.checkpoint import Checkpointer, CheckpointRecord, MemoryStorage
from statehitl.checkpoint.index import ATTEMPTS, index_key
from statehitl.errors import CheckpointConflict, StorageError
from statehitl.graph import Status
from statehitl.testing import CountingStorage


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


def test_a_writer_that_knows_the_entry_writes_it_without_reading_it_first() -> None:
    """A thread found new, or whose entry this checkpointer wrote last, has its entry written in one request;
    one that another process rewrote meanwhile costs a read, and the newer entry still wins."""
    storage = CountingStorage(MemoryStorage())
    mine, theirs = Checkpointer(storage), Checkpointer(storage)  # no cache_scope: each knows only its own writes
    assert asyncio.run(mine.head("t")) is None  # the thread is new: no entry either
    storage.reset()
    asyncio.run(mine.write_index(record(3, Status.INTERRUPTED)))
    asyncio.run(mine.write_index(record(5, Status.INTERRUPTED)))
    assert storage.reset().calls == Counter({"write": 2})
    asyncio.run(theirs.write_index(record(7, Status.COMPLETED)))
    assert storage.reset().calls == Counter({"read": 1, "write": 1})
    asyncio.run(mine.write_index(record(6, Status.INTERRUPTED)))  # its version is stale: it reads, finds 7
    assert storage.reset().calls == Counter({"write": 1, "read": 1})
    entry = asyncio.run(mine.thread_info("t"))
    assert entry is not None
    assert (entry.seq, entry.status) == (7, "completed")


def test_an_entry_found_where_a_new_thread_has_none_is_read_and_replaced() -> None:
    """A thread without records may still have an entry (a delete cut short): the write that assumed none
    loses its compare-and-set, reads the entry and replaces the older one."""
    storage = CountingStorage(MemoryStorage())
    stale, checkpointer = Checkpointer(storage), Checkpointer(storage)
    asyncio.run(stale.write_index(record(2, Status.INTERRUPTED)))
    assert asyncio.run(checkpointer.head("t")) is None
    storage.reset()
    asyncio.run(checkpointer.write_index(record(4, Status.COMPLETED)))
    assert storage.reset().calls == Counter({"write": 2, "read": 1})  # refused as new, read, replaced
    entry = asyncio.run(checkpointer.thread_info("t"))
    assert entry is not None
    assert (entry.seq, entry.status) == (4, "completed")
