"""Fixtures for the model tests: a loopback server for recorded provider responses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from model_wire import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A fresh loopback HTTP server; queue ``Reply``s on ``.replies``, read requests from ``.received``."""
    server = WireServer()
    yield server
    server.close()
