"""The wire shapes agents speak: Bedrock Converse messages, tool uses and results, stream events.

They are ``TypedDict``s, not classes, because users (and models) build them as plain dicts and they go
into checkpoints as JSON unchanged; the names match Strands' so type hints written for it still read.

The package also holds LangGraph's ``langgraph.types`` names for StateGraph programs (``Send``,
``Command``, ``interrupt``, ``Interrupt``, ``StateSnapshot``, ``PregelTask``, ``StateUpdate``, ``Overwrite``,
``RetryPolicy``, ``CachePolicy``, ``TimeoutPolicy``, ``StreamMode``, ``StreamWriter``, ...), and Strands' agent
``Snapshot``.
"""

from typing import Any

__all__ = ["All", "CachePolicy", "Checkpointer", "Command", "Durability", "GraphTask", "Interrupt", "Overwrite",
           "PregelTask", "RetryPolicy", "Send", "Snapshot", "StateSnapshot", "StateUpdate", "StreamMode",
           "StreamWriter", "TimeoutPolicy", "ensure_valid_checkpointer", "interrupt"]

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
    "PregelTask": "statehitl.graph.snapshots",
    "StreamMode": "statehitl.stream_sink",
    "Overwrite": "statehitl.channels",
    "TimeoutPolicy": "statehitl.timeout_policy",
    "All": "statehitl.graph.value_types",
    "Checkpointer": "statehitl.graph.value_types",
    "Durability": "statehitl.graph.value_types",
    "StateUpdate": "statehitl.graph.value_types",
    "ensure_valid_checkpointer": "statehitl.graph.value_types",
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
