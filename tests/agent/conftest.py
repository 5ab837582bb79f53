"""Fixtures for agent tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def calls() -> list[str]:
    """A log the tools of a test append to, to count real executions."""
    return []
