"""``Swarm``: agents that hand the task to one another, Strands' ``Swarm`` API, on the shared machine.

Each agent is a node; after a node the machine goes where its agent handed off (the injected
``handoff_to_agent`` tool), or ends: the swarm is complete when a turn ends without a handoff. As in
Strands, every turn starts the agent afresh from its initial messages, with a context text (the task,
the handoff message, who worked on it, the shared context) as its prompt; so the swarm's thread keeps
each agent's result, the history and the shared context, not the agents' conversations. Limits
(handoffs, iterations, time, repetitive handoffs) and a failed node end the call FAILED.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statehitl._json import require_json
from statehitl.errors import GraphValidationError, NotJSONError
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.interrupt import InterruptRaised
from statehitl.machine import END, START, Edge, Machine, NodeSpec, Router
from statehitl.multiagent.base import Orchestrator, node_results
from statehitl.multiagent.nodes import OrchestratedNode, OrchestrationRun, call_node, failed_result, machine_node_of
from statehitl.multiagent.results import MultiAgentResult, NodeResult, SwarmResult, accumulated, zero_usage
from statehitl.multiagent.state import Kind, OrchestrationSchema, stored_task, task_channel
from statehitl.position import NodeContext, Writes
from statehitl.session.manager import SessionManager
from statehitl.status import Status
from statehitl.tools import tool
from statehitl.tools.registry import ToolRegistry

__all__ = ["SharedContext", "Swarm", "SwarmNode", "SwarmState"]

DEFAULT_SWARM_ID = "default_swarm"
HANDOFF_TOOL = "handoff_to_agent"


@dataclass(eq=False)
class SwarmNode:
    """An agent of the swarm, by its id (the agent's name)."""

    node_id: str
    executor: Any

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SwarmNode) and other.node_id == self.node_id

    def __str__(self) -> str:
        return self.node_id


@dataclass
class SharedContext:
    """What agents shared through their handoffs, by agent: ``context[agent][key] = value`` (JSON)."""

    context: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class SwarmState:
    """A call of the swarm as hooks see it (``swarm.state``), as Strands names it: the agent that has the
    turn (or had it last), the task, the status, what was shared, who had the turn, results and usage."""

    current_node: SwarmNode | None = None
    task: Any = ""
    completion_status: Status = Status.PENDING
    shared_context: SharedContext = field(default_factory=SharedContext)
    node_history: list[SwarmNode] = field(default_factory=list)
    start_time: float = field(default_factory=time.time)
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: dict[str, int] = field(default_factory=zero_usage)
    accumulated_metrics: dict[str, int] = field(default_factory=lambda: {"latencyMs": 0})
    execution_time: int = 0
    handoff_message: str | None = None


@dataclass
class _Turn:
    """What the running agent's ``handoff_to_agent`` calls asked for, kept with the node if it stops."""

    agents: list[str]
    handoff: dict[str, Any] | None = None
    context: dict[str, Any] = field(default_factory=dict)


_turn: contextvars.ContextVar[_Turn] = contextvars.ContextVar("statehitl_swarm_turn")


