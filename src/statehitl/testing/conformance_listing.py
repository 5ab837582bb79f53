"""The kit's tests of listing and deleting by prefix, and of the optional reads that list (``read_all``,
``version``, ``list_versions``)."""

from __future__ import annotations

import os

import pytest

from statehitl.checkpoint.storage import ABSENT, Storage, SupportsListVersions, SupportsReadAll, SupportsVersion
from statehitl.errors import CheckpointConflict
from statehitl.testing._storage_support import gather_bounded
from statehitl.testing.conformance_base import ConformanceBase


class ListingContract(ConformanceBase):
    """``list`` and ``delete`` by plain string prefix, paged, and the optional bulk and version reads."""

    # -- list / delete --------------------------------------------------------------------------

    def test_list_is_plain_string_prefix_sorted(self, storage: Storage, prefix: str) -> None:
        keys = self.layout(prefix)

        async def scenario() -> None:
            for key in reversed(keys):  # written out of order on purpose
                await storage.write(key, key.encode(), expect=ABSENT)

            def expected(p: str) -> list[str]:
                return sorted(k for k in keys if k.startswith(p))

            for p in ("t/a/", "t/a", "t/", "t", "t/a/deep/", "t/a-", "t/b", "t/C", "u", "t/a/1"):
                listed = await storage.list(prefix + p)
                assert listed == expected(prefix + p), f"list({p!r} under prefix) gave {listed}"
            assert await storage.list(prefix) == sorted(keys)
            assert await storage.list(f"{prefix}nothing") == []
            assert await storage.list(f"{prefix}t/a/1/") == [], "a key is not a directory of itself"

        self.run(scenario())

    def test_read_all_gives_what_list_and_read_give(self, storage: Storage, prefix: str) -> None:
        """``SupportsReadAll`` (optional): the keys ``list`` gives, each with what ``read`` gives, a
        value over DynamoDB's item size and a replaced value included."""
        if not isinstance(storage, SupportsReadAll):
            pytest.skip(f"{type(storage).__name__} has no read_all (optional)")
        keys = self.layout(prefix)

        async def scenario() -> None:
            for key in keys:
                await storage.write(key, key.encode(), expect=ABSENT)
            big = f"{prefix}t/a/big"
            await storage.write(big, os.urandom(450_000), expect=ABSENT)
            replaced = f"{prefix}t/a/2"
            await storage.write(replaced, b"second", expect=(await storage.read(replaced) or (b"", ""))[1])
            for p in ("t/a/", "t/a", "t/", "u", "nothing"):
                listed = await storage.list(prefix + p)
                found = await storage.read_all(prefix + p)
                assert sorted(found) == listed, f"read_all({p!r} under prefix) gave keys {sorted(found)}"
                for key in listed:
                    assert found[key] == await storage.read(key), f"read_all gave another value for {key!r}"

        self.run(scenario())

    def test_version_gives_the_token_without_the_value(self, storage: Storage, prefix: str) -> None:
        """``SupportsVersion`` (optional): the token ``write`` returned and ``read`` gives, None when absent."""
        if not isinstance(storage, SupportsVersion):
            pytest.skip(f"{type(storage).__name__} has no version (optional)")
        key = f"{prefix}versioned"

        async def scenario() -> None:
            assert await storage.version(key) is None
            first = await storage.write(key, b"one", expect=ABSENT)
            found = await storage.read(key)
            assert found is not None
            assert await storage.version(key) == first == found[1]
            second = await storage.write(key, b"two", expect=first)
            assert await storage.version(key) == second != first
            await storage.delete(key)
            assert await storage.version(key) is None

        self.run(scenario())

    def test_list_versions_pairs_each_listed_key_with_its_version(self, storage: Storage, prefix: str) -> None:
        """``SupportsListVersions`` (optional): ``list``'s keys, in its order and with its ``limit``, each with
        the token ``read`` gives (and ``write`` gave), a replaced key with its new one."""
        if not isinstance(storage, SupportsListVersions):
            pytest.skip(f"{type(storage).__name__} has no list_versions (optional)")

        async def scenario() -> None:
            tokens = {}
            for name in ("lv/t/2", "lv/t/0", "lv/t/1", "lv/u/0", "lv/t/9/x"):
                key = prefix + name
                tokens[key] = await storage.write(key, key.encode(), expect=ABSENT)
            replaced = f"{prefix}lv/t/1"
            tokens[replaced] = await storage.write(replaced, b"again", expect=tokens[replaced])
            for p, limit in (("lv/t/", None), ("lv/t/", 1), ("lv/t/", 2), ("lv/", None), ("lv/t/0", None),
                             ("nothing/", None)):
                listed = await storage.list(prefix + p, limit=limit)
                paired = await storage.list_versions(prefix + p, limit=limit)
                assert [key for key, _ in paired] == listed, f"list_versions({p!r}, limit={limit}) gave {paired}"
                for key, token in paired:
                    found = await storage.read(key)
                    assert found is not None, key
                    assert token == found[1] == tokens[key], f"{key!r}: {token!r} is not its version"
            await storage.delete(f"{prefix}lv/")
            assert await storage.list_versions(f"{prefix}lv/") == []

        self.run(scenario())

    def test_directory_like_key_reads_absent(self, storage: Storage, prefix: str) -> None:
        async def scenario() -> None:
            await storage.write(f"{prefix}d/x", b"x", expect=ABSENT)
            assert await storage.read(f"{prefix}d") is None
            with pytest.raises(CheckpointConflict):
                await storage.write(f"{prefix}d", b"y", expect="not-a-token")
            assert await storage.list(f"{prefix}d") == [f"{prefix}d/x"]

        self.run(scenario())

    def test_delete_removes_exactly_the_prefix(self, storage: Storage, prefix: str) -> None:
        keys = self.layout(prefix)

        async def scenario() -> None:
            for key in keys:
                await storage.write(key, b"v", expect=ABSENT)
            doomed = sorted(k for k in keys if k.startswith(f"{prefix}t/a/"))
            assert await storage.delete(f"{prefix}t/a/") == len(doomed)
            assert await storage.list(prefix) == sorted(set(keys) - set(doomed))
            for key in doomed:
                assert await storage.read(key) is None
            assert await storage.delete(f"{prefix}t/a/") == 0
            assert await storage.delete(f"{prefix}nothing") == 0
            # Plain string prefix: "t/a" now takes "t/a-1", "t/a.b" and "t/ab/1".
            assert await storage.delete(f"{prefix}t/a") == 3
            assert await storage.list(prefix) == sorted(prefix + k for k in ("t/b/1", "t/C", "tx/a/1", "u"))

        self.run(scenario())

    def test_deleted_key_can_be_created_again(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            old = await storage.write(key, b"old", expect=ABSENT)
            assert await storage.delete(key) == 1
            with pytest.raises(CheckpointConflict):
                await storage.write(key, b"stale", expect=old)
            new = await storage.write(key, b"new", expect=ABSENT)
            assert await storage.read(key) == (b"new", new)

        self.run(scenario())

    def test_list_and_delete_many_keys(self, storage: Storage, prefix: str) -> None:
        # Unpadded numbers: "k/10" sorts before "k/2", so string order is what is checked.
        keys = [f"{prefix}many/{i}" for i in range(self.many_keys)]
        neighbour = f"{prefix}many-neighbour"

        async def scenario() -> None:
            await gather_bounded(storage.write(key, b"x", expect=ABSENT, durable=False) for key in keys)
            await storage.write(neighbour, b"n", expect=ABSENT)
            listed = await storage.list(f"{prefix}many/")
            assert len(listed) == len(keys), f"listed {len(listed)} of {len(keys)} keys (pagination?)"
            assert listed == sorted(keys)
            assert await storage.delete(f"{prefix}many/") == len(keys)
            assert await storage.list(f"{prefix}many/") == []
            assert await storage.list(prefix) == [neighbour]

        self.run(scenario())
