"""``FileStore``: the store on the file storage, for one machine (or a shared disk): items survive the
process, and every process on the same directory sees the same memory."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from statehitl.store.ops import IndexConfig, TTLConfig
from statehitl.store.storage import StorageStore


class FileStore(StorageStore):
    """Items under ``directory`` (each namespace one append-only log, each put fsynced); the directory may be
    a checkpointer's too: items live under its ``store/``."""

    def __init__(self, directory: str | os.PathLike[str] = ".statehitl", *, index: IndexConfig | None = None,
                 ttl: TTLConfig | None = None, clock: Callable[[], float] = time.time) -> None:
        from statehitl.checkpoint.file import FileStorage  # the file store's modules load with the first FileStore

        super().__init__(FileStorage(directory), index=index, ttl=ttl, clock=clock)
