"""The checkpoint engine: every backend's semantics, written once on the four ``Storage`` primitives.

Layout of a thread (``<slot>`` is ``999999999999 - seq``, so the newest record lists first and
"what is the head?" is one ``list(limit=1)``, a single request on S3 or DynamoDB):

- ``threads/<thread>/<slot>``: immutable records, created once. A checkpoint (``StoredCheckpoint``)
  or a claim (``ClaimRecord``). Creating slot N+1 is the compare-and-set on the head: of two writers
  that both read N, one creates N+1 and the other gets ``CheckpointConflict``.
- ``index/<thread>/entry``: the ``ThreadIndex`` summary (``checkpoint/index.py``), for listing threads by
  status without reading checkpoints. It is a cache: the records are the truth.
- ``machines/<fingerprint>``: the shape of a machine that left a thread waiting, so a resume against
  changed code can say what changed.
- ``threads/<thread>/a.<checkpoint>.<interrupt>``: an interrupt's one binding answer, and
  ``threads/<thread>/r.<checkpoint>.<interrupt>.<nonce>``: an answer refused because its responder may
  not answer (``answer_records.py``, ``refusals.py``). Both list after every slot.
- ``index/<thread>/audit.<seq>``: the answers checkpoint ``seq`` carried, as whole audit entries, kept
  there by ``prune`` before it deletes that checkpoint or the one whose interrupts they answered
  (``checkpoint/audit.py``); ``delete_thread`` removes them.

Reading a thread: a process keeps the whole state of the threads it last wrote or read
(``checkpoint/warm.py``), and checks it with one small read of the head; a thread it does not know is
read in the storage's one bulk read when it has one (``SupportsReadAll``), else base by base along
the Fenwick chain (``checkpoint/chain.py`` says which records each store writes).

Resuming first writes a claim with a lease into the next slot, so of two processes resuming the same
interrupt exactly one proceeds, before any node, hook or tool runs; a claim whose process died can be
taken over once its lease expires. Running checkpoints carry the same lease, renewed every step.

Retention is explicit: ``delete_thread`` removes a thread, ``prune`` keeps a thread's newest
checkpoints (the oldest of them rewritten whole if need be), ``sweep_expired`` deletes threads idle past the
``ttl``. The last two also run the storage's optional ``cleanup`` (``SupportsCleanup``), which is
the only place crash debris that no key refers to is ever removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar, cast

from pydantic import BaseModel, ValidationError

from statehitl.checkpoint.answer_records import answers_in, is_answer_key
from statehitl.checkpoint.audit import keep_audit, read_audit
from statehitl.checkpoint.chain import Cursor, Link, StateCodec, assemble, base_link, extend_chain, whole_record
from statehitl.checkpoint.codec import decode, decode_model, encode, encode_counted
from statehitl.checkpoint.index import (
    index_material,
    index_prefix,
    indexed_threads,
    read_index,
    read_index_versioned,
    write_index,
)
from statehitl.checkpoint.records import (
    AnswerRecord,
    AuditEntry,
    CheckpointRecord,
    ClaimRecord,
    MachineShape,
    Piece,
    RecordStatus,
    StoredAnswer,
    StoredCheckpoint,
    ThreadIndex,
)
from statehitl.checkpoint.refusals import is_refusal_key, refusal_entries
from statehitl.checkpoint.step_writes import reference_writes, split_value_writes
from statehitl.checkpoint.storage import (
    ABSENT,
    Storage,
    SupportsCleanup,
    compresses_by_default,
    has_list_versions,
    has_read_all,
    has_version,
    read_prefix,
    validate_thread_id,
    writes_inline,
)
from statehitl.checkpoint.url import checkpointer_options_of, storage_from_url
from statehitl.checkpoint.warm import WarmHeads, shared_heads
from statehitl.errors import (
    ActionOutcomeUnknownError,
    CheckpointConflict,
    CheckpointCorruptError,
    CheckpointNotFoundError,
    NotInterruptedError,
    StorageError,
)

__all__ = ["Checkpointer", "Head", "owner_id"]

T = TypeVar("T")

_SLOTS = 10**12


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


class Checkpointer:
    """Reads and commits a thread's checkpoints on any ``Storage``.

    ``signing_key`` signs every record (HMAC-SHA256) and refuses modified ones; ``ttl`` (seconds)
    marks threads idle that long as expired for ``sweep_expired``; ``lease_seconds`` is how long a
    claim or a running step holds a thread before another process may take it over. ``compress``
    stores the thread's records compressed (``checkpoint/codec.py``): about 2.4x fewer bytes written,
    stored and read, for 8-30 µs per write. ``None`` (the default) compresses on every
    store but ``MemoryStorage``, whose bytes cost nothing (``storage.compresses_by_default``). Every
    checkpointer reads both kinds; ``compress=False`` is for a fleet some of whose processes still run a
    statehitl from before compression, which reads only uncompressed records (``docs/checkpoints.md``, "Compression").
    """

    def __init__(
        self,
        storage: Storage,
        *,
        signing_key: bytes | None = None,
        ttl: float | None = None,
        lease_seconds: float = 60.0,
        compress: bool | None = None,
    ) -> None:
        if compress is not None and not isinstance(compress, bool):
            raise TypeError(f"compress must be True, False or None (the store's default), got {compress!r}")
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds!r}")
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive seconds or None, got {ttl!r}")
        self.storage = storage
        self.signing_key = signing_key
        self.ttl = ttl
        self.lease_seconds = lease_seconds
        self.compress = compresses_by_default(storage) if compress is None else compress
        self._bulk = has_read_all(storage)
        """Whether records are written as deltas from their parent and chains read in one bulk read."""
        self._versioned = has_version(storage)
        """Whether a known head is checked by its version token alone, without reading its value."""
        self._listed = has_list_versions(storage)
        """Whether the listing that finds the newest key also gives its version token (no second request)."""
        scope = getattr(storage, "cache_scope", None)
        self._warm = shared_heads(scope, signing_key) if isinstance(scope, str) else WarmHeads()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> Checkpointer:
        """A checkpointer on the storage a URL names: ``file://DIR``, ``s3://...``, ``dynamodb://...``, ``memory://``.

        ``memory://`` makes a new, empty store on every call, so two ``from_url("memory://")`` share
        nothing; ``memory://NAME`` is one store per name, shared within this process only. Neither
        survives the process: use them in tests, not for threads resumed elsewhere. The query parameter
        ``compress=true|false`` (any scheme) is the ``compress`` option; giving it both ways is an error.
        """
        url, from_query = checkpointer_options_of(url)
        twice = sorted(from_query.keys() & options.keys())
        if twice:
            raise ValueError(f"{', '.join(twice)} is given twice, in the URL and as an option; give it once")
        return cls(storage_from_url(url), **options, **from_query)

    # -- keys and records -------------------------------------------------------------------------

    @staticmethod
    def _prefix(thread_id: str) -> str:
        return f"threads/{validate_thread_id(thread_id)}/"

    def _key(self, thread_id: str, seq: int) -> str:
        return f"{self._prefix(thread_id)}{_SLOTS - 1 - seq:012d}"

    @staticmethod
    def _seq(key: str) -> int:
        return _SLOTS - 1 - int(key.rsplit("/", 1)[1])

    def _encode(self, key: str, record: BaseModel) -> bytes:
        return encode(record, self.signing_key, place=key, compress=self.compress)

    def _parse(self, key: str, data: bytes) -> StoredCheckpoint | ClaimRecord:
        """The record stored under ``key``, checked to belong there: its slot is the key's, and what it
        follows or is built on comes before it, so no chain of records can loop (a record copied under
        another key fails this even unsigned; signed, it fails its signature first)."""
        where = f"record {key!r}"
        raw = decode(where, data, self.signing_key, place=key)
        thread = key.split("/", 2)[1]
        try:
            if raw.get("kind") == "claim":
                record: StoredCheckpoint | ClaimRecord = ClaimRecord.model_validate(raw)
            else:
                raw.setdefault("thread_id", thread)  # a stored checkpoint leaves it to its key
                record = StoredCheckpoint.model_validate(raw)
        except ValidationError as exc:
            raise CheckpointCorruptError(f"{where} is malformed: {exc.errors(include_url=False)}") from None
        seq = self._seq(key)
        before = [s for s in (record.parent_seq, getattr(record, "base_seq", None)) if s is not None]
        if record.thread_id != thread or record.seq != seq or any(s >= seq for s in before):
            raise CheckpointCorruptError(
                f"{where} is not the record of that place: it says thread {record.thread_id!r}, slot {record.seq}, "
                f"following {record.parent_seq} (copied here from elsewhere, or edited)"
            )
        return record

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
                known = _checkpoints(await self._records(record.thread_id))
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
        record, chain = await self._walk(target, _checkpoints(records))
        cursor = Cursor(thread_id, slot=newest.seq, parent=record.seq, chain=chain)
        cursor.indexed = index_material(record)
        if claim is None:
            self._warm.remember(thread_id, head.data, head.token, target, record, chain)
        return Head(record, cursor, claim, answers_in(answers, record, self.signing_key))

    # -- reading ------------------------------------------------------------------------------------

    async def head(self, thread_id: str, checkpoint_id: str | int | None = None) -> Head | None:
        """The thread's current checkpoint (or ``checkpoint_id``, to fork from it) ready to write after.

        When the newest record is the one this process last wrote or read here (``checkpoint/warm.py``),
        that one small read is all it takes: the chain is not read again. A thread this process knows
        nothing of is read in the storage's one bulk read, when it has one.
        """
        known = checkpoint_id is None and self._warm.knows(thread_id)
        if checkpoint_id is None and self._bulk and not known:
            with contextlib.suppress(CheckpointCorruptError):
                return await self._cold_head(thread_id)
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
            cursor.indexed = index_material(record)  # runs end by indexing their last checkpoint
            if isinstance(newest, StoredCheckpoint):
                self._warm.remember(thread_id, data, token, newest, record, chain)
        return Head(record, cursor, claim, fork=checkpoint_id is not None and record.seq != newest.seq)

    @staticmethod
    def _warm_head(thread_id: str, record: CheckpointRecord, chain: tuple[Link, ...]) -> Head:
        cursor = Cursor(thread_id, slot=record.seq, parent=record.seq, chain=chain)
        cursor.indexed = index_material(record)
        return Head(record, cursor)

    async def latest(self, thread_id: str) -> CheckpointRecord | None:
        """The thread's newest checkpoint, or None for a thread never written."""
        found = await self.head(thread_id)
        return None if found is None else found.record

    async def get(self, thread_id: str, checkpoint_id: str | int) -> CheckpointRecord:
        """One checkpoint by id; ``CheckpointNotFoundError`` (a ``KeyError``) naming thread and id if there is none."""
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
        return len(_checkpoints(await self._records(thread_id)))

    async def history(self, thread_id: str) -> list[CheckpointRecord]:
        """All of the thread's checkpoints (every branch), newest first."""
        stored = _checkpoints(await self._records(thread_id))
        result = []
        for seq in sorted(stored, reverse=True):
            chain = await self._chain(stored[seq], stored)
            result.append(whole_record(chain[0], chain))
        return result

    # -- writing ------------------------------------------------------------------------------------

    def ensure_free(self, head: Head, owner: str | None) -> None:
        """Raise ``CheckpointConflict`` if another run holds the thread (a live claim or run lease), and
        ``ActionOutcomeUnknownError`` if the last resume acted on answers and never recorded how it ended."""
        now = time.time()
        record, thread = head.record, head.record.thread_id
        holder = head.claim
        if holder is not None and holder.owner != owner:
            ended = _ENDED_HERE.get(holder.owner)  # None: running, or another process's
            alive = holder.lease_until > now and ended is None
            if holder.acting and not alive and ended is not False:
                raise _outcome_unknown(holder, record)
            if alive:
                acted = "its answer is being acted on, do not resume twice" if holder.acting else "do not resume twice"
                raise CheckpointConflict(
                    f"thread {thread!r} is being resumed by another process ({holder.owner}) until its lease "
                    f"expires in {holder.lease_until - now:.1f}s; {acted}. Should that run have stopped without "
                    "recording how it ended, the thread says so once the lease runs out"
                )
        if head.cursor.slot == record.seq and record.status == "executing" and (record.owner is None
                                                                                or record.owner != owner):
            if _running_elsewhere(record, now):
                raise CheckpointConflict(
                    f"thread {thread!r} is running in another process ({record.owner}); it can be taken over "
                    f"if that process stops renewing its lease (in {(record.lease_until or now) - now:.1f}s)"
                )
            if record.acting is not None:
                raise _outcome_unknown_mid_run(record)

    async def claim(self, head: Head, owner: str, answered: list[AnswerRecord] | None = None) -> None:
        """Take the exclusive right to continue ``head.record``; ``CheckpointConflict`` if someone has it.

        Checked and written before anything runs, so a losing process does no work at all. A claim or
        running step whose lease expired (its process died) is taken over, unless it acted on answers
        (``ActionOutcomeUnknownError``). A resume's claim carries the ``answered`` it acts on and is
        written durably: it is the record that the action started, and must outlive a power cut that
        the action's own effects outlive.
        """
        self.ensure_free(head, owner)
        now = time.time()
        record, thread = head.record, head.record.thread_id
        # A claim of this process's whose run never started did nothing: this one says so, for the audit.
        never_ran = head.claim is not None and _ENDED_HERE.get(head.claim.owner) is False
        claim = ClaimRecord(
            thread_id=thread,
            seq=head.cursor.next_slot,
            parent_seq=record.seq,
            owner=owner,
            lease_until=now + self.lease_seconds,
            created_at=now,
            answered=answered or [],
            settles="released" if never_ran else None,
        )
        key = self._key(thread, claim.seq)
        try:
            await self.create(key, self._encode(key, claim), durable=claim.acting)
        except CheckpointConflict:
            raise CheckpointConflict(
                f"thread {thread!r} was claimed or advanced by another process while this one was about to "
                "resume it; only one resume of an interrupt proceeds"
            ) from None
        except StorageError:
            _ended_here(owner, acted=False)  # it may be stored, but its run never started: nothing was done
            raise
        head.cursor.slot = claim.seq
        head.cursor.owner = owner
        head.cursor.claimed = True
        head.cursor.acting = claim.seq if claim.acting else None
        head.cursor.settled = False
        if claim.acting:
            try:
                await self._refuse_rolled_back(thread, claim.seq)
            except BaseException:
                _ended_here(owner, acted=False)  # nothing ran, as this process knows; the release tells the others
                with contextlib.suppress(StorageError, CheckpointConflict):
                    await self.release(head.cursor)
                raise

    async def _refuse_rolled_back(self, thread_id: str, slot: int) -> None:
        """Refuse to act on answers to a thread whose records were rolled back (restored from an older
        copy, a newest object deleted) behind its index entry, which would otherwise read as an older
        state whose interrupt is pending again.

        The index entry of checkpoint N is written with or after it, when slot N-1 was there; so once
        slot ``slot`` was free for this claim, an entry for a checkpoint past ``slot`` proves records
        were lost. (An entry for N when N failed to store, after N-1, is not past ``slot``: no false
        alarm.) Records and entry rolled back together, or the newest record alone, are not detectable
        this way (the file store's synced-to mark catches the latter on its own logs).
        """
        entry, version = await read_index_versioned(self.storage, thread_id, self.signing_key)
        # The run ends by rewriting this entry: knowing its version spares it reading the entry again.
        self._warm.keep_index_version(thread_id, -1 if entry is None else entry.seq,
                                      ABSENT if entry is None else version)
        if entry is not None and entry.seq > slot:
            raise CheckpointCorruptError(
                f"thread {thread_id!r}: its index entry describes checkpoint {entry.seq:012d}, but its records "
                f"end before {slot:012d}: records were lost (restored from an older copy, or deleted outside "
                "statehitl). Not resumed: its interrupts may already have been answered and acted on. Restore "
                "the records from a copy taken after the newest run, or delete the thread"
            )

    @staticmethod
    def finished(cursor: Cursor, *, acted: bool) -> None:
        """The run that holds ``cursor`` is over, however it ended; ``acted``: its handlers were given
        answers. If its last record still holds a lease (it failed, and so did the write that would have
        released it), this process knows that lease protects no live run: the next call here goes on at
        once, or, if the run acted on answers, is told at once that the action's outcome is unknown,
        instead of hearing that another process holds the thread until the lease runs out."""
        if cursor.owner is not None and not cursor.settled:
            _ended_here(cursor.owner, acted=acted and cursor.acting is not None)

    async def release(self, cursor: Cursor) -> None:
        """Give up a claim whose run did nothing with its answers (it stopped before any handler was given
        one), so a retry need not wait out the lease and no one is asked whether its action ran."""
        if not cursor.claimed or cursor.owner is None or cursor.parent is None:
            return
        await self._settle(cursor.thread_id, cursor.next_slot, cursor.parent, cursor.owner, "released")
        cursor.slot = cursor.next_slot
        cursor.settled = True

    async def retry_unknown(self, thread_id: str, *, responder: str | None = None, comment: str | None = None
                            ) -> None:
        """A human's go-ahead after ``ActionOutcomeUnknownError``: they checked the outside world (by the
        tools' idempotency keys) and the action may run again. The thread then waits on its interrupts
        as before, and the next answer runs the action again; the audit trail keeps both answers, the
        unknown outcome and this go-ahead. ``NotInterruptedError`` if the thread has no such action."""
        head = await self.head(validate_thread_id(thread_id))
        try:
            if head is not None:
                self.ensure_free(head, None)
        except ActionOutcomeUnknownError:
            assert head is not None
            parent = head.record.seq  # the interrupted checkpoint, or where the run stopped
            await self._settle(thread_id, head.cursor.next_slot, parent, responder or "", "retry", comment)
            return
        raise NotInterruptedError(f"thread {thread_id!r} has no action of unknown outcome to retry")

    async def _settle(self, thread_id: str, seq: int, parent: int, owner: str, how: Literal["released", "retry"],
                      comment: str | None = None) -> None:
        """Write the claim that settles the one in slot ``seq - 1``; someone who moved on first wins."""
        now = time.time()
        settled = ClaimRecord(thread_id=thread_id, seq=seq, parent_seq=parent, owner=owner, lease_until=now,
                              created_at=now, settles=how, comment=comment)
        key = self._key(thread_id, seq)
        with contextlib.suppress(CheckpointConflict):  # someone else moved on: nothing left to settle
            await self.create(key, self._encode(key, settled), durable=how == "retry")

    async def create(self, key: str, data: bytes, *, durable: bool) -> str:
        """Create ``key`` once; ``CheckpointConflict`` if it exists. A write that failed for the store's sake
        (an outage, a lost response) may still have landed: if the key now holds exactly these bytes, it
        did, and that is success."""
        try:
            return await self.storage.write(key, data, expect=ABSENT, durable=durable)
        except StorageError:
            landed = await _suppressed(self.storage.read(key))
            if landed is not None and landed[0] == data:
                return landed[1]
            raise

    async def commit(
        self,
        cursor: Cursor,
        state: Any,
        codec: StateCodec,
        *,
        durable: bool,
        status: RecordStatus,
        held: bool = False,
        index: bool = False,
        machine: str,
        fingerprint: str,
        **fields: Any,
    ) -> StoredCheckpoint:
        """Write the thread's next checkpoint after ``cursor`` and advance the cursor.

        A failed index write does not undo the stored checkpoint: the cursor advances, and the error
        waits in ``cursor.index_error`` for the run to raise once it is done with the thread.

        Append-only channels are written as the items added since the new record's base; everything
        else whole. ``CheckpointConflict`` if another writer took the slot first.
        ``held`` marks a checkpoint the run goes on from: it carries the owner's lease, so no other
        process takes the thread over while the run is alive. ``index`` also brings the thread's index
        entry up to date (a run's last checkpoint); the two writes overlap when the storage forces the
        checkpoint to disk off the event loop (file storage does, except under a sync call). The entry
        is rewritten only when what it says changes (status, position, pending interrupts; and always
        with a ``ttl``, whose expiry it carries): a conversation that completes turn after turn costs
        one write per turn, not three. The record is validated before anything is written: a missing
        or unknown field, or a value it cannot hold, raises pydantic's ``ValidationError``.
        """
        now = time.time()
        depth = 1 if cursor.migrated else cursor.depth + 1
        base = None if cursor.migrated else base_link(cursor.chain, depth, delta=self._bulk)
        lengths = {c: codec.length(state, c) for c in codec.append_channels}
        appends = {}
        for channel, length in lengths.items():
            start = base.lengths.get(channel, 0) if base is not None else 0
            start = start if start <= length else 0
            appends[channel] = {"start": start, "items": codec.dump_items(state, channel, start)}
        # Validated from plain data: pydantic's validator fills in the defaults and builds the pieces faster
        # than model_construct's loop over the fields in Python, and checks the record on the way.
        record = StoredCheckpoint.model_validate({
            **fields,
            "thread_id": cursor.thread_id,
            "seq": cursor.next_slot,
            "parent_seq": cursor.parent,
            "depth": depth,
            "base_seq": None if base is None else base.seq,
            "created_at": round(now, 3),  # to the millisecond: the digits after it are bytes on every step
            "machine": machine,
            "fingerprint": fingerprint,
            "status": status,
            "values": codec.dump_values(state),
            "appends": appends,
            "owner": cursor.owner if held else None,
            "lease_until": now + self.lease_seconds if held else None,
        })
        writes, same = split_value_writes(reference_writes(record.writes, appends), record.values)
        lean = {"writes": writes, "value_writes": same} if writes is not record.writes else {}
        stored = record.model_copy(update=lean) if lean else record
        key = self._key(cursor.thread_id, record.seq)
        data, replaced = encode_counted(stored, self.signing_key, place=key, compress=self.compress)
        put = self.create(key, data, durable=durable)
        material = index_material(record) if index else None  # held checkpoints (most) are not indexed
        index = index and (self.ttl is not None or material != cursor.indexed)
        indexed: object = None
        try:
            if index:
                outcomes: list[object]
                if writes_inline(self.storage):  # nothing to overlap: spare the tasks
                    outcomes = [await _outcome(put), await _outcome(self.write_index(record))]
                else:
                    outcomes = list(await asyncio.gather(put, self.write_index(record), return_exceptions=True))
                written, indexed = outcomes
                if isinstance(written, BaseException) and not isinstance(indexed, BaseException):
                    # The entry now describes a checkpoint that is not stored (it lost the race, or the store
                    # failed): describe the one that is, if the store lets us.
                    with contextlib.suppress(StorageError, CheckpointConflict, CheckpointCorruptError):
                        winner = await self.head(cursor.thread_id)
                        if winner is not None:
                            await self.write_index(winner.record, replace_same_seq=True)
                if isinstance(written, BaseException):
                    raise written
                token = cast(str, written)
            else:
                token = await put
        except CheckpointConflict:
            raise CheckpointConflict(
                f"thread {cursor.thread_id!r} moved past checkpoint {cursor.slot} while this run was working "
                "(another process resumed or updated it); reload the thread and try again"
            ) from None
        # The checkpoint is stored: the cursor moves past it even if its index entry failed, so what the
        # run does next (end, or release its lease) builds on it instead of colliding with it.
        parent, cursor.slot, cursor.parent = cursor.parent, record.seq, record.seq
        cursor.settled = record.lease_until is None and record.acting is None
        if index and not isinstance(indexed, BaseException):
            cursor.indexed = material
        cursor.chain = extend_chain(() if cursor.migrated else cursor.chain, Link(depth, record.seq, lengths))
        cursor.migrated = False
        if replaced:  # the store holds other text than this record: the next read takes the store's
            self._warm.forget(cursor.thread_id)
        else:
            self._warm.advance(cursor.thread_id, parent, data, token, record, cursor.chain)
        if isinstance(indexed, Exception):
            indexed.add_note(f"checkpoint {record.checkpoint_id} of thread {cursor.thread_id!r} is committed; only its "
                             "index entry (what thread listings and the inbox show) is stale until the thread's next "
                             "run stops")
            cursor.index_error = indexed
        elif isinstance(indexed, BaseException):
            raise indexed
        return record

    # -- the thread index ---------------------------------------------------------------------------

    async def write_index(self, record: CheckpointRecord, *, replace_same_seq: bool = False) -> None:
        """Record where the thread stopped, for listing. Newer entries win; racing writers retry.

        Writes on the entry's version as this process last knew it, without reading it first (a stale
        one loses the compare-and-set, and the write reads and retries)."""
        thread_id = record.thread_id
        known = None if replace_same_seq else self._warm.index_version(thread_id)
        version = await write_index(self.storage, record, ttl=self.ttl, signing_key=self.signing_key,
                                    replace_same_seq=replace_same_seq, known=known)
        self._warm.keep_index_version(thread_id, record.seq, version)

    async def threads(self, status: RecordStatus | None = None) -> list[ThreadIndex]:
        """Every thread's index entry (optionally only those with ``status``), by thread id.

        Reads one small record per thread, never checkpoints: ``threads("interrupted")`` is the list of
        threads waiting on a human, with their pending interrupts. (The listing it starts from also
        passes over the audit entries ``prune`` kept beside the index entries.)
        """
        entries = []
        for thread_id in await indexed_threads(self.storage):
            entry = await self.thread_info(thread_id)
            if entry is not None and (status is None or entry.status == status):
                entries.append(entry)
        return entries

    async def thread_info(self, thread_id: str) -> ThreadIndex | None:
        """One thread's index entry: where its last run stopped, and what it waits on."""
        return await read_index(self.storage, thread_id, self.signing_key)

    # -- the audit trail ------------------------------------------------------------------------------

    async def audit(self, thread_id: str) -> list[AuditEntry]:
        """Every answer applied to the thread's interrupts, oldest first (kept through ``prune``): the
        entries its checkpoints carry (``answered``) and those ``prune`` kept beside its index; and, from
        its claims, answers acted on whose outcome was never recorded and the go-aheads to retry them; and
        the answers refused because their responder may not answer (outcome ``refused``)."""
        refusals: dict[str, tuple[bytes, str]] = {}
        records = await self._records(thread_id, refusals=refusals)
        claims = {seq: s.record for seq, s in records.items() if isinstance(s.record, ClaimRecord)}
        return await read_audit(self.storage, thread_id, _checkpoints(records), self.signing_key, claims,
                                refusal_entries(refusals, thread_id, self.signing_key))

    # -- machines -----------------------------------------------------------------------------------

    async def remember_machine(self, fingerprint: str, shape: dict[str, Any]) -> None:
        """Store a machine's shape once, so a later resume with changed code can say what changed."""
        if self._warm.shape_stored(fingerprint):  # this process stored it (or found it) already
            return
        key = f"machines/{fingerprint}"
        with contextlib.suppress(CheckpointConflict):  # already stored: immutable per fingerprint
            await self.storage.write(key, self._encode(key, MachineShape(shape=shape)), expect=ABSENT, durable=False)
        self._warm.keep_shape(fingerprint)

    async def machine_shape(self, fingerprint: str) -> dict[str, Any] | None:
        """The stored shape of the machine with ``fingerprint``, if it was remembered."""
        key = f"machines/{fingerprint}"
        found = await self.storage.read(key)
        if found is None:
            return None
        return decode_model(MachineShape, f"machine record {key!r}", found[0], self.signing_key, place=key).shape

    # -- retention ----------------------------------------------------------------------------------

    async def delete_thread(self, thread_id: str) -> int:
        """Remove every record of the thread (checkpoints, claims, answers, index and audit trail);
        returns how many."""
        self._warm.forget(thread_id)
        removed = await self.storage.delete(self._prefix(thread_id))
        return removed + await self.storage.delete(index_prefix(thread_id))

    async def prune(self, thread_id: str, keep_last: int) -> int:
        """Keep the newest ``keep_last`` checkpoints; delete the rest.

        A kept checkpoint built on one that goes (a delta from its parent, or a Fenwick piece on an
        older base) is first rewritten whole under its own key: the same checkpoint, which no longer
        needs what is deleted. Also runs the storage's ``cleanup`` (crash debris, see
        ``SupportsCleanup``): on DynamoDB that is a full-table scan, so prune from a maintenance job
        rather than on every request. Returns how many of the thread's records were deleted (debris
        and rewrites not counted).
        """
        if keep_last < 1:
            raise ValueError(f"keep_last must be at least 1, got {keep_last!r}")
        self._warm.forget(thread_id)
        records = await self._records(thread_id)
        checkpoints = _checkpoints(records)
        keep = set(sorted(checkpoints, reverse=True)[:keep_last])
        if records:
            keep.add(max(records))  # the head slot, even when it is a claim in force
        for seq in sorted(keep & checkpoints.keys()):
            record = checkpoints[seq]
            if record.base_seq is not None and record.base_seq not in keep:
                await self._rewrite_whole(await self._chain(record, checkpoints), records[seq].token)
        # The audit entries of the checkpoints that go stay, beside the index, before anything goes.
        await keep_audit(self.storage, thread_id, checkpoints, set(checkpoints) - keep, self.signing_key)
        removed = 0
        for seq in records:
            if seq not in keep:
                removed += await self.storage.delete(self._key(thread_id, seq))
        await _cleanup(self.storage)
        return removed

    async def _rewrite_whole(self, chain: list[StoredCheckpoint], token: str) -> None:
        """Store ``chain[0]`` again with every piece from item 0, so it needs no base; a compare-and-set
        on the version it was read at (``token``), so a racing prune or delete is noticed, not overwritten."""
        record = chain[0]
        whole = assemble(chain)
        pieces = {c: Piece(start=0, items=whole[c]) for c in record.appends}
        rewritten = record.model_copy(update={"base_seq": None, "appends": pieces})
        try:
            key = self._key(record.thread_id, record.seq)
            await self.storage.write(key, self._encode(key, rewritten), expect=token)
        except CheckpointConflict:
            raise CheckpointConflict(f"thread {record.thread_id!r}: checkpoint {record.checkpoint_id} was changed "
                                     "or deleted while it was being pruned") from None

    async def sweep_expired(self, now: float | None = None) -> list[str]:
        """Delete every thread whose TTL ran out (by its index entry); returns their ids.

        Then runs the storage's ``cleanup``, as ``prune`` does: a sweep is the maintenance job.
        """
        moment = time.time() if now is None else now
        expired = [e.thread_id for e in await self.threads() if e.expires_at is not None and e.expires_at <= moment]
        for thread_id in expired:
            await self.delete_thread(thread_id)
        await _cleanup(self.storage)
        return expired

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r})"


