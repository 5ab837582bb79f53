"""What a Graph's users see of it, as Strands names it: its nodes, its edges, and the state its edge
conditions and hooks read.

``GraphNode`` shows how its node did in the graph's last (or running) call: ``execution_status``,
``result``, ``execution_time``; the graph keeps those up to date, from its thread when it is built on a
session and at the end of each call, so a graph that resumed another process's call shows the nodes
that process ran too.
``GraphState`` is a plain dataclass, as in Strands, so a condition can be tested with one built by hand.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from statehitl.multiagent.results import NodeResult, accumulated, zero_usage
from statehitl.nesting import MachineNode
from statehitl.status import Status


@dataclass(eq=False)
class GraphNode:
    """A node of the graph: its id, the executor (an Agent, a Graph, a Swarm, a compiled StateGraph, a
    ``MultiAgentBase`` of your own), and how it did in the graph's last call."""

    node_id: str
    executor: Any
    dependencies: set[GraphNode] = field(default_factory=set, repr=False)
    execution_status: Status = Status.PENDING
    result: NodeResult | None = field(default=None, repr=False)
    execution_time: int = 0
    reset_pending: bool = field(default=False, init=False, repr=False)
    """``reset_executor_state()`` was called: the node's next call starts from its initial state."""
    _machine: MachineNode | None = field(default=None, init=False, repr=False)

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphNode) and other.node_id == self.node_id

    def attach(self, machine: MachineNode) -> None:
        """The node's machine, which knows its initial state (the graph attaches it when built)."""
        self._machine = machine

    def reset_executor_state(self) -> None:
        """Start the node afresh, as Strands' ``reset_executor_state()`` does, with the thread kept as the
        source of truth: the live executor shows its initial messages and state at once, and the node's
        next call starts from them, which that call's checkpoint records (the conversation so far stays
        in the thread's history; a new Graph on the session shows it until that call). Between two calls
        of a loop, ``reset_on_revisit()`` does this for every node."""
        if self._machine is not None:
            self._machine.adopt_node_state(self._machine.node_state())
        self.reset_pending = True
        self.show(Status.PENDING)

    def show(self, status: Status, result: NodeResult | None = None) -> None:
        """Record how the node did (its result's status and time, when it has one)."""
        self.execution_status = status
        self.result = result
        self.execution_time = result.execution_time if result is not None else 0


@dataclass
class GraphEdge:
    """An edge ``from_node -> to_node``, taken when ``condition(state)`` is true (or always); hashable by
    its two nodes, as in Strands, whose builder keeps its edges in a set."""

    from_node: GraphNode
    to_node: GraphNode
    condition: Callable[..., bool] | None = None

    def __hash__(self) -> int:
        return hash((self.from_node.node_id, self.to_node.node_id))

    def should_traverse(self, state: GraphState, *, invocation_state: dict[str, Any] | None = None) -> bool:
        """Whether the edge is taken, given the graph state (and, for a condition that asks for it, the
        invocation state, as Strands passes it)."""
        if self.condition is None:
            return True
        if _takes_invocation_state(self.condition):
            return bool(self.condition(state, invocation_state=invocation_state or {}))
        return bool(self.condition(state))


def _takes_invocation_state(condition: Callable[..., bool]) -> bool:
    try:
        return "invocation_state" in inspect.signature(condition).parameters
    except (TypeError, ValueError):
        return False


@dataclass
class GraphState:
    """A call of the graph as its edge conditions and hooks see it: the task, each node's result, the
    nodes by outcome and in the order they ran, counts, usage and the graph's shape."""

    task: Any = ""
    status: Status = Status.PENDING
    completed_nodes: set[GraphNode] = field(default_factory=set)
    failed_nodes: set[GraphNode] = field(default_factory=set)
    interrupted_nodes: set[GraphNode] = field(default_factory=set)
    execution_order: list[GraphNode] = field(default_factory=list)
    start_time: float = field(default_factory=time.time)
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, int] = field(default_factory=lambda: {"latencyMs": 0})
    execution_count: int = 0
    execution_time: int = 0
    total_nodes: int = 0
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    entry_points: list[GraphNode] = field(default_factory=list)


def graph_state(task: Any, status: Status, results: dict[str, NodeResult], order: list[str], *,
                nodes: dict[str, GraphNode], edges: list[GraphEdge], entry_points: list[GraphNode],
                clock: tuple[float, int]) -> GraphState:
    """The ``GraphState`` of a call: ``results`` and ``order`` by node id; ``clock`` is when the call began
    (wall clock) and how long it has run (ms)."""
    by_status: dict[Status, set[GraphNode]] = {Status.COMPLETED: set(), Status.FAILED: set(),
                                               Status.INTERRUPTED: set()}
    for node_id, result in results.items():
        by_status.get(result.status, set()).add(nodes[node_id])
    usage, metrics = accumulated(results.values())
    started, elapsed = clock
    return GraphState(task, status, by_status[Status.COMPLETED], by_status[Status.FAILED],
                      by_status[Status.INTERRUPTED], [nodes[n] for n in order], started, dict(results), usage,
                      metrics, len(order), elapsed, len(nodes),
                      [(e.from_node, e.to_node) for e in edges], list(entry_points))
