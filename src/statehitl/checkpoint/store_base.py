"""What every part of the checkpointer shares: its store and settings, a thread's keys, and records to
bytes and back.

The checkpointer is one object with one API, written as a few classes along its seams (reading a
thread, claiming it, retention, committing: ``reading``, ``claims``, ``retention``, ``engine``), each
building on this one, so no module holds all of it. Here: where a thread's records live (slots count
down, so the newest lists first), that a record read from a key is the record of that key, and the
create-once write that checks whether a failed write landed after all.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from statehitl.checkpoint.clock import StoreClock, lease_override
from statehitl.checkpoint.codec import decode, encode
from statehitl.checkpoint.records import (
    ClaimRecord,
    StoredCheckpoint,
)
from statehitl.checkpoint.storage import (
    ABSENT,
    Storage,
    validate_thread_id,
)
from statehitl.checkpoint.warm import WarmHeads
from statehitl.errors import (
    CheckpointCorruptError,
    ClockSkewError,
    StorageError,
)

T = TypeVar("T")

SLOTS = 10**12


class RecordStore:
    """The store, the settings and the record coding every part of a ``Checkpointer`` uses (set up by
    ``Checkpointer.__init__``)."""

    storage: Storage
    signing_key: bytes | None
    ttl: float | None
    lease_seconds: float
    compress: bool
    _bulk: bool
    """Whether records are written as deltas from their parent and chains read in one bulk read."""
    _versioned: bool
    """Whether a known head is checked by its version token alone, without reading its value."""
    _listed: bool
    """Whether the listing that finds the newest key also gives its version token (no second request)."""
    _warm: WarmHeads
    max_clock_skew: float
    _clock: StoreClock | None
    """The store's own clock (``checkpoint/clock.py``), when its responses say the time (S3, DynamoDB)."""

    def lease_length(self) -> float:
        """How long a claim or running step written now holds its thread: the lease of the caller's context
        (``clock.leased``, a worker's ``--lease``), else ``lease_seconds``."""
        return lease_override() or self.lease_seconds

    def lease_end(self) -> float:
        """When a claim or running step written now stops holding its thread (the store's time): one call on
        every held commit."""
        now = time.time() if self._clock is None else self._clock.now()
        return now + (lease_override() or self.lease_seconds)

    def store_now(self) -> float:
        """The time leases are written and judged in: the store's clock where it has one, else this machine's."""
        return time.time() if self._clock is None else self._clock.now()

    def check_clock(self, thread_id: str) -> None:
        """``ClockSkewError`` when this machine's clock is further off the store's than ``max_clock_skew``:
        before a claim, so that a broken clock acts on nothing."""
        if self._clock is None or not self._clock.known:
            return
        offset = self._clock.offset
        if abs(offset) > self.max_clock_skew:
            ahead = "behind" if offset > 0 else "ahead of"
            raise ClockSkewError(
                f"thread {thread_id!r} was not claimed: this machine's clock is {abs(offset):.0f}s {ahead} the store's "
                f"(from the Date of its responses), more than max_clock_skew={self.max_clock_skew:g}s. Leases are "
                "judged by the store's clock, but deadlines and answer times are this machine's: fix its clock "
                "(NTP) before it acts on anything", offset=offset,
            )

    @staticmethod
    def _prefix(thread_id: str) -> str:
        return f"threads/{validate_thread_id(thread_id)}/"

    def _key(self, thread_id: str, seq: int) -> str:
        return f"{self._prefix(thread_id)}{SLOTS - 1 - seq:012d}"

    @staticmethod
    def _seq(key: str) -> int:
        return SLOTS - 1 - int(key.rsplit("/", 1)[1])

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


async def _suppressed(pending: Awaitable[T]) -> T | None:
    """What ``pending`` gives, or None if the store failed again (a check that cannot answer is no answer)."""
    try:
        return await pending
    except StorageError:
        return None
