"""``Swarm``: agents that hand the task to one another, Strands' ``Swarm`` API, on the shared machine.

Each agent is a node; after a node the machine goes where its agent handed off (the injected
``handoff_to_agent`` tool), or ends: the swarm is complete when a turn ends without a handoff. As in
Strands, every turn starts the agent afresh from its initial messages, with a context text (the task,
the handoff message, who worked on it, the shared context) as its prompt; so the swarm's thread keeps
each agent's result, the history and the shared context, not the agents' conversations. Limits
(handoffs, iterations, time, repetitive handoffs), checked before a turn's hooks, a failed node and a
hook that raises end the call FAILED.

``swarm.shared_context`` is one object for the swarm's life, as in Strands: what the agents shared
(kept in the thread, so across calls and processes) and what ``add_context`` adds, which the next turn
takes into the thread.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from statehitl._json import require_json
from statehitl.checkpoint.record_parts import FailureRecord
from statehitl.errors import GraphValidationError, NotJSONError
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.interrupt import InterruptRaised
from statehitl.machine import END, START, Edge, Machine, NodeSpec
from statehitl.multiagent.base import Orchestrator
from statehitl.multiagent.call_rules import node_results
from statehitl.multiagent.nested import OrchestratorNode
from statehitl.multiagent.nodes import OrchestratedNode, OrchestrationRun, call_node, failed_result, machine_node_of
from statehitl.multiagent.results import MultiAgentResult, NodeResult, SwarmResult, accumulated, zero_usage
from statehitl.multiagent.state import ChannelKind, OrchestrationSchema, stored_task, task_channel
from statehitl.nesting import MachineNode
from statehitl.position import NodeContext, Writes
from statehitl.progress import SwarmTurn
from statehitl.routers import Router
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
    _machine: MachineNode | None = field(default=None, init=False, repr=False)

    def reset_executor_state(self) -> None:
        """Show the agent as it was built (its initial messages and state), as Strands' method does. Each
        turn starts the agent afresh from those anyway, and its thread keeps no conversation of a
        swarm agent, so nothing else changes."""
        if self._machine is not None:
            self._machine.adopt_node_state(self._machine.node_state())

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SwarmNode) and other.node_id == self.node_id

    def __str__(self) -> str:
        return self.node_id


@dataclass
class SharedContext:
    """What agents shared through their handoffs, by agent: ``context[agent][key] = value`` (JSON).

    ``swarm.shared_context`` is one such object for the swarm's life (``swarm.state.shared_context`` is
    it too), showing the thread's context as of the swarm's last step. ``add_context`` adds to it at
    once; the next turn writes what was added into the thread, where the agents read it."""

    context: dict[str, dict[str, Any]] = field(default_factory=dict)
    _added: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def add_context(self, node: SwarmNode | str, key: str, value: Any) -> None:
        """Share ``key: value`` as agent ``node``'s context; a key that is not a non-blank str, or a value
        that is not JSON, is a ``ValueError`` (Strands' rules)."""
        check_context({key: value})
        node_id = node.node_id if isinstance(node, SwarmNode) else str(node)
        self.context.setdefault(node_id, {})[key] = value
        self._added.setdefault(node_id, {})[key] = value

    def taken(self) -> dict[str, dict[str, Any]]:
        """What ``add_context`` added since the thread last took it; the swarm writes it in a turn's update."""
        added, self._added = self._added, {}
        return added

    def show(self, stored: dict[str, dict[str, Any]]) -> None:
        """Show the thread's ``stored`` context, with what was added and not yet taken on top of it."""
        self.context.clear()
        for node_id, values in stored.items():
            self.context[node_id] = dict(values)
        for node_id, values in self._added.items():
            self.context.setdefault(node_id, {}).update(values)


def check_context(context: dict[str, Any]) -> None:
    """Strands' rules for shared context: each key a non-blank str, each value JSON (``ValueError``)."""
    for key, value in context.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"a shared context key must be a non-blank str, got {key!r}")
        try:
            require_json(value, f"the shared context value of {key!r}")
        except NotJSONError as exc:
            raise ValueError(str(exc)) from None


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
    handoff_node: SwarmNode | None = None
    """The agent the current one handed to, while the current one's turn lasts (its after hooks)."""
    handoff_message: str | None = None


@dataclass
class _Turn:
    """What the running agent's ``handoff_to_agent`` calls asked for, kept with the node if it stops."""

    agents: list[str]
    handoff: dict[str, Any] | None = None
    context: dict[str, Any] = field(default_factory=dict)


_turn: contextvars.ContextVar[_Turn] = contextvars.ContextVar("statehitl_swarm_turn")


