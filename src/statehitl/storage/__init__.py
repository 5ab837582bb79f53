"""``statehitl.storage``: Strands' ``Storage`` (bytes under string keys) on statehitl's stores.

``Storage`` is Strands' async protocol (``write``, ``read``, ``delete``, ``list``, ``search``);
``InMemoryStorage``, ``LocalFileStorage``, ``S3Storage`` and ``DynamoDBStorage`` implement it on the
compare-and-set stores statehitl keeps checkpoints in, so the store given to ``Agent(storage=...)`` or
to a ``SnapshotSessionManager`` holds the agent's values and its checkpoint history side by side::

    from statehitl.storage import LocalFileStorage

    storage = LocalFileStorage("./.strands/")
    await storage.write("notes/today.md", b"...")
    await storage.namespace("notes").list("")      # ['today.md']

Keys are normalised as Strands normalises them and a ``..`` segment is refused (``statehitl.storage.keys``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statehitl.storage.blob_store import BlobStore
from statehitl.storage.in_memory_storage import InMemoryStorage
from statehitl.storage.local_file_storage import LocalFileStorage
from statehitl.storage.storage import Storage, StorageSearchResult

if TYPE_CHECKING:
    from statehitl.storage.dynamodb_storage import DynamoDBStorage
    from statehitl.storage.s3_storage import S3Storage

__all__ = [
    "BlobStore",
    "DynamoDBStorage",
    "InMemoryStorage",
    "LocalFileStorage",
    "S3Storage",
    "Storage",
    "StorageSearchResult",
]


def __getattr__(name: str) -> Any:
    """The S3 and DynamoDB stores, imported when first named (their modules are cheap; their backends
    load boto3 only when a store is built, but need not be installed to import this package)."""
    if name == "S3Storage":
        from statehitl.storage.s3_storage import S3Storage

        return S3Storage
    if name == "DynamoDBStorage":
        from statehitl.storage.dynamodb_storage import DynamoDBStorage

        return DynamoDBStorage
    raise AttributeError(f"module 'statehitl.storage' has no attribute {name!r}")
