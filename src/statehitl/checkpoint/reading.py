"""Reading a thread: its head (the record a writer goes on from), any checkpoint, its history.

A process keeps the whole state of the threads it last wrote or read (``checkpoint/warm.py``), and checks
it with one small read of the head; a thread it does not know is read in the storage's one bulk read
when it has one (``SupportsReadAll``), else base by base along the Fenwick chain (``checkpoint/chain.py``
says which records each store writes).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NamedTuple

from statehitl.checkpoint import checkpoint_ids
from statehitl.checkpoint.answer_records import answers_in, is_answer_key
from statehitl.checkpoint.chain import ChannelBuilder, Cursor, Link, whole_record
from statehitl.checkpoint.index import (
    index_material,
    indexed_threads,
    read_entries,
    read_entries_page,
    read_index,
)
from statehitl.checkpoint.records import (
    CheckpointRecord,
    ClaimRecord,
    RecordStatus,
    StoredAnswer,
    StoredCheckpoint,
    ThreadIndex,
)
from statehitl.checkpoint.refusals import is_refusal_key
from statehitl.checkpoint.storage import (
    ABSENT,
    read_prefix,
)
from statehitl.checkpoint.store_base import RecordStore
from statehitl.errors import (
    CheckpointCorruptError,
    CheckpointNotFoundError,
)

logger = logging.getLogger("statehitl.checkpoint")

@dataclass
class Head:
    """A thread as a writer finds it: its current checkpoint, the cursor to write after it, any claim,
    and the answers stored for its interrupts when the read that found it brought them (None: not read)."""

    record: CheckpointRecord
    cursor: Cursor
    claim: ClaimRecord | None = None
    answers: dict[str, StoredAnswer] | None = None
    fork: bool = False
    """Whether ``record`` is an earlier checkpoint asked for by id (time travel): a run from it forks, and
    answers to it are the fork's own, not the thread's binding answers."""
    own: bool = False
    """Whether this process wrote the thread's newest record itself, and found it still the newest
    (``checkpoint/warm.py``): no other writer went past it, so no record past it can have been lost."""


_NEW = object()
"""``_lean_cold_head``'s answer for a thread that has no records."""

_OFFERED: ContextVar[list[tuple[ThreadReader, Head]] | None] = ContextVar("statehitl_offered_head", default=None)


@contextlib.contextmanager
def offering_head(checkpointer: ThreadReader, head: Head) -> Iterator[None]:
    """Let the next ``checkpointer.head()`` of ``head``'s thread in this context return ``head``, once.

    For a caller that has just read the thread (its head and answers) to decide whether to resume it, and
    then resumes it through an application's own call, which reads it again: a worker. The head is only
    as old as that decision, and a stale one costs nothing unsafe: the resume's claim is a create-once
    write after it, which fails if anyone wrote past it meanwhile. Offered to the very checkpointer that
    read it (its signing key, cache and lease), never to another one on the same store.
    """
    holder = [(checkpointer, head)]  # one list for every copy of the context: taken once, by whichever reads
    token = _OFFERED.set(holder)
    try:
        yield
    finally:
        holder.clear()
        _OFFERED.reset(token)


def _take_offered(checkpointer: ThreadReader, thread_id: str) -> Head | None:
    holder = _OFFERED.get()
    if not holder:
        return None
    offered_to, head = holder[0]
    if offered_to is not checkpointer or head.record.thread_id != thread_id:
        return None
    holder.clear()
    return head


