"""``DeltaChannel``: a reducer channel whose reducer folds a batch of writes at a time, ``reducer(state, writes)``.

LangGraph stores such a channel as the writes since its last snapshot and replays them on load; statehitl's
checkpoints are its own (``checkpoint/chain.py``), so here the channel is its reducer: each write is folded
in as a batch of one, which gives the same value because LangGraph requires the reducer to be
batching-invariant (``reducer(reducer(s, xs), ys) == reducer(s, xs + ys)``).
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from statehitl.channels.base import BaseChannel, Reducer

__all__ = ["DeltaChannel"]

_ZERO_TYPES: dict[Any, type] = {collections.abc.Sequence: list, collections.abc.MutableSequence: list,
                                collections.abc.Set: set, collections.abc.MutableSet: set,
                                collections.abc.Mapping: dict, collections.abc.MutableMapping: dict}


class DeltaChannel(BaseChannel):
    """A channel merged by ``reducer(state, [write, ...])``, starting from ``typ()`` (``list`` unless given; an
    abstract ``Sequence``/``Set``/``Mapping`` as ``list``/``set``/``dict``). Used as a field's reducer,
    ``Annotated[list, DeltaChannel(reducer)]``, or as a ``Pregel`` channel. ``snapshot_frequency`` (a positive
    int) is taken for LangGraph's sake: statehitl's checkpoints decide how a channel is stored."""

    def __init__(self, reducer: Callable[[Any, Sequence[Any]], Any], typ: Any = None, *,
                 snapshot_frequency: int = 1000) -> None:
        if not isinstance(snapshot_frequency, int) or snapshot_frequency <= 0:
            raise ValueError(f"snapshot_frequency must be a positive int, got {snapshot_frequency}")
        base = list if typ is None else typ
        super().__init__(_ZERO_TYPES.get(base, base))
        self.batch_reducer = reducer
        self.snapshot_frequency = snapshot_frequency

    def __call__(self, current: Any, new: Any) -> Any:
        """One write folded into ``current`` (the channel's zero value when it has none yet)."""
        start = self.typ() if current is None and callable(self.typ) else current
        return self.batch_reducer(start, [new])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeltaChannel) and other.batch_reducer == self.batch_reducer \
            and other.snapshot_frequency == self.snapshot_frequency

    def __hash__(self) -> int:
        return hash((DeltaChannel, self.batch_reducer, self.snapshot_frequency))

    def reducer(self) -> Reducer:
        return self

    def annotation(self) -> Any:
        return Annotated[self.typ, self]
