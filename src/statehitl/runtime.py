"""LangGraph's ``langgraph.runtime``: what a running StateGraph node gets besides its state and config
(``Runtime``, with ``ExecutionInfo``, ``ServerInfo`` and the run's ``RunControl``), and ``get_runtime()``."""

from __future__ import annotations

from statehitl.graph.node_calls import get_runtime
from statehitl.graph.runtime_values import DEFAULT_RUNTIME, ExecutionInfo, RunControl, Runtime, ServerInfo

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "ServerInfo", "get_runtime"]
