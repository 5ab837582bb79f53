"""In-memory storage: the reference implementation of the ``Storage`` contract.

Every test can use it. Nothing it holds outlives the process: ``memory://`` URLs give a new, empty
store on every call, and ``memory://NAME`` the one store of that name in this process, so a command
run in another process (``statehitl threads list --store memory://x``) always finds it empty.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from typing import ClassVar

from statehitl.checkpoint.storage import ABSENT, NamedRecords, validate_key, validate_prefix
from statehitl.errors import CheckpointConflict


def _matching(keys: list[str], prefix: str, limit: int | None) -> list[str]:
    """The keys of sorted ``keys`` that start with ``prefix`` (at most ``limit`` of them)."""
    found: list[str] = []
    for key in itertools.islice(keys, bisect.bisect_left(keys, prefix), None):
        if not key.startswith(prefix) or len(found) == limit:
            break
        found.append(key)
    return found


class MemoryStorage:
    """A dict of ``key -> (bytes, version)`` behind a lock, so threads and loops can share it.

    Keys are also kept sorted, so ``list(prefix)`` costs a binary search plus what it returns, not a
    scan of every key in the store.
    """

    _named: ClassVar[dict[str, MemoryStorage]] = {}
    keeps_records_in_process: ClassVar[bool] = True
    """Its records are not compressed unless asked (``storage.compresses_by_default``)."""

    def __init__(self) -> None:
        self._data: dict[str, tuple[bytes, str]] = {}
        self._keys: list[str] = []
        self._lock = threading.Lock()
        self._version = 0

    @classmethod
    def from_url(cls, url: str) -> MemoryStorage:
        """``memory://`` is a new, empty store on each call; ``memory://NAME`` is the store called NAME.

        A named store is shared by every ``from_url`` of that name in this process (two checkpointers
        built from ``memory://jobs`` see the same threads) and lives as long as the process does; it
        is never visible to another process.
        """
        name = url.removeprefix("memory://").strip("/")
        if not name:
            return cls()
        if name not in cls._named:
            cls._named[name] = cls()
        return cls._named[name]

    async def read(self, key: str) -> tuple[bytes, str] | None:
        return self._data.get(validate_key(key))

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        validate_key(key)
        with self._lock:
            current = self._data.get(key)
            if expect == ABSENT:
                if current is not None:
                    raise CheckpointConflict(f"key {key!r} already exists")
            elif current is None or current[1] != expect:
                raise CheckpointConflict(f"key {key!r} changed since version {expect!r} was read")
            self._version += 1
            token = str(self._version)
            if current is None:
                bisect.insort(self._keys, key)
            self._data[key] = (bytes(data), token)
            return token

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The listed keys with their version tokens (``SupportsListVersions``)."""
        validate_prefix(prefix)
        with self._lock:
            return [(key, self._data[key][1]) for key in _matching(self._keys, prefix, limit)]

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        validate_prefix(prefix)
        with self._lock:
            return _matching(self._keys, prefix, limit)

    async def version(self, key: str) -> str | None:
        """The key's version token (``SupportsVersion``)."""
        found = self._data.get(validate_key(key))
        return None if found is None else found[1]

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Every key under ``prefix`` with its value (``SupportsReadAll``)."""
        validate_prefix(prefix)
        with self._lock:
            return {key: self._data[key] for key in _matching(self._keys, prefix, None)}

    async def read_named_page(self, prefix: str, name: str, *, limit: int,
                              after: str | None = None) -> NamedRecords:
        """The next ``limit`` records named ``name`` under ``prefix`` after the key ``after``, in key order
        (``SupportsReadNamedPage``): a binary search to where the page starts, then the keys it passes."""
        validate_prefix(prefix)
        found: list[tuple[str, bytes, str]] = []
        with self._lock:
            start = bisect.bisect_left(self._keys, prefix) if after is None else bisect.bisect_right(self._keys, after)
            for key in itertools.islice(self._keys, start, None):
                if len(found) >= limit or not key.startswith(prefix):
                    break
                if key.rsplit("/", 1)[-1] == name:
                    found.append((key, *self._data[key]))
        return found

    async def delete(self, prefix: str) -> int:
        validate_prefix(prefix)
        with self._lock:
            doomed = _matching(self._keys, prefix, None)
            for key in doomed:
                del self._data[key]
            start = bisect.bisect_left(self._keys, prefix)
            del self._keys[start : start + len(doomed)]
            return len(doomed)

    def __repr__(self) -> str:
        return f"MemoryStorage({len(self._data)} keys)"
