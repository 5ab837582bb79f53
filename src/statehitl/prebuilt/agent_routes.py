"""Where ``create_react_agent`` goes after each node, as LangGraph routes it.

After the model: to the tools while its reply holds calls (version "v2" sends each call to ``"tools"`` as a task of
its own, carrying the state, LangGraph's ``ToolCallWithContext``; a pydantic or dataclass state, or one holding a
value only its schema names, which a ``Send`` cannot carry, goes to ``"tools"`` as in "v1", all calls in one task),
else to the finish (the end, or the structured answer). After a post-model hook: its pending calls (those no tool
message answers yet) are sent, each as its own task; after the tools: back to the entry, unless a ``return_direct``
tool answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

import statehitl.graph.langchain_messages  # noqa: F401  (registers the message classes a sent call's state holds)
from statehitl.commands import Send
from statehitl.errors import ValueNotStorableError
from statehitl.graph import END
from statehitl.prebuilt.agent_model import state_value


def _sends(calls: list[ToolCall], state: dict[str, Any]) -> list[Send] | str:
    """Each call as a task of node ``"tools"``, with the state it was made in; ``"tools"`` (one task for them
    all, as "v1") when the state holds a value a ``Send`` cannot store (one only its schema names)."""
    try:
        return [Send("tools", {"__type": "tool_call_with_context", "tool_call": call, "state": dict(state)})
                for call in calls]
    except ValueNotStorableError:
        return "tools"


@dataclass(frozen=True)
class Routes:
    """The agent's routing functions, for its entry (``"pre_model_hook"`` or ``"agent"``) and finish."""

    entry: str
    finish: str
    return_direct: frozenset[str]
    post_hook: bool = False
    send_calls: bool = True

    def after_agent(self, state: Any) -> Any:
        last = state_value(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return self.finish
        return _sends(list(last.tool_calls), state) if self.send_calls and isinstance(state, dict) else "tools"

    def after_post_hook(self, state: Any) -> Any:
        messages = state_value(state, "messages")
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
        last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
        pending = [c for c in last_ai.tool_calls if c["id"] not in answered]
        if pending and isinstance(state, dict):
            return _sends(pending, state)
        if pending:  # a model or dataclass state is not carried by a Send: the tools node runs the reply's calls
            return "tools"
        if isinstance(messages[-1], ToolMessage):
            return self.entry
        return self.finish

    def after_tools(self, state: Any) -> str:
        message: Any = None
        for message in reversed(state_value(state, "messages")):
            if not isinstance(message, ToolMessage):
                break
            if message.name in self.return_direct:
                return END
        # parallel calls run as tasks of their own: a return_direct call answered in another task ends the run too
        if isinstance(message, AIMessage) and any(c["name"] in self.return_direct for c in message.tool_calls):
            return END
        return self.entry
