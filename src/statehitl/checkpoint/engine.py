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

The one ``Checkpointer`` is written along its seams, each a class this one builds on: the keys and
the record coding every part shares (``store_base``), reading a thread (``reading``: heads, the warm
cache, history, the index), claims and leases and actions of unknown outcome (``claims``), and
retention (``retention``: delete, prune, sweep). Here: building one, committing a step (its one
write, and the index entry when a run stops), the audit trail and machine shapes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, NoReturn

from statehitl.checkpoint.audit import read_audit
from statehitl.checkpoint.chain import Cursor, StateCodec
from statehitl.checkpoint.claims import ThreadClaims
from statehitl.checkpoint.clock import MAX_CLOCK_SKEW
from statehitl.checkpoint.codec import decode_model, encode_counted
from statehitl.checkpoint.index import index_material, write_index
from statehitl.checkpoint.reading import checkpoints_of
from statehitl.checkpoint.records import (
    AuditEntry,
    CheckpointRecord,
    ClaimRecord,
    MachineShape,
    RecordStatus,
    StoredCheckpoint,
)
from statehitl.checkpoint.refusals import refusal_entries
from statehitl.checkpoint.retention import ThreadRetention
from statehitl.checkpoint.saver import SaverReads
from statehitl.checkpoint.saver_hooks import channel_values, check_checkpointer_serde, overrides_of, put_through
from statehitl.checkpoint.serde.jsonplus import JsonPlusSerializer
from statehitl.checkpoint.step_record import build_step_record
from statehitl.checkpoint.storage import (
    ABSENT,
    Storage,
    cache_scope_of,
    compresses_by_default,
    has_list_versions,
    has_read_all,
    has_version,
    server_clock_of,
)
from statehitl.checkpoint.url import checkpointer_options_of, storage_from_url
from statehitl.checkpoint.warm import WarmHeads, shared_heads
from statehitl.errors import CheckpointConflict


