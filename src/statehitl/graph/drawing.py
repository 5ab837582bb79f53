"""A compiled StateGraph as LangChain's drawable ``Graph`` (what LangGraph's ``get_graph()`` returns), when
``langchain-core`` is installed: ``draw_mermaid()``, ``draw_ascii()``, ``draw_mermaid_png()``, ``to_json()``,
``nodes`` and ``edges``, as LangGraph users read them.

Nodes are ``__start__``, the graph's nodes in the order they were added, and ``__end__``; edges go where the
machine's transitions go, sorted by source and target as LangGraph lists them, conditional (a router, a
``Command(goto=)`` destination, a Send) or not (an edge, a waiting edge), a router's path-map key as the
edge's label, and a node with no way out leading to ``__end__``. ``xray=True`` (or a depth) draws a subgraph
node as its own nodes, named ``node:inner``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    """The nodes (id -> what runs there, None for START/END) and edges of a drawn graph."""

    nodes: dict[str, Any] = field(default_factory=dict)
    edges: list[DrawnEdge] = field(default_factory=list)


def drawing(machine: Machine, actions: Mapping[str, Any], subgraphs: Callable[[str], Machine | None],
            xray: int) -> Drawing:
    """``machine`` drawn: ``actions`` are what runs at its nodes (functions or graphs, error handlers among
    them), in the order to list them; ``subgraphs(node)`` the machine of a node that runs a compiled graph,
    drawn in place when ``xray`` is above 0."""
    names = list(actions) or list(machine.nodes)
    drawn = Drawing({START: None, **{name: actions.get(name) for name in names}, END: None})
    labels = _labels(machine)
    graph = machine.graph
    for source, target, data in graph.edges(data=True):
        conditional = data.get("kind") not in ("edge", "join")
        drawn.edges.append(DrawnEdge(source, target, labels.get((source, target)), conditional))
    drawn.edges.sort(key=lambda e: (e.source, e.target))
    drawn.edges.extend(DrawnEdge(name, END) for name in machine.nodes if graph.out_degree(name) == 0)
    if xray > 0:
        for name in list(machine.nodes):
            inner = subgraphs(name)
            if inner is not None:
                _expand(drawn, name, drawing(inner, {}, lambda _: None, xray - 1))
    return drawn


def _labels(machine: Machine) -> dict[tuple[str, str], str]:
    """A router's path-map keys as the labels of its edges, where a key is not its target's name."""
    labels: dict[tuple[str, str], str] = {}
    for router in machine.routers:
        for key, target in (router.path_map or {}).items():
            if str(key) != target:
                labels[router.source, target] = str(key)
    return labels


def _expand(drawn: Drawing, node: str, inner: Drawing) -> None:
    """Draw ``node`` as ``inner``'s nodes (``node:name``): the edges into it go to where ``inner`` starts, the
    edges out of it leave from where ``inner`` ends."""
    firsts = [e.target for e in inner.edges if e.source == START and e.target != END]
    lasts = [e.source for e in inner.edges if e.target == END and e.source != START]
    nodes = list(drawn.nodes.items())
    at = [name for name, _ in nodes].index(node)
    inside = [(f"{node}:{name}", action) for name, action in inner.nodes.items() if name not in (START, END)]
    drawn.nodes = dict(nodes[:at] + inside + nodes[at + 1:])
    edges: list[DrawnEdge] = []
    for edge in drawn.edges:
        if edge.target == node:
            edges.extend(DrawnEdge(edge.source, f"{node}:{first}", edge.label, edge.conditional) for first in firsts)
        elif edge.source == node:
            edges.extend(DrawnEdge(f"{node}:{last}", edge.target, edge.label, edge.conditional) for last in lasts)
        else:
            edges.append(edge)
    edges.extend(DrawnEdge(f"{node}:{e.source}", f"{node}:{e.target}", e.label, e.conditional)
                 for e in inner.edges if START not in (e.source, e.target) and END not in (e.source, e.target))
    drawn.edges = edges


def langchain_graph(drawn: Drawing) -> Graph:
    """``drawn`` as LangChain's ``Graph`` (a node's function as a ``RunnableLambda``, so ``to_json()`` names it)."""
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.graph import Graph

    graph = Graph()
    for name, action in drawn.nodes.items():
        data = RunnableLambda(action, name=name) if callable(action) and not hasattr(action, "machine") else None
        graph.add_node(data, name)
    for edge in drawn.edges:
        graph.add_edge(graph.nodes[edge.source], graph.nodes[edge.target], edge.label, edge.conditional)
    return graph
