"""LangGraph's ``langgraph.graph.state``: StateGraph's home module, so ``from langgraph.graph.state import
StateGraph, CompiledStateGraph`` ports by renaming the package (and ``START``, ``END``, which LangGraph's
documentation imports from here too)."""

from __future__ import annotations

from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.machine import END, START

__all__ = ["END", "START", "CompiledStateGraph", "StateGraph"]
