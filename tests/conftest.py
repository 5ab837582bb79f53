"""Fixtures shared by the core's tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones included) as ``{relative path: bytes}``."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def disk_snapshot() -> Callable[[Path], dict[str, bytes]]:
    """``disk_snapshot(dir)``: the bytes of every file under ``dir``, to prove a call wrote nothing."""
    return read_tree
