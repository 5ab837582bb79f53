"""Storage faults on demand: a ``Storage`` wrapper that fails chosen calls the ways real stores fail.

The promise under test is that an approved action runs at most once and the thread goes on once the
store is back, whatever call fails and however. Real outages are rare and never where a test wants
them, so ``FaultyStorage`` wraps any backend (memory, file, S3, DynamoDB, one of your own) and fails
the calls a test names: by their number in the order the engine makes them (so a test can walk every
storage call of an interrupt and its resume), or the next calls of one operation.

Kinds of fault, each as a backend reports it once its own retries are spent:

- ``unavailable``: the request never reached the store (a reset connection, a 500): nothing happened,
  ``StorageUnavailableError``.
- ``throttled``: refused for load, nothing happened, ``StorageThrottledError``.
- ``full``: no room for a write, nothing happened, ``StorageFullError``.
- ``landed``: the request reached the store and did its work, and the answer was lost (a timeout
  after the server wrote): the write is there, the caller gets ``StorageUnavailableError``.

``times=1`` fails one call; ``times=None`` fails from that call on until ``heal()`` (a lasting outage).
The wrapper keeps the optional parts of the wrapped store's contract (``read_all``, ``version``,
``list_versions``, ``cleanup``), so the engine uses it exactly as the bare store.
For the boto3 backends' own retry and "did my write land?" logic, fail the HTTP requests instead
(``statehitl.testing.boto_faults``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from statehitl.checkpoint.storage import (
    CLEANUP_MAX_AGE,
    Storage,
    SupportsCleanup,
    cache_scope_of,
    has_list_versions,
    has_read_all,
    has_version,
    keeps_records_in_process,
)
from statehitl.errors import StorageError, StorageFullError, StorageThrottledError, StorageUnavailableError

__all__ = ["FaultKind", "FaultyStorage", "StorageCall"]

T = TypeVar("T")

FaultKind = Literal["unavailable", "throttled", "full", "landed"]
Operation = Literal["read", "write", "list", "delete", "read_all", "version", "list_versions", "cleanup"]
_KINDS = ("unavailable", "throttled", "full", "landed")


@dataclass(frozen=True)
class StorageCall:
    """One call the engine made: its number (from 1), operation, key or prefix, and the fault it met."""

    number: int
    operation: str
    key: str
    fault: FaultKind | None = None


@dataclass
class _Rule:
    kind: FaultKind
    at: int | None
    operation: str | None
    times: int | None

    def matches(self, number: int, operation: str) -> bool:
        if self.at is not None and number < self.at:
            return False
        return self.operation is None or self.operation == operation


class FaultyStorage:
    """Delegates to ``inner`` and fails the calls the test asked for; ``calls`` lists every call made."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.calls: list[StorageCall] = []
        self._rules: list[_Rule] = []
        if has_read_all(inner):  # present exactly when the wrapped store has them: they decide the engine's ways
            self.read_all = self._read_all
        if has_version(inner):
            self.version = self._version
        if has_list_versions(inner):
            self.list_versions = self._list_versions
        self.keeps_records_in_process = keeps_records_in_process(inner)
        scope = cache_scope_of(inner)
        if scope is not None:  # a process-wide cache of warm threads must not mix it with the bare store
            self.cache_scope = f"faulty:{id(self)}:{scope}"

    def fail_at(self, number: int, kind: FaultKind = "unavailable", *, times: int | None = 1) -> FaultyStorage:
        """Fail call ``number`` (counted from 1 over every call, ``len(calls) + 1`` being the next) and the
        ``times - 1`` calls after it; with ``times=None`` every call from it on, until ``heal()``."""
        return self._add(_Rule(_kind(kind), number, None, times))

    def fail(self, operation: Operation | None = None, kind: FaultKind = "unavailable", *,
             times: int | None = 1) -> FaultyStorage:
        """Fail the next ``times`` calls of ``operation`` (None: of any operation; ``times=None``: all of
        them until ``heal()``)."""
        return self._add(_Rule(_kind(kind), None, operation, times))

    def heal(self) -> None:
        """The store is back: no call fails any more."""
        self._rules.clear()

    @property
    def faults(self) -> list[StorageCall]:
        """The calls that failed, in order."""
        return [call for call in self.calls if call.fault is not None]

    def _add(self, rule: _Rule) -> FaultyStorage:
        if rule.times is not None and rule.times < 1:
            raise ValueError(f"times must be at least 1 (or None: until heal()), got {rule.times!r}")
        self._rules.append(rule)
        return self

    async def _call(self, operation: str, key: str, run: Callable[[], Awaitable[T]]) -> T:
        number = len(self.calls) + 1
        rule = next((r for r in self._rules if r.matches(number, operation)), None)
        if rule is None:
            self.calls.append(StorageCall(number, operation, key))
            return await run()
        self.calls.append(StorageCall(number, operation, key, rule.kind))
        if rule.times is not None:
            rule.times -= 1
            if rule.times == 0:
                self._rules.remove(rule)
        if rule.kind == "landed":
            await run()  # done at the store; the answer never comes back
        raise _error(rule.kind, operation, key)

    # -- the Storage protocol ---------------------------------------------------------------------

    async def read(self, key: str) -> tuple[bytes, str] | None:
        return await self._call("read", key, lambda: self.inner.read(key))

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        return await self._call("write", key, lambda: self.inner.write(key, data, expect=expect, durable=durable))

    async def _list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = await self._call(
            "list_versions", prefix, lambda: self.inner.list_versions(prefix, limit=limit))  # type: ignore[attr-defined]
        return found

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        return await self._call("list", prefix, lambda: self.inner.list(prefix, limit=limit))

    async def delete(self, prefix: str) -> int:
        return await self._call("delete", prefix, lambda: self.inner.delete(prefix))

    async def _read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        found: dict[str, tuple[bytes, str]] = await self._call(
            "read_all", prefix, lambda: self.inner.read_all(prefix))  # type: ignore[attr-defined]
        return found

    async def _version(self, key: str) -> str | None:
        token: str | None = await self._call("version", key, lambda: self.inner.version(key))  # type: ignore[attr-defined]
        return token

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        if not isinstance(self.inner, SupportsCleanup):
            return 0
        inner = self.inner
        return await self._call("cleanup", "", lambda: inner.cleanup(max_age))

    def __repr__(self) -> str:
        return f"FaultyStorage({self.inner!r})"


def _kind(kind: str) -> FaultKind:
    if kind not in _KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; one of {', '.join(_KINDS)}")
    return kind  # type: ignore[return-value]


def _error(kind: FaultKind, operation: str, key: str) -> StorageError:
    fields: dict[str, Any] = {"store": "faulty", "operation": operation, "code": kind}
    if kind == "throttled":
        return StorageThrottledError(f"injected: {operation} {key!r} was throttled past every retry", **fields)
    if kind == "full":
        return StorageFullError(f"injected: no space left for {operation} {key!r}", **fields)
    if kind == "landed":
        return StorageUnavailableError(f"injected: {operation} {key!r} reached the store, its response was lost",
                                       **fields)
    return StorageUnavailableError(f"injected: {operation} {key!r} failed past every retry (500)", **fields)
