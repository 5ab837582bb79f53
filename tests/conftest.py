"""Fixtures shared by the core's tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones included) as ``{relative path: bytes}``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def disk_snapshot() -> Callable[[Path], dict[str, bytes]]:
    """``disk_snapshot(dir)``: the bytes of every file under ``dir``, to prove a call wrote nothing."""
    return read_tree


_SPAN_EXPORTER = None


@pytest.fixture
def spans() -> Iterator[Any]:
    """The spans finished during the test, from OpenTelemetry's SDK in-memory exporter.

    OpenTelemetry allows one global tracer provider per process: it is set once, on first use, with
    one exporter every test module shares, and emptied around each test.
    """
    global _SPAN_EXPORTER
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if _SPAN_EXPORTER is None:
        _SPAN_EXPORTER = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_SPAN_EXPORTER))
        trace.set_tracer_provider(provider)
    _SPAN_EXPORTER.clear()
    yield _SPAN_EXPORTER
    _SPAN_EXPORTER.clear()
