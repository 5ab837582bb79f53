"""The thread index: one small ``ThreadIndex`` record per thread, for listing threads by status.

It is a cache of what each thread's last run stopped on (the records are the truth), so a listing of
the threads waiting on a human reads one small record per thread and never a checkpoint. Entries are
rewritten only when what they say changes; racing writers compare-and-set, and the newer run wins.

A writer that loses a compare-and-set reads again and retries until its entry is stored or a newer
one is: giving up would leave the listing describing an older run (a thread shown as waiting on a
human after it completed) with nobody told. Every write that beats it stores a newer-or-equal entry,
so losing over and over means the store rejects writes it should accept, which is an error.

A writer that knows the entry's version (the process wrote it last, or found the thread new) compare-
and-sets on it without reading the entry first: a request that stops a run then costs one request
for its index entry, not two, and no newer entry can be overwritten, since any other write changes
the version.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, NamedTuple

from statehitl.checkpoint.codec import decode_model, encode
from statehitl.checkpoint.interrupt_index import point_to_thread
from statehitl.checkpoint.records import CheckpointRecord, ThreadIndex
from statehitl.checkpoint.storage import ABSENT, Storage, has_read_named, read_named_page, validate_thread_id
from statehitl.errors import CheckpointConflict, CheckpointCorruptError, StorageError

INDEX_PREFIX = "index/"
ATTEMPTS = 64
"""Compare-and-set rounds before ``write_index`` calls the store broken (a race is lost a few times)."""
_BACKOFF_CAP = 0.02
"""Longest pause (seconds) between rounds: random and growing, so racing writers stop colliding."""


def index_prefix(thread_id: str) -> str:
    """Everything indexed for one thread: a segment of its own, so "index/t/" never matches thread "t2"."""
    return f"{INDEX_PREFIX}{validate_thread_id(thread_id)}/"


_ENTRY = "entry"
"""The name of a thread's index entry in its "directory", which also holds its audit entries."""


def index_key(thread_id: str) -> str:
    return f"{index_prefix(thread_id)}{_ENTRY}"


async def indexed_threads(storage: Storage) -> list[str]:
    """The ids of every thread with an index entry, by id: one listing, no reads."""
    threads = []
    for key in await storage.list(INDEX_PREFIX):
        _, thread, name = key.split("/", 2)
        if name == _ENTRY:  # not one of the thread's audit entries
            threads.append(thread)
    return threads


def index_material(record: CheckpointRecord) -> tuple[Any, ...]:
    """The part of a checkpoint its thread's index entry shows (besides seq, step and times)."""
    return (record.status, tuple(record.pending), tuple(i.id for i in record.interrupts), record.machine,
            record.error)


def _parse(key: str, data: bytes, signing_key: bytes | None) -> ThreadIndex:
    entry = decode_model(ThreadIndex, f"index record {key!r}", data, signing_key, place=key)
    if index_key(entry.thread_id) != key:
        raise CheckpointCorruptError(f"index record {key!r} is the entry of thread {entry.thread_id!r} (copied here "
                                     "from elsewhere, or edited)")
    return entry


async def read_entries(storage: Storage, signing_key: bytes | None
                       ) -> dict[str, ThreadIndex | CheckpointCorruptError] | None:
    """Every thread's index entry (or why it cannot be read), by thread id, in the store's bulk read of one
    record name across partitions (``SupportsReadNamed``: DynamoDB's filtered ``Scan``, one request per MB
    of the table, where a listing and a read per thread cost 2N + 1 requests); None for a store without one."""
    if not has_read_named(storage):
        return None
    entries: dict[str, ThreadIndex | CheckpointCorruptError] = {}
    for key, (data, _) in (await storage.read_named(INDEX_PREFIX, _ENTRY)).items():
        parts = key.split("/")
        if len(parts) != 3:
            continue
        try:
            entries[parts[1]] = _parse(key, data, signing_key)
        except CheckpointCorruptError as exc:
            entries[parts[1]] = exc
    return dict(sorted(entries.items()))


class EntryRead(NamedTuple):
    """One thread's index entry as a page read it: its key (where the next page starts after), its thread,
    and the entry, or why it cannot be read."""

    key: str
    thread_id: str
    entry: ThreadIndex | CheckpointCorruptError


