"""Where one node call sits in LangGraph's terms, for the ``langgraph_triggers`` and ``langgraph_path`` keys of
its config's metadata (and so of the ``stream_mode="messages"`` metadata its messages carry): code written for
LangGraph reads them to tell a node reached by an edge from one started by a ``Send``.

LangGraph names a node's triggers after the channels its edges write (``branch:to:<node>``, and
``join:<a>+<b>:<node>`` for each waiting edge into it), and a ``Send``'s task after its place among the step's
sends; statehitl has no such channels, so this module spells the same values from the graph's shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from statehitl.machine import Join

PULL = "__pregel_pull"
"""LangGraph's path head for a task its edges started."""
PUSH = "__pregel_push"
"""LangGraph's path head (and only trigger) for a task a ``Send`` started."""
_TRIGGERS = "langgraph_triggers"


def pull_triggers(name: str, joins: Iterable[Join]) -> tuple[str, ...]:
    """The triggers LangGraph lists for a task of ``name`` its edges started: every channel it subscribes to,
    ``branch:to:<node>`` and one ``join:...`` per waiting edge into it (whichever of them fired)."""
    joined = [f"join:{'+'.join(join.sources)}:{name}" for join in joins if join.target == name]
    return tuple(sorted((f"branch:to:{name}", *joined))) if joined else (f"branch:to:{name}",)


def node_triggers_metadata(name: str, metadata: dict[str, Any] | None, joins: Iterable[Join]
                           ) -> dict[str, Any] | None:
    """The metadata ``name``'s calls carry: what ``add_node(metadata=)`` gave and, when waiting edges lead to
    it, its full trigger list (computed once at compile time, since a call's own context knows no edges)."""
    triggers = pull_triggers(name, joins)
    if len(triggers) == 1:
        return metadata
    return {_TRIGGERS: triggers, **(metadata or {})}


def task_path(name: str, task: str) -> tuple[Any, ...]:
    """LangGraph's ``path`` of task ``task`` of node ``name``: ``("__pregel_pull", node)`` for one its edges
    started, ``("__pregel_push", <index among the step's sends>, False)`` for a ``Send``'s (``node:<index>``)."""
    if task == name:
        return PULL, name
    index = task.rpartition(":")[2]
    return PUSH, int(index) if index.isdigit() else 0, False


def task_location(name: str, task: str, *, sent: bool, metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The ``langgraph_triggers`` and ``langgraph_path`` of one call of node ``name`` as task ``task``
    (``node`` or, for a ``Send``'s, ``node:<index among the step's sends>``)."""
    if sent:
        return {_TRIGGERS: (PUSH,), "langgraph_path": task_path(name, task)}
    triggers = (metadata or {}).get(_TRIGGERS, (f"branch:to:{name}",))
    return {_TRIGGERS: tuple(triggers), "langgraph_path": (PULL, name)}
