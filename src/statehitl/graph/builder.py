"""``StateGraph``: the LangGraph-style builder users write by hand.

It only collects nodes and transitions; ``compile()`` turns them into a validated ``Machine`` and a
runnable app. Mistakes that can be seen while building (a reserved or repeated name, a non-callable)
are reported at the call that made them.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from statehitl.channels import StateSchema
from statehitl.checkpoint.engine import Checkpointer
from statehitl.errors import GraphValidationError
from statehitl.graph.compiled import CompiledStateGraph, Migration
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.machine import END, RESERVED, START, Edge, Machine, NodeSpec, Router
from statehitl.runner import Durability

__all__ = ["StateGraph"]

M = TypeVar("M", bound=BaseModel)


class StateGraph(Generic[M]):
    """Build a machine over a pydantic state model: ``add_node``, ``add_edge``, ``compile``."""

    def __init__(self, state_schema: type[M], *, name: str | None = None) -> None:
        self.schema = StateSchema(state_schema)
        self.name = name or f"{state_schema.__name__}Graph"
        self._nodes: dict[str, NodeSpec] = {}
        self._edges: list[Edge] = []
        self._routers: list[Router] = []

    def add_node(self, node: str | Callable[..., Any], action: Callable[..., Any] | None = None) -> StateGraph[M]:
        """Add a node: ``add_node("name", fn)`` or ``add_node(fn)`` (named after the function).

        ``fn(state)`` or ``fn(state, ctx)``, sync or async, returns a partial update or None.
        """
        if action is None:
            if not callable(node):
                raise GraphValidationError(f"add_node({node!r}) needs a handler: add_node(name, fn)")
            name, action = getattr(node, "__name__", repr(node)), node
        elif isinstance(node, str):
            name = node
        else:
            raise GraphValidationError(f"node name must be a str, got {node!r}")
        if name in RESERVED:
            raise GraphValidationError(f"node name {name!r} is reserved (START/END); pick another name")
        if name in self._nodes:
            raise GraphValidationError(f"node {name!r} is already in the graph; node names must be unique")
        self._nodes[name] = NodeSpec.from_callable(name, action)
        return self

    def add_edge(self, start: str | Sequence[str], end: str) -> StateGraph[M]:
        """Always go from ``start`` to ``end``. A list of starts makes ``end`` wait for all of them."""
        for source in [start] if isinstance(start, str) else start:
            self._edges.append(Edge(source, end))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[[M], Any],
        path_map: dict[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph[M]:
        """After ``source``, go where ``path(state)`` says: a node name, END, or a list (fan-out).

        ``path_map`` maps its return values to nodes, or lists the possible nodes; without it the
        targets are read from a ``Literal[...]`` return annotation when there is one.
        """
        if not callable(path):
            raise GraphValidationError(f"add_conditional_edges({source!r}, ...): path must be callable")
        mapping: dict[Any, str] | None = None
        targets: tuple[str, ...] | None
        if isinstance(path_map, dict):
            mapping, targets = dict(path_map), tuple(path_map.values())
        elif path_map is not None:
            targets = tuple(path_map)
        else:
            targets = _literal_targets(path)
        self._routers.append(Router(source, path, targets, mapping))
        return self

    def set_entry_point(self, node: str) -> StateGraph[M]:
        """Same as ``add_edge(START, node)``."""
        return self.add_edge(START, node)

    def set_finish_point(self, node: str) -> StateGraph[M]:
        """Same as ``add_edge(node, END)``."""
        return self.add_edge(node, END)

    def compile(
        self,
        checkpointer: Checkpointer | None = None,
        *,
        hooks: Sequence[HookProvider | HookRegistry] = (),
        step_limit: int = 25,
        durability: Durability = "step",
        name: str | None = None,
        accept_machine_change: bool = False,
        migrate: Migration | None = None,
    ) -> CompiledStateGraph[M]:
        """Validate the graph and return a runnable app.

        Without a checkpointer, threads live in this app's memory (enough to resume interrupts in the
        same process); pass ``FileCheckpointer`` or another to resume anywhere. A thread stopped by a
        different version of the graph is refused on resume unless ``accept_machine_change=True`` or
        ``migrate(values, old_fingerprint)`` converts its stored state.
        """
        machine = Machine(
            self._nodes.values(),
            self._edges,
            self._routers,
            name=name or self.name,
            schema=self.schema.describe(),
        )
        registry = HookRegistry()
        for hook in hooks:
            registry.add(hook)
        return CompiledStateGraph(
            machine,
            self.schema,
            registry,
            checkpointer,
            step_limit=step_limit,
            durability=durability,
            accept_machine_change=accept_machine_change,
            migrate=migrate,
        )


def _literal_targets(path: Callable[..., Any]) -> tuple[str, ...] | None:
    try:
        hints = typing.get_type_hints(path)
    except Exception:  # annotations that do not resolve just mean "unknown targets"
        return None
    returned = hints.get("return")
    if typing.get_origin(returned) is Literal:
        return tuple(str(a) for a in typing.get_args(returned))
    return None
