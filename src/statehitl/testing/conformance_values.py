"""The kit's tests of reading, creating once, replacing by compare-and-set, and the values a store must keep
whole."""

from __future__ import annotations

import os

import pytest

from statehitl.checkpoint.storage import ABSENT, Storage
from statehitl.errors import CheckpointConflict
from statehitl.testing.conformance_base import ConformanceBase


class ValueContract(ConformanceBase):
    """``read``, ``write`` (create-once and compare-and-set) and values of any bytes and size."""

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
