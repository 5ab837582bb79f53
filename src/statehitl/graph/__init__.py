"""StateGraph: hand-written graphs with LangGraph's API and execution model (``docs/langgraph.md``).

    from statehitl.graph import StateGraph, START, END
"""

from __future__ import annotations

from statehitl.channels import append
from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.graph.message import MessagesState, add_messages
from statehitl.graph.result import GraphRunResult
from statehitl.graph.snapshots import GraphTask, StateSnapshot
from statehitl.machine import END, START
from statehitl.position import NodeContext
from statehitl.status import Status

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
