"""Hook events of the multi-agent orchestrators (Graph, Swarm), with Strands' names and fields.

One invocation fires ``BeforeMultiAgentInvocationEvent``, then per node call ``BeforeNodeCallEvent``
(which may interrupt or ``cancel_node``) and ``AfterNodeCallEvent``, and last
``AfterMultiAgentInvocationEvent``; ``MultiAgentInitializedEvent`` fires once, when the orchestrator
is built. ``source`` is the orchestrator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statehitl.hooks.registry import HookEvent


@dataclass
class MultiAgentInitializedEvent(HookEvent):
    """The orchestrator was built (its hooks are registered)."""

    source: Any
    invocation_state: dict[str, Any] | None = None


@dataclass
class BeforeMultiAgentInvocationEvent(HookEvent):
    """A call of the orchestrator starts (also when it resumes from an interrupt)."""

    source: Any
    invocation_state: dict[str, Any] | None = None


@dataclass
class AfterMultiAgentInvocationEvent(HookEvent):
    """A call of the orchestrator ended, however it ended."""

    source: Any
    invocation_state: dict[str, Any] | None = None

    should_reverse_callbacks = True
