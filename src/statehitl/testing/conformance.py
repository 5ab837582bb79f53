"""The storage conformance kit: one pytest suite every ``Storage`` backend must pass.

The checkpoint engine's guarantees (exactly-once resume, no lost commit, no escape from the store) are
only as good as the four storage primitives under it, so each backend proves the same contract with
the same tests. A backend's test module subclasses ``StorageConformance`` and provides a ``storage``
fixture::

    import pytest

    from statehitl.checkpoint import FileStorage
    from statehitl.testing.conformance import StorageConformance


    class TestFileStorage(StorageConformance):
        @pytest.fixture
        def storage(self, tmp_path):
            return FileStorage(tmp_path)

The contract, as the tests pin it down:

- ``read(key)`` is ``(bytes, token)`` or None. The token returned by ``write`` is the one ``read`` then
  reports. Tokens are opaque; they may be derived from the content (S3 ETags are), so a writer must not
  rely on a token changing when the bytes did not.
- ``write(key, data, expect=ABSENT)`` creates once; ``expect=token`` replaces only the value that token
  was read from. Any other case raises ``CheckpointConflict`` and leaves the stored value as it was:
  an existing key under ``ABSENT``, a stale or made-up token, a token for a key that does not exist.
- ``list(prefix)`` is every key that starts with ``prefix`` as a plain string (not per segment:
  ``"t/a"`` matches ``"t/a/1"``, ``"t/a-1"`` and ``"t/ab"``), sorted by code point (keys are ASCII, so
  that is byte order, which is what S3 and DynamoDB return), however many keys there are (pagination).
- ``delete(prefix)`` removes exactly the keys ``list(prefix)`` names and returns how many.
- Values are opaque bytes of any length, including empty, 5 MB and every byte value.
- Keys and prefixes that could escape the store (``..``, a leading ``/``, empty segments, backslashes,
  leading dots, odd characters) raise ``InvalidThreadIdError`` before the store is touched.
- Concurrent writers, as asyncio tasks or OS threads, resolve through compare-and-set alone:
  one create-once winner, no lost update.

Not required, because a file system cannot hold it: a key that is also a "directory" of other keys
(``a`` next to ``a/b``). The engine's key layout never needs it; reading such a key must say absent.

Every test works under its own unique prefix and cleans it up, so the suite also runs against a
shared bucket or table. It never writes, lists or deletes outside that prefix; the only exception
is a handful of unsafe root-level prefixes handed to ``list``, which must refuse them.

The tests are synchronous and drive the async storage through ``run`` (``asyncio.run`` by default), so
no async pytest plugin is needed; a backend whose client is bound to one event loop overrides ``run``.
It must work from any thread: the thread tests call it from worker threads.

The rest of the contract depends on how a backend is reached and what it stores, so it is tested by
the backend's own tests next to the kit: ``from_url`` for a backend registered by URL scheme, the
optional ``cleanup`` (``SupportsCleanup``), and the shared ``StorageError`` subclasses for a missing or
refused store. docs/backends.md ("Write your own backend") walks through all of it with an example.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Coroutine, Iterator
from typing import Any, ClassVar, TypeVar

import pytest

from statehitl.checkpoint.storage import ABSENT, Storage, SupportsListVersions, SupportsReadAll, SupportsVersion
from statehitl.errors import CheckpointConflict, InvalidThreadIdError
from statehitl.testing._storage_support import cas_increment, gather_bounded, in_threads, race_tasks

__all__ = ["BAD_KEY_SUFFIXES", "BAD_PREFIX_SUFFIXES", "BAD_ROOT_KEYS", "BAD_ROOT_PREFIXES", "StorageConformance"]

T = TypeVar("T")

BAD_KEY_SUFFIXES: tuple[str, ...] = (
    "..",
    "a/..",
    "a/../b",
    "./a",
    "a/./b",
    ".hidden",
    "a/.hidden",
    "a//b",
    "a/",
    "a\\b",
    "a\\..\\b",
    "a b",
    "a\nb",
    "a\x00b",
    "caf\u00e9",
)
"""Unsafe keys, appended to the test's own prefix so a backend that wrongly accepts one stays inside it."""

BAD_ROOT_KEYS: tuple[str, ...] = ("", "/", "/etc/passwd", "../escape", "..\\escape", "\\abs", ".", "..")
"""Unsafe keys on their own: empty, absolute, and climbing out of the store's root."""

