"""The machine: named handlers as nodes of a ``networkx.DiGraph``, transitions as its edges.

StateGraph, Agent, Graph and Swarm all compile to a ``Machine``. Building one validates its shape
(unknown targets, unreachable nodes, dead ends, reserved names) so mistakes surface at ``compile()``
rather than halfway through a run that a human is waiting on. The graph serves validation, drawing
and inspection; the runner uses the precomputed per-node transition lists, which are cheaper than
asking networkx on every step. A machine whose structure was validated before in this process (an
app built per request) builds its graph only when something asks for it.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar

from statehitl.commands import Send
from statehitl.errors import GraphValidationError
from statehitl.routers import Router

if TYPE_CHECKING:
    import networkx as nx


T = TypeVar("T")

START = "__start__"
END = "__end__"
RESERVED = frozenset({START, END})


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """A named handler. ``takes_context`` is read from its signature once, at build time."""

    name: str
    handler: Callable[..., Any]
    is_async: bool
    takes_context: bool

    @classmethod
    def from_callable(cls, name: str, handler: Callable[..., Any]) -> NodeSpec:
        if not callable(handler):
            raise GraphValidationError(f"node {name!r}: handler must be callable, got {handler!r}")
        return cls(name, handler, _is_async(handler), _positional_arity(handler) >= 2)


@dataclass(frozen=True, slots=True)
class Edge:
    """A transition ``source -> target``, taken when ``condition(state)`` is true (or always)."""

    source: str
    target: str
    condition: Callable[[Any], bool] | None = None


@dataclass(frozen=True, slots=True)
class Join:
    """A waiting edge: ``target`` runs once every one of ``sources`` has finished since it last ran
    (LangGraph's ``add_edge([a, b], c)``), whichever steps they finished in."""

    sources: tuple[str, ...]
    target: str

    @property
    def key(self) -> str:
        """How the scheduler names this join's progress in a checkpoint."""
        return f"{'+'.join(self.sources)}>{self.target}"


_KNOWN_STRUCTURES: dict[tuple[Any, ...], dict[str, frozenset[str]]] = {}
"""Node names and labelled edges of machines already validated, with their blockers: an app rebuilt
per request (or per resume) skips the graph searches its structure needs."""
_KNOWN_STRUCTURES_MAX = 256


def _fingerprint(shape: dict[str, Any]) -> str:
    parts = [*shape["nodes"], *shape["edges"], shape["schema"]]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


class Machine:
    """A validated, immutable graph of nodes and transitions."""

    def __init__(
        self,
        nodes: Iterable[NodeSpec],
        edges: Iterable[Edge] = (),
        routers: Iterable[Router] = (),
        *,
        name: str = "machine",
        schema: str = "",
        require_exit: bool = True,
        supersteps: bool = False,
        joins: Iterable[Join] = (),
        destinations: Mapping[str, Sequence[str]] | None = None,
        deferred: Iterable[str] = (),
    ) -> None:
        """``require_exit=False`` lets nodes have no path to END: an orchestrator whose loops end by
        its own limits (a Graph's ``max_node_executions``), as Strands' graphs may.

        ``supersteps=True`` is LangGraph's execution model (``statehitl.supersteps``): every pending
        node runs in the step, a node without a way out ends its branch, nodes may be reached only by
        ``Send`` or ``Command(goto=)``, and ``joins`` are waiting edges. Otherwise a node waits for the
        pending nodes that can still reach it (the multi-agent Graph's rule). ``destinations``: where a
        node's ``Command(goto=)`` may go, drawn and validated like a router's targets; ``deferred`` nodes
        run only once nothing else is left to run (LangGraph's ``defer=True``)."""
        self.name = name
        self.supersteps = supersteps
        self.joins: tuple[Join, ...] = tuple(joins)
        self.destinations = {n: tuple(targets) for n, targets in (destinations or {}).items()}
        self.deferred = frozenset(deferred)
        self._require_exit = require_exit and not supersteps
        self.nodes: dict[str, NodeSpec] = {}
        for spec in nodes:
            if spec.name in RESERVED:
                raise GraphValidationError(f"node name {spec.name!r} is reserved; pick another name")
            if spec.name in self.nodes:
                raise GraphValidationError(f"duplicate node name {spec.name!r}; node names must be unique")
            self.nodes[spec.name] = spec
        self.edges: tuple[Edge, ...] = tuple(edges)
        self.routers: tuple[Router, ...] = tuple(routers)
        self.awaits = any(r.awaits for r in self.routers)  # an async path function: routes awaited (atargets)
        self._schema = schema
        self._check_references()
        self.joins_from = _by_node(self.nodes, ((s, j) for j in self.joins for s in dict.fromkeys(j.sources)))
        self._edge_kinds = self._kinds()
        out_edges = _by_node((START, *self.nodes), ((e.source, e) for e in self.edges))
        out_routers = _by_node((START, *self.nodes), ((r.source, r) for r in self.routers))
        self.transitions: dict[str, tuple[tuple[Edge, ...], tuple[Router, ...]]] = {
            n: (out_edges[n], out_routers[n]) for n in (START, *self.nodes)
        }
        self.fixed_next: dict[str, tuple[str, ...]] = {} if self.deferred else {
            n: _sorted_targets(out_edges[n]) for n in self.nodes
            if not out_routers[n] and not self.joins_from[n] and all(e.condition is None for e in out_edges[n])
        }
        """Where a node always goes when it alone finished a superstep (no router, waiting edge, condition or
        deferred node to ask): a chain's next task, known without planning."""
        self._shape = shape = {
            "nodes": sorted(self.nodes),
            "edges": sorted(f"{u} -> {v} ({kind})" for (u, v), kind in self._edge_kinds.items()),
            "schema": self._schema,
        }
        structure = (tuple(shape["nodes"]), tuple(shape["edges"]), require_exit, supersteps)
        blockers = _KNOWN_STRUCTURES.get(structure)
        if blockers is None:
            self._check_shape()
            blockers = {n: frozenset() for n in self.nodes} if supersteps else self._compute_blockers()
            if len(_KNOWN_STRUCTURES) >= _KNOWN_STRUCTURES_MAX:
                _KNOWN_STRUCTURES.pop(next(iter(_KNOWN_STRUCTURES)))
            _KNOWN_STRUCTURES[structure] = blockers
        self.blockers = blockers
        self.fingerprint = _fingerprint(shape)

    # -- validation -------------------------------------------------------------------------------

    def _known(self, name: str) -> bool:
        return name in self.nodes or name in RESERVED

    def _check_references(self) -> None:
        self._check_edge_ends()
        self._check_branch_targets()

    def _check_edge_ends(self) -> None:
        """Every edge and join starts and ends at a node (or START/END, where something may leave or enter)."""
        for edge in self.edges:
            for end, role in ((edge.source, "source"), (edge.target, "target")):
                if not self._known(end):
                    raise GraphValidationError(
                        f"edge {edge.source!r} -> {edge.target!r}: {role} {end!r} is not a node "
                        f"(known nodes: {sorted(self.nodes)})"
                    )
            if edge.source == END:
                raise GraphValidationError(f"edge {END!r} -> {edge.target!r}: nothing can leave END")
            if edge.target == START:
                raise GraphValidationError(f"edge {edge.source!r} -> {START!r}: nothing can enter START")
        for join in self.joins:
            for end in join.sources:
                if end not in self.nodes:
                    raise GraphValidationError(
                        f"edge {list(join.sources)} -> {join.target!r}: {end!r} is not a node that can finish "
                        f"(known nodes: {sorted(self.nodes)})"
                    )
            if join.target not in self.nodes and join.target != END:
                raise GraphValidationError(
                    f"edge {list(join.sources)} -> {join.target!r}: {join.target!r} is not a node "
                    f"(known nodes: {sorted(self.nodes)})"
                )

    def _check_branch_targets(self) -> None:
        """Every node a node says it may go to, and every router's source and declared targets, is a node."""
        for node, targets in self.destinations.items():
            for target in targets:
                if not self._known(target) or target == START:
                    raise GraphValidationError(
                        f"node {node!r} may go to {target!r} (its destinations), which is not a node "
                        f"(known nodes: {sorted(self.nodes)})"
                    )
        for router in self.routers:
            if not self._known(router.source) or router.source == END:
                raise GraphValidationError(f"conditional edges from unknown node {router.source!r}")
            for target in router.targets or ():
                if not self._known(target) or target == START:
                    raise GraphValidationError(
                        f"conditional edge {router.source!r} -> {target!r}: {target!r} is not a node "
                        f"(known nodes: {sorted(self.nodes)})"
                    )

    def _kinds(self) -> dict[tuple[str, str], str]:
        """Each transition ``(source, target)`` and its kind: ``edge``, ``conditional`` or ``route``.

        A later edge between the same nodes decides the kind; a router adds only transitions that no
        edge makes (what a ``networkx.DiGraph`` built from them in this order holds).
        """
        kinds: dict[tuple[str, str], str] = {}
        for edge in self.edges:
            kinds[edge.source, edge.target] = "conditional" if edge.condition else "edge"
        for join in self.joins:
            for source in join.sources:
                kinds.setdefault((source, join.target), "join")
        for node, goto in self.destinations.items():
            for target in goto:
                kinds.setdefault((node, target), "goto")
        for router in self.routers:
            targets = router.targets if router.targets is not None else (*self.nodes, END)
            for target in targets:
                kinds.setdefault((router.source, target), "route")
        return kinds

    @functools.cached_property
    def graph(self) -> nx.DiGraph[str]:
        """The machine as a ``networkx.DiGraph``: START, END and the nodes (each with its ``spec``),
        every transition an edge with its ``kind``."""
        import networkx as nx

        graph: nx.DiGraph[str] = nx.DiGraph(name=self.name)
        graph.add_node(START)
        graph.add_node(END)
        for spec in self.nodes.values():
            graph.add_node(spec.name, spec=spec)
        for (source, target), kind in self._edge_kinds.items():
            graph.add_edge(source, target, kind=kind)
        return graph

    def _successors(self) -> dict[str, list[str]]:
        """Each node's successors (START and END included), in the order ``graph`` adds its edges: the
        validation's searches walk these plain lists, so compiling a graph never imports networkx."""
        successors: dict[str, list[str]] = {n: [] for n in (START, *self.nodes, END)}
        for source, target in self._edge_kinds:
            successors[source].append(target)
        return successors

    def _check_shape(self) -> None:
        if not self.nodes:
            raise GraphValidationError(f"machine {self.name!r} has no nodes")
        successors = self._successors()
        if not successors[START]:
            raise GraphValidationError(
                f"machine {self.name!r} has no entry: add an edge from START to the first node"
            )
        if self.supersteps:
            return  # Send and Command(goto=) reach nodes no edge names; a node without a way out ends its branch
        reachable = _reached(START, successors)
        unreachable = [n for n in self.nodes if n not in reachable]
        if unreachable:
            raise GraphValidationError(
                f"node(s) {unreachable} cannot be reached from START; add an edge into them or remove them"
            )
        predecessors: dict[str, list[str]] = {n: [] for n in successors}
        for source, targets in successors.items():
            for target in targets:
                predecessors[target].append(source)
        finishing = _reached(END, predecessors)
        stuck = [n for n in self.nodes if n not in finishing]
        if stuck and self._require_exit:
            raise GraphValidationError(
                f"node(s) {stuck} have no path to END; add an edge out of them (e.g. to END)"
            )

    def _compute_blockers(self) -> dict[str, frozenset[str]]:
        """For each node, the nodes that must finish before it runs when both are pending.

        A node waits for a pending node that can reach it without going round a loop: reachability
        in the graph minus its back edges (found depth-first from START). That is "waits for all of
        its active predecessors", also for a join inside a loop; and since what is left is acyclic,
        some pending node can always run.
        """
        successors = self._successors()
        back: set[tuple[str, str]] = set()
        on_path, seen = {START}, {START}
        stack = [(START, iter(successors[START]))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if child in on_path:
                    back.add((node, child))
                elif child not in seen:
                    on_path.add(child)
                    seen.add(child)
                    stack.append((child, iter(successors[child])))
                    break
            else:
                on_path.discard(node)
                stack.pop()
        forward = {n: [t for t in targets if (n, t) not in back] for n, targets in successors.items()}
        reach = {n: _reached(n, forward) for n in self.nodes}
        return {n: frozenset(m for m in self.nodes if m != n and n in reach[m]) for n in self.nodes}

    def shape(self) -> dict[str, Any]:
        """What the fingerprint covers, as data: stored so a changed machine can be described later."""
        return {"nodes": list(self._shape["nodes"]), "edges": list(self._shape["edges"]), "schema": self._schema}

    # -- running ----------------------------------------------------------------------------------

    def task_node(self, task: str) -> str:
        """The node a pending task runs: the task itself, or for a ``Send``'s task (``node:index``) its node."""
        return task if task in self.nodes else task.rpartition(":")[0]

    def next_nodes(self, node: str, state: Any) -> list[str]:
        """Where the machine goes after ``node`` finished, given the state after the step."""
        return self.targets(node, state)  # type: ignore[return-value]  # Sends are refused outside supersteps

    def targets(self, node: str, state: Any) -> list[str | Send]:
        """Where ``node``'s transitions go given ``state``: node names (END included) and Sends."""
        edges, routers = self.transitions[node]
        out: list[str | Send] = [e.target for e in edges if e.condition is None or e.condition(state)]
        for router in routers:
            out.extend(self._chosen(node, router.resolve(state)))
        return out

    async def atargets(self, node: str, state: Any) -> list[str | Send]:
        """``targets``, with the routers that are coroutine functions awaited (a StateGraph's async path)."""
        edges, routers = self.transitions[node]
        out: list[str | Send] = [e.target for e in edges if e.condition is None or e.condition(state)]
        for router in routers:
            chosen = router.route(state)
            if inspect.isawaitable(chosen):
                chosen = await chosen
            out.extend(self._chosen(node, router.names(chosen)))
        return out

    def _chosen(self, node: str, targets: list[str | Send]) -> list[str | Send]:
        """A router's targets, each checked to be a node of this machine (a Send only where steps take it)."""
        for target in targets:
            if isinstance(target, Send) and not self.supersteps:
                raise GraphValidationError(f"the router after {node!r} returned {target!r}; a Send "
                                           "needs a machine that runs supersteps (a StateGraph)")
            name = target.node if isinstance(target, Send) else target
            if not self._known(name) or name == START or (isinstance(target, Send) and name == END):
                raise GraphValidationError(
                    f"the router after {node!r} chose {target!r}, which is not a node "
                    f"(known nodes: {sorted(self.nodes)})"
                )
        return targets

    # -- drawing ----------------------------------------------------------------------------------

    def draw_mermaid(self) -> str:
        """A Mermaid flowchart: solid arrows always fire, dotted ones depend on a condition."""
        ids = {START: "__start__", END: "__end__"}
        lines = ["flowchart TD", "    __start__([START])"]
        for i, name in enumerate(self.nodes):
            ids[name] = f"n{i}"
            lines.append(f'    n{i}["{_mermaid_label(name)}"]')
        lines.append("    __end__([END])")
        for source, target, data in self.graph.edges(data=True):
            arrow = "-->" if data["kind"] == "edge" else "-.->"
            lines.append(f"    {ids[source]} {arrow} {ids[target]}")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"Machine({self.name!r}, nodes={list(self.nodes)})"


def _reached(start: str, edges: Mapping[str, Sequence[str]]) -> set[str]:
    """The nodes reachable from ``start`` along ``edges`` (not ``start`` itself, unless a loop returns to it)."""
    found: set[str] = set()
    todo = list(edges[start])
    while todo:
        node = todo.pop()
        if node not in found:
            found.add(node)
            todo.extend(edges[node])
    return found


def _by_node(names: Iterable[str], pairs: Iterable[tuple[str, T]]) -> dict[str, tuple[T, ...]]:
    """``pairs`` grouped by their node, in order, with an empty group for every name: one pass, so building a
    machine stays linear in its nodes and edges."""
    grouped: dict[str, list[T]] = {n: [] for n in names}
    for name, item in pairs:
        if name in grouped:
            grouped[name].append(item)
    return {n: tuple(items) for n, items in grouped.items()}


def _sorted_targets(edges: tuple[Edge, ...]) -> tuple[str, ...]:
    """The nodes ``edges`` lead to (END left out), in the scheduler's order: as they are for one, sorted for more."""
    targets = [e.target for e in edges if e.target != END]
    return tuple(targets) if len(targets) < 2 else tuple(sorted(set(targets)))


def describe_change(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    """A sentence saying how machine shape ``new`` differs from ``old`` (None: old shape unknown)."""
    if old is None:
        return "the earlier version's shape was not recorded, so what changed is unknown"
    changes = []
    for part in ("nodes", "edges"):
        added = sorted(set(new[part]) - set(old[part]))
        removed = sorted(set(old[part]) - set(new[part]))
        if added:
            changes.append(f"{part} added: {added}")
        if removed:
            changes.append(f"{part} removed: {removed}")
    if old["schema"] != new["schema"]:
        changes.append(f"state schema changed from {old['schema']!r} to {new['schema']!r}")
    return "; ".join(changes) or "no visible difference"


def _mermaid_label(name: str) -> str:
    return name.replace('"', "#quot;")


def _is_async(handler: Callable[..., Any]) -> bool:
    if _plain(handler):
        return bool(handler.__code__.co_flags & inspect.CO_COROUTINE)
    target = getattr(handler, "__call__", None) if not inspect.isroutine(handler) else handler  # noqa: B004
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(target)


def _plain(handler: Callable[..., Any]) -> TypeGuard[FunctionType]:
    """A ``def`` function that no decorator wraps: its code object alone says how it is called.

    Graphs built per request (a server compiling its graph in each handler) add nodes often;
    ``inspect.signature`` would cost more than the rest of ``add_node``.
    """
    return type(handler) is FunctionType and not any(
        hasattr(handler, mark) for mark in ("__wrapped__", "__signature__", "_is_coroutine_marker")
    )


def _positional_arity(handler: Callable[..., Any]) -> int:
    if _plain(handler):
        code = handler.__code__
        return 2 if code.co_flags & inspect.CO_VARARGS else code.co_argcount
    try:
        params = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(1 for p in params if p.kind in kinds)