def owner_id() -> str:
    """Who holds a claim: host and process (for the conflict message), and a nonce for this call."""
    return f"{_this_process()}:{os.urandom(4).hex()}"


@functools.cache
def _this_process() -> str:
    """``host:pid``, asked once: both are system calls, which cost more than the rest of ``owner_id``."""
    return f"{socket.gethostname()}:{os.getpid()}"


# A forked worker is another process: it asks again, so that it names its own pid.
os.register_at_fork(after_in_child=_this_process.cache_clear)


def _parse_id(thread_id: str, checkpoint_id: str | int) -> int:
    try:
        seq = int(checkpoint_id)
    except (TypeError, ValueError):
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}") from None
    if not 0 <= seq < _SLOTS:
        raise CheckpointNotFoundError(f"{checkpoint_id!r} is not a checkpoint id of thread {thread_id!r}")
    return seq


_ENDED_HERE: OrderedDict[str, bool] = OrderedDict()
"""Owners of this process's runs that ended while their last record still held a lease (they failed, and
so did the write that would have released it), each with whether it acted on answers (its claim recorded
them and its handlers were given them): their leases protect no live run. Only such failures are kept,
the most recent few thousand."""


def _ended_here(owner: str, *, acted: bool) -> None:
    _ENDED_HERE[owner] = acted
    if len(_ENDED_HERE) > 4096:
        _ENDED_HERE.popitem(last=False)


