"""A compiled StateGraph as LangChain's drawable ``Graph`` (what LangGraph's ``get_graph()`` returns), when
``langchain-core`` is installed: ``draw_mermaid()``, ``draw_ascii()``, ``draw_mermaid_png()``, ``to_json()``,
``nodes`` and ``edges``, as LangGraph users read them.

Nodes are ``__start__``, the graph's nodes in the order they were added, and ``__end__``; edges go where the
machine's transitions go, sorted by source and target as LangGraph lists them, conditional (a router, a
``Command(goto=)`` destination, a Send) or not (an edge, a waiting edge), a router's path-map key as the
edge's label, and a node a run can reach with no way out leading to ``__end__``; the plain edges into ``__end__``
(a finish point's, or a dead end's) come last, by source, as LangGraph draws them. ``xray=True`` (or a depth)
draws a subgraph node as its own nodes, named ``node:inner`` and listed after the graph's own, its edges after
the graph's. A node's metadata is ``add_node(metadata=)``'s, with ``defer`` and ``__interrupt`` (``before``,
``after``) as LangGraph marks them; what a node holds (``to_json()``'s ``data``) is ``drawn_nodes``' job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from statehitl.machine import END, START, Machine

if TYPE_CHECKING:
    from langchain_core.runnables.graph import Graph


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    source: str
    target: str
    label: str | None = None
    conditional: bool = False


@dataclass(slots=True)
class Drawing:
    """The nodes (id -> what is there: a function, a graph, the ``__start__`` node; None for END), edges and
    node metadata of a drawn graph."""

    nodes: dict[str, Any] = field(default_factory=dict)
    edges: list[DrawnEdge] = field(default_factory=list)
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)


def drawing(machine: Machine, actions: Mapping[str, Any], subgraphs: Callable[[str, int], Drawing | None],
            xray: int, *, metadata: Mapping[str, dict[str, Any]] | None = None) -> Drawing:
    """``machine`` drawn: ``actions`` are what is at its nodes (``__start__``'s node object, then functions or
    graphs, error handlers among them), in the order to list them; ``subgraphs(node, depth)`` the drawing (its
    own subgraphs ``depth`` levels deep) of a node that runs a compiled graph, drawn in place when ``xray`` is
    above 0; ``metadata`` each node's, as drawn."""
    names = [name for name in actions if name != START] or list(machine.nodes)
    drawn = Drawing({START: actions.get(START), **{name: actions.get(name) for name in names}, END: None},
                    metadata={name: dict(given) for name, given in (metadata or {}).items() if given})
    graph = _drawable(machine)
    drawn.edges, endings = _edges(machine, graph)
    if not endings and (not graph.has_node(END) or graph.in_degree(END) == 0):
        last = _last_step_source(graph)
        if last is not None:  # a loop with no way out drawn: LangGraph ends it at its last step's one node
            drawn.edges.append(DrawnEdge(last, END, None, True))
    if xray > 0:
        for name in list(machine.nodes):
            inner = subgraphs(name, xray - 1)
            if inner is not None:
                _expand(drawn, name, inner)
    return drawn


def _drawable(machine: Machine) -> nx.DiGraph[str]:
    """The transitions LangGraph draws: the machine's, less a waiting edge into ``__end__`` (LangGraph builds
    nothing for one), a plain edge into ``__end__`` (LangGraph builds nothing for one either: it draws
    ``__end__`` after the reached nodes nothing leads on from, ``_edges``' endings), and the edges of a router
    whose destinations are not known (no path map, no ``Literal`` return type), which LangGraph cannot see, so
    its node is drawn as where the graph ends."""
    known = {(router.source, target) for router in machine.routers for target in router.targets or ()}
    unknown = {router.source for router in machine.routers if router.targets is None}
    graph = machine.graph.copy()
    kinds: dict[tuple[str, str], str] = {
        (source, target): data["kind"] for source, target, data in graph.edges(data=True)}
    graph.remove_edges_from([
        (source, target) for (source, target), kind in kinds.items()
        if (target == END and kind == "join") or (kind == "route" and source in unknown
                                                  and (source, target) not in known)])
    for source in list(graph.predecessors(END)) if graph.has_node(END) else []:
        if kinds[(source, END)] != "edge":
            continue
        if (source, END) in known:
            graph.edges[source, END]["kind"] = "route"
        else:
            graph.remove_edge(source, END)
    return graph


