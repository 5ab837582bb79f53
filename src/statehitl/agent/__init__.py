"""The single agent: a model and tools in a loop that can stop for a human and resume from a session."""

from __future__ import annotations

from statehitl.agent.agent import Agent
from statehitl.agent.conversation_manager import (
    ConversationManager,
    NullConversationManager,
    SlidingWindowConversationManager,
)
from statehitl.agent.node import AgentNode
from statehitl.agent.result import AgentMetrics, AgentResult, ToolMetrics
from statehitl.agent.runtime import AgentRuntime, LoopRun
from statehitl.agent.state import AgentState

__all__ = [
    "Agent",
    "AgentMetrics",
    "AgentNode",
    "AgentResult",
    "AgentRuntime",
    "AgentState",
    "ConversationManager",
    "LoopRun",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "ToolMetrics",
]
