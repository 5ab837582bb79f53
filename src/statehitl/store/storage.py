"""``StorageStore``: LangGraph's ``BaseStore`` on statehitl's storage contract, so the long-term memory of a
graph lives wherever its checkpoints can (memory, files, S3, DynamoDB), opened by the same URLs.

Each item is one record (``records``) under its own storage key (``namespaces``); ``store/`` keeps the items
apart from a checkpointer's records, so one URL may hold both. A put reads the item's record and writes
the new one with compare-and-set, trying again if another writer got in between, so an item's
``created_at`` survives concurrent puts and the last put wins whole, never a mix of two. A batch's reads
see the store as it was before its puts (as LangGraph's stores do), and its puts are applied after them,
the last put of an item winning.

Time to live: an item put with ``ttl`` (minutes) expires that long after it was last put, or read with
``refresh_ttl``. An expired item is never returned, but nothing is deleted behind the caller's back:
``sweep_ttl()`` removes expired items. Until then ``list_namespaces`` still counts them, since listing
namespaces reads keys, not records.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from statehitl._json import require_json
from statehitl._sync import run_sync
from statehitl.checkpoint.storage import ABSENT, Storage, has_read_all
from statehitl.checkpoint.url import checkpointer_options_of, storage_from_url
from statehitl.errors import CheckpointConflict, InvalidIndexError, StoreError
from statehitl.store.base import BaseStore
from statehitl.store.embed import Embedder, texts_at
from statehitl.store.filters import check_filter, matches_filter
from statehitl.store.namespaces import (
    ROOT,
    item_key,
    matches,
    namespace_prefix,
    parse_item_key,
    validate_labels,
    validate_namespace,
)
from statehitl.store.ops import (
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)
from statehitl.store.ranking import page, ranked
from statehitl.store.records import StoredItem, utc

_PUT_ATTEMPTS = 20
"""Compare-and-set rounds a put tries when other writers keep changing the item under it."""
_READS_AT_ONCE = 16
"""Records read concurrently from a storage that has no bulk read (S3): one request each."""

Found = dict[str, tuple[StoredItem, str]]
"""Records by storage key, each with its version token."""


class StorageStore(BaseStore):
    """A ``BaseStore`` on any ``Storage``: ``StorageStore(FileStorage("./memory"))``, or by URL,
    ``StorageStore.from_url("s3://bucket/app")``. ``index``: semantic search (``IndexConfig``); ``ttl``: time
    to live defaults (``TTLConfig``); ``clock``: seconds since the epoch, for expiry (tests pass their own).
    """

    supports_ttl = True

    def __init__(self, storage: Storage, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.storage = storage
        self.index_config = dict(index) if index else None
        self.embedder: Embedder | None = None
        if index:
            if "embed" not in index or "dims" not in index:
                raise InvalidIndexError(f"index= needs 'embed' (the embedding function) and 'dims', got "
                                        f"{sorted(index)}")
            self.embedder = Embedder(index["embed"], index["dims"])
        self.fields = list((index or {}).get("fields") or ["$"])
        self.ttl_config = ttl
        self.clock = clock

    @classmethod
    def from_url(cls, url: str, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 clock: Callable[[], float] = time.time) -> StorageStore:
        """The store on the storage a URL names, as ``Checkpointer.from_url`` reads it: ``file://DIR`` (or a
        path), ``s3://BUCKET/PREFIX``, ``dynamodb://TABLE``, ``memory://NAME``. A checkpointer's own option
        (``compress=``) is left out: items are stored as plain JSON."""
        return cls(storage_from_url(checkpointer_options_of(url)[0]), index=index, ttl=ttl, clock=clock)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage!r})"

    # -- batches ---------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return run_sync(self.abatch(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        reads: dict[int, Any] = {}
        for at, op in enumerate(ops):
            if isinstance(op, PutOp):
                self._check_put(op)
                puts[(op.namespace, op.key)] = op
            elif isinstance(op, GetOp):
                reads[at] = self._get(op._replace(namespace=validate_labels(op.namespace)))
            elif isinstance(op, SearchOp):
                check_filter(op.filter)
                reads[at] = self._search(op._replace(namespace_prefix=validate_labels(op.namespace_prefix,
                                                                                      "namespace prefix")))
            elif isinstance(op, ListNamespacesOp):
                reads[at] = self._list(op)
            else:
                raise TypeError(f"a store batch takes GetOp, PutOp, SearchOp and ListNamespacesOp, got {op!r}")
        results: list[Result] = [None] * len(ops)
        for at, result in zip(reads, await asyncio.gather(*reads.values()), strict=True):
            results[at] = result
        if puts:
            await self._apply(list(puts.values()))
        return results

    # -- reads -----------------------------------------------------------------------------------

    async def _get(self, op: GetOp) -> Result:
        key = item_key(op.namespace, op.key)
        stored = await self.storage.read(key)
        if stored is None:
            return None
        record = StoredItem.read(key, stored[0], op.namespace, op.key)
        if not record.alive(self.clock()):
            return None
        if op.refresh_ttl:
            await self._refresh({key: (record, stored[1])})
        return record.item()

    async def _search(self, op: SearchOp) -> Result:
        now = self.clock()
        found = await self._read_under(namespace_prefix(op.namespace_prefix))
        records = sorted((r for r, _ in found.values() if r.alive(now) and matches_filter(r.value, op.filter)),
                         key=lambda r: (r.namespace, r.key))
        if op.query and self.embedder is not None:
            chosen = ranked(records, await self.embedder.query(op.query), op.offset, op.limit)
        else:
            chosen = page(records, op.offset, op.limit)
        if op.refresh_ttl:
            await self._refresh({key: found[key] for key in (item_key(r.namespace, r.key) for r, _ in chosen)})
        return [record.found(score) for record, score in chosen]

    async def _list(self, op: ListNamespacesOp) -> Result:
        namespaces = {parsed[0] for key in await self.storage.list(self._list_prefix(op))
                      if (parsed := parse_item_key(key)) is not None}
        conditions = op.match_conditions or ()
        kept = [ns for ns in namespaces if all(matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[:op.max_depth] for ns in kept})
        return sorted(kept)[op.offset:op.offset + op.limit]

    @staticmethod
    def _list_prefix(op: ListNamespacesOp) -> str:
        """The storage prefix a listing can start from: a prefix condition's labels before its first ``*``."""
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                labels = list(condition.path)
                fixed = labels[:labels.index("*")] if "*" in labels else labels
                return namespace_prefix(tuple(fixed))
        return ROOT

    async def _read_under(self, prefix: str) -> Found:
        """Every item record under a storage prefix: one bulk read where the storage has one, else a listing
        and concurrent reads."""
        storage = self.storage
        if has_read_all(storage):
            raw = await storage.read_all(prefix)
        else:
            keys = await storage.list(prefix)
            gate = asyncio.Semaphore(_READS_AT_ONCE)

            async def read(key: str) -> tuple[bytes, str] | None:
                async with gate:
                    return await storage.read(key)

            raw = {key: value for key, value in zip(keys, await asyncio.gather(*map(read, keys)), strict=True)
                   if value is not None}
        found: Found = {}
        for key, (data, token) in raw.items():
            parsed = parse_item_key(key)
            if parsed is not None:
                found[key] = (StoredItem.read(key, data, *parsed), token)
        return found

    async def _refresh(self, found: Found) -> None:
        """Restart the time to live of items just read; one written meanwhile by another is left as it is (that
        write restarted it too)."""
        now = self.clock()
        for key, (record, token) in found.items():
            if record.ttl is None:
                continue
            renewed = record.model_copy(update={"expires_at": now + record.ttl * 60})
            try:
                await self.storage.write(key, renewed.dump(), expect=token)
            except CheckpointConflict:
                continue

    # -- writes ----------------------------------------------------------------------------------

    def _check_put(self, op: PutOp) -> None:
        """Refuse a put that cannot be stored before the batch reads or writes anything."""
        if op.value is None:  # a delete: any namespace a get could name
            item_key(validate_labels(op.namespace), op.key)
            return
        item_key(validate_namespace(op.namespace, reserved=True), op.key)  # put() refused a reserved root already
        require_json(dict(op.value), f"the value of item {op.key!r} in namespace {op.namespace!r}")
        if op.ttl is not None and (isinstance(op.ttl, bool) or not isinstance(op.ttl, int | float) or op.ttl <= 0):
            raise ValueError(f"ttl={op.ttl!r} for item {op.key!r}: give minutes as a positive number, or None")

    async def _apply(self, puts: Sequence[PutOp]) -> None:
        vectors = await self._embed(puts)
        await asyncio.gather(*(self._put(op, vectors.get((op.namespace, op.key), {})) for op in puts))

    async def _embed(self, puts: Sequence[PutOp]) -> dict[tuple[tuple[str, ...], str], dict[str, list[float]]]:
        """The vectors of every put the index embeds, from one call of the embedding function (a text two items
        share is embedded once)."""
        if self.embedder is None:
            return {}
        wanted: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}
        for op in puts:
            if op.value is None or op.index is False:
                continue
            for path in op.index if op.index is not None else self.fields:
                texts = texts_at(op.value, path)
                for at, text in enumerate(texts):
                    wanted.setdefault(text, []).append((op.namespace, op.key, path if len(texts) == 1 else
                                                        f"{path}.{at}"))
        embedded = await self.embedder.documents(list(wanted))
        vectors: dict[tuple[tuple[str, ...], str], dict[str, list[float]]] = {}
        for places, vector in zip(wanted.values(), embedded, strict=True):
            for namespace, key, path in places:
                vectors.setdefault((namespace, key), {})[path] = vector
        return vectors

    async def _put(self, op: PutOp, vectors: dict[str, list[float]]) -> None:
        key = item_key(op.namespace, op.key)
        if op.value is None:
            await self.storage.delete(key)
            return
        for _ in range(_PUT_ATTEMPTS):
            stored = await self.storage.read(key)
            now = self.clock()
            before = None if stored is None else StoredItem.read(key, stored[0], op.namespace, op.key)
            created = before.created_at if before is not None and before.alive(now) else utc(now)
            record = StoredItem(namespace=op.namespace, key=op.key, value=dict(op.value), created_at=created,
                                updated_at=utc(now), ttl=op.ttl,
                                expires_at=None if op.ttl is None else now + op.ttl * 60, vectors=vectors)
            try:
                await self.storage.write(key, record.dump(), expect=ABSENT if stored is None else stored[1])
                return
            except CheckpointConflict:
                continue
        raise StoreError(f"item {op.key!r} in namespace {op.namespace!r} changed under {_PUT_ATTEMPTS} puts in a row; "
                         "nothing was written by this one, try again")

    # -- expiry ----------------------------------------------------------------------------------

    async def asweep_ttl(self) -> int:
        """Delete every expired item; return how many. (Reads already leave them out.)"""
        now = self.clock()
        found = await self._read_under(ROOT)
        removed = 0
        for key, (record, token) in found.items():
            if record.alive(now):
                continue
            again = await self.storage.read(key)  # put or read again since: no longer expired, leave it
            if again is not None and again[1] == token:
                removed += await self.storage.delete(key)
        return removed

    def sweep_ttl(self) -> int:
        """``asweep_ttl``, sync."""
        return run_sync(self.asweep_ttl())