def thread_of_key(key: str) -> str | None:
    """The thread whose index entry ``key`` is (``index/<thread>/entry``), or None for any other key."""
    parts = key.split("/")
    if len(parts) != 3 or f"{parts[0]}/" != INDEX_PREFIX or parts[2] != _ENTRY:
        return None
    return parts[1]


async def read_entries_page(storage: Storage, signing_key: bytes | None, *, limit: int,
                            after: str | None) -> tuple[list[EntryRead], str | None]:
    """The next ``limit`` index entries after the key ``after``, in the store's paging order
    (``storage.read_named_page``), and the key the next page starts after (None: the store has no more).
    A record of that name that is no thread's entry (deeper, put there by hand) is passed over."""
    found = await read_named_page(storage, INDEX_PREFIX, _ENTRY, limit=limit, after=after)
    entries = []
    for key, data, _ in found:
        thread_id = thread_of_key(key)
        if thread_id is None:
            continue
        try:
            entries.append(EntryRead(key, thread_id, _parse(key, data, signing_key)))
        except CheckpointCorruptError as exc:
            entries.append(EntryRead(key, thread_id, exc))
    return entries, (found[-1][0] if len(found) == limit else None)


async def read_index(storage: Storage, thread_id: str, signing_key: bytes | None) -> ThreadIndex | None:
    return (await read_index_versioned(storage, thread_id, signing_key))[0]


async def read_index_versioned(storage: Storage, thread_id: str, signing_key: bytes | None
                               ) -> tuple[ThreadIndex | None, str | None]:
    """The thread's index entry and its version token (None, None: no entry)."""
    key = index_key(thread_id)
    found = await storage.read(key)
    return (None, None) if found is None else (_parse(key, found[0], signing_key), found[1])


async def write_index(
    storage: Storage,
    record: CheckpointRecord,
    *,
    ttl: float | None,
    signing_key: bytes | None,
    known: tuple[int, str] | None = None,
) -> str | None:
    """Record where ``record``'s thread stopped. Newer entries win; racing writers retry until one holds.

    ``known`` is the sequence number and version the entry is believed to have (``(-1, ABSENT)``: no
    entry): when that entry is older than ``record``, the first round writes on its version without
    reading it. Returns the version of this entry once it is stored, or None once a newer one is found.
    ``StorageError`` if ``ATTEMPTS`` rounds in a row lost their compare-and-set: the checkpoint is
    committed, but its thread's listing is stale.
    """
    entry = ThreadIndex(
        thread_id=record.thread_id,
        seq=record.seq,
        status=record.status,
        step=record.step,
        pending=record.pending,
        interrupts=record.interrupts,
        error=record.error,
        machine=record.machine,
        updated_at=record.created_at,
        expires_at=None if ttl is None else record.created_at + ttl,
    )
    key = index_key(record.thread_id)
    data = encode(entry, signing_key, place=key)
    expect = known[1] if known is not None and known[0] < record.seq else None
    lost = 0  # rounds that read the entry and still lost (a race, not a stale guess)
    for _ in range(ATTEMPTS):
        if expect is None:
            if lost:
                await asyncio.sleep(random.uniform(0, min(_BACKOFF_CAP, 0.0005 * 2**lost)))
            found = await storage.read(key)
            if found is not None:
                stored = _parse(key, found[0], signing_key).seq
                if stored >= record.seq:
                    return None
            expect = ABSENT if found is None else found[1]
            lost += 1
        try:
            version = await storage.write(key, data, expect=expect, durable=False)
        except CheckpointConflict:
            expect = None  # read what is there now
            continue
        if entry.interrupts:
            await point_to_thread(storage, entry.thread_id, (i.id for i in entry.interrupts))
        return version
    raise StorageError(
        f"could not update the index entry of thread {record.thread_id!r} to checkpoint {record.checkpoint_id}: "
        f"{ATTEMPTS} compare-and-set writes of {key!r} in a row lost to a conflict, yet no newer entry was "
        f"stored, so {storage!r} is refusing writes it should accept. The checkpoint itself is committed; "
        "thread listings show the thread's previous state until its next run stops",
        operation="write", code="CheckpointConflict",
    )
