"""Checkpoints: durable records of a thread's state, on pluggable storage.

``MemoryCheckpointer()`` and ``FileCheckpointer(dir)`` cover tests and single machines (both take the
engine's options: ``signing_key=``, ``ttl=``, ``lease_seconds=``, ``compress=``);
``Checkpointer.from_url(url)`` picks any installed backend by URL. Nothing is deleted behind the
user's back: ``delete_thread``, ``prune`` (keep a thread's newest checkpoints) and ``sweep_expired``
(threads idle past the ``ttl``) are called explicitly, and the last two also clear the storage's
crash debris. A backend is the ``Storage`` protocol (``checkpoint/storage.py``) and nothing more.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statehitl.checkpoint.engine import Checkpointer
    from statehitl.checkpoint.file import FileStorage
    from statehitl.checkpoint.file_checkpointer import FileCheckpointer
    from statehitl.checkpoint.memory import InMemorySaver, MemoryCheckpointer, MemorySaver, MemoryStorage
    from statehitl.checkpoint.record_parts import InterruptRecord
    from statehitl.checkpoint.records import AuditEntry, CheckpointRecord
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

_HOMES = {
    "AuditEntry": "audit", "Checkpointer": "engine", "FileStorage": "file", "FileCheckpointer": "file_checkpointer",
    **dict.fromkeys(("InMemorySaver", "MemoryCheckpointer", "MemorySaver", "MemoryStorage"), "memory"),
    **dict.fromkeys(("CheckpointRecord", "InterruptRecord"), "records"),
    **dict.fromkeys(("ABSENT", "Storage", "validate_key", "validate_prefix", "validate_thread_id"), "storage"),
    "storage_from_url": "url",
}
"""Where each name lives: importing the package loads none of them, so a graph on one store does not load
the others (the file store's modules for an app in memory, a serverless cold start)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'statehitl.checkpoint' has no attribute {name!r}")
    return getattr(importlib.import_module(f"statehitl.checkpoint.{home}"), name)
