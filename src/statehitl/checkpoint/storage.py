"""The storage contract every backend implements: a tiny key/value store with compare-and-set.

Four async methods carry every checkpoint, so a backend (memory, file, S3, DynamoDB) is a small class
and all checkpoint semantics live once, in the engine. Values are opaque bytes; a write names what it
expects to find (``ABSENT`` or the version token of the current value) and fails with
``CheckpointConflict`` otherwise, which is what makes concurrent writers safe.

Around those four, two more pieces are part of the contract, each with its own small protocol so a
backend states it rather than relying on a naming convention:

- ``StorageFactory``: a backend reachable by URL (``Checkpointer.from_url``, the CLI's ``--store``,
  ``SessionManager.from_url``) is registered in the ``statehitl.checkpointers`` entry-point group under
  its scheme, and what it registers must have ``from_url(url) -> Storage`` (a classmethod of the
  storage class, as every backend here has). A backend used only by constructing it needs none.
- ``SupportsReadAll``: optional. A backend that can return every record under a prefix in one pass
  (one file, one DynamoDB ``Query`` per megabyte) provides ``read_all(prefix)``. The engine then
  stores each checkpoint as what its step added to its parent and reads a thread's chain in that
  one pass; without it, it keeps the Fenwick chain, whose loads take at most log2(depth)+1 reads.
- ``SupportsVersion``: optional. A backend that can tell a key's version token without its value
  (a ``HeadObject``, a log's index, a projected ``GetItem``) provides ``version(key)``: the engine then
  checks a thread it already holds by the head's token alone, reading no value at all.
- ``KeepsRecordsInProcess``: optional, a class attribute ``keeps_records_in_process``. ``True`` on a
  store whose records never leave the process (``MemoryStorage``): nothing is billed or written per
  byte there, so the engine does not compress its records unless asked (``compresses_by_default``).
- ``SupportsCleanup``: optional. A backend whose writes can leave debris when a process dies mid-write
  (the file store's compaction temp files, DynamoDB's value chunks written before their record)
  provides ``cleanup(max_age)``; ``Checkpointer.prune`` and ``sweep_expired`` call it. Debris is
  never reachable through ``read``/``list``, so a backend without any has nothing to provide.
- ``HasCacheScope``: optional. ``cache_scope`` names where the data lives (a directory, a bucket and
  prefix, a table at its endpoint), the same for every store object on the same data: the engine shares
  one cache of warm threads per scope across the process (``checkpoint/warm.py``).
- ``SupportsReadNamed``: optional. ``read_named(prefix, name)`` gives every record under ``prefix`` whose
  last key segment is ``name``, as ``read_all`` would, in fewer requests than a read per partition
  (DynamoDB's filtered ``Scan``): a worker's pass over every thread's index entry.
- ``SupportsReadNamedPage``: optional. ``read_named_page(prefix, name, limit=, after=)`` gives the next
  ``limit`` records of one name under ``prefix`` after the key ``after``, in an order of the store's own
  that holds across calls: a page of the inbox costs requests in proportion to the page, not the store.
  Without it, ``read_named_page`` (the helper here) lists the prefix in key order and reads the page.
- ``SupportsChangeFeed``: optional. ``change_feed()`` is a ``ChangeFeed`` of the keys written to the store
  (DynamoDB's table stream): a worker follows it to resume a thread once its answer is stored.
- ``HasDirectory``: optional. ``root`` is the directory a store keeps its files in (the file store), so
  the CLI can say that a store it finds empty does not exist.

Each optional capability has a helper that tells whether a store has it (``has_read_all``,
``has_change_feed``, ``cache_scope_of``...) with one attribute lookup: the engine and the worker ask
through those, and the conformance kit (``statehitl.testing.conformance``) checks each one a backend
declares.

Errors: a compare-and-set that fails is ``CheckpointConflict``, and nothing else is; a bad key
``InvalidThreadIdError`` (``validate_key``/``validate_prefix`` raise it); every other failure a caller
can see is a ``StorageError`` subclass that says whether it is ``transient`` and chains its cause:
``StorageNotFoundError`` (no such bucket or table), ``StorageAccessError`` (credentials or permissions
refused), ``StorageThrottledError`` (throttled past every retry), ``StorageUnavailableError`` (5xx,
resets, timeouts, I/O errors past every retry), ``StorageFullError`` (no room: a full disk, a file-size
limit, a read-only store), ``StorageConfigError`` (a URL or option that names no usable store), so
callers catch them by meaning whatever the backend. A write must be all or nothing (a short write is an
error), and one whose answer was lost should be checked for having landed before it is reported as a
conflict: the engine also reads back its own create-once records after a ``StorageError``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Protocol, TypeGuard, runtime_checkable

from statehitl.checkpoint.clock import StoreClock
from statehitl.errors import InvalidThreadIdError

__all__ = [
    "ABSENT",
    "CLEANUP_MAX_AGE",
    "ChangeFeed",
    "HasCacheScope",
    "HasDirectory",
    "HasServerClock",
    "KeepsRecordsInProcess",
    "NamedRecords",
    "Storage",
    "StorageFactory",
    "SupportsChangeFeed",
    "SupportsCleanup",
    "SupportsListVersions",
    "SupportsReadAll",
    "SupportsReadNamed",
    "SupportsReadNamedPage",
    "SupportsVersion",
    "cache_scope_of",
    "compresses_by_default",
    "directory_of",
    "has_change_feed",
    "has_cleanup",
    "has_list_versions",
    "has_read_all",
    "has_read_named",
    "has_read_named_page",
    "has_version",
    "keeps_records_in_process",
    "read_named_page",
    "read_prefix",
    "server_clock_of",
    "validate_key",
    "validate_prefix",
    "validate_thread_id",
]

NamedRecords = list[tuple[str, bytes, str]]
"""Records as ``read_named_page`` gives them: ``(key, value, version token)``, in the store's order."""

