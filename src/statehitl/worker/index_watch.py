"""The thread index as a worker last read it, read again at each pass for what changed.

A worker on a store without a change stream (the file store, S3) finds its work in the index: threads
whose entry marks answers stored and not yet applied, and interrupts whose deadline has passed. It
passes over the index every ``--interval``, so a pass must cost little when little changed: with a
listing that gives each key's version token (``SupportsListVersions``: S3's ETags, the file store's
log index) one listing says which entries changed, and only those are read and parsed again. A store
with a bulk read (DynamoDB: one ``Query`` per thread's index partition, values included) is read that
way instead when the pass is rare (a stream-fed worker's first pass), and a store that can read records
of one name across partitions (``read_named``: DynamoDB's filtered ``Scan``) that way, one request per
megabyte of the table rather than one per thread.

Each read also says which entries changed since the last, with what they said before, so the worker
can tell a thread that moved on from the checkpoint it waited at (and find the answers that moved it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statehitl.checkpoint.codec import decode_model
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.index import INDEX_PREFIX, index_key
from statehitl.checkpoint.records import ThreadIndex
from statehitl.checkpoint.storage import has_list_versions, has_read_named, read_prefix
from statehitl.errors import CheckpointCorruptError

_ENTRY = "/entry"


@dataclass
class IndexRead:
    """One read of the index: every thread's entry, and for those that changed, what they said before
    (None: the thread is new to this watch)."""

    entries: dict[str, ThreadIndex]
    before: dict[str, ThreadIndex | None] = field(default_factory=dict)


class IndexWatch:
    """Reads a store's index entries, parsing again only those whose version changed (see the module
    docstring). ``bulk``: read values with the listing (one bulk read) rather than list, then read."""

    def __init__(self, checkpointer: Checkpointer, *, bulk: bool) -> None:
        self.checkpointer = checkpointer
        self.bulk = bulk or not has_list_versions(checkpointer.storage)
        self._known: dict[str, tuple[str, ThreadIndex]] = {}
        """Thread id -> (version token, entry) as last read."""
        self.corrupt: dict[str, str] = {}
        """Entries that could not be read, by thread, with why (logged by the worker, skipped here)."""

    async def read(self) -> IndexRead:
        storage = self.checkpointer.storage
        found: dict[str, tuple[str, bytes | None]] = {}
        if self.bulk and has_read_named(storage):  # DynamoDB: one filtered Scan, not a Query per thread
            for key, (data, token) in (await storage.read_named(INDEX_PREFIX, _ENTRY[1:])).items():
                found[key] = (token, data)
        elif self.bulk or not has_list_versions(storage):
            for key, (data, token) in (await read_prefix(storage, INDEX_PREFIX)).items():
                if key.endswith(_ENTRY):
                    found[key] = (token, data)
        else:
            listed = await storage.list_versions(INDEX_PREFIX)
            for key, token in listed:
                if key.endswith(_ENTRY):
                    found[key] = (token, None)
        result = IndexRead({})
        seen: set[str] = set()
        for key, (token, given) in found.items():
            thread = key[len(INDEX_PREFIX):-len(_ENTRY)]
            seen.add(thread)
            known = self._known.get(thread)
            if known is not None and known[0] == token:
                result.entries[thread] = known[1]
                continue
            if given is None:
                value = await storage.read(key)
                if value is None:  # deleted since the listing
                    continue
                data, token = value
            else:
                data = given
            try:
                entry = self._parse(key, data)
            except CheckpointCorruptError as exc:
                self.corrupt[thread] = str(exc)
                continue
            self.corrupt.pop(thread, None)
            result.before[thread] = None if known is None else known[1]
            self._known[thread] = (token, entry)
            result.entries[thread] = entry
        for gone in set(self._known) - seen:  # deleted threads
            result.before[gone] = self._known.pop(gone)[1]
        return result

    def _parse(self, key: str, data: bytes) -> ThreadIndex:
        entry = decode_model(ThreadIndex, f"index record {key!r}", data, self.checkpointer.signing_key, place=key)
        if index_key(entry.thread_id) != key:
            raise CheckpointCorruptError(f"index record {key!r} is the entry of thread {entry.thread_id!r} (copied "
                                         "here from elsewhere, or edited)")
        return entry