class Checkpointer(SaverReads, ThreadClaims, ThreadRetention):
    """Reads and commits a thread's checkpoints on any ``Storage``.

    ``signing_key`` signs every record (HMAC-SHA256) and refuses modified ones; ``ttl`` (seconds)
    marks threads idle that long as expired for ``sweep_expired``; ``lease_seconds`` is how long a
    claim or a running step holds a thread before another process may take it over, judged by the store's
    clock where it has one (S3, DynamoDB: ``checkpoint/clock.py``), and ``max_clock_skew`` how far this
    machine's clock may be off that one before claims are refused (``ClockSkewError``). ``compress``
    stores the thread's records compressed (``checkpoint/codec.py``): about 2.4x fewer bytes written,
    stored and read, for 8-30 µs per write. ``None`` (the default) compresses on every
    store but ``MemoryStorage``, whose bytes cost nothing (``storage.compresses_by_default``). Every
    checkpointer reads both kinds; ``compress=False`` is for a fleet some of whose processes still run a
    statehitl from before compression, which reads only uncompressed records (``docs/checkpoints.md``, "Compression").
    ``serde`` (LangGraph's option) is None or a plain ``JsonPlusSerializer``: the values are statehitl's JSON.

    A subclass may override LangGraph's saver methods (``aget_tuple``, ``aput``, ``aput_writes``, their sync
    twins, ``get_next_version``): its graphs' runs then read and write through them (``saver_hooks``).
    """

    def __init__(
        self,
        storage: Storage,
        *,
        signing_key: bytes | None = None,
        ttl: float | None = None,
        lease_seconds: float = 60.0,
        compress: bool | None = None,
        max_clock_skew: float = MAX_CLOCK_SKEW,
        serde: Any = None,
    ) -> None:
        check_checkpointer_serde(serde)
        self.serde = serde or JsonPlusSerializer()
        """LangGraph's ``saver.serde``: the tagged JSON every checkpoint's values are stored as."""
        if compress is not None and not isinstance(compress, bool):
            raise TypeError(f"compress must be True, False or None (the store's default), got {compress!r}")
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds!r}")
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive seconds or None, got {ttl!r}")
        if not max_clock_skew > 0:
            raise ValueError(f"max_clock_skew must be positive seconds, got {max_clock_skew!r}")
        self.storage = storage
        self.signing_key = signing_key
        self.ttl = ttl
        self.lease_seconds = lease_seconds
        self.max_clock_skew = max_clock_skew
        self._clock = server_clock_of(storage)
        self.compress = compresses_by_default(storage) if compress is None else compress
        self._bulk = has_read_all(storage)
        """Whether records are written as deltas from their parent and chains read in one bulk read."""
        self._versioned = has_version(storage)
        """Whether a known head is checked by its version token alone, without reading its value."""
        self._listed = has_list_versions(storage)
        """Whether the listing that finds the newest key also gives its version token (no second request)."""
        scope = cache_scope_of(storage)
        self._warm = shared_heads(scope, signing_key) if scope is not None else WarmHeads()
        self.saver_overrides = overrides_of(type(self), SaverReads)
        """The LangGraph saver methods a user's subclass overrides, which runs call (``saver_hooks``); None
        for none (the plain path)."""

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
        """Write the thread's next checkpoint after ``cursor`` (built by ``step_record``, validated before
        anything is written) and advance the cursor; ``CheckpointConflict`` if another writer took the slot.

        ``held`` marks a checkpoint the run goes on from: it carries the owner's lease, so no other process
        takes the thread over while the run is alive. ``index`` also brings the thread's index entry up to
        date (a run's last checkpoint), rewritten only when what it says changes (status, position, pending
        interrupts; and always with a ``ttl``, whose expiry it carries): a conversation that completes turn
        after turn costs one write per turn, not three. A failed index write does not undo the stored
        checkpoint: the cursor advances, then ``IndexNotWritten`` says so, with the stored record and the
        index write's error (for a run to raise once it is done with the thread).
        """
        now = time.time()
        record, stored, link = build_step_record(cursor, state, codec, fields, machine=machine,
                                                 fingerprint=fingerprint, status=status, delta=self._bulk,
                                                 created_at=_created_at(now),
                                                 lease_until=self.lease_end() if held else None)
        key = self._key(cursor.thread_id, record.seq)
        data, replaced = encode_counted(stored, self.signing_key, place=key, compress=self.compress)
        material = index_material(record) if index else None  # held checkpoints (most) are not indexed
        index = index and (self.ttl is not None or material != cursor.indexed)
        indexed: BaseException | None = None
        if self.saver_overrides is not None:  # a user's saver subclass: its put stores the record (saver_hooks)
            token, indexed = await put_through(
                self, self.saver_overrides, record=record, channel_values=channel_values(record, state, codec),
                parent=None if cursor.parent is None else f"{cursor.parent:012d}",
                begun=await self.begun_checkpoints(record),
                store=lambda: self._put_indexed(cursor, key, data, record, durable=durable, index=index))
        elif index:
            token, indexed = await self._put_indexed(cursor, key, data, record, durable=durable, index=True)
        else:
            try:
                token = await self.create(key, data, durable=durable)
            except CheckpointConflict:
                raise _moved_past(cursor) from None
        # The checkpoint is stored: the cursor moves past it even if its index entry failed, so what the
        # run does next (end, or release its lease) builds on it instead of colliding with it.
        parent = cursor.parent
        cursor.advance(link, settled=record.lease_until is None and record.acting is None)
        if material is not None and index and indexed is None:
            cursor.index_known(material)
        if replaced:  # the store holds other text than this record: the next read takes the store's
            self._warm.forget(cursor.thread_id)
        else:
            self._warm.advance(cursor.thread_id, parent, data, token, record, chain=cursor.chain)
        if indexed is not None:
            _stale_index(indexed, record)
        return record

    async def _put_indexed(self, cursor: Cursor, key: str, data: bytes, record: StoredCheckpoint, *,
                           durable: bool, index: bool) -> tuple[str, BaseException | None]:
        """Store the checkpoint ``data`` under ``key`` (create-once), then its index entry: the checkpoint's
        version token, and the index write's error if that failed (raised by the caller once the cursor is
        past the checkpoint). A lost race is ``CheckpointConflict`` saying so, with no entry written.

        One after the other, never overlapped: the entry must never describe a checkpoint that is not
        stored. While a run acts on an answer, the entry still says "interrupted, answered", which is how a
        polling worker finds a thread whose run died; an entry written ahead of a checkpoint that then lost
        its slot (the run outlived its lease, and a retry's go-ahead took the slot) or never landed (the
        process died between the two) would say "completed" over a thread still to finish, and hide it from
        every worker for good. A run's stopping write costs one store round trip more than overlapped.
        ``index=False``: the checkpoint alone (a held one, or an entry that would say nothing new)."""
        try:
            token = await self.create(key, data, durable=durable)
        except CheckpointConflict:
            raise _moved_past(cursor) from None
        if not index:
            return token, None
        try:
            await self.write_index(record)
        except BaseException as exc:  # the checkpoint is stored all the same: the caller moves past it first
            return token, exc
        return token, None

    # -- the thread index ---------------------------------------------------------------------------

    async def write_index(self, record: CheckpointRecord) -> bool:
        """Record where the thread stopped, for listing: True once stored, False if the entry already
        describes ``record`` or a newer checkpoint (newer entries win; racing writers retry).

        Writes on the entry's version as this process last knew it, without reading it first (a stale
        one loses the compare-and-set, and the write reads and retries)."""
        thread_id = record.thread_id
        version = await write_index(self.storage, record, ttl=self.ttl, signing_key=self.signing_key,
                                    known=self._warm.index_version(thread_id))
        self._warm.keep_index_version(thread_id, record.seq, version)
        return version is not None

    # -- the audit trail ------------------------------------------------------------------------------

    async def audit(self, thread_id: str) -> list[AuditEntry]:
        """Every answer applied to the thread's interrupts, oldest first (kept through ``prune``): the
        entries its checkpoints carry (``answered``) and those ``prune`` kept beside its index; and, from
        its claims, answers acted on whose outcome was never recorded and the go-aheads to retry them; and
        the answers refused because their responder may not answer (outcome ``refused``)."""
        refusals: dict[str, tuple[bytes, str]] = {}
        records = await self._records(thread_id, refusals=refusals)
        claims = {seq: s.record for seq, s in records.items() if isinstance(s.record, ClaimRecord)}
        return await read_audit(self.storage, thread_id, checkpoints_of(records), self.signing_key, claims=claims,
                                refused=refusal_entries(refusals, thread_id, self.signing_key))

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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r})"


