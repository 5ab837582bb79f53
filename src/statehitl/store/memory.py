"""LangGraph's ``langgraph.store.memory``: ``InMemoryStore``, the store of one process's memory.

It is ``StorageStore`` on ``MemoryStorage``, the same engine as the durable stores, so what a program does
with it (TTL, filters, semantic search) it does the same way on files, S3 or DynamoDB. Values are kept as
JSON, so a value read back is a copy: changing it changes nothing stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.store.ops import IndexConfig, TTLConfig
from statehitl.store.storage import StorageStore

__all__ = ["InMemoryStore"]


class InMemoryStore(StorageStore):
    """A store that lives as long as this process: ``InMemoryStore()``, or ``InMemoryStore(index={"embed": fn,
    "dims": 1536, "fields": ["text"]})`` for semantic search. Unlike LangGraph's, it takes ``ttl=``."""

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(MemoryStorage(), index=index, ttl=ttl, clock=clock)

    def __repr__(self) -> str:
        return "InMemoryStore()"
