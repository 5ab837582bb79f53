"""Hook events fired by machines. Node events, defined here, are shared by StateGraph, Graph and Swarm.

This is also Strands' ``hooks.events`` module: ``from statehitl.hooks.events import
BeforeToolCallEvent`` finds every event statehitl fires, the agent loop's (defined in
``agent_events``) and the orchestrators' (``multiagent_events``) too, as ``statehitl.hooks`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
from statehitl.hooks.registry import HookEvent, InterruptibleEvent

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


@dataclass
class BeforeNodeCallEvent(InterruptibleEvent):
    """Fired before a node runs. Interrupt to ask first; set ``cancel_node`` (True or a message) to skip it.

    ``source`` is the compiled machine (the app, graph or swarm) running the node.
    """

    source: Any
    node_id: str
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel_node: bool | str = False


@dataclass
class AfterNodeCallEvent(HookEvent):
    """Fired after a node finished, with the update it returned (already validated), or after it raised,
    with ``error`` (the exception then propagates and fails the run). Not fired for a node that stopped
    on an interrupt: it is called again on resume."""

    source: Any
    node_id: str
    invocation_state: dict[str, Any] = field(default_factory=dict)
    update: dict[str, Any] = field(default_factory=dict)
    error: BaseException | None = None

    should_reverse_callbacks = True
