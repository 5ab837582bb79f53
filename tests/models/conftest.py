"""Fixtures for the model tests: a loopback server for recorded provider responses."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from model_wire import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A fresh loopback HTTP server; queue ``Reply``s on ``.replies``, read requests from ``.received``."""
    server = WireServer()
    yield server
    server.close()


@pytest.fixture
def free_port() -> int:
    """A loopback port that was free a moment ago: nothing listens there, so connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
