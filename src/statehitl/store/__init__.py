"""Long-term memory shared across threads: LangGraph's store (``langgraph.store``), on statehitl's backends.

    from statehitl.store.memory import InMemoryStore      # langgraph.store.memory
    from statehitl.store.base import BaseStore             # langgraph.store.base
    from statehitl.store import FileStore, StorageStore    # files; S3, DynamoDB... by URL

``builder.compile(store=store)`` gives it to every node that asks for ``store`` (or reads ``runtime.store``
or calls ``get_store()``). See docs/langgraph.md, "The store".
"""

from __future__ import annotations

from statehitl.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from statehitl.store.file import FileStore
from statehitl.store.memory import InMemoryStore
from statehitl.store.storage import StorageStore

__all__ = [
    "NOT_PROVIDED",
    "BaseStore",
    "FileStore",
    "GetOp",
    "InMemoryStore",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespacePath",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "StorageStore",
    "TTLConfig",
]
