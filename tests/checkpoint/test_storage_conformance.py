"""The built-in backends run the shared storage conformance kit (S3 and DynamoDB run the same one)."""

from __future__ import annotations

import pytest

from statehitl.checkpoint import FileStorage, MemoryStorage
from statehitl.checkpoint.prefixed import PrefixedStorage
from statehitl.testing.conformance import StorageConformance


class TestMemoryStorage(StorageConformance):
    @pytest.fixture
    def storage(self):
        return MemoryStorage()


class TestFileStorage(StorageConformance):
    @pytest.fixture
    def storage(self, tmp_path):
        return FileStorage(tmp_path / "store")


class TestPrefixedMemoryStorage(StorageConformance):
    @pytest.fixture
    def storage(self):
        return PrefixedStorage(MemoryStorage(), "tenant/a")


class TestPrefixedFileStorage(StorageConformance):
    @pytest.fixture
    def storage(self, tmp_path):
        return PrefixedStorage(FileStorage(tmp_path / "store"), "tenant")


class _Misdeclared(MemoryStorage):
    """A store whose capabilities are there by name, in the wrong shape: the kit must catch each."""

    version = True  # a flag, not the method SupportsVersion is
    cache_scope = ""


class _WrongNames(MemoryStorage):
    async def read_named(self, prefix: str, name: str) -> dict[str, tuple[bytes, str]]:
        return {}  # misses every record of the name


def test_the_kit_catches_a_capability_in_the_wrong_shape_or_breaking_its_promise() -> None:
    kit = TestMemoryStorage()
    with pytest.raises(AssertionError, match="version must be a method"):
        kit.test_what_a_store_has_by_a_capabilitys_name_is_that_capability(_Misdeclared())
    with pytest.raises(AssertionError, match="empty cache_scope"):
        kit.test_each_declared_capability_keeps_its_promise(_Misdeclared(), "kit/")
    with pytest.raises(AssertionError, match="read_named gave keys"):
        kit.test_each_declared_capability_keeps_its_promise(_WrongNames(), "kit/")
