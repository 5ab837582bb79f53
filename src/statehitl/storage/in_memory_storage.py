"""``InMemoryStorage``: Strands' in-memory store, on statehitl's ``MemoryStorage``.

For tests and short-lived processes: nothing outlives the process, and nothing is shared with another
``InMemoryStorage`` (its namespaces share its entries, as Strands' do).
"""

from __future__ import annotations

from typing import ClassVar

from statehitl._sync import run_sync
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.storage.blob_store import BlobStore
from statehitl.storage.keys import record_prefix
from statehitl.storage.search.types import SearchStrategy

__all__ = ["InMemoryStorage"]


class InMemoryStorage(BlobStore):
    """Bytes under string keys in this process's memory; ``search_strategy`` as in every store."""

    ephemeral: ClassVar[bool] = True
    """Its entries are gone when the process ends."""

    def __init__(self, *, search_strategy: SearchStrategy | None = None) -> None:
        super().__init__(MemoryStorage(), search_strategy=search_strategy)

    def clear(self) -> None:
        """Remove every entry this view sees (all of them, for the store itself; its namespace's, for a view)."""
        run_sync(self.backend.delete(record_prefix(self.namespace_path, "")))
