"""Sessions: persist an agent's conversation, state and pending interrupts, and resume them anywhere."""

from __future__ import annotations

from statehitl.session.aws import DynamoDBSessionManager, S3SessionManager
from statehitl.session.manager import SESSION_URL_ENV, FileSessionManager, SessionManager

__all__ = ["SESSION_URL_ENV", "DynamoDBSessionManager", "FileSessionManager", "S3SessionManager", "SessionManager"]
