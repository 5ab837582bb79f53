"""The node events StateGraph, Graph and Swarm fire around each node call (``statehitl.step_run``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from statehitl.hooks.registry import HookEvent, InterruptibleEvent


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
