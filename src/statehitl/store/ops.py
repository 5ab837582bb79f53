"""The operations a store runs in a batch, and the settings a store is built with, under LangGraph's names
(``GetOp``, ``PutOp``, ``SearchOp``, ``ListNamespacesOp``, ``TTLConfig``, ``IndexConfig``), so code that
builds ops for ``batch``/``abatch`` ports with its imports changed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple, TypedDict

from statehitl.store.items import Item, SearchItem


class NotProvided:
    """The "not given" of ``put(ttl=...)``: distinct from ``ttl=None``, which means "never expires"."""

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_PROVIDED = NotProvided()

NamespacePath = tuple[str, ...]
"""A namespace pattern for ``list_namespaces``: labels, where ``"*"`` matches any one label."""
NamespaceMatchType = Literal["prefix", "suffix"]


class GetOp(NamedTuple):
    """Read the item at ``namespace`` and ``key``; ``refresh_ttl``: restart its time to live."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    """Find items whose namespace starts with ``namespace_prefix`` and whose value matches ``filter``
    (exact values, nested dicts, or ``{"$gt": 3}``-style comparisons), ranked by similarity to ``query``
    when the store has an index; ``limit`` of them after skipping ``offset``."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True


class MatchCondition(NamedTuple):
    """A namespace pattern (``"*"`` matches any label) matched at the start or the end of a namespace."""

    match_type: NamespaceMatchType
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """List the namespaces that meet every condition, cut to ``max_depth`` labels, sorted, paged."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    """Store ``value`` at ``namespace`` and ``key`` (``None`` deletes it). ``index``: which fields to embed
    (None: the store's ``fields``; False: none). ``ttl``: minutes until it expires, restarted by reads."""

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any] | None
    index: Literal[False] | list[str] | None = None  # type: ignore[assignment]  # LangGraph's name, over tuple.index
    ttl: float | None = None


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None


class TTLConfig(TypedDict, total=False):
    """How a store treats time to live. ``default_ttl``: minutes for items put without a ``ttl``;
    ``refresh_on_read``: whether ``get``/``search`` restart an item's time (default True).
    ``sweep_interval_minutes`` is accepted for LangGraph's sake; statehitl deletes nothing behind the
    caller's back, so expired items are left out of reads and removed by ``sweep_ttl()``."""

    refresh_on_read: bool
    default_ttl: float | None
    sweep_interval_minutes: int | None


class IndexConfig(TypedDict, total=False):
    """Semantic search: ``embed`` (a function of a list of texts returning their vectors, sync or async, or
    an object with LangChain's ``embed_documents``/``embed_query``), ``dims`` (the length of a vector) and
    ``fields`` (the paths of an item's value to embed: ``"$"`` the whole value, ``"a.b"``, ``"list[*].c"``,
    ``"list[0]"``, ``"list[-1]"``; default ``["$"]``)."""

    dims: int
    embed: Any | Callable[[list[str]], Any]
    fields: list[str] | None
