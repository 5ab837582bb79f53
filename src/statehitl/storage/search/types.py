"""What a search gives (``StorageSearchResult``) and how a store's search is done (``SearchStrategy``).

A store built with ``search_strategy=`` hands every value it writes to ``strategy.index`` (so a strategy
that keeps an index can update it) and its ``search`` to ``strategy.search``; without one it scans its
values with ``KeywordSearchStrategy``. A strategy sees a store only as ``Searchable`` (``list`` and
``read``), so any store, Strands' protocol or not, can be searched.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["SearchStrategy", "Searchable", "StorageSearchResult"]


@dataclass
class StorageSearchResult:
    """One match of a ``search``: the entry's key, how well it matched (higher is better; a strategy that
    measures distance turns it into a similarity first), and its value when the search read it."""

    key: str
    score: float
    data: bytes | None = field(default=None, repr=False)


class Searchable(Protocol):
    """What a search strategy uses of a store."""

    async def list(self, query: str) -> builtins.list[str]: ...

    async def read(self, key: str) -> bytes | None: ...


@runtime_checkable
class SearchStrategy(Protocol):
    """What a store's ``search_strategy=`` must provide (Strands' protocol)."""

    async def index(self, storage: Any, key: str, data: bytes, **kwargs: Any) -> None:
        """Take in one value the store just wrote under ``key`` (relative to ``storage``)."""
        ...

    async def search(self, storage: Any, query: str, **kwargs: Any) -> builtins.list[StorageSearchResult]:
        """The entries of ``storage`` that match ``query``, best first."""
        ...