ABSENT: Final = "absent"
"""``expect=ABSENT``: the write succeeds only if the key does not exist yet (create-once)."""

CLEANUP_MAX_AGE: Final = 3600.0
"""Debris younger than this (seconds) is left by ``cleanup``: its writer may still be at work."""

_SEGMENT_TEXT = r"[A-Za-z0-9_][A-Za-z0-9_.:@=+-]*"
_KEY = re.compile(rf"^{_SEGMENT_TEXT}(?:/{_SEGMENT_TEXT})*$")
_THREAD_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@=+-]{0,199}$")


@runtime_checkable
class Storage(Protocol):
    """What a checkpoint backend provides. Keys are ``/``-separated safe segments (see ``validate_key``)."""

    async def read(self, key: str) -> tuple[bytes, str] | None:
        """The value and its version token, or None if the key does not exist."""
        ...

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        """Store ``data`` if the key's current version is ``expect`` (or it is absent for ``ABSENT``).

        Returns the new version token; raises ``CheckpointConflict`` if the expectation fails.
        ``durable=False`` lets a backend skip forcing the write to stable storage (a later durable
        write on the same thread follows); backends without that distinction ignore it.
        """
        ...

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        """Keys starting with ``prefix``, sorted; only the first ``limit`` of them if given."""
        ...

    async def delete(self, prefix: str) -> int:
        """Delete every key starting with ``prefix``; return how many were deleted."""
        ...


@runtime_checkable
class SupportsReadAll(Protocol):
    """The optional bulk read of a backend that can fetch a whole directory of records at once.

    What decides the record format: with it, a step's checkpoint holds only what the step added, so
    a write grows with the step and not with the thread's history, and a cold load is this one call.
    """

    async def read_all(self, prefix: str) -> dict[str, tuple[bytes, str]]:
        """Every key starting with ``prefix`` with its value and version token (what ``read`` gives),
        in as few requests as the backend can manage."""
        ...


@runtime_checkable
class SupportsVersion(Protocol):
    """The optional version lookup of a backend that can give a key's token without its value."""

    async def version(self, key: str) -> str | None:
        """The token ``read`` would give with the value (and ``write`` gave), or None if the key is absent."""
        ...


