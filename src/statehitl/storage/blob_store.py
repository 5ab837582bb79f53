"""``BlobStore``: Strands' ``Storage`` protocol on one of statehitl's compare-and-set stores.

Every store in ``statehitl.storage`` is one of these over the store that also holds checkpoints
(``MemoryStorage``, ``FileStorage``, S3's or DynamoDB's), so the same directory, bucket or table can
back an agent's sessions and anything else that takes a ``Storage``. A value is one record of that store
under its key's record key (``storage.keys``): a read is one read, a listing one listing, a delete one
delete. Strands' ``write`` overwrites whatever is there; here it reads the record's version and writes
on it, and should another writer replace it in between, reads and writes again, so the last writer wins
as in Strands and no write is ever half done.

``namespace(prefix)`` gives a view of the same store whose keys are relative to ``prefix``; views
nest, and a parent view lists what its children wrote under their full keys, as Strands' do.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
from typing import TYPE_CHECKING, Self

from statehitl.checkpoint.prefixed import PrefixedStorage
from statehitl.checkpoint.storage import ABSENT, has_version
from statehitl.errors import CheckpointConflict, StorageError, StorageUnavailableError
from statehitl.storage.keys import (
    encode_path,
    normalize_key,
    normalize_prefix,
    record_key,
    record_prefix,
    stored_key,
)
from statehitl.storage.search.keyword import KeywordSearchStrategy
from statehitl.storage.search.types import SearchStrategy, StorageSearchResult

if TYPE_CHECKING:
    from statehitl.checkpoint.storage import Storage as RecordStorage


_WRITE_ATTEMPTS = 20
"""Read-then-write rounds a ``write`` tries while other writers keep replacing the same key."""


class BlobStore:
    """Strands' ``Storage`` on the compare-and-set store ``backend`` (at the namespace ``path``).

    ``search_strategy``: what ``search`` delegates to; every ``write`` is also handed to its ``index``.
    Without one, ``search`` is a keyword scan of the entries.
    """

    def __init__(self, backend: RecordStorage, *, search_strategy: SearchStrategy | None = None) -> None:
        self._backend = backend
        self._path = ""
        self._search_strategy = search_strategy

    @property
    def backend(self) -> RecordStorage:
        """The compare-and-set store every view of this store keeps its values in."""
        return self._backend

    @property
    def namespace_path(self) -> str:
        """Where this view sits in its store: ``""``, or the namespace prefixes joined, ending in ``/``."""
        return self._path

    def checkpoint_storage(self) -> RecordStorage:
        """The compare-and-set store for checkpoints kept beside this view's values, scoped to its namespace.

        A ``SnapshotSessionManager`` runs its ``Checkpointer`` on it, so its sessions live under the
        namespace it is given, apart from those of any other namespace; the values of every view live
        under a root no checkpoint key can reach (``storage.keys``).
        """
        path = self._path.rstrip("/")
        return self._backend if not path else PrefixedStorage(self._backend, encode_path(path))

    async def write(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what is there. ``StorageKeyError`` for a key that is empty,
        holds a backslash or a ``..`` segment; another ``StorageError`` if the store fails."""
        normalized = normalize_key(key)
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"storage values are bytes; got {type(data).__name__} for key {key!r}")
        payload = bytes(data)
        await self._replace(record_key(self._path, normalized), payload, key)
        if self._search_strategy is not None:
            try:
                await self._search_strategy.index(self, normalized, payload)
            except Exception as error:  # the value is stored; only the strategy's index lags (Strands' words)
                raise StorageError(f"Wrote {key!r} but indexing failed", operation="index") from error

    async def _replace(self, record: str, payload: bytes, key: str) -> None:
        backend = self._backend
        for _ in range(_WRITE_ATTEMPTS):
            if has_version(backend):
                token = await backend.version(record)
            else:
                found = await backend.read(record)
                token = None if found is None else found[1]
            try:
                await backend.write(record, payload, expect=ABSENT if token is None else token)
                return
            except CheckpointConflict:
                await asyncio.sleep(0)  # another writer replaced it meanwhile: read its version and go again
        raise StorageUnavailableError(
            f"could not write {key!r}: other writers replaced it {_WRITE_ATTEMPTS} times while this write read "
            "its version; try again", operation="write", transient=True,
        )

    async def read(self, key: str) -> bytes | None:
        """The bytes under ``key``, or None if there are none."""
        found = await self._backend.read(record_key(self._path, normalize_key(key)))
        return None if found is None else found[0]

    async def delete(self, key: str) -> None:
        """Remove the value under ``key``; nothing happens if there is none."""
        await self._backend.delete(record_key(self._path, normalize_key(key)))

    async def list(self, query: str = "") -> builtins.list[str]:
        """Every key that starts with the prefix ``query`` (``""``: all of this view's), sorted."""
        prefix = normalize_prefix(query)
        records = await self._backend.list(record_prefix(self._path, prefix))
        keys = [key for record in records if (key := stored_key(self._path, record)) is not None]
        return sorted(key for key in keys if key.startswith(prefix))

    async def search(self, query: str) -> builtins.list[StorageSearchResult]:
        """Entries matching ``query``, best first: the ``search_strategy``'s, else a keyword scan."""
        if self._search_strategy is not None:
            return await self._search_strategy.search(self, query)
        return await KeywordSearchStrategy().search(self, query)

    def namespace(self, prefix: str) -> Self:
        """A view of the same store (and search strategy) whose keys are relative to ``prefix``."""
        normalized = normalize_prefix(prefix).rstrip("/")
        view = copy.copy(self)
        view._path = f"{self._path}{normalized}/" if normalized else self._path
        return view

    def __repr__(self) -> str:
        where = f", namespace={self._path.rstrip('/')!r}" if self._path else ""
        return f"{type(self).__name__}({self._backend!r}{where})"

