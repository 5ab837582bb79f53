"""``EphemeralValue``: a value that lives for one step, e.g. a trigger or an input a node consumes once."""

from __future__ import annotations

from typing import Any

from statehitl.channels.base import BaseChannel, Reducer, step_scoped
from statehitl.errors import InvalidUpdateError

__all__ = ["EphemeralValue"]


@step_scoped
def _one_write(current: Any, new: Any) -> Any:
    """A guarded channel's second write in a step (the engine cleared it before the step began)."""
    if current is not None:
        raise InvalidUpdateError("EphemeralValue(guard=True) can receive only one value per step. Use guard=False "
                                 "if you want to store any one of multiple values.")
    return new


@step_scoped
def _last_write(current: Any, new: Any) -> Any:
    return new


class EphemeralValue(BaseChannel):
    """Holds what the previous step wrote, readable by the nodes of the next step; gone after that step.
    ``guard=True`` (the default) refuses two writes in one step, ``guard=False`` keeps the last."""

    def __init__(self, typ: Any = Any, guard: bool = True) -> None:
        super().__init__(typ)
        self.guard = guard

    def reducer(self) -> Reducer:
        return _one_write if self.guard else _last_write