def _outcome_unknown(claim: ClaimRecord, record: CheckpointRecord) -> ActionOutcomeUnknownError:
    names = {i.id: i.name for i in record.interrupts}
    answers = ", ".join(
        f"{names.get(a.interrupt_id, '?')!r} (id {a.interrupt_id}) by {a.responder or 'an unnamed responder'}"
        for a in claim.answered)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(claim.created_at))
    return ActionOutcomeUnknownError(
        f"thread {record.thread_id!r}: the answers to {answers} were being acted on by {claim.owner} since "
        f"{started}, and that run never recorded how it ended (its process stopped, or the store failed after "
        "the action ran). The action may have run: it is not run again on a second answer. Check the outside "
        "world (tools were given an idempotency key, ToolContext.idempotency_key, to name the action there), then "
        f"allow a retry with `statehitl threads retry {record.thread_id}` or checkpointer.retry_unknown(...), "
        "and answer again",
        thread_id=record.thread_id, interrupt_ids=tuple(a.interrupt_id for a in claim.answered),
        owner=claim.owner, started_at=claim.created_at,
    )


def _outcome_unknown_mid_run(record: CheckpointRecord) -> ActionOutcomeUnknownError:
    return ActionOutcomeUnknownError(
        f"thread {record.thread_id!r}: the run that acted on the answers its claim {record.acting:012d} recorded "
        f"stopped after checkpoint {record.checkpoint_id} without recording how step {record.step + 1} "
        f"({', '.join(record.pending)}) ended (its process stopped, or the store failed). What that step did "
        "may have happened: it is not run again on its own. Check the outside world (tools and nodes were "
        "given idempotency keys), then allow it "
        f"with `statehitl threads retry {record.thread_id}` or checkpointer.retry_unknown(...), and continue",
        thread_id=record.thread_id, owner=record.owner or "", started_at=record.created_at,
    )


