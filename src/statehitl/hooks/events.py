"""Every hook event statehitl fires, at Strands' ``hooks.events`` path: ``from statehitl.hooks.events import
BeforeToolCallEvent`` finds the agent loop's (defined in ``agent_events``), the orchestrators'
(``multiagent_events``) and the node events StateGraph, Graph and Swarm share (``node_events``), as
``statehitl.hooks`` does. statehitl's own modules import each from where it is defined, so a StateGraph
never loads the agent's events.
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
)
from statehitl.hooks.multiagent_events import (
    AfterMultiAgentInvocationEvent,
    BeforeMultiAgentInvocationEvent,
    MultiAgentInitializedEvent,
)
from statehitl.hooks.node_events import AfterNodeCallEvent, BeforeNodeCallEvent

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
    "MessageAddedEvent",
    "MultiAgentInitializedEvent",
]
