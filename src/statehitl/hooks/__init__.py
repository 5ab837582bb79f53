"""Hooks: subscribe to a machine's transitions, and interrupt from them.

``HookRegistry.add_callback(EventType, fn)`` or a ``HookProvider`` registering several at once. Node
events come from StateGraph, Graph and Swarm; the multi-agent invocation events from Graph and Swarm;
the rest from the agent loop.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from statehitl.hooks.multiagent_events import (
        AfterMultiAgentInvocationEvent,
        BeforeMultiAgentInvocationEvent,
        MultiAgentInitializedEvent,
    )
    from statehitl.hooks.node_events import AfterNodeCallEvent, BeforeNodeCallEvent
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

_HOMES = {
    **dict.fromkeys(("AfterInvocationEvent", "AfterModelCallEvent", "AfterToolCallEvent", "AfterToolsEvent",
                     "BeforeInvocationEvent", "BeforeModelCallEvent", "BeforeToolCallEvent", "BeforeToolsEvent",
                     "MessageAddedEvent", "ModelStopResponse"), "statehitl.hooks.agent_events"),
    **dict.fromkeys(("AfterNodeCallEvent", "BeforeNodeCallEvent"), "statehitl.hooks.node_events"),
    **dict.fromkeys(("AfterMultiAgentInvocationEvent", "BeforeMultiAgentInvocationEvent",
                     "MultiAgentInitializedEvent"), "statehitl.hooks.multiagent_events"),
    **dict.fromkeys(("HookEvent", "HookOrder", "HookProvider", "HookRegistry", "InterruptibleEvent"),
                    "statehitl.hooks.registry"),
}
"""Where each name lives. Importing the package loads none of them: a StateGraph's run needs the node events
and the registry, never the agent's or the orchestrators' events (a serverless cold start pays for what it uses)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'statehitl.hooks' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
