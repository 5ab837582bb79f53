"""One node of an orchestration: what it runs (through ``MachineNode``), and one call of it.

Whatever the executor is — an Agent, a Graph, a Swarm, a compiled StateGraph, a ``MultiAgentBase`` of
the user's own, or anything else with ``as_node()`` — the orchestrators only ever talk to its
``MachineNode``: this is the one place a new kind of node plugs in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from statehitl.errors import GraphValidationError
from statehitl.event_stream import Emit
from statehitl.interrupt import InterruptRaised
from statehitl.multiagent.results import NodeResult
from statehitl.nesting import MachineNode, NodeDone, NodeStopped, node_call
from statehitl.position import NodeContext
from statehitl.status import Status


def machine_node_of(executor: Any, where: str) -> MachineNode:
    """The ``MachineNode`` of a node's executor; a clear error for anything that cannot be one."""
    if getattr(executor, "session_manager", None) is not None:
        raise GraphValidationError(
            f"{where}: an agent with its own session_manager cannot be a node; the orchestration's session "
            "holds every node's state (give the session manager to the Graph or Swarm instead)"
        )
    as_node = getattr(executor, "as_node", None)
    if not callable(as_node):
        raise GraphValidationError(
            f"{where}: {executor!r} cannot be a node; use an Agent, a Graph, a Swarm, a compiled StateGraph, a "
            "subclass of statehitl.multiagent.MultiAgentBase, or an object with as_node() returning a "
            "statehitl.nesting.MachineNode"
        )
    node: MachineNode = as_node()
    return node


@dataclass
class OrchestratedNode:
    """A node of a Graph or Swarm: its id, the executor the user gave, and its machine."""

    node_id: str
    executor: Any
    machine: MachineNode = field(repr=False)
    _loaded: tuple[dict[str, Any], NodeResult] | None = field(default=None, init=False, repr=False)

    @property
    def node_type(self) -> str:
        """Strands' node types in stream events: ``multiagent`` for a nested orchestrator, else ``agent``."""
        return "multiagent" if getattr(self.executor, "is_orchestrator", False) else "agent"

    def load_result(self, data: dict[str, Any]) -> NodeResult:
        """A stored result of this node back as a ``NodeResult``.

        A stored result is never changed in place (a new call stores a new one), so the last one read
        is kept: the nodes after it, edge conditions and the call's result all read it, and would
        otherwise each read it again, a cost that grows with the graph.
        """
        if self._loaded is not None and self._loaded[0] is data:
            return self._loaded[1]
        result = NodeResult.from_dict(data, getattr(self.machine, "load_result", None))
        self._loaded = (data, result)
        return result

    def stored_result(self, result: NodeResult) -> dict[str, Any]:
        """``result`` as the orchestration stores it; reading that back gives ``result`` itself."""
        data = result.to_dict()
        self._loaded = (data, result)
        return data


@dataclass
class OrchestrationRun:
    """One call of an orchestrator, handed to its nodes as ``ctx.runtime``."""

    orchestrator: Any
    invocation_state: dict[str, Any]
    emit: Emit | None = None
    started: float = field(default_factory=time.monotonic)
    started_at: float = field(default_factory=time.time)
    """When the call began on the wall clock (Strands' ``GraphState.start_time``)."""
    ran: set[str] = field(default_factory=set)
    """The nodes that ran in this call: their live objects already show their state."""

    def event(self, event: dict[str, Any]) -> None:
        if self.emit is not None:
            self.emit(event)


Keep = Callable[[Any, NodeResult], Any]


def _as_is(kept: Any, result: NodeResult) -> Any:
    return kept


async def call_node(node: OrchestratedNode, task: Any, state: dict[str, Any], ctx: NodeContext,
                    run: OrchestrationRun, *, kept: Any, timeout: float | None, keep: Keep = _as_is,
                    stop_on_interrupt: bool = False) -> tuple[NodeDone, NodeResult]:
    """Run one node call and announce it on the stream; its outcome and its ``NodeResult``.

    An interrupt inside the node stops the enclosing node with the node's interrupts (their ``node``
    names the path to them) and ``keep(kept, result)`` as its progress, ``result`` being the node's
    ``INTERRUPTED`` result (announced with ``multiagent_node_stop`` first if ``stop_on_interrupt``, as a
    Strands Swarm does). A failure or a timeout announces the failed result and raises.
    """
    node_id = node.node_id
    run.event({"type": "multiagent_node_start", "node_id": node_id, "node_type": node.node_type})
    emit = None if run.emit is None else _forward(run.emit, node_id)
    started = time.monotonic()
    try:
        call = node.machine.run_node(node_call(ctx, task, state, kept, emit))
        outcome = await (call if timeout is None else asyncio.wait_for(call, timeout))
    except TimeoutError:
        error = TimeoutError(f"Node '{node_id}' execution timed out after {timeout}s")
        _stop_failed(run, node_id, error, started)
        raise error from None
    except Exception as exc:
        _stop_failed(run, node_id, exc, started)
        raise
    elapsed = _ms(started)
    if isinstance(outcome, NodeStopped):
        interrupts = [dataclasses.replace(i, node=f"{node_id}/{i.node}" if i.node else node_id)
                      for i in outcome.interrupts]
        stopped = NodeResult(outcome.result, elapsed, Status.INTERRUPTED, accumulated_metrics={"latencyMs": elapsed},
                             execution_count=1, interrupts=interrupts)
        if stop_on_interrupt:
            run.event({"type": "multiagent_node_stop", "node_id": node_id, "node_result": stopped})
        run.event({"type": "multiagent_node_interrupt", "node_id": node_id, "interrupts": interrupts})
        raise InterruptRaised(interrupts, progress=keep(outcome.kept, stopped))
    run.ran.add(node_id)
    status = Status.COMPLETED if outcome.status == "completed" else Status.FAILED
    result = NodeResult(outcome.result, elapsed, status, dict(outcome.usage), {"latencyMs": elapsed}, 1)
    run.event({"type": "multiagent_node_stop", "node_id": node_id, "node_result": result})
    return outcome, result


def failed_result(error: BaseException, started: float) -> NodeResult:
    elapsed = _ms(started)
    return NodeResult(error, elapsed, Status.FAILED, accumulated_metrics={"latencyMs": elapsed}, execution_count=1)


def _stop_failed(run: OrchestrationRun, node_id: str, error: BaseException, started: float) -> None:
    run.event({"type": "multiagent_node_stop", "node_id": node_id, "node_result": failed_result(error, started)})


def _forward(emit: Emit, node_id: str) -> Emit:
    return lambda event: emit({"type": "multiagent_node_stream", "node_id": node_id, "event": event})


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
