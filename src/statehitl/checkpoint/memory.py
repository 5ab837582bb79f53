"""The in-memory checkpointer, at LangGraph's path: ``from statehitl.checkpoint.memory import InMemorySaver``
(``langgraph.checkpoint.memory``). Its store is ``MemoryStorage`` (``checkpoint/memory_storage.py``)."""

from __future__ import annotations

from typing import Any

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory_storage import MemoryStorage

__all__ = ["InMemorySaver", "MemoryCheckpointer", "MemorySaver", "MemoryStorage"]


class MemoryCheckpointer(Checkpointer):
    """Checkpoints kept in this process's memory: for tests and short-lived runs."""

    def __init__(self, **options: Any) -> None:
        super().__init__(MemoryStorage(), **options)


InMemorySaver = MemoryCheckpointer
"""LangGraph's name for the in-memory checkpointer (``langgraph.checkpoint.memory``)."""
MemorySaver = MemoryCheckpointer
"""LangGraph's older name for ``InMemorySaver``."""