class ThreadReader(RecordStore):
    """The reading side of a ``Checkpointer``."""

    async def _read(self, thread_id: str, seq: int) -> StoredCheckpoint | ClaimRecord | None:
        key = self._key(thread_id, seq)
        found = await self.storage.read(key)
        return None if found is None else self._parse(key, found[0])

    async def _read_checkpoint(self, thread_id: str, seq: int) -> StoredCheckpoint:
        record = await self._read(thread_id, seq)
        if not isinstance(record, StoredCheckpoint):
            raise CheckpointNotFoundError(f"thread {thread_id!r} has no checkpoint {seq:012d}")
        return record

    async def _chain(self, record: StoredCheckpoint, known: dict[int, StoredCheckpoint] | None = None
                     ) -> list[StoredCheckpoint]:
        """``record`` and the records it is built on, base after base (from ``known`` where it has them).

        A base that is gone is looked for once more in the record built on it: ``prune`` rewrites the
        oldest checkpoint it keeps whole before it deletes what that one was built on, so a reader
        that met the old version finds the whole one.
        """
        chain = [record]
        while (base_seq := chain[-1].base_seq) is not None:
            base = known.get(base_seq) if known is not None else None
            if base is None:
                found = await self._read(record.thread_id, base_seq)
                base = found if isinstance(found, StoredCheckpoint) else None
            if base is None:
                again = await self._read(record.thread_id, chain[-1].seq)
                if isinstance(again, StoredCheckpoint) and again.base_seq is None:
                    chain[-1] = again
                    break
                raise CheckpointCorruptError(
                    f"thread {record.thread_id!r}: checkpoint {chain[-1].checkpoint_id} is built on checkpoint "
                    f"{base_seq:012d}, which is missing (deleted outside statehitl?)"
                )
            chain.append(base)
        return chain

    async def _walk(self, record: StoredCheckpoint, known: dict[int, StoredCheckpoint] | None = None
                    ) -> tuple[CheckpointRecord, tuple[Link, ...]]:
        """Rebuild ``record``'s whole state from its base chain (from ``known`` where it has the records).

        A chain of deltas is read in the storage's one bulk read; a Fenwick chain base by base (at
        most log2(depth)+1 reads). Should the bulk read meet a damaged record, the chain is read base
        by base instead, so damage is reported only where the chain needs the record.
        """
        if known is None and self._bulk and record.base_seq is not None and record.base_seq == record.parent_seq:
            with contextlib.suppress(CheckpointCorruptError):
                known = checkpoints_of(await self._records(record.thread_id))
        chain = await self._chain(record, known)
        full = whole_record(chain[0], chain)
        links = tuple(
            Link(r.depth, r.seq, {c: p.start + len(p.items) for c, p in r.appends.items()}) for r in chain
        )
        return full, links

    async def _cold_head(self, thread_id: str) -> Head | None:
        """The thread's head in a process that knows nothing of it, on a store with a bulk read: that
        one read (one ``pread``, one ``Query`` per MB) instead of a listing, the head, then the rest.
        None if the thread has no records. A damaged record raises ``CheckpointCorruptError``: the
        caller then goes key by key, which fails only if the chain needs that record."""
        answers: dict[str, tuple[bytes, str]] = {}
        records = await self._records(thread_id, answers)
        if not records:
            self._warm.keep_index_version(thread_id, -1, ABSENT)  # a new thread: its first index write need not read
            return None
        head = records[max(records)]
        newest = head.record
        claim = newest if isinstance(newest, ClaimRecord) else None
        target: StoredCheckpoint | ClaimRecord | None = newest
        if claim is not None:
            target = records[claim.parent_seq].record if claim.parent_seq in records else None
        if not isinstance(target, StoredCheckpoint):
            raise CheckpointNotFoundError(f"thread {thread_id!r} has no checkpoint {newest.parent_seq:012d}")
        record, chain = await self._walk(target, checkpoints_of(records))
        cursor = Cursor(thread_id, slot=newest.seq, parent=record.seq, chain=chain, indexed=index_material(record))
        if claim is None:
            self._warm.remember(thread_id, head.data, head.token, target, whole=record, chain=chain)
        return Head(record, cursor, claim, answers_in(answers, record, self.signing_key))

    async def _lean_cold_head(self, thread_id: str) -> Head | object | None:
        """The thread's head in a process that knows nothing of it, from the newest record alone, when that record
        holds its whole state (no piece of an append-only channel continues one before it: a thread whose
        channels are all ordinary, as a LangGraph program's counters and flags): two small reads, whatever the
        thread's length. ``_NEW`` for a thread with no records; None when the state needs the chain (the bulk read
        then)."""
        keys = await self.storage.list(self._prefix(thread_id), limit=1)
        if not keys:
            return _NEW
        found = await self.storage.read(keys[0])
        if found is None:
            return None
        data, token = found
        newest = self._parse(keys[0], data)
        claim = newest if isinstance(newest, ClaimRecord) else None
        target = newest if claim is None else await self._read(thread_id, claim.parent_seq)
        if not isinstance(target, StoredCheckpoint) or any(p.start > 0 for p in target.appends.values()):
            return None
        record = whole_record(target, [target])
        chain = (Link(target.depth, target.seq, {c: len(p.items) for c, p in target.appends.items()}),)
        cursor = Cursor(thread_id, slot=newest.seq, parent=record.seq, chain=chain)
        cursor.index_known(index_material(record))
        if claim is None:
            self._warm.remember(thread_id, data, token, target, whole=record, chain=chain)
        return Head(record, cursor, claim)

    # -- reading ------------------------------------------------------------------------------------

    async def head(self, thread_id: str, checkpoint_id: str | int | None = None, *, pieces: bool = True
                   ) -> Head | None:
        """The thread's current checkpoint (or ``checkpoint_id``, to fork from it) ready to write after.

        When the newest record is the one this process last wrote or read here (``checkpoint/warm.py``),
        that one small read is all it takes: the chain is not read again. A thread this process knows
        nothing of is read in the storage's one bulk read, when it has one; ``pieces=False`` says the
        caller's state has no append-only channel, so each record holds it whole and the newest is read
        alone. A head offered by the caller (``offering_head``) is returned without a read.
        """
        if checkpoint_id is None and (offered := _take_offered(self, thread_id)) is not None:
            return offered
        known = checkpoint_id is None and self._warm.knows(thread_id)
        if checkpoint_id is None and self._bulk and not known:
            with contextlib.suppress(CheckpointCorruptError):
                lean = None if pieces else await self._lean_cold_head(thread_id)
                if lean is _NEW:
                    return None
                return lean if isinstance(lean, Head) else await self._cold_head(thread_id)
        if known and self._listed:  # the newest key and its version in one listing
            newest = await self.storage.list_versions(self._prefix(thread_id), limit=1)  # type: ignore[attr-defined]
            if newest and (warm := self._warm.lookup(thread_id, self._seq(newest[0][0]), token=newest[0][1])):
                return self._warm_head(thread_id, *warm)
            keys = [key for key, _ in newest]
        else:
            keys = await self.storage.list(self._prefix(thread_id), limit=1)
        if known and keys and self._versioned and not self._listed:
            token = await self.storage.version(keys[0])  # type: ignore[attr-defined]
            if token is not None and (warm := self._warm.lookup(thread_id, self._seq(keys[0]), token=token)):
                return self._warm_head(thread_id, *warm)
        found = await self.storage.read(keys[0]) if keys else None
        if found is None:
            if checkpoint_id is not None:
                raise CheckpointNotFoundError(f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}")
            if not keys:
                self._warm.keep_index_version(thread_id, -1, ABSENT)
            return None
        key, (data, token) = keys[0], found
        if known and not self._versioned and (warm := self._warm.lookup(thread_id, self._seq(key), data=data)):
            return self._warm_head(thread_id, *warm)
        return await self._read_head(thread_id, checkpoint_id, key, data, token)

    async def _read_head(self, thread_id: str, checkpoint_id: str | int | None, key: str, data: bytes, token: str
                         ) -> Head:
        """``head`` once the newest record (``data`` at version ``token``) was read and is not the one kept
        here: the checkpoint it is or claims after (or ``checkpoint_id``), with the chain read back to a
        whole state."""
        newest = self._parse(key, data)
        claim = newest if isinstance(newest, ClaimRecord) else None
        if checkpoint_id is not None:
            target = await self._read_checkpoint(thread_id, _parse_id(thread_id, checkpoint_id))
        elif isinstance(newest, ClaimRecord):
            target = await self._read_checkpoint(thread_id, newest.parent_seq)
        else:
            target = newest
        record, chain = await self._walk(target)
        cursor = Cursor(thread_id, slot=newest.seq, parent=record.seq, chain=chain)
        if checkpoint_id is None:
            cursor.index_known(index_material(record))  # runs end by indexing their last checkpoint
            if isinstance(newest, StoredCheckpoint):
                self._warm.remember(thread_id, data, token, newest, whole=record, chain=chain)
        return Head(record, cursor, claim, fork=checkpoint_id is not None and record.seq != newest.seq)

    def _warm_head(self, thread_id: str, record: CheckpointRecord, chain: tuple[Link, ...]) -> Head:
        cursor = Cursor(thread_id, slot=record.seq, parent=record.seq, chain=chain, indexed=index_material(record))
        return Head(record, cursor, own=self._warm.wrote(thread_id, record.seq))

    async def latest(self, thread_id: str) -> CheckpointRecord | None:
        """The thread's newest checkpoint, or None for a thread never written."""
        found = await self.head(thread_id)
        return None if found is None else found.record

    async def stored(self, thread_id: str, seq: int) -> StoredCheckpoint | None:
        """Checkpoint ``seq`` as stored, its append-only channels only the piece it added (one read, no chain):
        enough to say where it stands (step, tasks, parent, how its run began); None for a claim or nothing."""
        found = await self._read(thread_id, seq)
        return found if isinstance(found, StoredCheckpoint) else None

    async def checkpoint_record(self, thread_id: str, checkpoint_id: str | int) -> CheckpointRecord:
        """One checkpoint by id (also ``await checkpointer.get(thread_id, checkpoint_id)``);
        ``CheckpointNotFoundError`` (a ``KeyError``) naming thread and id if there is none."""
        record, _ = await self._walk(await self._read_checkpoint(thread_id, _parse_id(thread_id, checkpoint_id)))
        return record

    async def _records(self, thread_id: str, answers: dict[str, tuple[bytes, str]] | None = None,
                       refusals: dict[str, tuple[bytes, str]] | None = None) -> dict[int, _Stored]:
        """Every record of the thread (checkpoints of every branch, and claims) as stored, by sequence
        number: in the storage's one bulk read if it has one (``read_prefix``). The thread's stored
        answers and refused answers come with it; given ``answers`` or ``refusals``, they are put there."""
        found = await read_prefix(self.storage, self._prefix(thread_id))
        records = {}
        for key, (data, token) in found.items():
            if is_answer_key(key):
                if answers is not None:
                    answers[key] = (data, token)
                continue
            if is_refusal_key(key):
                if refusals is not None:
                    refusals[key] = (data, token)
                continue
            records[self._seq(key)] = _Stored(data, token, self._parse(key, data))
        return records

    async def count_checkpoints(self, thread_id: str) -> int:
        """How many checkpoints the thread has (every branch; claims not counted), without rebuilding them."""
        return len(checkpoints_of(await self._records(thread_id)))

    async def history(self, thread_id: str) -> list[CheckpointRecord]:
        """All of the thread's checkpoints (every branch), newest first."""
        stored = checkpoints_of(await self._records(thread_id))
        channels = ChannelBuilder()
        ordered = sorted(stored)
        for seq in ordered:
            record = stored[seq]
            if record.base_seq is not None and record.base_seq not in stored:  # pruned: read from its own chain
                chain = await self._chain(record, stored)
                for base in reversed(chain[1:]):
                    channels.add(base)
            channels.add(record)
        return [channels.whole(stored[seq]) for seq in reversed(ordered)]

    async def claims(self, thread_id: str) -> list[ClaimRecord]:
        """The thread's claims, newest first: the numbers between its checkpoints that resumes took (who
        claimed the thread, acting on which answers, and how each was settled)."""
        records = await self._records(thread_id)
        return [record for seq in sorted(records, reverse=True)
                if isinstance(record := records[seq].record, ClaimRecord)]


    # -- the thread index ---------------------------------------------------------------------------

    async def threads(self, status: RecordStatus | None = None, *,
                      unreadable: dict[str, str] | None = None) -> list[ThreadIndex]:
        """Every thread's index entry (optionally only those with ``status``), by thread id.

        Reads one small record per thread, never checkpoints: ``threads("interrupted")`` is the list of
        threads waiting on a human, with their pending interrupts. (The listing it starts from also
        passes over the audit entries ``prune`` kept beside the index entries.) An entry that cannot be
        read (damaged, or written outside statehitl) is left out and reported, never allowed to hide the
        others: into ``unreadable`` (thread id: why) when given, else as a logged warning.
        """
        entries = []
        bulk = await read_entries(self.storage, self.signing_key)
        for thread_id in bulk if bulk is not None else await indexed_threads(self.storage):
            try:
                entry = await self.thread_info(thread_id) if bulk is None else bulk[thread_id]
                if isinstance(entry, CheckpointCorruptError):
                    raise entry
            except CheckpointCorruptError as exc:
                _left_out(thread_id, exc, unreadable)
                continue
            if entry is not None and (status is None or entry.status == status):
                entries.append(entry)
        return entries

    async def entries_after(self, after: str | None, *, batch: int,
                            unreadable: dict[str, str] | None = None) -> AsyncGenerator[tuple[str, ThreadIndex, bool]]:
        """The threads' index entries after the key ``after``, in the store's paging order (by thread id, but
        DynamoDB's scan order on DynamoDB), read ``batch`` at a time: each as its key (where a next page
        starts after), the entry, and whether it is the store's last. Unreadable ones are left out and
        reported as ``threads`` does."""
        while True:
            entries, next_after = await read_entries_page(self.storage, self.signing_key, limit=batch, after=after)
            for number, read in enumerate(entries, 1):
                if isinstance(read.entry, CheckpointCorruptError):
                    _left_out(read.thread_id, read.entry, unreadable)
                    continue
                yield read.key, read.entry, next_after is None and number == len(entries)
            if next_after is None:
                return
            after = next_after

    async def threads_page(self, status: RecordStatus | None = None, *, limit: int, after: str | None = None,
                           unreadable: dict[str, str] | None = None) -> tuple[list[ThreadIndex], str | None]:
        """The next ``limit`` threads' index entries (only those with ``status``, if given) after the key
        ``after`` (None: from the start), in the store's paging order (``entries_after``), and the key the
        next page starts after: None once the store has no more. A page reads about ``limit`` entries
        (more where many threads have another status), never the whole index: one more than it shows, so
        that a page which reaches the end of the store says so rather than lead to an empty one."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit!r}")
        found: list[ThreadIndex] = []
        async with contextlib.aclosing(self.entries_after(after, batch=limit + 1, unreadable=unreadable)) as read:
            async for key, entry, last in read:
                if status is None or entry.status == status:
                    found.append(entry)
                if len(found) >= limit:
                    return found, None if last else key
        return found, None

    async def thread_info(self, thread_id: str) -> ThreadIndex | None:
        """One thread's index entry: where its last run stopped, and what it waits on."""
        return await read_index(self.storage, thread_id, self.signing_key)


def _left_out(thread_id: str, exc: CheckpointCorruptError, unreadable: dict[str, str] | None) -> None:
    """A thread whose index entry cannot be read, left out of a listing: said in ``unreadable`` (thread id:
    why) when the caller collects them, else logged."""
    if unreadable is None:
        logger.warning("thread %s: its index entry cannot be read, left out of the listing: %s", thread_id, exc)
    else:
        unreadable[thread_id] = str(exc)


def _parse_id(thread_id: str, checkpoint_id: str | int) -> int:
    return checkpoint_ids.parse(thread_id, checkpoint_id)  # another thread's tagged id is refused, not forked from


class _Stored(NamedTuple):
    """A record as the storage gave it: its bytes, its version token, and the record they hold."""

    data: bytes
    token: str
    record: StoredCheckpoint | ClaimRecord


def checkpoints_of(records: dict[int, _Stored]) -> dict[int, StoredCheckpoint]:
    return {seq: s.record for seq, s in records.items() if isinstance(s.record, StoredCheckpoint)}