def _kept_turn(node_id: str, progress: Any) -> SwarmTurn | None:
    """The turn agent ``node_id`` kept when it stopped (its step's progress), if it stopped mid-turn."""
    return None if progress is None else SwarmTurn.load(progress, f"what swarm agent {node_id!r} kept of its turn")


class Swarm(Orchestrator):
    """Agents that pass the task between them with ``handoff_to_agent`` until one answers without."""

    kind = "swarm"

    def __init__(self, nodes: Sequence[Any], *, entry_point: Any = None, max_handoffs: int = 20,
                 max_iterations: int = 20, execution_timeout: float | None = 900.0, node_timeout: float | None = 300.0,
                 repetitive_handoff_detection_window: int = 0, repetitive_handoff_min_unique_agents: int = 0,
                 hooks: Sequence[HookProvider | HookRegistry] | None = None,
                 session_manager: SessionManager | None = None, id: str = DEFAULT_SWARM_ID,
                 trace_attributes: Mapping[str, Any] | None = None) -> None:
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
        for node_id, node in self.nodes.items():
            node._machine = self.orchestrated[node_id].machine
        self.shared_context = SharedContext()
        self._turn: str | None = None
        """The agent whose turn is running (until its after hooks have run): ``state.current_node``."""
        channels = {"task": ChannelKind.REPLACE, "results": ChannelKind.MERGE, "order": ChannelKind.EXTEND,
                    "handoff": ChannelKind.REPLACE, "context": ChannelKind.MERGE, "failure": ChannelKind.REPLACE}
        schema = OrchestrationSchema(channels, {"task": "", "results": {}, "order": [], "handoff": None,
                                                "context": {}, "failure": None})
        specs = [NodeSpec.from_callable(n, self._node_handler(n)) for n in self.orchestrated]
        routers = [Router(n, _handed_to) for n in self.orchestrated]
        machine = Machine(specs, [Edge(START, first)], routers, name=id, schema=schema.describe())
        self._setup(id=id, machine=machine, schema=schema, hooks=hooks, session_manager=session_manager,
                    trace_attributes=trace_attributes)

    @property
    def state(self) -> SwarmState:
        """The running call, or the last one, as Strands' ``swarm.state`` shows it (hooks read it)."""
        state, status = self._shown()
        order, handoff = list(state.get("order", ())), state.get("handoff")
        results = node_results(state, self.orchestrated)
        usage, metrics = accumulated(results.values())
        started, elapsed = self._clock()
        target = self.nodes[handoff["to"]] if handoff else None
        if self._turn is not None:  # a turn is running: it is current, and where it handed to is next
            current, next_node = self.nodes[self._turn], target
        else:  # between turns: the agent that has (or last had) the turn
            current, next_node = target or self.nodes[order[-1] if order else self._first], None
        return SwarmState(current, stored_task(state), status, self.shared_context, [self.nodes[n] for n in order],
                          started, results, usage, metrics, elapsed, next_node,
                          handoff["message"] if handoff else None)

    def _show(self, state: dict[str, Any], status: Status) -> None:
        super()._show(state, status)
        self.shared_context.show(state.get("context", {}))

    async def _run_node(self, node_id: str, state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        run: OrchestrationRun = ctx.runtime
        node = self.orchestrated[node_id]
        kept = _kept_turn(node_id, ctx.progress)
        self._turn = node_id
        # What add_context added goes into the thread with this turn; kept with the turn if it stops.
        added = _merged({} if kept is None else kept.added, self.shared_context.taken())
        turn = _Turn(**kept.turn) if kept is not None else _Turn(list(self.nodes))
        token = _turn.set(turn)
        started = time.monotonic()
        update: dict[str, Any]
        try:
            task = None if kept is not None else self._node_input(state, node_id, _merged(state["context"], added))
            _, result = await call_node(node, task, node.machine.node_state(), ctx, run,
                                        kept=None if kept is None else kept.node, timeout=self.node_timeout,
                                        keep=lambda inner, stopped: SwarmTurn(node=inner, turn=vars(turn), added=added,
                                                                              result=stopped.to_dict()).stored(),
                                        stop_on_interrupt=True)
        except InterruptRaised:
            raise
        except Exception as exc:  # as in Strands, a failed agent ends the swarm FAILED, it does not raise, and
            failed = failed_result(exc, started)  # is not in the history of agents that had the turn
            update = {"failure": f"node {node_id!r} failed: {exc}", "handoff": None,
                      "results": {node_id: node.stored_result(failed)}}
        else:
            update = {"results": {node_id: node.stored_result(result)}, "order": [node_id], "handoff": turn.handoff}
        finally:
            _turn.reset(token)
        added = _merged(added, {node_id: turn.context} if turn.context else {})
        if added:
            update["context"] = {n: {**state["context"].get(n, {}), **values} for n, values in added.items()}
        self._show_update(node_id, update)
        return update

    def _stepped(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                 pending: list[str]) -> Awaitable[None]:
        self._turn = None  # its after hooks have run: the next agent is current
        return super()._stepped(run, state, writes, pending)

    def _cancel(self, node_id: str, message: str, run: OrchestrationRun) -> dict[str, Any]:
        """As Strands announces a cancelled swarm agent: cancelled, with no result and no turn taken."""
        run.event({"type": "multiagent_node_cancel", "node_id": node_id, "message": message})
        return {}

    def hook_failed(self, node: str, error: Exception, runtime: Any) -> dict[str, Any] | None:
        """A ``BeforeNodeCallEvent`` hook that raises ends the swarm FAILED, as in Strands, saying why."""
        return {"failure": f"a BeforeNodeCallEvent hook failed before node {node!r}: {type(error).__name__}: {error}",
                "handoff": None}

    _halt: ClassVar[dict[str, Any]] = {"handoff": None}

    def _stopped_results(self, progress: Mapping[str, Any], error: FailureRecord | None) -> dict[str, dict[str, Any]]:
        """As in Strands, an agent stopped on an interrupt has its ``INTERRUPTED`` result (kept with its
        progress until its turn ends)."""
        stopped = super()._stopped_results(progress, error)
        for node_id, kept in progress.items():
            turn = _kept_turn(node_id, kept) if node_id in self.orchestrated else None
            if turn is not None:
                stopped[node_id] = turn.result
        return stopped

    def _with_stopped(self, state: dict[str, Any], progress: Mapping[str, Any],
                      error: FailureRecord | None = None) -> dict[str, Any]:
        """Also with the context an agent stopped on an interrupt took from ``add_context``: its turn
        writes it into the thread when it ends."""
        shown = super()._with_stopped(state, progress, error)
        for node_id, kept in progress.items():
            turn = _kept_turn(node_id, kept) if node_id in self.orchestrated else None
            if turn is not None and turn.added:
                shown = {**shown, "context": _merged(shown.get("context", {}), turn.added)}
        return shown

    def _snapshot(self, state: dict[str, Any], interrupted: list[str]) -> dict[str, Any]:
        handoff = state.get("handoff")
        return {"node_history": list(state.get("order", ())),
                "context": {"shared_context": dict(state.get("context", {})),
                            "handoff_node": handoff["to"] if handoff else None,
                            "handoff_message": handoff["message"] if handoff else None}}

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

    def _node_input(self, state: dict[str, Any], node_id: str, context: dict[str, Any]) -> list[dict[str, Any]]:
        """The context an agent's turn starts with, in Strands' words, then the task's own blocks;
        ``context`` is what the agents (and ``add_context``) shared so far."""
        task, handoff = stored_task(state), state.get("handoff")
        text = f"Handoff Message: {handoff['message']}\n\n" if handoff else ""
        text += f"User Request: {task}\n\n" if isinstance(task, str) else "User Request: Multi-modal task\n\n"
        history = state.get("order", [])
        if history:
            text += f"Previous agents who worked on this: {' → '.join(history)}\n\n"
        shared = {k: v for k, v in context.items() if v}
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
        """A new task; the shared context lasts, as Strands' one ``shared_context`` object does."""
        return {**state, "task": task_channel(task), "results": {}, "order": [], "handoff": None, "failure": None}

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

    def as_node(self) -> OrchestratorNode:
        """This orchestration as a node of another (a Swarm inside a Graph): ``statehitl.nesting``."""
        return OrchestratorNode(self)

    def __repr__(self) -> str:
        return f"Swarm(id={self.id!r}, nodes={list(self.orchestrated)})"


def _merged(base: dict[str, dict[str, Any]], more: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Shared context ``base`` with ``more`` on top, agent by agent."""
    if not more:
        return base
    return {**base, **{n: {**base.get(n, {}), **values} for n, values in more.items()}}


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
        check_context(context or {})
    except ValueError as exc:  # the whole handoff is refused: the agent can correct it and hand off again
        return {"status": "error", "content": [{"text": f"Error in handoff: {exc}"}]}
    turn.handoff = {"to": agent_name, "message": message}
    turn.context.update(context or {})
    return {"status": "success", "content": [{"text": f"Handing off to {agent_name}: {message}"}]}
