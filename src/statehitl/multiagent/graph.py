"""``Graph``: agents (and nested machines) as the nodes of a directed graph, Strands' ``GraphBuilder`` API.

Built on the shared machine: each node is a machine node, each edge a transition (a conditional edge
a router whose condition reads the ``GraphState``). Ready nodes run concurrently. A node with several
incoming edges waits for every predecessor that can still reach it and runs once, after all of them
(the runner's rule for joins); Strands instead runs a join again for each batch in which one of its
predecessors finishes. A node's input is the task when it has no finished predecessor, else the task
and its predecessors' outputs, in Strands' words. ``GraphNode``, ``GraphEdge`` and ``GraphState`` are
in ``graph_parts``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from statehitl.errors import GraphValidationError, NodeCancelledError
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.interrupt import InterruptRaised
from statehitl.machine import END, START, Edge, Machine, NodeSpec
from statehitl.multiagent.base import Orchestrator
from statehitl.multiagent.call_rules import node_results
from statehitl.multiagent.graph_parts import GraphEdge, GraphNode, GraphState, graph_state
from statehitl.multiagent.nested import OrchestratorNode
from statehitl.multiagent.nodes import OrchestratedNode, OrchestrationRun, call_node, failed_result, machine_node_of
from statehitl.multiagent.results import GraphResult, MultiAgentResult, NodeResult
from statehitl.multiagent.state import (
    ChannelKind,
    OrchestrationSchema,
    node_state_of,
    node_update,
    stored_task,
    task_channel,
)
from statehitl.position import NodeContext, Writes
from statehitl.progress import RestartedNode
from statehitl.routers import Router
from statehitl.session.manager import SessionManager
from statehitl.status import Status

__all__ = ["Graph", "GraphBuilder", "GraphEdge", "GraphNode", "GraphState"]

DEFAULT_GRAPH_ID = "default_graph"
T = TypeVar("T")


class GraphBuilder:
    """Build a ``Graph``: ``add_node``, ``add_edge``, ``set_entry_point``, the limits, then ``build()``."""

    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}
        self.edges: list[GraphEdge] = []
        self.entry_points: list[GraphNode] = []
        self._max_node_executions: int | None = None
        self._execution_timeout: float | None = None
        self._node_timeout: float | None = None
        self._reset_on_revisit = False
        self._id = DEFAULT_GRAPH_ID
        self._session_manager: SessionManager | None = None
        self._hooks: list[HookProvider | HookRegistry] = []

    def add_node(self, executor: Any, node_id: str | None = None) -> GraphNode:
        """Add a node; its id defaults to the executor's ``id`` or ``name``."""
        node_id = (node_id or getattr(executor, "id", None) or getattr(executor, "name", None)
                   or f"node_{len(self.nodes)}")
        if not isinstance(node_id, str):
            raise GraphValidationError(f"node id must be a str, got {node_id!r}")
        if node_id in self.nodes:
            raise GraphValidationError(f"node {node_id!r} already exists; node ids must be unique")
        if any(n.executor is executor for n in self.nodes.values()):
            raise GraphValidationError(f"node {node_id!r}: this executor is already a node; each node needs its own")
        node = GraphNode(node_id, executor)
        self.nodes[node_id] = node
        return node

    def _node(self, node: str | GraphNode, role: str) -> GraphNode:
        node_id = node.node_id if isinstance(node, GraphNode) else node
        if node_id not in self.nodes:
            raise GraphValidationError(f"{role} node {node_id!r} not found (nodes: {sorted(self.nodes)})")
        return self.nodes[node_id]

    def add_edge(self, from_node: str | GraphNode, to_node: str | GraphNode,
                 condition: Callable[..., bool] | None = None) -> GraphEdge:
        """Go from ``from_node`` to ``to_node`` after it completes, if ``condition(state)`` holds (or always)."""
        source, target = self._node(from_node, "source"), self._node(to_node, "target")
        if condition is not None and not callable(condition):
            raise GraphValidationError(f"edge {source.node_id!r} -> {target.node_id!r}: condition must be callable")
        edge = GraphEdge(source, target, condition)
        self.edges.append(edge)
        target.dependencies.add(source)
        return edge

    def set_entry_point(self, node_id: str) -> GraphBuilder:
        """Start at ``node_id`` (call again for several); default: every node without incoming edges."""
        node = self._node(node_id, "entry")
        if node not in self.entry_points:
            self.entry_points.append(node)
        return self

    def reset_on_revisit(self, enabled: bool = True) -> GraphBuilder:
        """A node run again in one invocation (a loop) starts from its initial state, not its last one."""
        self._reset_on_revisit = enabled
        return self

    def set_max_node_executions(self, max_executions: int) -> GraphBuilder:
        self._max_node_executions = max_executions
        return self

    def set_execution_timeout(self, timeout: float) -> GraphBuilder:
        self._execution_timeout = timeout
        return self

    def set_node_timeout(self, timeout: float) -> GraphBuilder:
        self._node_timeout = timeout
        return self

    def set_graph_id(self, graph_id: str) -> GraphBuilder:
        self._id = graph_id
        return self

    def set_session_manager(self, session_manager: SessionManager) -> GraphBuilder:
        self._session_manager = session_manager
        return self

    def set_hook_providers(self, hooks: Sequence[HookProvider | HookRegistry]) -> GraphBuilder:
        self._hooks = list(hooks)
        return self

    def build(self) -> Graph:
        """Validate and build the graph; errors name the node or edge that is wrong."""
        if not self.nodes:
            raise GraphValidationError("a graph needs at least one node")
        entry = self.entry_points or [n for n in self.nodes.values() if not n.dependencies]
        if not entry:
            raise GraphValidationError("no entry points: every node has incoming edges; call set_entry_point()")
        if self._max_node_executions is None and self._execution_timeout is None and _has_cycle(self.edges):
            warnings.warn("graph has a cycle and neither max_node_executions nor execution_timeout: it may run "
                          "until the runner's step limit", stacklevel=2)
        return Graph(dict(self.nodes), list(self.edges), list(entry), max_node_executions=self._max_node_executions,
                     execution_timeout=self._execution_timeout, node_timeout=self._node_timeout,
                     reset_on_revisit=self._reset_on_revisit, session_manager=self._session_manager,
                     hooks=self._hooks, id=self._id)


