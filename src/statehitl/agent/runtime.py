"""The narrow, public face of an agent that the agent loop's nodes work with.

The loop's nodes (``model``, ``tools``) need an agent's model, tools, hooks, system prompt, tool
executor and state, and nothing else of it: not its session, its thread or its live conversation. An
``AgentRuntime`` holds exactly those, so the same nodes run an agent called on its own (``agent()``)
and an agent running as one node of a Graph or Swarm, and nobody reaches into ``Agent``'s private
methods. ``agent`` is what hook events and ``ToolContext`` hand to user code as ``event.agent``; the
loop itself never calls into it.

``LoopRun`` is one call of the loop: the runtime plus what belongs to that call alone (the caller's
invocation state, metrics, where stream events go, the trace). The runner hands it to every node of
the run as ``ctx.runtime``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statehitl.agent.cancellation import Cancellation
from statehitl.agent.result import AgentMetrics
from statehitl.agent.state import AgentState
from statehitl.hooks.registry import HookRegistry
from statehitl.tools.executors import ToolExecutor
from statehitl.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from statehitl.models.base import Model
    from statehitl.telemetry import InvocationTrace


EmitEvent = Callable[[dict[str, Any]], None]
"""Where a call's stream events go (Strands' callback-handler keyword dicts)."""


class AgentRuntime:
    """What the agent loop uses of an agent. ``Agent``'s attributes of the same names are this object's.

    ``owner`` is what hooks and tools see as ``agent`` (the ``Agent`` this runtime belongs to). It is
    held weakly where it can be, because the owner holds its runtime: a dropped Agent is then freed
    at once, with its open logs, instead of waiting for the cycle collector.
    """

    def __init__(self, *, model: Model, tools: ToolRegistry, hooks: HookRegistry, tool_executor: ToolExecutor,
                 state: AgentState, system_prompt: str | None = None, name: str = "agent", owner: Any = None) -> None:
        self.model = model
        self.tools = tools
        self.hooks = hooks
        self.tool_executor = tool_executor
        self.state = state
        self.system_prompt = system_prompt
        self.name = name
        self.cancellation = Cancellation()
        """The agent's ``cancel()`` and its calls' ``cancel_signal``: read at the loop's cancellation-safe points."""
        try:
            self._owner: Callable[[], Any] = weakref.ref(owner)
        except TypeError:  # None, or an object without weak references
            self._owner = lambda: owner

    @property
    def agent(self) -> Any:
        """What hooks and tools see as ``event.agent`` / ``tool_context.agent``."""
        return self._owner()

    def __repr__(self) -> str:
        return f"AgentRuntime(name={self.name!r}, model={self.model!r}, tools={list(self.tools.names)})"


@dataclass
class LoopRun:
    """One call of the agent loop: the runtime, and what belongs to this call alone."""

    runtime: AgentRuntime
    invocation_state: dict[str, Any]
    metrics: AgentMetrics
    emit: EmitEvent | None = None
    trace: InvocationTrace | None = None
