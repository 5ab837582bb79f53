"""LangGraph's ``push_message``: a node (or a tool it runs) hands a message to the run before the node returns.

The message goes out at once on ``stream_mode="messages"`` (with the node's metadata), and is written to the
state's ``state_key`` channel with the node's update, before what the node returns (so a returned message with the
same id replaces it, as ``add_messages`` merges). ``state_key=None`` only streams it.
"""

from __future__ import annotations

import threading
from typing import Any

from statehitl.graph.message_forms import coerce_all, id_of, langchain
from statehitl.graph.node_calls import current_node, get_config

_PUSHING = threading.Lock()
"""Tools of one node run in threads of their own: their pushes to the node's writes are made one at a time."""


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Stream ``message`` now and write it to ``state_key`` with the node's update; returns the message as held
    (a dict or a ``(role, content)`` pair becomes a LangChain message where langchain-core is installed). The
    message needs an id (``ValueError`` otherwise): it is how the stream and the channel know it again."""
    ctx = current_node()
    if ctx is None:
        raise RuntimeError("push_message() can only be called inside a node of a running graph (or a tool it runs)")
    if id_of(message) is None:
        raise ValueError("Message ID is required")
    (held,) = coerce_all(message)
    _stream(held, get_config())
    if state_key:
        with _PUSHING:
            pushed = dict(ctx.writes or {})
            pushed[state_key] = [*pushed.get(state_key, []), held]
            ctx.writes = pushed
    return held


def _stream(message: Any, config: dict[str, Any]) -> None:
    """Send the message on the run's message stream, if it streams ``"messages"`` (LangChain's messages only)."""
    if langchain() is None:
        return
    from statehitl.graph.langchain_stream import streams_of  # loaded with the message stream it reaches

    for stream, namespace in streams_of():
        stream.emit(message, dict(config.get("metadata") or {}), namespace)
