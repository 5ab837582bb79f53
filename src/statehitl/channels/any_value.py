"""``AnyValue``: like ``LastValue``, for writers known to agree; it holds what the latest step wrote."""

from __future__ import annotations

from typing import Any

from statehitl.channels.base import BaseChannel, Reducer, step_scoped

__all__ = ["AnyValue"]


@step_scoped
def _any_write(current: Any, new: Any) -> Any:
    """Several writes in one step are taken to be equal: the last one is kept."""
    return new


class AnyValue(BaseChannel):
    """Takes any number of writes per step and keeps the last, assuming they are all the same value. A step
    that does not write it leaves it empty, as on LangGraph."""

    def reducer(self) -> Reducer:
        return _any_write
