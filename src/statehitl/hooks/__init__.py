"""Hooks: subscribe to a machine's transitions, and interrupt from them.

``HookRegistry.add_callback(EventType, fn)`` or a ``HookProvider`` registering several at once. Node
events come from StateGraph, Graph and Swarm; the multi-agent invocation events from Graph and Swarm;
the rest from the agent loop.
"""

from __future__ import annotations

from statehitl.hooks.agent_events import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    AfterToolsEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    MessageAddedEvent,
    ModelStopResponse,
)
from statehitl.hooks.events import AfterNodeCallEvent, BeforeNodeCallEvent
from statehitl.hooks.multiagent_events import (
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MultiAgentInitializedEvent,
)
from statehitl.hooks.registry import HookEvent, HookOrder, HookProvider, HookRegistry, InterruptibleEvent

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterMultiAgentInvocationEvent",
    "AfterNodeCallEvent",
    "AfterToolCallEvent",
    "AfterToolsEvent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeMultiAgentInvocationEvent",
    "BeforeNodeCallEvent",
    "BeforeToolCallEvent",
    "BeforeToolsEvent",
    "HookEvent",
    "HookOrder",
    "HookProvider",
    "HookRegistry",
    "InterruptibleEvent",
    "MessageAddedEvent",
    "ModelStopResponse",
    "MultiAgentInitializedEvent",
]