def _edges(machine: Machine, graph: nx.DiGraph[str]) -> tuple[list[DrawnEdge], list[DrawnEdge]]:
    """The drawn edges of ``graph`` (``_drawable``), in LangGraph's order, and among them the plain ones into
    ``__end__`` (a finish point's, a dead end's: a node with no way out, unless a deferred node runs after it)."""
    labels = _labels(machine)
    implicit = _deferred_edges(graph, machine.deferred) if machine.deferred else set()
    leads_on = {source for source, _ in implicit}
    edges = [DrawnEdge(source, target, None, True) for source, target in implicit]
    reached = nx.descendants(graph, START) if graph.has_node(START) else set(machine.nodes)
    endings = [DrawnEdge(name, END) for name in machine.nodes
               if graph.out_degree(name) == 0 and name not in leads_on and name in reached]
    for source, target, data in graph.edges(data=True):
        conditional = data.get("kind") not in ("edge", "join")
        edge = DrawnEdge(source, target, labels.get((source, target)), conditional)
        (endings if target == END and not conditional else edges).append(edge)
    edges.sort(key=lambda e: (e.source, e.target))
    return edges + sorted(endings, key=lambda e: e.source), endings


def _deferred_edges(graph: nx.DiGraph[str], deferred: frozenset[str]) -> set[tuple[str, str]]:
    """Where a deferred node (``add_node(defer=True)``) runs after nodes that lead nowhere near it, as LangGraph
    draws it: from each node of the step before it, a conditional edge (its walk of the graph, every path taken
    at once, finds no edge from that step that triggered it)."""
    step = {n for n in graph.successors(START) if n != END} if graph.has_node(START) else set()
    held: set[str] = set()
    found: set[tuple[str, str]] = set()
    seen: set[tuple[frozenset[str], frozenset[str]]] = set()
    while step and (frozenset(step), frozenset(held)) not in seen:
        seen.add((frozenset(step), frozenset(held)))
        following = {n for node in step for n in graph.successors(node) if n != END}
        held |= following & deferred
        following -= deferred
        if not following and held:  # nothing else left to run: the deferred nodes' turn
            following, held = held, set()
            found |= {(source, target) for target in following for source in step if not graph.has_edge(source, target)}
        step = following
    return found


_DRAWN_STEPS = 250
"""How many steps LangGraph's drawing walks a graph for (its ``draw_graph`` limit)."""


def _last_step_source(graph: nx.DiGraph[str]) -> str | None:
    """The one node the last of ``_DRAWN_STEPS`` steps runs, every path taken at once, as LangGraph walks a graph
    to draw it (None if that step runs several): where it draws a way out of a graph that shows none."""
    step = {n for n in graph.successors(START) if n != END} if graph.has_node(START) else set()
    for _ in range(_DRAWN_STEPS - 1):
        following = {n for node in step for n in graph.successors(node) if n != END}
        if not following:
            break
        step = following
    return next(iter(step)) if len(step) == 1 else None


def _labels(machine: Machine) -> dict[tuple[str, str], str]:
    """A router's path-map keys as the labels of its edges, where a key is not its target's name, and the
    labels ``add_node(destinations={node: label})`` gave."""
    labels: dict[tuple[str, str], str] = {
        (source, target): label for source, given in machine.destination_labels.items()
        for target, label in given.items()}
    for router in machine.routers:
        for key, target in (router.path_map or {}).items():
            if str(key) != target:
                labels[router.source, target] = str(key)
    return labels


