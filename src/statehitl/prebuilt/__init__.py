"""LangGraph's ``langgraph.prebuilt`` on statehitl (the ``statehitl[langchain]`` extra): ``ToolNode``,
``tools_condition``, ``create_react_agent``, ``ValidationNode``, ``ToolRuntime`` and the injected tool arguments,
plus statehitl's approval of tool calls (``approve_tools=``) and the idempotency key each call is given
(``InjectedIdempotencyKey``).

Imported only by ``import statehitl.prebuilt``: ``import statehitl`` never loads langchain-core.
"""

from __future__ import annotations

try:
    import langchain_core  # noqa: F401
except ImportError as missing:  # say what to install, not only what is missing
    from statehitl.graph.message_forms import needs_langchain

    raise ImportError(needs_langchain("statehitl.prebuilt")) from missing

from langchain_core.tools import InjectedToolCallId

from statehitl.prebuilt.approvals import APPROVAL_INTERRUPT
from statehitl.prebuilt.chat_agent_executor import AgentState, create_react_agent
from statehitl.prebuilt.injected import InjectedIdempotencyKey, InjectedState, InjectedStore
from statehitl.prebuilt.tool_calls import ToolRuntime
from statehitl.prebuilt.tool_node import ToolInvocationError, ToolNode, tools_condition
from statehitl.prebuilt.tool_validator import ValidationNode

__all__ = ["APPROVAL_INTERRUPT", "AgentState", "InjectedIdempotencyKey", "InjectedState", "InjectedStore",
           "InjectedToolCallId", "ToolInvocationError", "ToolNode", "ToolRuntime", "ValidationNode",
           "create_react_agent", "tools_condition"]
