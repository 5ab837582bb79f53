"""StateGraph: hand-written machines over a pydantic state, LangGraph style.

    from statehitl.graph import StateGraph, START, END, append
"""

from __future__ import annotations

from statehitl.channels import append
from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph, StateSnapshot
from statehitl.graph.result import GraphRunResult
from statehitl.machine import END, START
from statehitl.position import NodeContext
from statehitl.status import Status

__all__ = [
    "END",
    "START",
    "CompiledStateGraph",
    "GraphRunResult",
    "NodeContext",
    "StateGraph",
    "StateSnapshot",
    "Status",
    "append",
]
