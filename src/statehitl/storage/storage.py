"""Strands' ``Storage`` protocol: raw bytes under string keys, for every subsystem that persists something.

Four operations and a search: ``write`` (overwrite), ``read`` (None when absent), ``delete`` (a no-op
when absent), ``list`` (full keys starting with a prefix, sorted) and ``search``. Keys are opaque to the
protocol; the stores statehitl ships treat ``/`` as a separator and normalise keys as Strands does
(``statehitl.storage.keys``). Implement the protocol to give a subsystem a store of your own; the ones
shipped (``InMemoryStorage``, ``LocalFileStorage``, ``S3Storage``, ``DynamoDBStorage``) keep their
values in statehitl's own compare-and-set stores (``BlobStore``), which is what lets a
``SnapshotSessionManager`` keep an agent's history as checkpoints on the same store.
"""

from __future__ import annotations

import builtins
from typing import Protocol, runtime_checkable

from statehitl.storage.keys import normalize_key, normalize_prefix
from statehitl.storage.search.keyword import KeywordSearchStrategy
from statehitl.storage.search.types import StorageSearchResult

__all__ = ["Storage", "StorageSearchResult", "normalize_key", "normalize_prefix"]


@runtime_checkable
class Storage(Protocol):
    """A store of bytes under string keys (Strands' ``strands.storage.Storage``)."""

    async def write(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing any value there. ``StorageError`` if it fails."""
        ...

    async def read(self, key: str) -> bytes | None:
        """The bytes under ``key``, or None if there are none. ``StorageError`` for any other failure."""
        ...

    async def delete(self, key: str) -> None:
        """Remove the value under ``key``; nothing happens if there is none."""
        ...

    async def list(self, query: str) -> builtins.list[str]:
        """Every key starting with the prefix ``query`` (``""``: every key), whole and sorted."""
        ...

    async def search(self, query: str) -> builtins.list[StorageSearchResult]:
        """Entries matching ``query``, best first; by default a keyword scan (``KeywordSearchStrategy``)."""
        return await KeywordSearchStrategy().search(self, query)