def _why_failed(result: NodeResult) -> str:
    """Why a node that did not raise ended FAILED, in its own words where it has them."""
    inner = result.result
    failure = getattr(inner, "failure", None)  # a nested orchestrator's, or a custom node's result
    if failure:
        return str(failure)
    stop_reason = getattr(inner, "stop_reason", None)  # an agent whose call was cancelled by its own hook
    return f"its agent stopped with stop_reason {stop_reason!r}" if stop_reason else "it ended FAILED"


def _in_node_order(items: Iterable[T], nodes: dict[str, GraphNode], key: Callable[[T], tuple[str, ...]]) -> list[T]:
    """``items`` as a list: a list as given; a set (as Strands' builder keeps edges and entry points) put
    in the order of ``nodes``, since a set's order changes from one process to the next, and the machine
    built from it must be the same in every process that resumes the graph."""
    if isinstance(items, list | tuple):
        return list(items)
    position = {node_id: i for i, node_id in enumerate(nodes)}
    return sorted(items, key=lambda item: [position.get(n, len(position)) for n in key(item)])


def _unwrap(progress: Any, node_id: str) -> tuple[Any, bool]:
    """A node's kept progress, and whether the node had started afresh (a ``RestartedNode`` around it)."""
    if RestartedNode.holds(progress):
        return RestartedNode.load(progress, f"what graph node {node_id!r} kept").kept, True
    return progress, False


def _has_cycle(edges: list[GraphEdge]) -> bool:
    return _cyclic(tuple((e.from_node.node_id, e.to_node.node_id) for e in edges))


@lru_cache(maxsize=256)
def _cyclic(pairs: tuple[tuple[str, str], ...]) -> bool:
    """Asked once per shape: a server builds the same graph on every request."""
    import networkx as nx

    graph: nx.DiGraph[str] = nx.DiGraph(pairs)
    return not nx.is_directed_acyclic_graph(graph)