class Swarm(Orchestrator):
    """Agents that pass the task between them with ``handoff_to_agent`` until one answers without."""

    kind = "swarm"

    def __init__(self, nodes: Sequence[Any], *, entry_point: Any = None, max_handoffs: int = 20,
                 max_iterations: int = 20, execution_timeout: float | None = 900.0, node_timeout: float | None = 300.0,
                 repetitive_handoff_detection_window: int = 0, repetitive_handoff_min_unique_agents: int = 0,
                 hooks: Sequence[HookProvider | HookRegistry] | None = None,
                 session_manager: SessionManager | None = None, id: str = DEFAULT_SWARM_ID) -> None:
        if not nodes:
            raise GraphValidationError("a swarm needs at least one agent")
        self.max_handoffs = max_handoffs
        self.max_iterations = max_iterations
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.repetitive_handoff_detection_window = repetitive_handoff_detection_window
        self.repetitive_handoff_min_unique_agents = repetitive_handoff_min_unique_agents
        self.nodes: dict[str, SwarmNode] = {}
        for agent in nodes:
            node_id = str(getattr(agent, "name", "") or f"node_{len(self.nodes)}")
            if node_id in self.nodes:
                raise GraphValidationError(f"two agents are named {node_id!r}; each swarm agent needs a unique name")
            if any(n.executor is agent for n in self.nodes.values()):
                raise GraphValidationError(f"agent {node_id!r} is in the swarm twice; each node needs its own agent")
            self.nodes[node_id] = SwarmNode(node_id, agent)
        self.entry_point = entry_point
        first = next(iter(self.nodes))
        if entry_point is not None:
            matches = [n for n, s in self.nodes.items() if s.executor is entry_point]
            if not matches:
                raise GraphValidationError(
                    f"the entry point is not one of the swarm's agents ({list(self.nodes)})")
            first = matches[0]
        self._first = first
        for node_id, node in self.nodes.items():
            _inject_handoff_tool(node_id, node.executor)
        self.orchestrated = {n: OrchestratedNode(n, s.executor, machine_node_of(s.executor, f"swarm agent {n!r}"))
                             for n, s in self.nodes.items()}
        channels = {"task": Kind.REPLACE, "results": Kind.MERGE, "order": Kind.EXTEND, "handoff": Kind.REPLACE,
                    "context": Kind.MERGE, "failure": Kind.REPLACE}
        schema = OrchestrationSchema(channels, {"task": "", "results": {}, "order": [], "handoff": None,
                                                "context": {}, "failure": None})
        specs = [NodeSpec.from_callable(n, self._node_handler(n)) for n in self.orchestrated]
        routers = [Router(n, _handed_to) for n in self.orchestrated]
        machine = Machine(specs, [Edge(START, first)], routers, name=id, schema=schema.describe())
        self._setup(id=id, machine=machine, schema=schema, hooks=hooks, session_manager=session_manager)

    @property
    def state(self) -> SwarmState:
        """The running call, or the last one, as Strands' ``swarm.state`` shows it (hooks read it)."""
        state, status = self._shown()
        order, handoff = list(state.get("order", ())), state.get("handoff")
        results = node_results(state, self.orchestrated)
        usage, metrics = accumulated(results.values())
        started, elapsed = self._clock()
        current = handoff["to"] if handoff else order[-1] if order else self._first  # has (or last had) the turn
        return SwarmState(self.nodes[current], stored_task(state), status,
                          SharedContext(dict(state.get("context", {}))), [self.nodes[n] for n in order], started,
                          results, usage, metrics, elapsed, handoff["message"] if handoff else None)

    @property
    def shared_context(self) -> SharedContext:
        """What the agents shared in the last call (read from its thread)."""
        from statehitl._sync import run_sync

        record = run_sync(self.checkpointer.latest(self.thread_id))
        return SharedContext(dict(record.values.get("context", {})) if record is not None else {})

    async def _run_node(self, node_id: str, state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        run: OrchestrationRun = ctx.runtime
        node = self.orchestrated[node_id]
        kept = ctx.progress
        if kept is None:
            reason = self._limit(state, run)
            if reason is not None:
                return {"failure": reason, "handoff": None}
        turn = _Turn(**kept["turn"]) if kept is not None else _Turn(list(self.nodes))
        token = _turn.set(turn)
        started = time.monotonic()
        try:
            task = None if kept is not None else self._node_input(state, node_id)
            _, result = await call_node(node, task, node.machine.node_state(), ctx, run,
                                           kept=None if kept is None else kept["node"], timeout=self.node_timeout,
                                           keep=lambda inner: {"node": inner, "turn": vars(turn)})
        except InterruptRaised:
            raise
        except Exception as exc:  # as in Strands, a failed agent ends the swarm FAILED, it does not raise
            return {"failure": f"node {node_id!r} failed: {exc}", "handoff": None, "order": [node_id],
                    "results": {node_id: failed_result(exc, started).to_dict()}}
        finally:
            _turn.reset(token)
        update: dict[str, Any] = {"results": {node_id: node.stored_result(result)}, "order": [node_id],
                                  "handoff": turn.handoff}
        if turn.context:
            update["context"] = {node_id: {**state.get("context", {}).get(node_id, {}), **turn.context}}
        return update

    def _limit(self, state: dict[str, Any], run: OrchestrationRun) -> str | None:
        history = state.get("order", [])
        if len(history) >= self.max_handoffs:
            return f"Max handoffs reached: {self.max_handoffs}"
        if len(history) >= self.max_iterations:
            return f"Max iterations reached: {self.max_iterations}"
        if self.execution_timeout is not None and time.monotonic() - run.started > self.execution_timeout:
            return f"Execution timed out: {self.execution_timeout}s"
        window = self.repetitive_handoff_detection_window
        if window > 0 and len(history) >= window:
            unique = len(set(history[-window:]))
            if unique < self.repetitive_handoff_min_unique_agents:
                return f"Repetitive handoff: {unique} unique nodes out of {window} recent iterations"
        return None

    def _node_input(self, state: dict[str, Any], node_id: str) -> list[dict[str, Any]]:
        """The context an agent's turn starts with, in Strands' words, then the task's own blocks."""
        task, handoff = stored_task(state), state.get("handoff")
        text = f"Handoff Message: {handoff['message']}\n\n" if handoff else ""
        text += f"User Request: {task}\n\n" if isinstance(task, str) else "User Request: Multi-modal task\n\n"
        history = state.get("order", [])
        if history:
            text += f"Previous agents who worked on this: {' → '.join(history)}\n\n"
        shared = {k: v for k, v in state.get("context", {}).items() if v}
        if shared:
            text += "Shared knowledge from previous agents:\n"
            text += "".join(f"• {name}: {values}\n" for name, values in shared.items()) + "\n"
        others = [n for n in self.nodes if n != node_id]
        if others:
            text += "Other agents available for collaboration:\n"
            for other in others:
                description = getattr(self.nodes[other].executor, "description", None)
                text += f"Agent name: {other}." + (f" Agent description: {description}" if description else "") + "\n"
            text += "\n"
        text += ("You have access to swarm coordination tools if you need help from other agents. "
                 "If you don't hand off to another agent, the swarm will consider the task complete.")
        blocks = [{"text": f"Context:\n{text}\n\n"}]
        return blocks if isinstance(task, str) else [*blocks, *(task or [])]

    # -- Orchestrator ---------------------------------------------------------------------------------

    def _begin(self, state: dict[str, Any], task: Any) -> dict[str, Any]:
        return {**state, "task": task_channel(task), "results": {}, "order": [], "handoff": None, "context": {},
                "failure": None}

    def _entry(self, state: dict[str, Any]) -> list[str]:
        return [self._first]

    async def _after_step(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                          pending: list[str]) -> None:
        handoff = state.get("handoff")
        if handoff and writes:
            run.event({"type": "multiagent_handoff", "from_node_ids": [writes[0][0]], "to_node_ids": [handoff["to"]],
                       "message": handoff["message"]})

    def _result(self, base: MultiAgentResult, state: dict[str, Any]) -> SwarmResult:
        return SwarmResult(**vars(base), node_history=[self.nodes[n] for n in state.get("order", ())])

    def __repr__(self) -> str:
        return f"Swarm(id={self.id!r}, nodes={list(self.orchestrated)})"


def _handed_to(state: dict[str, Any]) -> str:
    handoff = state.get("handoff")
    return handoff["to"] if handoff else END


def _inject_handoff_tool(node_id: str, agent: Any) -> None:
    """Give an agent the swarm's ``handoff_to_agent`` tool (as Strands does, into its own tools)."""
    runtime = getattr(agent, "runtime", None)
    if runtime is None:
        raise GraphValidationError(f"swarm node {node_id!r} must be an Agent, got {agent!r}")
    if HANDOFF_TOOL in runtime.tools:
        raise GraphValidationError(
            f"agent {node_id!r} already has a tool named {HANDOFF_TOOL!r}, which the swarm adds; rename it")
    runtime.tools = ToolRegistry([*runtime.tools, handoff_to_agent])


@tool
def handoff_to_agent(agent_name: str, message: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """Transfer control to another agent in the swarm for specialized help.

    Args:
        agent_name: Name of the agent to hand off to
        message: Message explaining what needs to be done and why you're handing off
        context: Additional context to share with the next agent
    """
    turn = _turn.get(None)
    if turn is None:
        return {"status": "error", "content": [{"text": "Error: handoff_to_agent works only inside a swarm"}]}
    if agent_name not in turn.agents:
        return {"status": "error", "content": [{"text": f"Error: Agent '{agent_name}' not found in swarm "
                                                        f"(agents: {', '.join(turn.agents)})"}]}
    try:
        require_json(context or {}, "the handoff context")
    except NotJSONError as exc:
        return {"status": "error", "content": [{"text": f"Error in handoff: {exc}"}]}
    turn.handoff = {"to": agent_name, "message": message}
    turn.context.update(context or {})
    return {"status": "success", "content": [{"text": f"Handing off to {agent_name}: {message}"}]}
