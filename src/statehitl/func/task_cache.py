"""Task caching, LangGraph's ``@task(cache_policy=CachePolicy(...))`` with ``@entrypoint(cache=...)``: a task
called again with the same arguments, in any thread of the workflow, returns what it returned last time
without running.

The key is ``key_func(*args, **kwargs)`` (by default the arguments' canonical JSON, ``default_cache_key``),
under the task's namespace. What is cached is the task's result as a checkpoint keeps it: tagged JSON
(``statehitl.values``), read back into the classes the task's annotations name; nothing is pickled. A call
that raised or stopped on an interrupt is not cached. A cached result is also the call's kept result in its
thread, as a result the task returned is, so a resume returns it as it returns any finished call's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from statehitl.graph.caching import CachePolicy
from statehitl.values import ValueTypes, decode_value, encode_value

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache, FullKey, Namespace

def task_namespace(fn: Callable[..., Any], name: str) -> Namespace:
    """Where a task's results are cached: its function's module and qualified name, and the task's name."""
    return "tasks", f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', name)}", name


class TaskCache:
    """One task's use of its workflow's cache: the key of a call, reading and storing its result."""

    def __init__(self, name: str, namespace: Namespace, policy: CachePolicy, cache: BaseCache,
                 known: ValueTypes) -> None:
        self.name = name
        self.namespace = namespace
        self.policy = policy
        self.cache = cache
        self.known = known
        self.hit = False
        """The last call's result came from the cache: the task did not run."""

    def key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FullKey:
        raw = self.policy.key_func(*args, **kwargs)
        data = raw.encode() if isinstance(raw, str) else raw
        if not isinstance(data, bytes):
            raise TypeError(f"task {self.name!r}: cache_policy's key_func returned {type(raw).__name__}; return a "
                            "str or bytes")
        return self.namespace, hashlib.sha256(data).hexdigest()

    def _stored(self, result: Any) -> Any:
        return encode_value(result, f"task {self.name!r}'s result (kept in the cache)", self.known)

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], run: Callable[[], Any]) -> Any:
        """``run()``'s result, or the one cached for these arguments."""
        key = self.key(args, kwargs)
        found = self.cache.get([key])
        if key in found:
            self.hit = True
            return decode_value(found[key], self.known)
        result = run()
        self.cache.set({key: (self._stored(result), self.policy.ttl)})
        return result

    async def acall(self, args: tuple[Any, ...], kwargs: dict[str, Any], run: Callable[[], Any]) -> Any:
        """``await run()``'s result, or the one cached for these arguments."""
        key = self.key(args, kwargs)
        found = await self.cache.aget([key])
        if key in found:
            self.hit = True
            return decode_value(found[key], self.known)
        result = await run()
        await self.cache.aset({key: (self._stored(result), self.policy.ttl)})
        return result
