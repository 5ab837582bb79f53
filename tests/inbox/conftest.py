"""Fixtures for the inbox tests: a store, the test app's environment, and its action log."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from inbox_app import LOG_ENV, STORE_ENV


@pytest.fixture(autouse=True)
def _no_inbox_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """No token from the environment running the tests: each test that serves with one says so."""
    monkeypatch.delenv("STATEHITL_INBOX_TOKEN", raising=False)


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A file store of its own for one test."""
    return f"file://{tmp_path / 'store'}"


@pytest.fixture
def memory_store() -> str:
    """A named memory store: shared by everything in this process that opens the same URL."""
    return f"memory://inbox-{uuid.uuid4().hex}"


@pytest.fixture
def action_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the test app's actions append to (one line per action that really ran)."""
    path = tmp_path / "actions.log"
    path.touch()
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


@pytest.fixture
def app_store(store: str, monkeypatch: pytest.MonkeyPatch, action_log: Path) -> str:
    """``store``, also named to the test app (``inbox_app:build``) through its environment variable."""
    monkeypatch.setenv(STORE_ENV, store)
    return store
