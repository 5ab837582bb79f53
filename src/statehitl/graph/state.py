"""LangGraph's ``langgraph.graph.state``: StateGraph's home module, so ``from langgraph.graph.state import
StateGraph, CompiledStateGraph`` ports by renaming the package."""

from __future__ import annotations

from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph

__all__ = ["CompiledStateGraph", "StateGraph"]