@runtime_checkable
class SupportsListVersions(Protocol):
    """The optional listing of a backend whose listing already knows each key's version token.

    Whether the thread a process last wrote is still as it left it is one question: what is the
    newest key, and its token. A backend that answers both in one request (a DynamoDB ``Query``, an
    S3 listing with its ETags, a log's index) saves the ``version`` request after the ``list`` on
    every warm resume.
    """

    async def list_versions(self, prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
        """What ``list`` gives, each key with the token ``version`` would give for it."""
        ...


@runtime_checkable
class SupportsCleanup(Protocol):
    """The optional cleanup step of a backend whose interrupted writes can leave debris behind.

    The engine never needs the debris gone to be correct (no key refers to it), only to stop paying
    for it, so cleanup is a maintenance step run by ``Checkpointer.prune`` and ``sweep_expired``
    rather than on every write. It may be slow (a directory walk, a table scan).
    """

    async def cleanup(self, max_age: float = CLEANUP_MAX_AGE) -> int:
        """Remove debris older than ``max_age`` seconds; return how many pieces were removed.

        Must never remove anything ``read`` or ``list`` can reach, nor debris younger than
        ``max_age``, which may belong to a write still in progress in another process.
        """
        ...


@runtime_checkable
class KeepsRecordsInProcess(Protocol):
    """The optional mark of a store whose records never leave the process (``MemoryStorage``)."""

    keeps_records_in_process: bool


@runtime_checkable
class HasCacheScope(Protocol):
    """The optional name of where a store's data lives, the same for every store object on that data."""

    @property
    def cache_scope(self) -> str: ...


@runtime_checkable
class SupportsReadNamed(Protocol):
    """The optional read of one record name across many partitions in fewer requests than a read each."""

    async def read_named(self, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
        """Every key under ``prefix`` whose last ``/``-segment is ``name``, with what ``read`` gives for it."""
        ...


@runtime_checkable
class SupportsReadNamedPage(Protocol):
    """The optional page of one record name across partitions: what pages the inbox, in requests that grow
    with the page rather than with the store (S3's ``ListObjectsV2`` from ``StartAfter``, DynamoDB's
    ``Scan`` from an ``ExclusiveStartKey``)."""

    async def read_named_page(self, prefix: str, name: str, *, limit: int,
                              after: str | None = None) -> NamedRecords:
        """The first ``limit`` records under ``prefix`` whose last ``/``-segment is ``name`` and that come
        after the key ``after`` (None: from the start), each as ``(key, value, token)``, in the store's order.

        That order is the store's own (by key where it lists keys in order; DynamoDB's is its table's scan
        order) and must hold across calls: a record rewritten between two calls keeps its place, so a
        caller that continues after the last key of a page never sees a record twice or misses one that
        was there all along. Fewer than ``limit`` records means there are no more. ``after`` need not
        exist any longer (it may have been deleted since it was returned).
        """
        ...


class ChangeFeed(Protocol):
    """A store's stream of written keys: ``start`` positions it at its end, ``poll`` returns what was written
    since (objects with a ``key``), in order. Blocking calls: a worker runs them in a thread."""

    def start(self) -> None: ...

    def poll(self) -> Sequence[Any]: ...


@runtime_checkable
class SupportsChangeFeed(Protocol):
    """The optional feed of the keys written to a store (DynamoDB's table stream)."""

    def change_feed(self) -> ChangeFeed:
        """A new feed, not started."""
        ...


@runtime_checkable
class HasDirectory(Protocol):
    """The optional directory a store keeps its files in (the file store)."""

    root: Path


@runtime_checkable
class HasServerClock(Protocol):
    """The optional clock of a store that answers over HTTP (S3, DynamoDB: the ``Date`` of its responses):
    leases are written and judged by it rather than by each machine's own (``checkpoint/clock.py``)."""

    @property
    def server_clock(self) -> StoreClock: ...


@runtime_checkable
class StorageFactory(Protocol):
    """What a ``statehitl.checkpointers`` entry point names: something that builds a store from a URL.

    Usually the storage class itself, with a ``from_url`` classmethod. The URL arrives whole, scheme
    included (``s3://bucket/prefix?region=eu-west-1``); a URL the backend cannot use must raise an
    error that says what is wrong with it (an unknown option, a missing bucket name), not fall back to
    a default, since a deployment's typo would otherwise go unnoticed.
    """

    def from_url(self, url: str) -> Storage:
        """The store ``url`` names; nothing is contacted yet, so building one stays cheap."""
        ...


def has_read_all(storage: object) -> TypeGuard[SupportsReadAll]:
    """``isinstance(storage, SupportsReadAll)``, for one attribute lookup: Python 3.11 checks a protocol by
    walking the class's attributes on every call (microseconds), and a server builds checkpointers per request."""
    return callable(getattr(storage, "read_all", None))


def has_version(storage: object) -> TypeGuard[SupportsVersion]:
    """``isinstance(storage, SupportsVersion)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "version", None))


def has_list_versions(storage: object) -> TypeGuard[SupportsListVersions]:
    """``isinstance(storage, SupportsListVersions)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "list_versions", None))


def has_cleanup(storage: object) -> TypeGuard[SupportsCleanup]:
    """``isinstance(storage, SupportsCleanup)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "cleanup", None))


def has_read_named(storage: object) -> TypeGuard[SupportsReadNamed]:
    """``isinstance(storage, SupportsReadNamed)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "read_named", None))


