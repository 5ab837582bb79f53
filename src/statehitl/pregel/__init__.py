"""LangGraph's low-level API on statehitl's engine: ``Pregel`` (nodes that subscribe to channels) and
``NodeBuilder``. Its channels are in ``statehitl.channels``."""

from __future__ import annotations

from statehitl.pregel.main import Pregel
from statehitl.pregel.node_builder import NodeBuilder, PregelNode

__all__ = ["NodeBuilder", "Pregel", "PregelNode"]
