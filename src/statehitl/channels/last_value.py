"""``LastValue``: the channel most graphs are made of; the one write of a step replaces its value."""

from __future__ import annotations

from statehitl.channels.base import BaseChannel

__all__ = ["LastValue"]


class LastValue(BaseChannel):
    """Holds the last value written. Two writes in one step are an ``InvalidUpdateError``: which of two
    concurrent nodes wins is not something a graph should depend on (give the channel a reducer instead:
    ``Topic``, ``BinaryOperatorAggregate``)."""
