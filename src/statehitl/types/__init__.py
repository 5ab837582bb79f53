"""The wire shapes agents speak: Bedrock Converse messages, tool uses and results, stream events.

They are ``TypedDict``s, not classes, because users (and models) build them as plain dicts and they go
into checkpoints as JSON unchanged; the names match Strands' so type hints written for it still read.

The package also holds LangGraph's ``langgraph.types`` names for StateGraph programs (``Send``,
``Command``, ``interrupt``, ``Interrupt``, ``StateSnapshot``, ``StreamWriter``, ``RetryPolicy``, ``CachePolicy``),
and Strands' agent ``Snapshot``.
"""

from typing import Any

__all__ = ["CachePolicy", "Command", "GraphTask", "Interrupt", "RetryPolicy", "Send", "Snapshot", "StateSnapshot",
           "StreamWriter", "interrupt"]

_GRAPH_NAMES = {
    "Command": "statehitl.commands",
    "Send": "statehitl.commands",
    "Interrupt": "statehitl.interrupt",
    "RetryPolicy": "statehitl.graph.retries",
    "CachePolicy": "statehitl.graph.caching",
    "interrupt": "statehitl.graph.node_calls",
    "StreamWriter": "statehitl.graph.node_calls",
    "StateSnapshot": "statehitl.graph.snapshots",
    "GraphTask": "statehitl.graph.snapshots",
    "Snapshot": "statehitl.types._snapshot",
}


def __getattr__(name: str) -> Any:
    """LangGraph's ``langgraph.types`` names (and ``Snapshot``), loaded when first asked for: an agent that
    only imports the wire shapes above never loads the graph machinery."""
    module = _GRAPH_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'statehitl.types' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
