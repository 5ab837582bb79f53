"""A conditional transition: a path function that names, at run time, where a node goes next.

Apart from the machine because it is the one part of a transition that runs user code: ``route(state)``
may return a node name, a ``Send``, a key of the path map, a list of them, or (a StateGraph's async path
function) a coroutine of them, which the scheduler awaits before ``names`` reads it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from statehitl.commands import Send
from statehitl.errors import GraphValidationError


@dataclass(frozen=True, slots=True)
class Router:
    """A transition chosen at run time: ``route(state)`` names the next node(s).

    ``targets`` lists where it may go when that is known (a path map or a ``Literal`` return type);
    None means anywhere, which keeps validation and drawing honest about what cannot be known.
    ``path_map`` translates the router's return values into node names. ``awaits``: ``route`` returns a
    coroutine (an async path function), which the scheduler awaits; a machine without such a router plans its
    steps without a coroutine of its own.
    """

    source: str
    route: Callable[[Any], Any]
    targets: tuple[str, ...] | None = None
    path_map: dict[Any, str] | None = None
    awaits: bool = False

    def resolve(self, state: Any) -> list[str | Send]:
        return self.names(self.route(state))

    def names(self, chosen: Any) -> list[str | Send]:
        """What the router chose (what ``route`` returned, awaited if it was a coroutine), as targets."""
        if isinstance(chosen, str) or not isinstance(chosen, Sequence):
            chosen = [chosen]
        if self.path_map is not None:
            missing = [c for c in chosen
                       if not isinstance(c, Send) and (not isinstance(c, Hashable) or c not in self.path_map)]
            if missing:
                raise GraphValidationError(
                    f"the router after {self.source!r} returned {missing[0]!r}, which is not a key of its "
                    f"path map {self.path_map!r}"
                )
        names = [c if isinstance(c, Send) else self.path_map[c] if self.path_map is not None else c for c in chosen]
        for name in names:
            if not isinstance(name, str | Send):
                raise GraphValidationError(
                    f"the router after {self.source!r} returned {name!r}; it must return node names{_why(name)}"
                )
        return names


def _why(returned: Any) -> str:
    """What to do about a coroutine a path function not declared async returned (closed: it never runs)."""
    if not inspect.iscoroutine(returned):
        return ""
    returned.close()
    return " (a path function that awaits must be an async def, or a class whose __call__ is one)"
