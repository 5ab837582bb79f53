"""The storage contract every backend implements: a tiny key/value store with compare-and-set.

Four async methods and nothing else, so a backend (memory, file, S3, DynamoDB) is a small class
and all checkpoint semantics live once, in the engine. Values are opaque bytes; a write names what it
expects to find (``ABSENT`` or the version token of the current value) and fails with
``CheckpointConflict`` otherwise, which is what makes concurrent writers safe.
"""

from __future__ import annotations

import re
from typing import Final, Protocol, runtime_checkable

from statehitl.errors import InvalidThreadIdError

__all__ = ["ABSENT", "Storage", "validate_key", "validate_prefix", "validate_thread_id"]

ABSENT: Final = "absent"
"""``expect=ABSENT``: the write succeeds only if the key does not exist yet (create-once)."""

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
    """A thread id is one safe key segment of at most 200 characters."""
    if not isinstance(thread_id, str) or not _THREAD_ID.fullmatch(thread_id):
        raise InvalidThreadIdError(
            f"thread id {thread_id!r} is not allowed: use 1-200 letters, digits or _ . : @ = + - "
            "(not starting with '.' or '-', no '/' or '\\'), so it cannot escape the store"
        )
    return thread_id
