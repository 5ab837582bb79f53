"""``MultiAgentBase``: what a Graph, a Swarm and a node type of the user's own all are (Strands' contract).

Strands documents custom node types as subclasses of ``MultiAgentBase`` that implement ``invoke_async``
and return a ``MultiAgentResult`` (deterministic business logic between agents, say). The same class
works here: ``CustomNode`` runs it as a node of a Graph (or of any machine, through ``as_node()``).
Such a node keeps nothing in the thread but its result: it runs whole on every call, so it cannot stop
on an interrupt of its own; a ``BeforeNodeCallEvent`` hook can still ask before it runs.

Graph and Swarm are ``Orchestrator``s (``statehitl.multiagent.base``): the machine-backed kind, whose
nodes, interrupts and sessions live in a checkpointed thread.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from statehitl._sync import run_sync
from statehitl.errors import InvalidUpdateError
from statehitl.multiagent.results import MultiAgentResult
from statehitl.nesting import MachineNode, NodeCall, NodeDone
from statehitl.status import Status


class MultiAgentBase(ABC):
    """A multi-agent executor: ``invoke_async(task, invocation_state)`` returns a ``MultiAgentResult``.

    Subclass it, as in Strands, for a node type of your own; ``stream_async`` and calling the object
    come with it, and ``as_node()`` makes it a node of a Graph.
    """

    is_orchestrator: ClassVar[bool] = True
    """Its node type in stream events is ``multiagent`` (an agent's is ``agent``)."""
    id: str

    @abstractmethod
    async def invoke_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> MultiAgentResult:
        """Run on ``task`` (a str or content blocks) and return the outcome."""

    async def stream_async(self, task: Any, invocation_state: dict[str, Any] | None = None,
                           **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """The events of a call; this default has one, the result (override it to stream more)."""
        result = await self.invoke_async(task, invocation_state, **kwargs)
        yield {"type": "multiagent_result", "result": result}

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """``invoke_async`` from synchronous code; keyword arguments join the invocation state."""
        return run_sync(self.invoke_async(task, shared_state(invocation_state, kwargs)))

    def as_node(self) -> MachineNode:
        """This executor as a node of a Graph (or of any machine): ``statehitl.nesting``."""
        return CustomNode(self)


class CustomNode:
    """``MachineNode`` for a ``MultiAgentBase`` of the user's own: each call runs its ``stream_async``,
    forwards its events and keeps the ``MultiAgentResult`` it ends with."""

    append_channels: frozenset[str] = frozenset()

    def __init__(self, executor: MultiAgentBase) -> None:
        self.executor = executor

    def node_state(self) -> dict[str, Any]:
        return {}

    def adopt_node_state(self, state: dict[str, Any]) -> None:
        return None  # whatever it keeps between calls, it keeps in its own object

    async def run_node(self, call: NodeCall) -> NodeDone:
        name = type(self.executor).__name__
        result = None
        async for event in self.executor.stream_async(call.task, call.invocation_state):
            if isinstance(event, dict) and "result" in event:
                result = event["result"]
            elif call.emit is not None:
                call.emit(event)
        if not isinstance(result, MultiAgentResult):
            raise InvalidUpdateError(
                f"{name} ended without a MultiAgentResult (its last result event held {result!r}); its "
                "invoke_async must return one"
            )
        if result.status == Status.INTERRUPTED:
            raise InvalidUpdateError(
                f"{name} returned an INTERRUPTED result, but a node type of your own runs whole and cannot "
                "stop on interrupts: ask from a BeforeNodeCallEvent hook, or make the node an Agent, a Graph, "
                "a Swarm or a StateGraph"
            )
        status = "failed" if result.status == Status.FAILED else "completed"
        return NodeDone({}, result, dict(result.accumulated_usage), status)


def shared_state(invocation_state: dict[str, Any] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's invocation state: the caller's own dict (hooks, nodes and tools share it, so what they
    put there reaches the caller, as in Strands), with the keyword arguments added to it."""
    state = {} if invocation_state is None else invocation_state
    state.update(kwargs)
    return state
