"""Node caching, LangGraph's ``add_node(cache_policy=CachePolicy(...))`` with ``compile(cache=...)``: a node
called again with the same input is not run; what it wrote last time is applied instead.

The key is ``key_func(input)`` (the node's input: its view of the state, or a Send's argument); the default
is the input's canonical JSON, so equal states give equal keys in every process, and nothing is pickled.
What is cached is the node's update as its checkpoint records it (JSON, a ``Command``'s goto included), and
only for a node that finished: one that raised or stopped on an interrupt is not cached. A cached update
goes through the node's stream as LangGraph's does (``{"node": ..., "__metadata__": {"cached": True}}``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from statehitl.errors import UnknownNodeError

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache, FullKey, Namespace


def default_cache_key(*args: Any, **kwargs: Any) -> str:
    """The canonical JSON of the node's input (sorted keys), which pydantic models, dataclasses and LangChain
    messages have; other objects need a ``key_func`` of their own."""
    try:
        data = to_jsonable_python([args, kwargs])
    except PydanticSerializationError as exc:
        raise TypeError(f"cache_policy's default key is the node input's JSON, and this input has none ({exc}); "
                        "give CachePolicy(key_func=...) a function of the input returning a str") from None
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class CachePolicy:
    """How a node's writes are cached: ``key_func(input)`` (str or bytes) names an entry, ``ttl`` seconds it
    lives (None: until the cache is cleared)."""

    key_func: Callable[..., str | bytes] = default_cache_key
    ttl: int | float | None = None


@dataclass(frozen=True)
class CachedWrites:
    """What a node wrote when it last ran on the same input, returned in its place (its update as stored)."""

    update: dict[str, Any]


class NodeCache:
    """One node's use of a cache: its namespace, the key of an input, reading and storing its update.
    ``dump(node, returned)``: the node's return value as its stored update (the graph state's)."""

    def __init__(self, node: str, fn: Any, policy: CachePolicy, cache: BaseCache,
                 dump: Callable[[str, Any], dict[str, Any]]) -> None:
        if not isinstance(policy, CachePolicy):
            raise TypeError(f"node {node!r}: cache_policy must be a CachePolicy, got {policy!r}")
        self.node = node
        self.namespace: Namespace = ("writes", f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', node)}",
                                     node)
        self.policy = policy
        self.cache = cache
        self._dump = dump

    def key(self, given: Any) -> FullKey:
        raw = self.policy.key_func(given)
        data = raw.encode() if isinstance(raw, str) else raw
        if not isinstance(data, bytes):
            raise TypeError(f"node {self.node!r}: cache_policy's key_func returned {type(raw).__name__}; return a str "
                            "or bytes")
        return self.namespace, hashlib.sha256(data).hexdigest()

    def wrap(self, target: Callable[..., Any], is_async: bool) -> Callable[..., Any]:
        """``target`` (called with the node's input first) behind the cache."""
        if is_async:

            async def cached_async(given: Any, *args: Any, **kwargs: Any) -> Any:
                key = self.key(given)
                found = (await self.cache.aget([key])).get(key)
                if found is not None:
                    return CachedWrites(found)
                returned = await target(given, *args, **kwargs)
                await self.cache.aset({key: (self._dump(self.node, returned), self.policy.ttl)})
                return returned

            return cached_async

        def cached(given: Any, *args: Any, **kwargs: Any) -> Any:
            key = self.key(given)
            found = self.cache.get([key]).get(key)
            if found is not None:
                return CachedWrites(found)
            returned = target(given, *args, **kwargs)
            self.cache.set({key: (self._dump(self.node, returned), self.policy.ttl)})
            return returned

        return cached


def cached_namespaces(cached: dict[str, Namespace], nodes: Sequence[str] | None, machine: Any) -> list[Namespace]:
    """The cache namespaces of ``nodes`` (every cached node's when None), refusing names that are not nodes."""
    unknown = [n for n in nodes or () if n not in machine.nodes]
    if unknown:
        raise UnknownNodeError(f"clear_cache: {unknown} are not nodes of {machine.name!r}")
    return [namespace for node, namespace in cached.items() if nodes is None or node in nodes]
