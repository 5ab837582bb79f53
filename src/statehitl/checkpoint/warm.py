"""The whole state of the threads this process wrote or read last, so a warm resume reads only the head.

A thread's records are create-once, so when a thread's newest record is still the one this process
wrote (or read) last, nothing else has changed it, and the state that record stands for is already
known here: the engine confirms it by the head alone, by its version token where the store gives
one without the value (``SupportsVersion``), else by its bytes, and skips the chain. Comparing the
token or the bytes (not just the sequence number) also catches a thread deleted and written anew by
another process, whose records reuse the numbers.

The channels kept here are private lists, extended in place as this process commits; callers get
copies of them. Bounded to the most recently used ``capacity`` threads.

Two smaller things the process knows of the store live here too, shared the same way: the version
of each thread's index entry as this process last wrote it (or that the thread has none), so the
next index write compare-and-sets without reading the entry first (``index.write_index``); and the
machine shapes already stored, so a graph built per request does not store its shape again on every
interrupt. Both are guesses the store checks: a stale version loses its compare-and-set and the
writer reads, and a shape record is immutable per fingerprint.

A store that names where its data lives (``cache_scope``: the file store's directory, an S3 bucket
and prefix or a DynamoDB table at its endpoint) shares one cache per scope and signing key across
the process, so a server that builds a checkpointer per request (a session manager per request, as
the seed's server example does) still checks only the head; any other store gets a cache per
checkpointer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from statehitl.checkpoint.chain import Link
from statehitl.checkpoint.records import CheckpointRecord, StoredCheckpoint
from statehitl.checkpoint.step_writes import resolve_writes


@dataclass(slots=True)
class _Warm:
    seq: int
    data: bytes
    token: str
    record: StoredCheckpoint
    channels: dict[str, list[Any]]
    chain: tuple[Link, ...]
    written: bool = False
    """Whether this process wrote the record (rather than read it)."""


def shared_heads(scope: str, signing_key: bytes | None) -> WarmHeads:
    """The process's one cache for the store at ``scope`` read with ``signing_key``: a record signed
    with another key must be checked by its own reader, so each key has its own cache."""
    with _SHARED_LOCK:
        heads = _SHARED.pop((scope, signing_key), None) or WarmHeads()
        _SHARED[(scope, signing_key)] = heads  # the most recently used last
        while len(_SHARED) > _SHARED_SCOPES:
            del _SHARED[next(iter(_SHARED))]
        return heads


class WarmHeads:
    """Per thread: the newest record as stored (its bytes and version token), the whole append-only
    channels, the chain."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._threads: OrderedDict[str, _Warm] = OrderedDict()
        self._index_versions: OrderedDict[str, tuple[int, str]] = OrderedDict()
        self._shapes: set[str] = set()
        self._lock = threading.Lock()

    def knows(self, thread_id: str) -> bool:
        """Whether a head of the thread is kept here (then the engine checks it with one small read)."""
        with self._lock:
            return thread_id in self._threads

    def lookup(self, thread_id: str, seq: int, *, data: bytes | None = None, token: str | None = None
               ) -> tuple[CheckpointRecord, tuple[Link, ...]] | None:
        """The whole checkpoint and chain if record ``seq``, stored as ``data`` (or at version ``token``,
        which the store gives without the value), is the one known here."""
        with self._lock:
            warm = self._threads.get(thread_id)
            if warm is None or warm.seq != seq:
                return None
            if not ((token is not None and token == warm.token) or (data is not None and data == warm.data)):
                return None
            self._threads.move_to_end(thread_id)
            channels = {c: list(items) for c, items in warm.channels.items()}
            record, chain = warm.record, warm.chain
        fields = {name: getattr(record, name) for name in CheckpointRecord.model_fields}
        fields["values"] = values = {**record.values, **channels}
        fields["writes"] = resolve_writes(record.writes, values, record.value_writes)
        return CheckpointRecord.model_construct(**fields), chain

    def remember(self, thread_id: str, data: bytes, token: str, record: StoredCheckpoint, *, whole: CheckpointRecord,
                 chain: tuple[Link, ...]) -> None:
        """Keep ``record`` (stored as ``data`` at version ``token``; ``whole`` is its state, read whole) as
        the thread's head."""
        channels = {c: list(whole.values[c]) for c in record.appends if c in whole.values}
        self._keep(thread_id, _Warm(record.seq, data, token, record, channels, chain))

    def advance(self, thread_id: str, parent: int | None, data: bytes, token: str, record: StoredCheckpoint, *,
                chain: tuple[Link, ...]) -> None:
        """This process committed ``record`` after checkpoint ``parent``: extend what is known of the
        thread, if that was its head here (or the thread is new); otherwise forget the thread."""
        with self._lock:
            warm = self._threads.get(thread_id)
            if parent is None:
                warm = _Warm(record.seq, data, token, record, {}, chain)
            elif warm is None or warm.record.seq != parent:
                self._threads.pop(thread_id, None)
                return
            for channel, piece in record.appends.items():
                items = warm.channels.setdefault(channel, [])
                if piece.start > len(items):
                    self._threads.pop(thread_id, None)  # not a piece of what is known here
                    return
                del items[piece.start:]
                items.extend(piece.items)
            warm.seq, warm.data, warm.token, warm.record, warm.chain = record.seq, data, token, record, chain
            warm.written = True
        self._keep(thread_id, warm)

    def wrote(self, thread_id: str, seq: int) -> bool:
        """Whether record ``seq``, the thread's head here, was written by this process (not read from the store)."""
        with self._lock:
            warm = self._threads.get(thread_id)
            return warm is not None and warm.seq == seq and warm.written

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._threads.pop(thread_id, None)
            self._index_versions.pop(thread_id, None)

    def index_version(self, thread_id: str) -> tuple[int, str] | None:
        """The sequence number and version of the thread's index entry as this process last wrote it
        (``(-1, ABSENT)``: the thread was found without records), or None if unknown."""
        with self._lock:
            return self._index_versions.get(thread_id)

    def keep_index_version(self, thread_id: str, seq: int, version: str | None) -> None:
        """Note the index entry's sequence number and version (version None: unknown from now on)."""
        with self._lock:
            if version is None:
                self._index_versions.pop(thread_id, None)
                return
            self._index_versions[thread_id] = (seq, version)
            self._index_versions.move_to_end(thread_id)
            while len(self._index_versions) > self.capacity:
                self._index_versions.popitem(last=False)

    def shape_stored(self, fingerprint: str) -> bool:
        """Whether the machine shape with ``fingerprint`` is known to be stored."""
        with self._lock:
            return fingerprint in self._shapes

    def keep_shape(self, fingerprint: str) -> None:
        with self._lock:
            if len(self._shapes) >= _SHAPES:
                self._shapes.clear()  # a process with this many machines only rewrites a few immutable records
            self._shapes.add(fingerprint)

    def _keep(self, thread_id: str, warm: _Warm) -> None:
        with self._lock:
            self._threads[thread_id] = warm
            self._threads.move_to_end(thread_id)
            while len(self._threads) > self.capacity:
                self._threads.popitem(last=False)


_SHAPES = 1024
"""Machine fingerprints known stored, per store."""
_SHARED_SCOPES = 64
"""Stores whose warm threads the process keeps (directories, tables): a test run makes many."""
_SHARED: dict[tuple[str, bytes | None], WarmHeads] = {}
_SHARED_LOCK = threading.Lock()
