"""``PrefixedStorage``: one store seen as many, each under its own key prefix.

A ``statehitl.storage`` view made with ``namespace("tenant-a")`` keeps everything it stores, the
checkpoints of a ``SnapshotSessionManager`` on it included, under that prefix of the store it came
from. File and S3 stores take a prefix of their own (a sub-directory, a key prefix); the memory and
DynamoDB stores do not, and get this wrapper.

The wrapper keeps the store's optional capabilities exactly: it has ``read_all``, ``version``,
``list_versions`` and ``cleanup`` where the store under it has them and not
otherwise, since the engine chooses its record format and its reads by what a store offers
(``storage.has_read_all``...). Keys are checked before the prefix is added, so a key cannot climb out
of the prefix it is given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from statehitl._echo import echo
from statehitl.checkpoint.storage import (
    CLEANUP_MAX_AGE,
    Storage,
    cache_scope_of,
    has_cleanup,
    has_list_versions,
    has_read_all,
    has_version,
    keeps_records_in_process,
    validate_key,
    validate_prefix,
)
from statehitl.errors import InvalidThreadIdError, StorageConfigError


class PrefixedStorage:
    """``inner`` with every key under ``prefix/``; ``prefix`` is one or more safe key segments."""

    read_all: Callable[[str], Awaitable[dict[str, tuple[bytes, str]]]]
    version: Callable[[str], Awaitable[str | None]]
    list_versions: Callable[..., Awaitable[list[tuple[str, str]]]]
    cleanup: Callable[..., Awaitable[int]]

    def __init__(self, inner: Storage, prefix: str) -> None:
        try:
            validate_key(prefix)
        except InvalidThreadIdError:
            raise StorageConfigError(
                f"storage prefix {echo(prefix)} is not allowed: use '/'-separated segments of letters, digits and "
                "_ . : @ = + - (no empty or dot-leading segments)", code="InvalidPrefix",
            ) from None
        self.inner = inner
        self.prefix = prefix
        self._base = f"{prefix}/"
        self.keeps_records_in_process = keeps_records_in_process(inner)
        scope = cache_scope_of(inner)
        if scope is not None:
            self.cache_scope = f"{scope}/{prefix}"
        self._offer_optional(inner)

    def _offer_optional(self, inner: Storage) -> None:
        """Give this view each optional capability ``inner`` has, and only those."""
        base = self._base
        if has_read_all(inner):
            bulk = inner.read_all

            async def read_all(prefix: str) -> dict[str, tuple[bytes, str]]:
                found = await bulk(base + validate_prefix(prefix))
                return {key[len(base):]: value for key, value in found.items()}

            self.read_all = read_all
        if has_version(inner):
            lookup = inner.version

            async def version(key: str) -> str | None:
                return await lookup(base + validate_key(key))

            self.version = version
        if has_list_versions(inner):
            listing = inner.list_versions

            async def list_versions(prefix: str, *, limit: int | None = None) -> list[tuple[str, str]]:
                found = await listing(base + validate_prefix(prefix), limit=limit)
                return [(key[len(base):], token) for key, token in found]

            self.list_versions = list_versions
        if has_cleanup(inner):
            sweep = inner.cleanup

            async def cleanup(max_age: float = CLEANUP_MAX_AGE) -> int:
                return int(await sweep(max_age))  # debris belongs to the whole store, not to one prefix

            self.cleanup = cleanup

    async def read(self, key: str) -> tuple[bytes, str] | None:
        return await self.inner.read(self._base + validate_key(key))

    async def write(self, key: str, data: bytes, *, expect: str, durable: bool = True) -> str:
        return await self.inner.write(self._base + validate_key(key), data, expect=expect, durable=durable)

    async def list(self, prefix: str, *, limit: int | None = None) -> list[str]:
        keys = await self.inner.list(self._base + validate_prefix(prefix), limit=limit)
        return [key[len(self._base):] for key in keys]

    async def delete(self, prefix: str) -> int:
        return await self.inner.delete(self._base + validate_prefix(prefix))

    def __repr__(self) -> str:
        return f"PrefixedStorage({self.inner!r}, {self.prefix!r})"
