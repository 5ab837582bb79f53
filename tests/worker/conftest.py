"""Fixtures for the worker tests on the file store: a store, the test apps' environment, their ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker_app import LEDGER_ENV, STORE_ENV, Ledger


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A file store of its own for one test."""
    return f"file://{tmp_path / 'store'}"


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    """The ledger the test apps' actions go to (attempts, and what took effect, by idempotency key)."""
    root = tmp_path / "ledger"
    monkeypatch.setenv(LEDGER_ENV, str(root))
    return Ledger(root)


@pytest.fixture
def app_store(store: str, monkeypatch: pytest.MonkeyPatch, ledger: Ledger) -> str:
    """``store``, also named to the test apps (``worker_app:build``) through their environment variable."""
    monkeypatch.setenv(STORE_ENV, store)
    return store
