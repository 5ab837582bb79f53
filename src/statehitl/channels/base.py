"""What every channel of a low-level graph (``statehitl.pregel.Pregel``) is: a typed slot of the thread's state
and the rule that merges one step's writes into it.

A channel is a declaration, not a container: ``Pregel`` turns its channels into the fields of one state
schema (``annotation``), and the engine that runs every StateGraph stores and merges them (``StateSchema``
applies the reducer an annotation carries). So a low-level graph checkpoints, interrupts and resumes as a
StateGraph does, with its values as JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

__all__ = ["UNTRACKED", "BaseChannel", "step_scoped"]

Reducer = Callable[[Any, Any], Any]


def step_scoped(reducer: Reducer) -> Reducer:
    """Mark ``reducer``'s channel as holding only what the latest step wrote: the engine clears it before each
    step applies (``StateSchema.step_scoped``), so a value not written again is gone after the next step."""
    setattr(reducer, "step_scoped", True)  # noqa: B010 - a flag on a function object, read with getattr
    return reducer


class _Untracked:
    """The ``Annotated`` marker of a channel never stored (``StateSchema.untracked``)."""

    untracked = True

    def __repr__(self) -> str:
        return "UNTRACKED"


UNTRACKED = _Untracked()


class BaseChannel:
    """A channel of value type ``typ``. Subclasses say how writes merge (``reducer``) and what one write
    stores (``stored``); the default is a plain field that one write per step replaces."""

    def __init__(self, typ: Any = Any) -> None:
        self.typ = typ

    @property
    def ValueType(self) -> Any:
        """The type a reader gets."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type a write gives."""
        return self.typ

    def reducer(self) -> Reducer | None:
        """How two writes of one step merge (None: a second write is an ``InvalidUpdateError``)."""
        return None

    def annotation(self) -> Any:
        """The channel as a state field's annotation: its type, with its reducer when it has one."""
        reducer = self.reducer()
        return self.typ if reducer is None else Annotated[Any, reducer]

    def stored(self, value: Any) -> Any:
        """One write as the update the engine applies."""
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self.typ, '__name__', self.typ)!s})"
