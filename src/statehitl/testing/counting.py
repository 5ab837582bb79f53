"""A ``Storage`` wrapper that counts requests and bytes: how tests and benchmarks see I/O cost.

Wrap any backend (``CountingStorage(FileStorage(dir))``) to assert bounds such as "a warm resume reads
only the head" or to measure bytes written per step, without touching the backend. The wrapper keeps
the whole contract of what it wraps, the optional ``read_all``, ``version``, ``list_versions``
and ``cleanup`` included, so a checkpointer on a counted store writes, prunes and
sweeps exactly as it would on the bare one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from statehitl.checkpoint.storage import (
    CLEANUP_MAX_AGE,
    NamedRecords,
    Storage,
    SupportsCleanup,
    has_list_versions,
    has_read_all,
    has_read_named_page,
    has_version,
    keeps_records_in_process,
)


@dataclass
class StorageCounts:
    """Requests by operation, bytes moved, and the keys read (in order) since the last reset."""

    calls: Counter[str] = field(default_factory=Counter)
    bytes_written: int = 0
    bytes_read: int = 0
    keys_read: list[str] = field(default_factory=list)


class CountingStorage:
    """Delegates to ``inner`` and counts every call.

    The optional methods of a store (``read_all``, ``version``, ``list_versions``,
    ``read_named_page``)
    are there exactly when ``inner`` has them, and ``keeps_records_in_process`` is ``inner``'s: they
    decide how the engine writes and reads checkpoints, so a counted store must be used exactly as the
    bare one would be.
    """

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.counts = StorageCounts()
        if has_read_all(inner):  # the engine's own test of the optional methods
            self.read_all = self._read_all
        if has_version(inner):
            self.version = self._version
        if has_list_versions(inner):
            self.list_versions = self._list_versions
        if has_read_named_page(inner):
            self.read_named_page = self._read_named_page
        self.keeps_records_in_process = keeps_records_in_process(inner)

    def reset(self) -> StorageCounts:
        """Start counting afresh; returns what was counted so far."""
        counts, self.counts = self.counts, StorageCounts()
        return counts

    async def read(self, key: str) -> tuple[bytes, str] | None:
        self.counts.calls["read"] += 1
        self.counts.keys_read.append(key)
        found = await self.inner.read(key)
        if found is not None:
            self.counts.bytes_read += len(found[0])
        return found

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        self.counts.calls["write"] += 1
        self.counts.bytes_written += len(data)
        return await self.inner.write(key, data, expect=expect, durable=durable)

    async def _list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """The inner store's ``list_versions``, counted as the ``list`` it is (one listing request)."""
        self.counts.calls["list"] += 1
        found: list[tuple[str, str]] = await self.inner.list_versions(prefix, limit=limit)  # type: ignore[attr-defined]
        return found

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        self.counts.calls["list"] += 1
        return await self.inner.list(prefix, limit=limit)

    async def delete(self, prefix: str) -> int:
        self.counts.calls["delete"] += 1
        return await self.inner.delete(prefix)

    async def _read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """The inner store's ``read_all``, counted as one call, its bytes as read."""
        self.counts.calls["read_all"] += 1
        found: dict[str, tuple[bytes, str]] = await self.inner.read_all(prefix)  # type: ignore[attr-defined]
        self.counts.bytes_read += sum(len(data) for data, _ in found.values())
        self.counts.keys_read.extend(found)
        return found

    async def _read_named_page(self, prefix: str, name: str, *, limit: int,
                               after: str | None = None) -> NamedRecords:
        """The inner store's ``read_named_page``, counted as one call, its records as read."""
        self.counts.calls["read_named_page"] += 1
        found: list[tuple[str, bytes, str]] = await self.inner.read_named_page(  # type: ignore[attr-defined]
            prefix, name, limit=limit, after=after)
        self.counts.bytes_read += sum(len(data) for _, data, _ in found)
        self.counts.keys_read.extend(key for key, _, _ in found)
        return found

    async def _version(self, key: str) -> str | None:
        """The inner store's ``version``, counted (no bytes of a value are read)."""
        self.counts.calls["version"] += 1
        token: str | None = await self.inner.version(key)  # type: ignore[attr-defined]
        return token

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        """The inner store's ``cleanup``, counted; a store without one has no debris, so 0 and no count."""
        if not isinstance(self.inner, SupportsCleanup):
            return 0
        self.counts.calls["cleanup"] += 1
        return await self.inner.cleanup(max_age)

    def __repr__(self) -> str:
        return f"CountingStorage({self.inner!r})"
