"""In-memory storage: the reference implementation of the ``Storage`` contract.

Every test can use it, and ``memory://NAME`` URLs share one store per name inside a process.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from statehitl.checkpoint.storage import ABSENT, validate_key, validate_prefix
from statehitl.errors import CheckpointConflict

__all__ = ["MemoryStorage"]




class MemoryStorage:
    """A dict of ``key -> (bytes, version)`` behind a lock, so threads and loops can share it."""

    _named: ClassVar[dict[str, MemoryStorage]] = {}

    def __init__(self) -> None:
        self._data: dict[str, tuple[bytes, str]] = {}
        self._lock = threading.Lock()
        self._version = 0

    @classmethod
    def from_url(cls, url: str) -> MemoryStorage:
        """``memory://`` is a fresh store; ``memory://NAME`` is the process-wide store called NAME."""
        name = url.removeprefix("memory://").strip("/")
        if not name:
            return cls()
        return cls._named.setdefault(name, cls())

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
            self._data[key] = (bytes(data), token)
            return token

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        validate_prefix(prefix)
        with self._lock:
            return sorted(k for k in self._data if k.startswith(prefix))[:limit]

    async def delete(self, prefix: str) -> int:
        validate_prefix(prefix)
        with self._lock:
            doomed = [k for k in self._data if k.startswith(prefix)]
            for key in doomed:
                del self._data[key]
            return len(doomed)

    def __repr__(self) -> str:
        return f"MemoryStorage({len(self._data)} keys)"
