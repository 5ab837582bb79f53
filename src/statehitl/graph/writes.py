"""What a StateGraph node's return value writes, read as LangGraph reads it.

A node returns a dict, a model, a dataclass, a root value, a ``Command``, or a list mixing Commands with
any of those; a Command's ``update`` may also be a list of ``(channel, value)`` pairs. Each of these is a
sequence of writes, in order, and one channel may be written more than once: the step applies the writes
one after another through the channel's reducer, as LangGraph's channels take them (a channel without a
reducer refuses a second write). This module turns a return value into those writes and folds them into
the ``{channel: value}`` update the engine stores, where a channel written several times holds
``SeveralWrites``; stored as JSON it reads ``{"$writes": [...]}``, which is also how LangGraph shows such a
task's result. Keys the state does not have are dropped, as LangGraph drops them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from statehitl.commands import Command, Send, goto_targets
from statehitl.errors import InvalidUpdateError, ParentCommand

SEVERAL = "$writes"
"""The key of a channel's stored update when a node wrote it several times: ``{"$writes": [v1, v2]}``."""

Write = tuple[str, Any]
Plain = Callable[[Any], list[Write]]
"""How a return value that is not a Command (a dict, a model, a root value) becomes writes."""


class SeveralWrites:
    """The values one node wrote to one channel in one step, in the order it wrote them. (A plain class, not
    a dataclass: building a frozen dataclass costs more at import than everything else in this module.)"""

    __slots__ = ("values",)

    def __init__(self, values: tuple[Any, ...]) -> None:
        self.values = values

    def __eq__(self, other: object) -> bool:
        return type(other) is SeveralWrites and other.values == self.values

    def __hash__(self) -> int:
        return hash(self.values)

    def __repr__(self) -> str:
        return f"SeveralWrites({self.values!r})"

    def to_json(self, dump: Callable[[Any], Any]) -> dict[str, list[Any]]:
        return {SEVERAL: [dump(v) for v in self.values]}

    @staticmethod
    def stored(value: Any) -> SeveralWrites | None:
        """The several writes a stored update's value holds, if it is ``{"$writes": [...]}``."""
        if type(value) is dict and len(value) == 1 and type(value.get(SEVERAL)) is list:
            return SeveralWrites(tuple(value[SEVERAL]))
        return None


def is_commands(returned: Any) -> bool:
    """A list (or tuple) with a Command in it: each item is a return value of its own (LangGraph's rule)."""
    return isinstance(returned, list | tuple) and any(isinstance(item, Command) for item in returned)


def returned_writes(node: str, returned: Any, plain: Plain, *, nested: bool) -> tuple[list[Write], list[str | Send]]:
    """The writes (in order) and the ``goto`` targets of what ``node`` returned. ``nested``: the graph runs as a
    node of another, so a ``Command(graph=Command.PARENT)`` stops it (``ParentCommand``) rather than failing."""
    if isinstance(returned, Command):
        return _command(node, returned, plain, nested)
    if not is_commands(returned):
        return plain(returned), []
    writes: list[Write] = []
    goto: list[str | Send] = []
    for item in returned:
        if isinstance(item, Command):
            more, where = _command(node, item, plain, nested)
            writes.extend(more)
            goto.extend(where)
        elif item is not None:
            writes.extend(plain(item))
    return writes, goto


def _command(node: str, command: Command[Any], plain: Plain, nested: bool) -> tuple[list[Write], list[str | Send]]:
    if command.graph == Command.PARENT:
        handed: Command[Any] = Command(update=command.update, goto=command.goto)
        if nested:  # the subgraph stops here; the node running it hands this on (graph.subgraphs)
            raise ParentCommand(handed, node, f"node {node!r} returned Command(graph=Command.PARENT), but the graph "
                                "running its graph as a node is not a StateGraph")
        raise ParentCommand(handed, node, f"node {node!r} returned Command(graph=Command.PARENT) but its graph is "
                            "not running as a node of another graph")
    if command.resume is not None:
        raise InvalidUpdateError(f"node {node!r} returned Command(resume=...); resume is for the caller")
    pairs = update_pairs(command.update)
    writes = plain(command.update) if pairs is None else pairs
    return writes, goto_targets(command.goto, f"node {node!r}")


def update_pairs(update: Any) -> list[Write] | None:
    """A ``Command(update=[(channel, value), ...])``'s writes as given (None: the update is of another kind)."""
    if isinstance(update, list | tuple) and all(
            isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in update):
        return list(update)
    return None


def fold(writes: Iterable[Write]) -> dict[str, Any]:
    """Writes as one ``{channel: value}`` update: a channel written more than once holds ``SeveralWrites``."""
    update: dict[str, Any] = {}
    for key, value in writes:
        if key not in update:
            update[key] = value
            continue
        before = update[key]
        update[key] = SeveralWrites((*before.values, value) if isinstance(before, SeveralWrites) else (before, value))
    return update


def shown_writes(writes: list[Write], root: str | None) -> Any:
    """What ``stream_mode="updates"`` shows of one task's writes, as LangGraph's does: ``{channel: value}``,
    or when a channel was written more than once one ``{channel: value}`` per write, in order; for a root
    state (``root``: its channel) the value written, or the list of values. None when nothing was written."""
    if root is not None:
        values = [value for key, value in writes if key == root]
        return None if not values else values[0] if len(values) == 1 else values
    if not writes:
        return None
    if len({key for key, _ in writes}) < len(writes):
        return [{key: value} for key, value in writes]
    return dict(writes)
