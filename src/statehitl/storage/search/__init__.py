"""How ``search()`` finds entries in a ``statehitl.storage`` store (Strands' ``strands.storage.search``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statehitl.storage.search.keyword import KeywordSearchStrategy
from statehitl.storage.search.types import Searchable, SearchStrategy, StorageSearchResult

if TYPE_CHECKING:
    from statehitl.storage.search.bm25 import Bm25SearchStrategy, Bm25SearchStrategyConfig

__all__ = ["Bm25SearchStrategy", "Bm25SearchStrategyConfig", "KeywordSearchStrategy", "SearchStrategy",
           "Searchable", "StorageSearchResult"]


def __getattr__(name: str) -> Any:
    """The BM25 strategy, imported when first named (it loads ``sqlite3``, which a keyword search never needs)."""
    if name in ("Bm25SearchStrategy", "Bm25SearchStrategyConfig"):
        from statehitl.storage.search import bm25

        return getattr(bm25, name)
    raise AttributeError(f"module 'statehitl.storage.search' has no attribute {name!r}")
