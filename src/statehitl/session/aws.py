"""Session managers on S3 and DynamoDB, from the ``statehitl[s3]`` / ``statehitl[dynamodb]`` backends.

The backend packages are imported when a manager is built, not when ``statehitl.session`` is, so
code that only uses files never loads boto3.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.url import install_hint
from statehitl.errors import CheckpointerNotFoundError
from statehitl.session.manager import SessionManager, check_session_id


@contextlib.contextmanager
def _backend(manager: str, backend: str, scheme: str) -> Iterator[None]:
    """Around a backend's import: a missing backend says which extra to install, not a bare ImportError."""
    try:
        yield
    except ImportError:
        raise CheckpointerNotFoundError(f"{manager} needs the {backend} backend; {install_hint(scheme)}") from None


class S3SessionManager(SessionManager):
    """Sessions in S3 under ``s3://bucket/prefix``; ``storage_options`` go to ``S3Storage``
    (``client=``, ``session=``, ``region_name=``, ``endpoint_url=``, ``sse=``...)."""

    def __init__(self, session_id: str, bucket: str, prefix: str = "", *,
                 checkpointer_options: dict[str, Any] | None = None, **storage_options: Any) -> None:
        check_session_id(session_id)  # before a client is built for a session that cannot exist
        with _backend("S3SessionManager", "S3", "s3"):
            from statehitl_checkpoint_s3 import S3Storage
        storage = S3Storage(bucket, prefix, **storage_options)
        super().__init__(session_id, Checkpointer(storage, **(checkpointer_options or {})))


class DynamoDBSessionManager(SessionManager):
    """Sessions in one DynamoDB table; ``storage_options`` go to ``DynamoDBStorage``
    (``client=``, ``session=``, ``region_name=``, ``endpoint_url=``, ``ttl_seconds=``...)."""

    def __init__(self, session_id: str, table_name: str, *,
                 checkpointer_options: dict[str, Any] | None = None, **storage_options: Any) -> None:
        check_session_id(session_id)  # before a client is built for a session that cannot exist
        with _backend("DynamoDBSessionManager", "DynamoDB", "dynamodb"):
            from statehitl_checkpoint_dynamodb import DynamoDBStorage
        storage = DynamoDBStorage(table_name, **storage_options)
        super().__init__(session_id, Checkpointer(storage, **(checkpointer_options or {})))
