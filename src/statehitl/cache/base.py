"""LangGraph's ``langgraph.cache.base``: the interface of a node cache.

Entries are ``(namespace, key) -> value`` with a time to live in seconds (None: forever). A value is JSON
data (what a node wrote, as its checkpoint records it); a cache never pickles, so reading an entry runs no
code. Sync and async twins, as LangGraph's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["BaseCache", "FullKey", "Namespace"]

Namespace = tuple[str, ...]
FullKey = tuple[Namespace, str]


class BaseCache(ABC):
    """A cache of node writes: implement the six methods."""

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        """The live entries among ``keys``."""

    @abstractmethod
    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        """``get``, async."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[Any, int | float | None]]) -> None:
        """Store each value with its time to live in seconds (None: no expiry)."""

    @abstractmethod
    async def aset(self, pairs: Mapping[FullKey, tuple[Any, int | float | None]]) -> None:
        """``set``, async."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop the entries of ``namespaces`` (all of them when None)."""

    @abstractmethod
    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """``clear``, async."""
