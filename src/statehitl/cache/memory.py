"""LangGraph's ``langgraph.cache.memory``: ``InMemoryCache``, node writes cached for this process's life."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statehitl.cache.base import BaseCache, FullKey, Namespace

__all__ = ["InMemoryCache"]


class InMemoryCache(BaseCache):
    """Entries in a dict behind a lock (sync nodes run in worker threads), kept as JSON text so what comes back
    is a copy. ``clock``: seconds since the epoch, for expiry (tests pass their own)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._entries: dict[Namespace, dict[str, tuple[str, float | None]]] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        now = self._clock()
        found: dict[FullKey, Any] = {}
        with self._lock:
            for namespace, key in keys:
                entry = self._entries.get(tuple(namespace), {}).get(key)
                if entry is None:
                    continue
                if entry[1] is not None and now >= entry[1]:
                    del self._entries[tuple(namespace)][key]
                    continue
                found[(tuple(namespace), key)] = json.loads(entry[0])
        return found

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        return self.get(keys)

    def set(self, pairs: Mapping[FullKey, tuple[Any, int | float | None]]) -> None:
        now = self._clock()
        encoded = {(tuple(ns), key): (json.dumps(value), None if ttl is None else now + ttl)
                   for (ns, key), (value, ttl) in pairs.items()}
        with self._lock:
            for (namespace, key), entry in encoded.items():
                self._entries.setdefault(namespace, {})[key] = entry

    async def aset(self, pairs: Mapping[FullKey, tuple[Any, int | float | None]]) -> None:
        self.set(pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._entries.clear()
            for namespace in namespaces or ():
                self._entries.pop(tuple(namespace), None)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)
