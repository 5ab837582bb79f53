"""Checkpoints: durable records of a thread's state, on pluggable storage.

``MemoryCheckpointer()`` and ``FileCheckpointer(dir)`` cover tests and single machines (both take the
engine's options: ``signing_key=``, ``ttl=``, ``lease_seconds=``, ``compress=``);
``Checkpointer.from_url(url)`` picks any installed backend by URL. Nothing is deleted behind the
user's back: ``delete_thread``, ``prune`` (keep a thread's newest checkpoints) and ``sweep_expired``
(threads idle past the ``ttl``) are called explicitly, and the last two also clear the storage's
crash debris. A backend is the ``Storage`` protocol (``checkpoint/storage.py``) and nothing more.
"""

from __future__ import annotations

import os
from typing import Any

from statehitl.checkpoint.audit import AuditEntry
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.memory import InMemorySaver, MemoryCheckpointer, MemorySaver, MemoryStorage
from statehitl.checkpoint.records import CheckpointRecord, InterruptRecord
from statehitl.checkpoint.storage import ABSENT, Storage, validate_key, validate_prefix, validate_thread_id
from statehitl.checkpoint.url import storage_from_url

__all__ = [
    "ABSENT",
    "AuditEntry",
    "CheckpointRecord",
    "Checkpointer",
    "FileCheckpointer",
    "FileStorage",
    "InMemorySaver",
    "InterruptRecord",
    "MemoryCheckpointer",
    "MemorySaver",
    "MemoryStorage",
    "Storage",
    "storage_from_url",
    "validate_key",
    "validate_prefix",
    "validate_thread_id",
]


class FileCheckpointer(Checkpointer):
    """Checkpoints in append-only record logs under ``directory``; a call returns once its checkpoint is fsynced."""

    def __init__(self, directory: str | os.PathLike[str] = ".statehitl", **options: Any) -> None:
        super().__init__(FileStorage(directory), **options)


