"""How ``search()`` finds entries in a ``statehitl.storage`` store (Strands' ``strands.storage.search``)."""

from __future__ import annotations

from statehitl.storage.search.keyword import KeywordSearchStrategy
from statehitl.storage.search.types import Searchable, SearchStrategy, StorageSearchResult

__all__ = ["KeywordSearchStrategy", "SearchStrategy", "Searchable", "StorageSearchResult"]
