"""The optional capabilities a store may declare, listed in one place, and the kit's tests of each one a
store declares: the engine and the worker choose their ways by them (``checkpoint/storage.py``), so a
capability a store has by name must be what its protocol says.

A store declares a capability by having its member; the helper beside each protocol is how the
engine asks. The bulk and version reads (``read_all``, ``version``, ``list_versions``) are tested
against ``list`` and ``read`` in ``conformance_listing``; here, every capability's shape, and what the
others do that can be checked on any store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from statehitl.checkpoint.clock import StoreClock
from statehitl.checkpoint.storage import (
    ABSENT,
    HasCacheScope,
    HasDirectory,
    HasServerClock,
    KeepsRecordsInProcess,
    Storage,
    SupportsChangeFeed,
    SupportsCleanup,
    SupportsListVersions,
    SupportsReadAll,
    SupportsReadNamed,
    SupportsReadNamedPage,
    SupportsVersion,
    cache_scope_of,
    directory_of,
    has_change_feed,
    has_cleanup,
    has_list_versions,
    has_read_all,
    has_read_named,
    has_read_named_page,
    has_version,
    server_clock_of,
)
from statehitl.testing.conformance_base import ConformanceBase

__all__ = ["CAPABILITIES", "Capability", "CapabilityContract"]


@dataclass(frozen=True)
class Capability:
    """One optional capability: the member a store declares it by, its protocol, and how the engine asks."""

    member: str
    protocol: type
    declared: Callable[[object], bool]
    """Whether a store declares it (the helper of ``checkpoint/storage.py``)."""
    method: bool
    """A method (else a plain attribute or property)."""


CAPABILITIES: tuple[Capability, ...] = (
    Capability("read_all", SupportsReadAll, has_read_all, True),
    Capability("version", SupportsVersion, has_version, True),
    Capability("list_versions", SupportsListVersions, has_list_versions, True),
    Capability("cleanup", SupportsCleanup, has_cleanup, True),
    Capability("read_named", SupportsReadNamed, has_read_named, True),
    Capability("read_named_page", SupportsReadNamedPage, has_read_named_page, True),
    Capability("change_feed", SupportsChangeFeed, has_change_feed, True),
    Capability("keeps_records_in_process", KeepsRecordsInProcess,
               lambda s: isinstance(getattr(s, "keeps_records_in_process", None), bool), False),
    Capability("cache_scope", HasCacheScope, lambda s: cache_scope_of(s) is not None, False),
    Capability("root", HasDirectory, lambda s: directory_of(s) is not None, False),
    Capability("server_clock", HasServerClock, lambda s: server_clock_of(s) is not None, False),
)
"""Every optional capability of a store, besides the four methods every store has."""

_TYPES: dict[str, type] = {"keeps_records_in_process": bool, "cache_scope": str, "root": Path,
                           "server_clock": StoreClock}


class CapabilityContract(ConformanceBase):
    """What a store declares beyond the four methods is what its protocol says. Two tests that run on every
    store (a store that declares nothing has nothing to break), rather than one skipped per capability."""

    def test_what_a_store_has_by_a_capabilitys_name_is_that_capability(self, storage: Storage) -> None:
        for capability in CAPABILITIES:
            if not hasattr(storage, capability.member):
                continue
            member = getattr(storage, capability.member)
            if capability.method:
                assert callable(member), f"{capability.member} must be a method ({capability.protocol.__name__})"
            else:
                wanted = _TYPES[capability.member]
                assert isinstance(member, wanted), (
                    f"{capability.member} must be a {wanted.__name__} ({capability.protocol.__name__}), got {member!r}")
            assert isinstance(storage, capability.protocol), capability.protocol.__name__
            assert capability.declared(storage), f"{capability.member} is there, but the engine's helper misses it"

    def test_each_declared_capability_keeps_its_promise(self, storage: Storage, prefix: str) -> None:
        """``cache_scope`` a name that stays, ``change_feed()`` a new feed each time
        (following writes needs a store whose changes are streamed, which the backend's own tests set up),
        ``read_named`` what ``read`` gives, ``read_named_page`` pages that cover them once each in an order that
        holds, ``cleanup`` nothing a read or a listing reaches."""
        scope = cache_scope_of(storage)
        if scope is not None:
            assert scope, "an empty cache_scope would share one cache among every store that says so"
            assert cache_scope_of(storage) == scope
        if has_change_feed(storage):
            feed, other = storage.change_feed(), storage.change_feed()
            assert feed is not other
            assert callable(getattr(feed, "start", None))
            assert callable(getattr(feed, "poll", None))
        if isinstance(storage, SupportsReadNamed):
            self.run(self._read_named(storage, storage, prefix))
        if isinstance(storage, SupportsReadNamedPage):
            self.run(self._read_named_page(storage, storage, prefix))
        if isinstance(storage, SupportsCleanup):
            self.run(self._cleanup(storage, storage, prefix))

    @staticmethod
    async def _read_named(storage: Storage, named_reads: SupportsReadNamed, prefix: str) -> None:
        keys = [f"{prefix}idx/{thread}/{name}" for thread in ("t1", "t2", "t3") for name in ("entry", "audit.1")]
        keys.append(f"{prefix}other/t4/entry")
        for key in keys:
            await storage.write(key, key.encode(), expect=ABSENT)
        replaced = f"{prefix}idx/t2/entry"
        found = await storage.read(replaced)
        assert found is not None
        await storage.write(replaced, b"again", expect=found[1])
        named = await named_reads.read_named(f"{prefix}idx/", "entry")
        wanted = [k for k in keys if k.startswith(f"{prefix}idx/") and k.endswith("/entry")]
        assert sorted(named) == wanted, f"read_named gave keys {sorted(named)}"
        for key in wanted:
            assert named[key] == await storage.read(key), f"read_named gave another value for {key!r}"

    @staticmethod
    async def _read_named_page(storage: Storage, paged: SupportsReadNamedPage, prefix: str) -> None:
        """Pages of two cover every record of the name once, with what ``read`` gives; the same order on a
        second pass, though a record was rewritten and another deleted (the page's last key) meanwhile."""
        keys = [f"{prefix}pg/t{i}/{name}" for i in range(7) for name in ("audit.1", "entry")]
        keys.append(f"{prefix}pgx/t9/entry")
        for key in keys:
            await storage.write(key, key.encode(), expect=ABSENT)

        async def every_page(size: int) -> list[str]:
            seen: list[str] = []
            after = None
            while page := await paged.read_named_page(f"{prefix}pg/", "entry", limit=size, after=after):
                assert len(page) <= size, f"read_named_page(limit={size}) gave {len(page)} records"
                for key, data, token in page:
                    assert (data, token) == await storage.read(key), f"read_named_page gave another value for {key!r}"
                seen.extend(key for key, _, _ in page)
                after = page[-1][0]
                if len(page) < size:
                    break
            return seen

        first = await every_page(2)
        assert sorted(first) == sorted(k for k in keys if k.startswith(f"{prefix}pg/") and k.endswith("/entry")), first
        page = await paged.read_named_page(f"{prefix}pg/", "entry", limit=3)
        assert [key for key, _, _ in page] == first[:3]
        rewritten = await storage.read(first[3])
        assert rewritten is not None
        await storage.write(first[3], b"again", expect=rewritten[1])
        await storage.delete(first[2])
        rest = await paged.read_named_page(f"{prefix}pg/", "entry", limit=10, after=first[2])
        assert [key for key, _, _ in rest] == first[3:], "a rewrite or a deleted 'after' moved the records on"
        assert await paged.read_named_page(f"{prefix}pg/", "entry", limit=0) == []

    @staticmethod
    async def _cleanup(storage: Storage, cleaned: SupportsCleanup, prefix: str) -> None:
        keys = [f"{prefix}kept/{i}" for i in range(3)]
        tokens = {key: await storage.write(key, key.encode(), expect=ABSENT) for key in keys}
        removed = await cleaned.cleanup(0.0)
        assert isinstance(removed, int)
        assert removed >= 0
        assert await storage.list(f"{prefix}kept/") == keys
        for key in keys:
            assert await storage.read(key) == (key.encode(), tokens[key])
