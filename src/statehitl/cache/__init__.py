"""LangGraph's ``langgraph.cache``: where nodes with a ``cache_policy`` keep what they wrote, so the same input
skips the node (``builder.compile(cache=InMemoryCache())``)."""

from __future__ import annotations

from statehitl.cache.base import BaseCache
from statehitl.cache.memory import InMemoryCache

__all__ = ["BaseCache", "InMemoryCache"]
