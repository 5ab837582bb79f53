"""``Topic``: a channel many nodes publish to in one step; a reader gets the list of what was published."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from statehitl.channels.base import BaseChannel, Reducer, step_scoped

__all__ = ["Published", "Topic"]


class Published(list[Any]):
    """One value written to a topic, as the list of values the channel merges; a stream shows the value as
    it was written (``Published.written``)."""

    @staticmethod
    def written(value: Any) -> Any:
        """What a node wrote, given what ``Topic.stored`` made of it."""
        return value[0] if type(value) is Published else value


def _published(current: Any, new: Any) -> list[Any]:
    """``new`` (a list of values, as ``Topic.stored`` makes every write) after ``current``'s."""
    return [*(current or ()), *new]


_step_published = step_scoped(lambda current, new: _published(current, new))


class Topic(BaseChannel):
    """Collects every value written to it, a list written as its items. Without ``accumulate`` it holds the
    values of the latest step that wrote it (a step that writes none empties it); with ``accumulate=True``
    it keeps them across steps."""

    def __init__(self, typ: Any = Any, accumulate: bool = False) -> None:
        super().__init__(typ)
        self.accumulate = accumulate

    @property
    def ValueType(self) -> Any:
        return Sequence[self.typ]  # type: ignore[name-defined]

    @property
    def UpdateType(self) -> Any:
        return self.typ | list[self.typ]  # type: ignore[name-defined]

    def reducer(self) -> Reducer:
        return _published if self.accumulate else _step_published

    def stored(self, value: Any) -> list[Any]:
        """A list is written as its values; any other value as a list of one (``Published``)."""
        return list(value) if isinstance(value, list) else Published([value])