def has_read_named_page(storage: object) -> TypeGuard[SupportsReadNamedPage]:
    """``isinstance(storage, SupportsReadNamedPage)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "read_named_page", None))


def has_change_feed(storage: object) -> TypeGuard[SupportsChangeFeed]:
    """``isinstance(storage, SupportsChangeFeed)``, for one attribute lookup (see ``has_read_all``)."""
    return callable(getattr(storage, "change_feed", None))




def keeps_records_in_process(storage: object) -> bool:
    """Whether the store says its records never leave the process (``KeepsRecordsInProcess``)."""
    return bool(getattr(storage, "keeps_records_in_process", False))


def compresses_by_default(storage: object) -> bool:
    """Whether a checkpointer on ``storage`` compresses its records when not told: yes on every store
    whose bytes are written or billed (files, S3, DynamoDB, a store of one's own), no on one that keeps
    them in the process (``keeps_records_in_process``), where compressing would spend CPU for nothing."""
    return not keeps_records_in_process(storage)


def cache_scope_of(storage: object) -> str | None:
    """Where the store's data lives (``HasCacheScope``), or None for a store that does not say."""
    scope = getattr(storage, "cache_scope", None)
    return scope if isinstance(scope, str) else None


def directory_of(storage: object) -> Path | None:
    """The directory the store keeps its files in (``HasDirectory``), or None."""
    root = getattr(storage, "root", None)
    return root if isinstance(root, Path) else None


def server_clock_of(storage: object) -> StoreClock | None:
    """The store's own clock (``HasServerClock``), or None: this machine's clock is the store's."""
    clock = getattr(storage, "server_clock", None)
    return clock if isinstance(clock, StoreClock) else None


async def read_prefix(storage: Storage, prefix: str) -> dict[str, tuple[bytes, str]]:
    """Every key under ``prefix`` with its value and token, in key order: the storage's one bulk read
    when it has one (``SupportsReadAll``), else a listing and a read per key (one deleted meanwhile is
    left out)."""
    if has_read_all(storage):
        return dict(sorted((await storage.read_all(prefix)).items()))
    found: dict[str, tuple[bytes, str]] = {}
    for key in await storage.list(prefix):
        value = await storage.read(key)
        if value is not None:
            found[key] = value
    return found


async def read_named_page(storage: Storage, prefix: str, name: str, *, limit: int,
                          after: str | None = None) -> NamedRecords:
    """``storage.read_named_page`` where the store has it (``SupportsReadNamedPage``); else the keys under
    ``prefix`` in key order after ``after`` and of name ``name``, read one by one until ``limit`` are found
    (one deleted meanwhile is passed over): the listing grows with the store, the reads with the page."""
    if limit <= 0:
        return []
    if has_read_named_page(storage):
        return await storage.read_named_page(prefix, name, limit=limit, after=after)
    found: NamedRecords = []
    for key in await storage.list(prefix):
        if (after is not None and key <= after) or key.rsplit("/", 1)[-1] != name:
            continue
        value = await storage.read(key)
        if value is not None:
            found.append((key, *value))
            if len(found) == limit:
                break
    return found


def validate_key(key: str) -> str:
    """Refuse keys that could escape a backend's namespace (``..``, absolute paths, odd characters)."""
    if not _KEY.fullmatch(key):
        raise InvalidThreadIdError(
            f"storage key {key!r} is not allowed: '/'-separated segments matching {_SEGMENT_TEXT} "
            "(no empty segments, no leading dots, no path separators other than '/')"
        )
    return key


def validate_prefix(prefix: str) -> str:
    """A listing prefix must be the start of some valid key (``""`` lists everything).

    Checked before a backend walks or deletes anything, so ``list("../")`` cannot reach outside it.
    """
    try:
        validate_key(prefix + "_")
    except InvalidThreadIdError:
        raise InvalidThreadIdError(f"storage prefix {prefix!r} is not allowed: no valid key starts with it") from None
    return prefix


def validate_thread_id(thread_id: object) -> str:
    """A thread id is one safe key segment of at most 200 characters.

    The message quotes a refused id whole only when it is short: one pasted from the wrong place (a
    whole request body) is shown by its start and its length, so the sentence stays readable.
    """
    if not isinstance(thread_id, str) or not _THREAD_ID.fullmatch(thread_id):
        from statehitl._echo import echo

        raise InvalidThreadIdError(
            f"thread id {echo(thread_id)} is not allowed: use 1-200 letters, digits or _ . : @ = + - "
            "(not starting with '.' or '-', no '/' or '\\'), so it cannot escape the store"
        )
    return thread_id