async def _suppressed(pending: Awaitable[T]) -> T | None:
    """What ``pending`` gives, or None if the store failed again (a check that cannot answer is no answer)."""
    try:
        return await pending
    except StorageError:
        return None


def _running_elsewhere(record: CheckpointRecord, now: float) -> bool:
    """Whether the run that wrote ``record`` (executing, by another owner) may still be running: its lease
    is live and it is not a run of this process that is known to be over."""
    return (
        record.owner is not None
        and record.lease_until is not None
        and record.lease_until > now
        and record.owner not in _ENDED_HERE
    )


class _Stored(NamedTuple):
    """A record as the storage gave it: its bytes, its version token, and the record they hold."""

    data: bytes
    token: str
    record: StoredCheckpoint | ClaimRecord


def _checkpoints(records: dict[int, _Stored]) -> dict[int, StoredCheckpoint]:
    return {seq: s.record for seq, s in records.items() if isinstance(s.record, StoredCheckpoint)}


async def _cleanup(storage: Storage) -> None:
    if isinstance(storage, SupportsCleanup):
        await storage.cleanup()


async def _outcome(pending: Awaitable[T]) -> T | Exception:
    """What ``pending`` gives, or the exception it raised: ``asyncio.gather(..., return_exceptions=True)``
    for one awaitable, without a task."""
    try:
        return await pending
    except Exception as exc:
        return exc
