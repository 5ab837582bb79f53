"""The conformance kit's settings and fixtures, which every part of it shares (``conformance.py`` is the kit)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Coroutine, Iterator
from typing import Any, ClassVar, TypeVar

import pytest

from statehitl.checkpoint.storage import Storage

T = TypeVar("T")


class ConformanceBase:
    """What a backend's test class provides (the ``storage`` fixture, maybe ``run``) and sizes (the class
    attributes), and the per-test ``prefix`` every test works under."""

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

    def layout(self, prefix: str) -> list[str]:
        """Keys that share text with ``{prefix}t/a`` in every way a per-segment matcher gets wrong."""
        names = ["t/a/1", "t/a/2", "t/a/deep/x/y", "t/a-1", "t/a.b", "t/ab/1", "t/b/1", "t/C", "tx/a/1", "u"]
        return [prefix + name for name in names]