class IndexNotWritten(Exception):
    """A commit stored its checkpoint, ``record``, but not the thread's index entry, for ``error``: what
    thread listings and the inbox show is stale until the thread's next run stops. A run keeps ``error``
    to raise once it is done with the thread; anything else raises it at once (``raise_error``)."""

    def __init__(self, record: StoredCheckpoint, error: Exception) -> None:
        super().__init__(str(error))
        self.record = record
        self.error = error

    def raise_error(self) -> NoReturn:
        raise self.error from self.error.__cause__


def _stale_index(error: BaseException, record: StoredCheckpoint) -> NoReturn:
    """The index write of stored checkpoint ``record`` failed with ``error``: ``IndexNotWritten``, the error
    noted as such (a cancellation is raised as it is)."""
    if not isinstance(error, Exception):
        raise error
    error.add_note(f"checkpoint {record.checkpoint_id} of thread {record.thread_id!r} is committed; only its index "
                   "entry (what thread listings and the inbox show) is stale until the thread's next run stops")
    raise IndexNotWritten(record, error)


def _moved_past(cursor: Cursor) -> CheckpointConflict:
    return CheckpointConflict(
        f"thread {cursor.thread_id!r} moved past checkpoint {cursor.slot} while this run was working "
        "(another process resumed or updated it); reload the thread and try again"
    )


_LAST_CREATED = [0.0]
_CREATED_LOCK = threading.Lock()
_VIEW_ROOM = 3e-6
"""The checkpoints a record shows before its own (a run's input and first step: ``graph.history``) take
the microseconds before its time, so each record's time is at least this much after the last one's."""


def _created_at(now: float) -> float:
    """When a checkpoint was made, to the microsecond and strictly after the last one this process made (a
    record's views come in the microseconds before it: LangGraph's ``created_at`` orders a thread)."""
    with _CREATED_LOCK:
        made = max(round(now, 6), round(_LAST_CREATED[0] + _VIEW_ROOM, 6))
        _LAST_CREATED[0] = made
    return made
