"""LangGraph's ``langgraph.config``: what a running StateGraph node can ask for without a parameter."""

from __future__ import annotations

from statehitl.graph.node_calls import get_config, get_store, get_stream_writer

__all__ = ["get_config", "get_store", "get_stream_writer"]
