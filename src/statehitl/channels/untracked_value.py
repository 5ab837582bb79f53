"""``UntrackedValue``: a value a run holds and no checkpoint stores, e.g. a client or a handle that cannot
be written down; a thread read back or resumed does not have it."""

from __future__ import annotations

from typing import Annotated, Any

from statehitl.channels.base import UNTRACKED, BaseChannel

__all__ = ["UntrackedValue"]


def _last_write(current: Any, new: Any) -> Any:
    return new


class UntrackedValue(BaseChannel):
    """Holds the last value written, never stored (so any object will do). ``guard=True`` (the default)
    refuses two writes in one step; ``guard=False`` keeps the last."""

    def __init__(self, typ: Any = Any, guard: bool = True) -> None:
        super().__init__(typ)
        self.guard = guard

    def annotation(self) -> Any:
        return Annotated[Any, UNTRACKED] if self.guard else Annotated[Any, UNTRACKED, _last_write]
