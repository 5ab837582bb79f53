"""LangGraph's ``langgraph.runtime``: what a running StateGraph node gets besides its state and config."""

from __future__ import annotations

from statehitl.graph.node_calls import Runtime, get_runtime

__all__ = ["Runtime", "get_runtime"]
