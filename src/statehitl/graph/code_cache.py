"""What was read of a node or router function, kept by its code: a graph built per request (or per resume)
defines its functions anew each time, but their code, and the module their annotations resolve in, are the
same, so reading signatures and annotations once per definition keeps ``compile()`` cheap."""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class CodeCache(Generic[T]):
    """``read(fn)`` kept per definition of a plain function (at most ``size`` of them); anything else (a
    callable object, a partial, a decorated function) is read every time."""

    def __init__(self, read: Callable[[Any], T], size: int = 1024) -> None:
        self._read = read
        self._size = size
        self._known: dict[tuple[Any, int], T] = {}

    def __call__(self, fn: Any) -> T:
        if type(fn) is not FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
            return self._read(fn)
        key = (fn.__code__, id(fn.__globals__))
        known = self._known
        if key not in known:
            if len(known) >= self._size:
                known.pop(next(iter(known)))
            known[key] = self._read(fn)
        return known[key]
