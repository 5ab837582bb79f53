"""Sessions: persist an agent's conversation, state and pending interrupts, and resume them anywhere."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statehitl.session.aws import DynamoDBSessionManager, S3SessionManager
from statehitl.session.manager import SESSION_URL_ENV, FileSessionManager, SessionManager

if TYPE_CHECKING:
    from statehitl.session.snapshot_session_manager import (
        BidiAgentSaveLatestStrategy,
        MultiAgentSaveLatestStrategy,
        SaveLatestStrategy,
        SnapshotSessionManager,
        SnapshotTrigger,
    )

__all__ = [
    "SESSION_URL_ENV",
    "BidiAgentSaveLatestStrategy",
    "DynamoDBSessionManager",
    "FileSessionManager",
    "MultiAgentSaveLatestStrategy",
    "S3SessionManager",
    "SaveLatestStrategy",
    "SessionManager",
    "SnapshotSessionManager",
    "SnapshotTrigger",
]

_SNAPSHOT_NAMES = frozenset({"BidiAgentSaveLatestStrategy", "MultiAgentSaveLatestStrategy", "SaveLatestStrategy",
                             "SnapshotSessionManager", "SnapshotTrigger"})


def __getattr__(name: str) -> Any:
    """The snapshot session manager, loaded when first named: an agent imports ``statehitl.session`` for its
    base class, and should not load the storage layer it does not use."""
    if name in _SNAPSHOT_NAMES:
        from statehitl.session import snapshot_session_manager

        return getattr(snapshot_session_manager, name)
    raise AttributeError(f"module 'statehitl.session' has no attribute {name!r}")
