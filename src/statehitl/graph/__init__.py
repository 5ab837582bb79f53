"""StateGraph: hand-written graphs with LangGraph's API and execution model (``docs/langgraph.md``).

    from statehitl.graph import StateGraph, START, END
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statehitl.channels import append
from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.graph.result import GraphRunResult
from statehitl.graph.snapshots import GraphTask, StateSnapshot
from statehitl.machine import END, START
from statehitl.position import NodeContext
from statehitl.status import Status

if TYPE_CHECKING:
    from statehitl.graph.message import MessagesState, add_messages

__all__ = [
    "END",
    "START",
    "CompiledStateGraph",
    "GraphRunResult",
    "GraphTask",
    "MessagesState",
    "NodeContext",
    "StateGraph",
    "StateSnapshot",
    "Status",
    "add_messages",
    "append",
]


def __getattr__(name: str) -> Any:
    """``MessagesState`` and ``add_messages`` (``statehitl.graph.message``), loaded when first asked for: a graph
    without messages never loads the message forms."""
    if name in ("MessagesState", "add_messages"):
        from statehitl.graph import message

        return getattr(message, name)
    raise AttributeError(f"module 'statehitl.graph' has no attribute {name!r}")
