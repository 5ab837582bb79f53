"""``LocalFileStorage``: Strands' local-disk store, on statehitl's ``FileStorage``.

The values live in ``base_dir`` as records of statehitl's file store: append-only logs, one per key
"directory", each write made durable (``fdatasync``) before it returns, so a crash never leaves a value
half written. They are not one file per key as in Strands; read them through the store (or the same
directory's checkpoints through ``statehitl threads --store file://DIR``).
"""

from __future__ import annotations

import os

from statehitl.checkpoint.file import FileStorage
from statehitl.storage.blob_store import BlobStore
from statehitl.storage.search.types import SearchStrategy

__all__ = ["LocalFileStorage"]


class LocalFileStorage(BlobStore):
    """Bytes under string keys in the directory ``base_dir`` (created on the first write)."""

    def __init__(self, base_dir: str | os.PathLike[str] = "./.strands/", *,
                 search_strategy: SearchStrategy | None = None) -> None:
        self._base_dir = os.path.normpath(os.fspath(base_dir))
        super().__init__(FileStorage(self._base_dir), search_strategy=search_strategy)

    @property
    def base_dir(self) -> str:
        """The directory the store keeps its records in (every namespace of it shares it)."""
        return self._base_dir
