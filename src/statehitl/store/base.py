"""LangGraph's ``langgraph.store.base``: the store of long-term memory a graph's nodes share across threads.

``BaseStore`` is the interface (``get``, ``search``, ``put``, ``delete``, ``list_namespaces``, their async
twins, and ``batch``/``abatch`` underneath them); a store implements only the two batch methods, as a
LangGraph store does. statehitl's own stores (``InMemoryStore``, ``FileStore``, ``StorageStore`` on any
backend by URL) implement it over the storage contract, async inside, sync outside.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from statehitl.errors import InvalidNamespaceError
from statehitl.store.items import Item, SearchItem
from statehitl.store.namespaces import validate_labels, validate_namespace
from statehitl.store.ops import (
    NOT_PROVIDED,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    MatchCondition,
    NamespaceMatchType,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
)

__all__ = [
    "NOT_PROVIDED",
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespaceMatchType",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
]


def _conditions(prefix: NamespacePath | None, suffix: NamespacePath | None) -> tuple[MatchCondition, ...]:
    found = [MatchCondition("prefix", validate_labels(prefix, "prefix"))] if prefix else []
    if suffix:
        found.append(MatchCondition("suffix", validate_labels(suffix, "suffix")))
    return tuple(found)


class BaseStore(ABC):
    """A store of JSON values under hierarchical namespaces, shared by every thread of every graph given it.

    Subclasses implement ``batch`` and ``abatch``; the methods below build ops and check their namespaces
    first, so a bad label fails before anything is read or written. ``supports_ttl``: whether ``put(ttl=)``
    works; ``ttl_config``: the store's TTL defaults.
    """

    supports_ttl: bool = False
    ttl_config: TTLConfig | None = None

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in one batch: results in the ops' order (reads see the store as it was before the batch's
        puts)."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch``, async."""

    # -- the ops the methods build ---------------------------------------------------------------

    def _refreshes(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _get_op(self, namespace: tuple[str, ...], key: str, refresh_ttl: bool | None) -> GetOp:
        return GetOp(validate_labels(namespace), str(key), self._refreshes(refresh_ttl))

    def _search_op(self, namespace_prefix: tuple[str, ...], *, query: str | None, filter: dict[str, Any] | None,
                   limit: int, offset: int, refresh_ttl: bool | None) -> SearchOp:
        return SearchOp(validate_labels(namespace_prefix, "namespace prefix"), filter, limit, offset, query,
                        self._refreshes(refresh_ttl))

    def _put_op(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
                index: Literal[False] | list[str] | None, ttl: float | NotProvided | None) -> PutOp:
        checked = validate_namespace(namespace)
        if ttl not in (NOT_PROVIDED, None) and not self.supports_ttl:
            raise NotImplementedError(f"{type(self).__name__} does not support TTL: put without ttl=, or use a "
                                      "store that supports it (every statehitl store does)")
        if isinstance(ttl, NotProvided):
            ttl = (self.ttl_config or {}).get("default_ttl")
        return PutOp(checked, str(key), value, index=index, ttl=ttl)

    @staticmethod
    def _list_op(prefix: NamespacePath | None, suffix: NamespacePath | None, max_depth: int | None, limit: int,
                 offset: int) -> ListNamespacesOp:
        return ListNamespacesOp(_conditions(prefix, suffix), max_depth, limit, offset)

    # -- sync ------------------------------------------------------------------------------------

    def get(self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None) -> Item | None:
        """The item at ``namespace`` and ``key``, or None (an expired item is None too)."""
        found = self.batch([self._get_op(namespace, key, refresh_ttl)])[0]
        return found if isinstance(found, Item) else None

    def search(self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None,
               filter: dict[str, Any] | None = None, limit: int = 10, offset: int = 0,
               refresh_ttl: bool | None = None) -> list[SearchItem]:
        """Items under ``namespace_prefix`` matching ``filter``, most similar to ``query`` first when the store
        has an index; ``limit`` of them after ``offset``."""
        op = self._search_op(namespace_prefix, query=query, filter=filter, limit=limit, offset=offset,
                             refresh_ttl=refresh_ttl)
        return list(self.batch([op])[0] or [])  # type: ignore[arg-type]

    def put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
            index: Literal[False] | list[str] | None = None, *, ttl: float | NotProvided | None = NOT_PROVIDED
            ) -> None:
        """Store ``value`` (a dict of JSON) at ``namespace`` and ``key``, replacing what was there. ``index``: the
        fields to embed (None: the store's; False: none); ``ttl``: minutes until it expires."""
        self.batch([self._put_op(namespace, key, value, index, ttl)])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Remove the item at ``namespace`` and ``key`` (nothing happens if there is none)."""
        self.batch([PutOp(validate_labels(namespace), str(key), None)])

    def list_namespaces(self, *, prefix: NamespacePath | None = None, suffix: NamespacePath | None = None,
                        max_depth: int | None = None, limit: int = 100, offset: int = 0) -> list[tuple[str, ...]]:
        """The namespaces holding items, sorted: those starting with ``prefix`` and ending with ``suffix``
        (``"*"`` matches any label), cut to ``max_depth`` labels (then without repeats)."""
        return list(self.batch([self._list_op(prefix, suffix, max_depth, limit, offset)])[0] or [])  # type: ignore[arg-type]

    # -- async -----------------------------------------------------------------------------------

    async def aget(self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None) -> Item | None:
        """``get``, async."""
        found = (await self.abatch([self._get_op(namespace, key, refresh_ttl)]))[0]
        return found if isinstance(found, Item) else None

    async def asearch(self, namespace_prefix: tuple[str, ...], /, *, query: str | None = None,
                      filter: dict[str, Any] | None = None, limit: int = 10, offset: int = 0,
                      refresh_ttl: bool | None = None) -> list[SearchItem]:
        """``search``, async."""
        op = self._search_op(namespace_prefix, query=query, filter=filter, limit=limit, offset=offset,
                             refresh_ttl=refresh_ttl)
        return list((await self.abatch([op]))[0] or [])  # type: ignore[arg-type]

    async def aput(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any],
                   index: Literal[False] | list[str] | None = None, *,
                   ttl: float | NotProvided | None = NOT_PROVIDED) -> None:
        """``put``, async."""
        await self.abatch([self._put_op(namespace, key, value, index, ttl)])

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """``delete``, async."""
        await self.abatch([PutOp(validate_labels(namespace), str(key), None)])

    async def alist_namespaces(self, *, prefix: NamespacePath | None = None, suffix: NamespacePath | None = None,
                               max_depth: int | None = None, limit: int = 100,
                               offset: int = 0) -> list[tuple[str, ...]]:
        """``list_namespaces``, async."""
        op = self._list_op(prefix, suffix, max_depth, limit, offset)
        return list((await self.abatch([op]))[0] or [])  # type: ignore[arg-type]