class Graph(Orchestrator):
    """A deterministic orchestration of agents along a directed graph (build it with ``GraphBuilder``)."""

    kind = "graph"
    raises_on_cancel = True

    def __init__(  # noqa: PLR0917 - Strands' Graph(nodes, edges, entry_points, ...) takes these positionally
                 self, nodes: dict[str, GraphNode], edges: Iterable[GraphEdge], entry_points: Iterable[GraphNode],
                 max_node_executions: int | None = None, execution_timeout: float | None = None,
                 node_timeout: float | None = None, reset_on_revisit: bool = False,
                 session_manager: SessionManager | None = None,
                 hooks: Sequence[HookProvider | HookRegistry] | None = None, id: str = DEFAULT_GRAPH_ID,
                 trace_attributes: Mapping[str, Any] | None = None) -> None:
        """Strands' signature, positional arguments included; ``edges`` and ``entry_points`` may be sets, as
        Strands' builder keeps them (put in the nodes' order, so every process builds the same machine)."""
        self.nodes = nodes
        self.edges = _in_node_order(edges, nodes, lambda e: (e.from_node.node_id, e.to_node.node_id))
        self.entry_points = _in_node_order(entry_points, nodes, lambda n: (n.node_id,))
        self.max_node_executions = max_node_executions
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.reset_on_revisit = reset_on_revisit
        self.orchestrated = {n: OrchestratedNode(n, g.executor, machine_node_of(g.executor, f"graph node {n!r}"))
                             for n, g in nodes.items()}
        for graph_node in nodes.values():
            graph_node.attach(self.orchestrated[graph_node.node_id].machine)
        self._incoming = {n: [e for e in self.edges if e.to_node.node_id == n] for n in nodes}
        channels = {"task": ChannelKind.REPLACE, "results": ChannelKind.MERGE, "order": ChannelKind.EXTEND,
                    "nodes": ChannelKind.MERGE, "failure": ChannelKind.REPLACE}
        for node in self.orchestrated.values():
            channels.update({f"{node.node_id}/{c}": ChannelKind.APPEND for c in node.machine.append_channels})
        schema = OrchestrationSchema(channels, {"task": "", "results": {}, "order": [], "nodes": {}, "failure": None})
        self._unshown: list[tuple[str, dict[str, Any]]] = []
        """Node updates shown but not yet applied to what ``.state`` shows (``_show_update``)."""
        self._setup(id=id, machine=self._machine(id, schema), schema=schema, hooks=hooks,
                    session_manager=session_manager, trace_attributes=trace_attributes)
        self._viewed: tuple[dict[str, Any], GraphState] | None = None
        """The last view a condition got, and of which state: a step's routing and the next node's input
        ask about the same state."""

    @property
    def state(self) -> GraphState:
        """The running call, or the last one, as Strands' ``graph.state`` shows it (hooks read it)."""
        return self._view(*self._shown())

    def _show_update(self, node_id: str, update: dict[str, Any]) -> None:
        """Show a node's update when ``.state`` is next read: most are never read before the step that
        applies them shows its whole state, so merging each into the shown state at once cost a state
        copy per node for nothing. The update is not changed after it is shown (the step applies it as is)."""
        self._unshown.append((node_id, update))

    def _shown(self) -> tuple[dict[str, Any], Status]:
        if self._unshown:
            unshown, self._unshown = self._unshown, []
            for node_id, update in unshown:
                super()._show_update(node_id, update)
        return super()._shown()

    def _show(self, state: dict[str, Any], status: Status) -> None:
        self._unshown = []  # a newer state replaces what the updates would have shown
        super()._show(state, status)

    def _view(self, state: dict[str, Any], status: Status | None = None) -> GraphState:
        if status is not None:
            return self._build_view(state, status)
        if self._viewed is None or self._viewed[0] is not state:
            self._viewed = (state, self._build_view(state, Status.FAILED if state.get("failure") else Status.EXECUTING))
        return self._viewed[1]

    def _build_view(self, state: dict[str, Any], status: Status) -> GraphState:
        return graph_state(stored_task(state), status, node_results(state, self.orchestrated),
                           list(state.get("order", ())), nodes=self.nodes, edges=self.edges,
                           entry_points=self.entry_points, clock=self._clock())

    def _machine(self, name: str, schema: OrchestrationSchema) -> Machine:
        specs = [NodeSpec.from_callable(n, self._node_handler(n)) for n in self.orchestrated]
        edges = [Edge(START, e.node_id) for e in self.entry_points]
        routers = []
        for node_id in self.orchestrated:
            out = [e for e in self.edges if e.from_node.node_id == node_id]
            edges.extend(Edge(node_id, e.to_node.node_id) for e in out if e.condition is None)
            conditional = [e for e in out if e.condition is not None]
            if conditional:
                targets = tuple(dict.fromkeys(e.to_node.node_id for e in conditional))
                routers.append(Router(node_id, self._route(conditional), (*targets, END)))
            if not out:
                edges.append(Edge(node_id, END))
        return Machine(specs, edges, routers, name=name, schema=schema.describe(), require_exit=False)

    def _route(self, edges: list[GraphEdge]) -> Callable[[dict[str, Any]], list[str]]:
        def route(state: dict[str, Any]) -> list[str]:
            view, given = self._view(state), self._invocation_state
            return [e.to_node.node_id for e in edges if e.should_traverse(view, invocation_state=given)]

        return route

    async def _run_node(self, node_id: str, state: dict[str, Any], ctx: NodeContext) -> dict[str, Any]:
        run: OrchestrationRun = ctx.runtime
        node = self.orchestrated[node_id]
        shown, started = self.nodes[node_id], time.monotonic()
        kept_before, restarted = _unwrap(ctx.progress, node_id)
        resuming = kept_before is not None
        revisit = self.reset_on_revisit and node_id in state.get("results", {})
        # A node that starts afresh (a revisit, reset_executor_state) does so on resume too: its kept work
        # grew from its initial state, not from the conversation the thread holds for it.
        restart = restarted if resuming else revisit or shown.reset_pending
        sub = node.machine.node_state() if restart else node_state_of(state, node_id, node.machine)
        task = None if resuming else self._node_input(state, node_id)
        shown.show(Status.EXECUTING)

        def keep(kept: Any, stopped: NodeResult) -> Any:  # as Strands shows an interrupted node's result
            shown.show(Status.INTERRUPTED, stopped)
            return RestartedNode.around(kept).stored() if restart else kept

        try:
            done, result = await call_node(node, task, sub, ctx, run, kept=kept_before, timeout=self.node_timeout,
                                           keep=keep)
        except InterruptRaised:
            raise  # the node shows INTERRUPTED (keep)
        except Exception as exc:
            failed = failed_result(exc, started)
            shown.show(Status.FAILED, failed)
            self._show_update(node_id, {"results": {node_id: node.stored_result(failed)}})  # for AfterNodeCallEvent
            raise
        shown.show(result.status, result)
        shown.reset_pending = False
        update = node_update(state, node_id, node.machine, done.state, restart=restart)
        update["results"] = {node_id: node.stored_result(result)}
        update["order"] = [node_id]
        if result.status == Status.FAILED:  # ended without doing its work (a nested limit, a cancel): no successor runs
            update["failure"] = f"node {node_id!r} failed: {_why_failed(result)}"
        self._show_update(node_id, update)
        return update

    def _cancel(self, node_id: str, message: str, run: OrchestrationRun) -> dict[str, Any]:
        """As Strands announces a cancelled Graph node: started, cancelled, stopped FAILED; its result is
        the ``NodeCancelledError`` the call then raises."""
        node = self.orchestrated[node_id]
        run.event({"type": "multiagent_node_start", "node_id": node_id, "node_type": node.node_type})
        run.event({"type": "multiagent_node_cancel", "node_id": node_id, "message": message})
        failed = failed_result(NodeCancelledError(message, node_id=node_id), time.monotonic())
        run.event({"type": "multiagent_node_stop", "node_id": node_id, "node_result": failed})
        self.nodes[node_id].show(Status.FAILED, failed)
        return {"results": {node_id: node.stored_result(failed)}}

    def _limit(self, state: dict[str, Any], run: OrchestrationRun) -> str | None:
        if self.max_node_executions is not None and len(state.get("order", ())) >= self.max_node_executions:
            return f"Max node executions reached: {self.max_node_executions}"
        if self.execution_timeout is not None and time.monotonic() - run.started > self.execution_timeout:
            return f"Execution timed out: {self.execution_timeout}s"
        return None

    def _node_input(self, state: dict[str, Any], node_id: str) -> list[dict[str, Any]]:
        """The task, with the outputs of the node's finished predecessors whose edges hold (Strands' text)."""
        task, stored = stored_task(state), state.get("results", {})
        view: GraphState | None = None  # built only for a condition to read
        done: dict[str, NodeResult] = {}
        for edge in self._incoming[node_id]:
            source = edge.from_node.node_id
            if source not in stored:
                continue
            result = self.orchestrated[source].load_result(stored[source])
            if result.status != Status.COMPLETED:
                continue
            if edge.condition is not None:
                view = view or self._view(state)
                if not edge.should_traverse(view, invocation_state=self._invocation_state):
                    continue
            done[source] = result
        if not done:
            return [{"text": task}] if isinstance(task, str) else list(task or [])
        blocks: list[dict[str, Any]] = ([{"text": f"Original Task: {task}"}] if isinstance(task, str)
                                        else [{"text": "Original Task:"}, *(task or [])])
        blocks.append({"text": "\nInputs from previous nodes:"})
        for dep_id, result in done.items():
            blocks.append({"text": f"\nFrom {dep_id}:"})
            outputs = result.get_agent_results() or [result.result]
            blocks.extend({"text": f"  - Agent: {output}"} for output in outputs)
        return blocks

    # -- Orchestrator ---------------------------------------------------------------------------------

    def _begin(self, state: dict[str, Any], task: Any) -> dict[str, Any]:
        for node in self.nodes.values():  # a new task: no node has run in it yet
            node.show(Status.PENDING)
        return {**state, "task": task_channel(task), "results": {}, "order": [], "failure": None}

    def _entry(self, state: dict[str, Any]) -> list[str]:
        return [n.node_id for n in self.entry_points]

    async def _after_step(self, run: OrchestrationRun, state: dict[str, Any], writes: Writes,
                          pending: list[str]) -> None:
        ran = [node for node, _ in writes]
        if ran and pending:
            run.event({"type": "multiagent_handoff", "from_node_ids": ran, "to_node_ids": list(pending)})

    def _shown_nodes(self, state: dict[str, Any], interrupted: list[str]) -> None:
        """Each ``GraphNode`` as the thread says: nodes another process ran too."""
        results, waiting = node_results(state, self.orchestrated), {n.split("/")[0] for n in interrupted}
        for node_id, node in self.nodes.items():
            if node_id in results:
                node.show(results[node_id].status, results[node_id])
            elif node_id in waiting:
                node.show(Status.INTERRUPTED, node.result if node.execution_status == Status.INTERRUPTED else None)
            else:
                node.show(Status.PENDING)

    def _snapshot(self, state: dict[str, Any], interrupted: list[str]) -> dict[str, Any]:
        results = node_results(state, self.orchestrated)
        return {"completed_nodes": [n for n, r in results.items() if r.status == Status.COMPLETED],
                "failed_nodes": [n for n, r in results.items() if r.status == Status.FAILED],
                "interrupted_nodes": list(dict.fromkeys(interrupted)), "execution_order": list(state.get("order", ()))}

    def _result(self, base: MultiAgentResult, state: dict[str, Any]) -> GraphResult:
        statuses = [r.status for r in base.results.values()]
        interrupted = {i.node.split("/")[0] for i in base.interrupts}
        return GraphResult(
            **vars(base),
            total_nodes=len(self.orchestrated),
            completed_nodes=statuses.count(Status.COMPLETED),
            failed_nodes=statuses.count(Status.FAILED),
            interrupted_nodes=len(interrupted),
            execution_order=[self.nodes[n] for n in state.get("order", ())],
            edges=[(e.from_node, e.to_node) for e in self.edges],
            entry_points=list(self.entry_points),
        )

    def as_node(self) -> OrchestratorNode:
        """This orchestration as a node of another (a Swarm inside a Graph): ``statehitl.nesting``."""
        return OrchestratorNode(self)

    def __repr__(self) -> str:
        return f"Graph(id={self.id!r}, nodes={list(self.orchestrated)})"