def _ends(drawn: Drawing, *, first: bool, exclude: tuple[str, ...] = ()) -> str | None:
    """The one node no edge leads into (``first``; else the one no edge leaves), not counting ``exclude``d
    nodes and their edges; None when there is none, or several (LangChain's rule)."""
    ends = {e.target if first else e.source for e in drawn.edges if (e.source if first else e.target) not in exclude}
    found = [name for name in drawn.nodes if name not in exclude and name not in ends]
    return found[0] if len(found) == 1 else None


def _trim(drawn: Drawing, name: str) -> None:
    drawn.nodes.pop(name)
    drawn.edges = [e for e in drawn.edges if name not in (e.source, e.target)]


def _trimmed(inner: Drawing) -> tuple[str, str] | None:
    """Where a subgraph drawn in place starts and ends, as LangGraph (LangChain's ``Graph``) trims it: its
    ``__start__`` is left out when it has one edge and another node is then where it starts, its ``__end__``
    likewise; None when it has no single start and end (it is then drawn as one node)."""
    if len(inner.nodes) <= 1 or _ends(inner, first=True) is None or _ends(inner, first=False) is None:
        return None
    for first in (True, False):
        end = _ends(inner, first=first)
        edges = {e for e in inner.edges if (e.source if first else e.target) == end}
        if end is not None and _ends(inner, first=first, exclude=(end,)) is not None and len(edges) == 1:
            _trim(inner, end)
    start, finish = _ends(inner, first=True), _ends(inner, first=False)
    return None if start is None or finish is None else (start, finish)


def _expand(drawn: Drawing, node: str, inner: Drawing) -> None:
    """Draw ``node`` as ``inner``'s nodes (``node:name``, its own ``__start__`` and ``__end__`` among them unless
    trimmed, as LangGraph draws them): the edges into it go to where ``inner`` starts, the edges out of it leave
    from where it ends."""
    ends = _trimmed(inner)
    if ends is None:
        return
    start, finish = ends
    drawn.nodes.pop(node)
    drawn.metadata.pop(node, None)
    drawn.nodes.update((f"{node}:{name}", action) for name, action in inner.nodes.items())
    drawn.metadata.update((f"{node}:{name}", given) for name, given in inner.metadata.items() if name in inner.nodes)

    def rewired(edge: DrawnEdge) -> DrawnEdge:
        source = f"{node}:{finish}" if edge.source == node else edge.source
        target = f"{node}:{start}" if edge.target == node else edge.target
        return DrawnEdge(source, target, edge.label, edge.conditional)

    drawn.edges = [rewired(edge) for edge in drawn.edges]
    drawn.edges.extend(DrawnEdge(f"{node}:{e.source}", f"{node}:{e.target}", e.label, e.conditional)
                       for e in inner.edges)


def langchain_graph(drawn: Drawing) -> Graph:
    """``drawn`` as LangChain's ``Graph``, each node holding what ``statehitl.graph.drawn_nodes`` draws there."""
    from langchain_core.runnables.graph import Graph

    from statehitl.graph.drawn_nodes import drawn_node

    graph = Graph()
    for name, action in drawn.nodes.items():
        graph.add_node(drawn_node(name, action), name, metadata=drawn.metadata.get(name))
    for edge in drawn.edges:
        graph.add_edge(graph.nodes[edge.source], graph.nodes[edge.target], edge.label, edge.conditional)
    return graph


def workflow_graph(name: str, function: Any) -> Graph:
    """An ``@entrypoint`` workflow drawn as LangGraph draws one: its one node (the function), then ``__start__``
    (where no node runs, so it holds nothing) and ``__end__``, the way out conditional (its walk finds the last
    step's one node and no edge out of it)."""
    from langchain_core.runnables.graph import Graph

    from statehitl.graph.drawn_nodes import drawn_node

    graph = Graph()
    graph.add_node(drawn_node(name, function), name)
    graph.add_node(None, START)
    graph.add_node(None, END)
    graph.add_edge(graph.nodes[START], graph.nodes[name])
    graph.add_edge(graph.nodes[name], graph.nodes[END], conditional=True)
    return graph
