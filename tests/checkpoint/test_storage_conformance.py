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
