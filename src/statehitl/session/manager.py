"""Session managers: the seed's name for "a checkpointer and a session id".

Each agent of a session is one thread of the checkpointer (the session id itself for the default
agent, ``session@agent_id`` for others), so everything the engine guarantees — deltas, claims,
history, listing with ``statehitl threads`` — holds for sessions too. A deployment picks its backend
with ``SessionManager.from_url`` or the ``STATEHITL_SESSION_URL`` environment variable.
"""

from __future__ import annotations

import os
from typing import Any

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.file import FileStorage
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.errors import InvalidThreadIdError

SESSION_URL_ENV = "STATEHITL_SESSION_URL"


class SessionManager:
    """Persists agents of one session in ``checkpointer``; build one with a subclass or ``from_url``."""

    def __init__(self, session_id: str, checkpointer: Checkpointer) -> None:
        self.session_id = check_session_id(session_id)
        self.checkpointer = checkpointer

    def attach_storage(self, storage: Any) -> None:
        """Called by ``Agent`` with its ``storage=`` before it reads its thread, for a session manager that
        falls back to the agent's store (``SnapshotSessionManager``); this one has its store already."""
        return None

    def initialize(self, agent: Any) -> None:
        """Called by ``Agent`` once it has loaded its thread, for a session manager that keeps more of the
        agent than the thread holds (``SnapshotSessionManager``); this one keeps nothing else."""
        return None

    def thread_id(self, agent_id: str) -> str:
        """The thread that holds agent ``agent_id`` of this session."""
        if agent_id == "default":
            return self.session_id
        thread = f"{self.session_id}@{agent_id}"
        try:
            return validate_thread_id(thread)
        except InvalidThreadIdError:
            raise InvalidThreadIdError(
                f"agent id {agent_id!r} cannot be stored in session {self.session_id!r}: its thread id {thread!r} "
                "must be at most 200 letters, digits or _ . : @ = + - (no '/' or '\\'), so it cannot escape the store"
            ) from None

    @classmethod
    def from_url(cls, url: str | None = None, *, session_id: str, **options: Any) -> SessionManager:
        """A session on the store ``url`` names (``file://DIR``, ``s3://bucket/prefix``, ``dynamodb://table``).

        Without ``url``, the ``STATEHITL_SESSION_URL`` environment variable names it, so the same code
        runs on files in development and on S3 or DynamoDB in production. ``options`` go to the
        ``Checkpointer`` (``signing_key=``, ``ttl=``, ``lease_seconds=``, ``compress=``).
        """
        if url is None:
            url = os.environ.get(SESSION_URL_ENV)
            if not url:
                raise ValueError(
                    f"SessionManager.from_url() got no url and {SESSION_URL_ENV} is not set; pass a url like "
                    f"'file://./sessions' or 's3://bucket/prefix', or set {SESSION_URL_ENV}"
                )
        return SessionManager(session_id, Checkpointer.from_url(url, **options))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(session_id={self.session_id!r}, storage={self.checkpointer.storage!r})"


def check_session_id(session_id: object) -> str:
    """A session id is a thread id without ``@``, which separates it from agent ids in thread ids.

    Without that rule, agent ``"a"`` of session ``"s"`` and the default agent of session ``"s@a"``
    would be the same thread, and either session would read and overwrite the other's conversation.
    """
    rule = ("use 1-200 letters, digits or _ . : = + - (not starting with '.' or '-'; no '/', '\\' or '@', "
            "which separates the session from agent ids), so it names one session and cannot escape the store")
    if not isinstance(session_id, str) or "@" in session_id:
        raise InvalidThreadIdError(f"session id {session_id!r} is not allowed: {rule}")
    try:
        return validate_thread_id(session_id)
    except InvalidThreadIdError:
        raise InvalidThreadIdError(f"session id {session_id!r} is not allowed: {rule}") from None


class FileSessionManager(SessionManager):
    """Sessions as files under ``storage_dir`` (default: a ``statehitl/sessions`` temp directory)."""

    def __init__(self, session_id: str, storage_dir: str | os.PathLike[str] | None = None, **options: Any) -> None:
        directory = storage_dir if storage_dir is not None else os.path.join(
            _temp_dir(), "statehitl", "sessions")
        super().__init__(session_id, Checkpointer(FileStorage(directory), **options))
        self.storage_dir = directory


def _temp_dir() -> str:
    import tempfile  # only for the default directory: not worth its import for everyone else

    return tempfile.gettempdir()
