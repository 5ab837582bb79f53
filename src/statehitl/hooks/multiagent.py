"""``statehitl.hooks.multiagent``: the hook events of multi-agent orchestrators (Graph, Swarm) under
Strands' module name.

The invocation events are defined in ``statehitl.hooks.multiagent_events`` and the node events, which
StateGraph fires too, in ``statehitl.hooks.events``; all five are also in ``statehitl.hooks``.
"""

from __future__ import annotations

from statehitl.hooks.multiagent_events import (
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MultiAgentInitializedEvent,
)
from statehitl.hooks.node_events import AfterNodeCallEvent, BeforeNodeCallEvent

__all__ = [
    "AfterMultiAgentInvocationEvent",
    "AfterNodeCallEvent",
    "BeforeMultiAgentInvocationEvent",
    "BeforeNodeCallEvent",
    "MultiAgentInitializedEvent",
]