BAD_PREFIX_SUFFIXES: tuple[str, ...] = ("../", "..", "a/../", "a//", "./", ".h", "a/.", "\\", "a\\", "a b")
"""Prefixes no valid key can start with; a store that walked them could reach outside its namespace."""

BAD_ROOT_PREFIXES: tuple[str, ...] = ("/", "/etc", "../", "..", ".", "\\")
"""Root-level unsafe prefixes. Only ``list`` is tried with these: a broken ``delete`` must not be given
a prefix that could reach files outside the store."""


def _ids(suffixes: tuple[str, ...]) -> list[str]:
    """Readable test ids (pytest escapes control characters itself); the empty string gets a name."""
    return [s or "<empty>" for s in suffixes]


class StorageConformance:
    """Subclass it as ``Test<Backend>`` and provide a ``storage`` fixture; every test is inherited.

    Class attributes size the load. A slow remote backend may lower them, but keep ``many_keys`` above
    its page size (or listing pagination goes untested) and ``concurrency`` at a few writers at least.
    """

    concurrency: ClassVar[int] = 20
    """Writers per concurrency test (asyncio tasks or threads)."""
    increments_per_writer: ClassVar[int] = 5
    """Counter increments each CAS writer performs."""
    many_keys: ClassVar[int] = 1100
    """Keys for the listing/deletion scale test: more than one S3 or DynamoDB page (1000)."""
    large_value_bytes: ClassVar[int] = 5 * 1024 * 1024
    """Size of the large-value test: a big checkpoint, well over DynamoDB's 400 KB item limit."""
    timeout: ClassVar[float] = 120.0
    """Seconds a concurrency test may take before it counts as hung."""

    # -- what a backend provides ------------------------------------------------------------------

    @pytest.fixture
    def storage(self) -> Storage:
        """The store under test. Override this fixture; the kit cannot guess how to build a backend."""
        pytest.fail(f"{type(self).__name__} must define a `storage` fixture returning the Storage under test")

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Drive one coroutine to completion from a sync test (or a worker thread)."""
        return asyncio.run(coro)

    # -- fixtures the tests share -----------------------------------------------------------------

    @pytest.fixture
    def prefix(self, storage: Storage) -> Iterator[str]:
        """A namespace no other test (or run) uses, deleted afterwards so shared stores stay clean."""
        namespace = f"conformance/{uuid.uuid4().hex}/"
        yield namespace
        with contextlib.suppress(Exception):  # best effort: a broken delete fails its own tests
            self.run(storage.delete(namespace))

    # -- read / create-once -----------------------------------------------------------------------

    def test_read_missing_key_is_none(self, storage: Storage, prefix: str) -> None:
        assert self.run(storage.read(f"{prefix}missing")) is None

    def test_create_once_then_conflict_keeps_first_value(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            token = await storage.write(key, b"first", expect=ABSENT)
            assert isinstance(token, str), f"write must return a str token, got {token!r}"
            assert token, "write returned an empty token"
            with pytest.raises(CheckpointConflict) as conflict:
                await storage.write(key, b"second", expect=ABSENT)
            assert key in str(conflict.value), f"the conflict should name the key: {conflict.value}"
            assert await storage.read(key) == (b"first", token)
            assert await storage.list(prefix) == [key], "a failed write left something listable"

        self.run(scenario())

    def test_read_returns_the_token_write_returned(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            token = await storage.write(key, b"v", expect=ABSENT)
            found = await storage.read(key)
            assert found is not None
            data, read_token = found
            assert type(data) is bytes, f"read must return bytes, got {type(data).__name__}"
            assert read_token == token

        self.run(scenario())

    def test_empty_value_is_present_not_absent(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}empty"

        async def scenario() -> None:
            token = await storage.write(key, b"", expect=ABSENT)
            assert await storage.read(key) == (b"", token)
            with pytest.raises(CheckpointConflict):
                await storage.write(key, b"x", expect=ABSENT)

        self.run(scenario())

    # -- replace (compare-and-set) ----------------------------------------------------------------

    def test_replace_with_current_token_returns_new_token(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            first = await storage.write(key, b"v1", expect=ABSENT)
            second = await storage.write(key, b"v2", expect=first)
            assert second != first, "replacing with different bytes must yield a different token"
            assert await storage.read(key) == (b"v2", second)
            third = await storage.write(key, b"v3", expect=second)
            assert await storage.read(key) == (b"v3", third)

        self.run(scenario())

    def test_stale_token_conflicts_and_keeps_value(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            stale = await storage.write(key, b"v1", expect=ABSENT)
            current = await storage.write(key, b"v2", expect=stale)
            for bad in (stale, "not-a-token", "0", ABSENT + "-not"):
                with pytest.raises(CheckpointConflict):
                    await storage.write(key, b"lost", expect=bad)
            assert await storage.read(key) == (b"v2", current)

        self.run(scenario())

    def test_token_on_missing_key_conflicts(self, storage: Storage, prefix: str) -> None:
        other, missing = f"{prefix}other", f"{prefix}missing"

        async def scenario() -> None:
            # A genuine token (from another key holding the same bytes) must not conjure a key.
            real_token = await storage.write(other, b"same", expect=ABSENT)
            for token in (real_token, "not-a-token"):
                with pytest.raises(CheckpointConflict):
                    await storage.write(missing, b"same", expect=token)
            assert await storage.read(missing) is None
            assert await storage.list(prefix) == [other]

        self.run(scenario())

    def test_non_durable_writes_are_readable(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}k"

        async def scenario() -> None:
            first = await storage.write(key, b"v1", expect=ABSENT, durable=False)
            assert await storage.read(key) == (b"v1", first)
            second = await storage.write(key, b"v2", expect=first, durable=False)
            assert await storage.read(key) == (b"v2", second)
            third = await storage.write(key, b"v3", expect=second, durable=True)
            assert await storage.read(key) == (b"v3", third)
            with pytest.raises(CheckpointConflict):
                await storage.write(key, b"v4", expect=first, durable=False)
            assert await storage.list(prefix) == [key]

        self.run(scenario())

    # -- values ---------------------------------------------------------------------------------

    def test_large_value_round_trips(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}large"
        first = os.urandom(self.large_value_bytes)
        second = first[::-1] + b"tail"

        async def scenario() -> None:
            token = await storage.write(key, first, expect=ABSENT)
            found = await storage.read(key)
            assert found is not None
            assert len(found[0]) == len(first)
            assert found[0] == first, "large value came back altered"
            assert found[1] == token
            new_token = await storage.write(key, second, expect=token)
            found = await storage.read(key)
            assert found is not None
            assert found[0] == second, "replacing a large value came back altered"
            assert found[1] == new_token

        self.run(scenario())

    def test_binary_values_round_trip(self, storage: Storage, prefix: str) -> None:
        every_byte = bytes(range(256))
        values = {
            f"{prefix}all": every_byte,
            f"{prefix}reversed": every_byte[::-1],
            f"{prefix}nul": b"\x00" * 1000,
            f"{prefix}crlf": b"a\r\nb\rc\n\x1a\xff\xfe",
            f"{prefix}utf8-invalid": b"\xc3\x28\xed\xa0\x80\xf8",
        }

        async def scenario() -> None:
            tokens = {key: await storage.write(key, data, expect=ABSENT) for key, data in values.items()}
            for key, data in values.items():
                assert await storage.read(key) == (data, tokens[key]), f"{key!r} came back altered"

        self.run(scenario())

    # -- list / delete --------------------------------------------------------------------------

    def _layout(self, prefix: str) -> list[str]:
        """Keys that share text with ``{prefix}t/a`` in every way a per-segment matcher gets wrong."""
        names = ["t/a/1", "t/a/2", "t/a/deep/x/y", "t/a-1", "t/a.b", "t/ab/1", "t/b/1", "t/C", "tx/a/1", "u"]
        return [prefix + name for name in names]

    def test_list_is_plain_string_prefix_sorted(self, storage: Storage, prefix: str) -> None:
        keys = self._layout(prefix)

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
        keys = self._layout(prefix)

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
        keys = self._layout(prefix)

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

    # -- concurrency ----------------------------------------------------------------------------

    def _check_one_winner(self, storage: Storage, key: str, outcomes: list[str | BaseException]) -> None:
        winners = [i for i, outcome in enumerate(outcomes) if isinstance(outcome, str)]
        others = [o for o in outcomes if not isinstance(o, str | CheckpointConflict)]
        assert not others, f"writers failed with something other than CheckpointConflict: {others[:3]!r}"
        assert len(winners) == 1, f"{len(winners)} create-once writers won, expected exactly one"
        (winner,) = winners
        assert self.run(storage.read(key)) == (f"writer-{winner}".encode(), outcomes[winner])

    def test_concurrent_create_once_tasks_one_winner(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}contended"

        async def scenario() -> list[str | BaseException]:
            return await race_tasks(
                self.concurrency,
                lambda i: storage.write(key, f"writer-{i}".encode(), expect=ABSENT),
                timeout=self.timeout,
            )

        self._check_one_winner(storage, key, self.run(scenario()))

    def test_concurrent_create_once_threads_one_winner(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}contended"
        outcomes = in_threads(
            self.concurrency,
            lambda i: self.run(storage.write(key, f"writer-{i}".encode(), expect=ABSENT)),
            timeout=self.timeout,
        )
        self._check_one_winner(storage, key, outcomes)

    def test_concurrent_cas_increments_tasks_lose_nothing(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}counter"

        async def writer(_: int) -> None:
            for _step in range(self.increments_per_writer):
                await cas_increment(storage, key, pause=0)

        async def scenario() -> bytes | None:
            await storage.write(key, b"0", expect=ABSENT)
            outcomes = await race_tasks(self.concurrency, writer, timeout=self.timeout)
            failures = [o for o in outcomes if isinstance(o, BaseException)]
            assert not failures, f"CAS writers failed: {failures[:3]!r}"
            found = await storage.read(key)
            return None if found is None else found[0]

        expected = self.concurrency * self.increments_per_writer
        assert self.run(scenario()) == str(expected).encode(), "an increment was lost"

    def test_concurrent_cas_increments_threads_lose_nothing(self, storage: Storage, prefix: str) -> None:
        key = f"{prefix}counter"

        async def increments() -> None:
            for _step in range(self.increments_per_writer):
                await cas_increment(storage, key, pause=0.0002)

        self.run(storage.write(key, b"0", expect=ABSENT))
        outcomes = in_threads(self.concurrency, lambda _: self.run(increments()), timeout=self.timeout)
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        assert not failures, f"CAS writers failed: {failures[:3]!r}"
        found = self.run(storage.read(key))
        expected = self.concurrency * self.increments_per_writer
        assert found is not None
        assert found[0] == str(expected).encode(), f"an increment was lost: {found[0]!r} != {expected}"

    # -- key validation -------------------------------------------------------------------------

    def _check_key_refused(self, storage: Storage, key: str, prefix: str) -> None:
        async def scenario() -> None:
            with pytest.raises(InvalidThreadIdError):
                await storage.read(key)
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect=ABSENT)
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect="some-token")
            with pytest.raises(InvalidThreadIdError):
                await storage.write(key, b"x", expect=ABSENT, durable=False)
            assert await storage.list(prefix) == [], f"refused key {key!r} still left something behind"

        self.run(scenario())

    @pytest.mark.parametrize("suffix", BAD_KEY_SUFFIXES, ids=_ids(BAD_KEY_SUFFIXES))
    def test_unsafe_key_is_refused(self, storage: Storage, prefix: str, suffix: str) -> None:
        self._check_key_refused(storage, prefix + suffix, prefix)

    @pytest.mark.parametrize("key", BAD_ROOT_KEYS, ids=_ids(BAD_ROOT_KEYS))
    def test_unsafe_root_key_is_refused(self, storage: Storage, prefix: str, key: str) -> None:
        self._check_key_refused(storage, key, prefix)

    @pytest.mark.parametrize("suffix", BAD_PREFIX_SUFFIXES, ids=_ids(BAD_PREFIX_SUFFIXES))
    def test_unsafe_prefix_is_refused(self, storage: Storage, prefix: str, suffix: str) -> None:
        async def scenario() -> None:
            await storage.write(f"{prefix}a/k", b"keep", expect=ABSENT)
            with pytest.raises(InvalidThreadIdError):
                await storage.list(prefix + suffix)
            with pytest.raises(InvalidThreadIdError):
                await storage.delete(prefix + suffix)
            assert await storage.list(prefix) == [f"{prefix}a/k"]

        self.run(scenario())

    @pytest.mark.parametrize("bad", BAD_ROOT_PREFIXES, ids=_ids(BAD_ROOT_PREFIXES))
    def test_unsafe_root_prefix_is_refused_by_list(self, storage: Storage, bad: str) -> None:
        with pytest.raises(InvalidThreadIdError):
            self.run(storage.list(bad))
