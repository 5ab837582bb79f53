"""``StateGraph``: the builder users write by hand, with LangGraph's API.

It only collects nodes and transitions; ``compile()`` turns them into a validated ``Machine`` that runs
supersteps (``statehitl.supersteps``) and a runnable app. The state schema may be a TypedDict, a
dataclass, a pydantic model or a root value (``state_kinds``); node functions are adapted to what their
signatures ask for at compile time (``node_calls``), once every node's input schema is known. Mistakes
that can be seen while building (a reserved or repeated name, a non-callable) are reported at the call
that made them.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar

from pydantic import BaseModel

from statehitl._gc import collector_paused
from statehitl.checkpoint.engine import Checkpointer
from statehitl.commands import Command
from statehitl.errors import GraphValidationError
from statehitl.graph.caching import CachePolicy, NodeCache
from statehitl.graph.code_cache import CodeCache
from statehitl.graph.compiled import CompiledStateGraph, Migration
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node_calls import is_async_callable, node_handler, route_handler
from statehitl.graph.retries import Policies
from statehitl.graph.runnables import is_runnable, node_name, runnable_node
from statehitl.graph.state_kinds import StateKind, schema_of, state_kind
from statehitl.graph.subgraphs import subgraph_handler
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.machine import END, RESERVED, START, Edge, Join, Machine, NodeSpec, Router
from statehitl.runner import Durability

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache
    from statehitl.store.base import BaseStore

__all__ = ["StateGraph"]

M = TypeVar("M")


@dataclass
class _Node:
    action: Callable[..., Any] | CompiledStateGraph[Any]
    input_schema: Any
    destinations: tuple[str, ...] | None
    metadata: dict[str, Any] | None
    retry: Policies | None
    defer: bool
    cache_policy: CachePolicy | None = None


class StateGraph(Generic[M]):
    """Build a graph over a state schema: ``add_node``, ``add_edge``, ``add_conditional_edges``, ``compile``.

    ``StateGraph(State)`` with ``State`` a TypedDict, a dataclass, a pydantic model, or a root value such as
    ``Annotated[list, operator.add]``; ``Annotated[T, reducer]`` fields merge concurrent writes.
    ``input_schema``/``output_schema`` restrict what ``invoke`` takes and returns.
    """

    def __init__(self, state_schema: Any, context_schema: Any = None, *, input_schema: Any = None,
                 output_schema: Any = None, name: str | None = None) -> None:
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.name = name or f"{getattr(state_schema, '__name__', 'State')}Graph"
        state_kind(state_schema)  # a schema it cannot read is refused here, not at compile()
        self._nodes: dict[str, _Node] = {}
        self._edges: list[Edge] = []
        self._joins: list[Join] = []
        self._routers: list[Router] = []

    @property
    def nodes(self) -> dict[str, Any]:
        return {name: node.action for name, node in self._nodes.items()}

    def add_node(self, node: str | Callable[..., Any] | CompiledStateGraph[Any],
                 action: Callable[..., Any] | CompiledStateGraph[Any] | None = None, *, input_schema: Any = None,
                 destinations: dict[str, str] | Sequence[str] | None = None, metadata: dict[str, Any] | None = None,
                 retry_policy: Policies | None = None, defer: bool = False, cache_policy: CachePolicy | None = None,
                 **unsupported: Any) -> StateGraph[M]:
        """Add a node: ``add_node("name", fn)``, ``add_node(fn)`` (named after the function), or a compiled
        StateGraph as a subgraph (``add_node("name", subgraph)``).

        ``fn(state)``, sync or async, returns a partial update (a dict), a ``Command``, or None; it may also
        take ``config``, ``writer``, or statehitl's ``NodeContext`` as a second argument. ``input_schema``: the
        schema the node reads (else its first parameter's annotation, else the state's). ``destinations``:
        where a node that returns ``Command(goto=...)`` may go, for drawing. ``retry_policy``: a
        ``RetryPolicy`` (or several, the first that matches the error deciding) to call the node again.
        ``defer=True``: the node runs only once nothing else is left to run (an aggregator after branches
        of any length). ``cache_policy``: a ``CachePolicy``; with ``compile(cache=...)``, the node is not run
        again for an input it has run on, its cached writes applied instead.
        """
        retry_policy = unsupported.pop("retry", retry_policy)  # LangGraph's older name
        for option in unsupported:
            raise TypeError(f"add_node() got an unexpected keyword argument {option!r}")
        if cache_policy is not None and not isinstance(cache_policy, CachePolicy):
            raise GraphValidationError(f"add_node(cache_policy={cache_policy!r}): give a CachePolicy(ttl=..., "
                                       "key_func=...)")
        if action is None:
            if isinstance(node, str) or not (callable(node) or is_runnable(node)):
                raise GraphValidationError(f"add_node({node!r}) needs a handler: add_node(name, fn)")
            name, action = node_name(node), node
        elif isinstance(node, str):
            name = node
        else:
            raise GraphValidationError(f"node name must be a str, got {node!r}")
        if name in RESERVED:
            raise GraphValidationError(f"node name {name!r} is reserved (START/END); pick another name")
        if ":" in name:
            raise GraphValidationError(f"node name {name!r}: ':' is reserved (it names a Send's task)")
        if name in self._nodes:
            raise GraphValidationError(f"node {name!r} is already in the graph; node names must be unique")
        if not isinstance(action, CompiledStateGraph) and not callable(action) and not is_runnable(action):
            raise GraphValidationError(f"node {name!r}: handler must be callable or a Runnable, got {action!r}")
        targets = tuple(destinations) if destinations is not None else _goto_targets(action)  # a dict: node -> label
        self._nodes[name] = _Node(action, input_schema, targets, metadata, retry_policy, defer, cache_policy)
        return self

    def add_sequence(self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]) -> StateGraph[M]:
        """Add ``nodes`` and an edge from each to the next (a ``(name, fn)`` pair names one)."""
        if not nodes:
            raise GraphValidationError("add_sequence() needs at least one node")
        previous: str | None = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (node_name(item), item)
            self.add_node(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def add_edge(self, start_key: str | Sequence[str], end_key: str) -> StateGraph[M]:
        """Go from ``start_key`` to ``end_key`` after it finishes. A list of starts is a waiting edge:
        ``end_key`` runs once all of them have finished."""
        if isinstance(start_key, str):
            if start_key == END:
                raise GraphValidationError("END cannot be the start of an edge")
            self._edges.append(Edge(start_key, end_key))
        else:
            sources = tuple(start_key)
            if not sources:
                raise GraphValidationError(f"add_edge([], {end_key!r}): a waiting edge needs its start nodes")
            if START in sources or END in sources:
                raise GraphValidationError(f"add_edge({list(sources)}, {end_key!r}): START and END cannot be waited on")
            self._joins.append(Join(sources, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph[M]:
        """After ``source``, go where ``path(state)`` says: a node name, END, a ``Send``, or a list of them.

        ``path_map`` maps its return values to nodes, or lists the possible nodes; without it the
        targets are read from a ``Literal[...]`` return annotation when there is one (for drawing).
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

    def set_entry_point(self, key: str) -> StateGraph[M]:
        """Same as ``add_edge(START, key)``."""
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable[..., Any],
                                    path_map: dict[Hashable, str] | Sequence[str] | None = None) -> StateGraph[M]:
        """Same as ``add_conditional_edges(START, path, path_map)``."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph[M]:
        """Same as ``add_edge(key, END)``."""
        return self.add_edge(key, END)

    @collector_paused
    def compile(
        self,
        checkpointer: Checkpointer | bool | None = None,
        *,
        interrupt_before: Sequence[str] | Literal["*"] | None = None,
        interrupt_after: Sequence[str] | Literal["*"] | None = None,
        hooks: Sequence[HookProvider | HookRegistry] = (),
        step_limit: int = 25,
        durability: Durability = "step",
        name: str | None = None,
        accept_machine_change: bool = False,
        migrate: Migration | None = None,
        store: BaseStore | None = None,
        cache: BaseCache | None = None,
    ) -> CompiledStateGraph[M]:
        """Validate the graph and return a runnable app.

        Without a checkpointer, threads live in this app's memory (enough to resume interrupts in the
        same process); pass ``FileCheckpointer`` or another store to resume anywhere; ``checkpointer=True``
        makes a subgraph keep its state from one call to the next in its parent's thread. ``interrupt_before``
        / ``interrupt_after``: stop the run before / after these nodes (``"*"``: all), to be continued by
        ``invoke(None, config)``. A thread stopped by a different version of the graph is refused on resume
        unless ``accept_machine_change=True`` or ``migrate(values, old_fingerprint)`` converts its state.
        ``store``: long-term memory (a ``statehitl.store`` ``BaseStore``) that nodes asking for ``store`` get.
        ``cache``: where nodes with a ``cache_policy`` keep their writes (``statehitl.cache.InMemoryCache``).
        """
        extra = [s for s in (self.input_schema, self.output_schema) if s is not None]
        kept = {n: _kept_state_channel(n) for n, node in self._nodes.items()
                if isinstance(node.action, CompiledStateGraph) and node.action.keeps_state}
        if kept:  # where each subgraph compiled with checkpointer=True keeps its state, a channel no node reads
            extra.append(TypedDict(f"{self.name}SubgraphStates", dict.fromkeys(kept.values(), dict | None)))  # type: ignore[operator]
        reads = {n: self._reads(node) for n, node in self._nodes.items()}
        routes = [self._annotated(r.route) for r in self._routers]  # a path function's private schema too
        extra += [*reads.values(), *routes]
        kind = state_kind(self.state_schema, extra=[s for s in extra if s is not None and s is not self.state_schema])
        state = StateGraphSchema(kind, input_schema=self.input_schema)
        if state.message_channels:
            # loaded by the graphs that have messages
            from statehitl.graph.message_state import MessagesStateGraphSchema

            state = MessagesStateGraphSchema(kind, input_schema=self.input_schema)
        caches = {n: NodeCache(n, node.action, node.cache_policy, cache,
                               lambda node, returned: state.dump_update(state.normalize_update(node, returned)))
                  for n, node in self._nodes.items() if node.cache_policy is not None and cache is not None
                  and not isinstance(node.action, CompiledStateGraph)}
        specs = [NodeSpec.from_callable(n, self._handler(n, node, kind, kept.get(n), reads.get(n), cache=caches.get(n)))
                 for n, node in self._nodes.items()]
        routers = [Router(r.source, route_handler(r.route, kind, wants), r.targets, r.path_map,
                          awaits=is_async_callable(r.route)) for r, wants in zip(self._routers, routes, strict=True)]
        machine = Machine(specs, self._edges, routers, name=name or self.name, schema=state.describe(),
                          supersteps=True, joins=self._joins,
                          destinations={n: node.destinations for n, node in self._nodes.items() if node.destinations},
                          deferred=[n for n, node in self._nodes.items() if node.defer])
        registry = HookRegistry()
        for hook in hooks:
            registry.add(hook)
        return CompiledStateGraph(
            machine,
            state,
            registry,
            None if isinstance(checkpointer, bool) else checkpointer,
            step_limit=step_limit,
            durability=durability,
            accept_machine_change=accept_machine_change,
            migrate=migrate,
            interrupt_before=_breakpoints(interrupt_before, machine),
            interrupt_after=_breakpoints(interrupt_after, machine),
            output_schema=self.output_schema,
            subgraphs={n: s.action for n, s in self._nodes.items() if isinstance(s.action, CompiledStateGraph)},
            keeps_state=checkpointer is True,
            store=store,
            cache=cache,
            cached={n: c.namespace for n, c in caches.items()},
        )

    def _reads(self, node: _Node) -> Any:
        """The schema a node reads the state through, if not the state's own: ``add_node(input_schema=)``, or
        its first parameter's annotation (LangGraph's private channels), unless that is a pydantic model on a
        pydantic state (statehitl's nodes annotate the state model they get), or a class that only shares the
        state schema's name (a string annotation resolved to another class in the function's module)."""
        if node.input_schema is not None:
            return node.input_schema
        if isinstance(node.action, CompiledStateGraph):
            return None
        return self._annotated(node.action)

    def _annotated(self, fn: Callable[..., Any]) -> Any:
        """The schema ``fn``'s first parameter is annotated with (a node's or a path function's), if it reads
        the state through one other than the state's own (see ``_reads``)."""
        annotated = schema_of(fn)
        if annotated is None or annotated is self.state_schema:
            return None
        if isinstance(annotated, type) and issubclass(annotated, BaseModel) and isinstance(self.state_schema, type) \
                and issubclass(self.state_schema, BaseModel):
            return None
        if getattr(annotated, "__name__", None) == getattr(self.state_schema, "__name__", ""):
            return None
        return annotated

    def _handler(self, name: str, node: _Node, kind: StateKind, kept: str | None, reads: Any, *,
                 cache: NodeCache | None) -> Callable[..., Any]:
        if isinstance(node.action, CompiledStateGraph):
            return subgraph_handler(name, node.action, kind, kept)
        action = node.action if callable(node.action) else runnable_node(node.action)  # (add_node took only these)
        return node_handler(name, action, kind, reads, node.metadata, node.retry, cache=cache)


def _kept_state_channel(node: str) -> str:
    """The parent's channel that holds the state of the stateful subgraph at ``node``."""
    return "subgraph_state_" + re.sub(r"\W", "_", node)


def _breakpoints(nodes: Sequence[str] | Literal["*"] | None, machine: Machine) -> frozenset[str]:
    if nodes is None:
        return frozenset()
    if nodes == "*":
        return frozenset(machine.nodes)
    unknown = [n for n in nodes if n not in machine.nodes]
    if unknown:
        raise GraphValidationError(f"interrupt_before/interrupt_after name unknown node(s) {unknown} "
                                   f"(nodes: {sorted(machine.nodes)})")
    return frozenset(nodes)


def _read_goto_targets(action: Any) -> tuple[str, ...] | None:
    """Where a node annotated ``-> Command[Literal["a", "b"]]`` may go, as LangGraph reads it for drawing."""
    if isinstance(action, CompiledStateGraph) or "return" not in getattr(action, "__annotations__", {}):
        return None
    try:
        returned = typing.get_type_hints(action).get("return")
    except Exception:  # annotations that do not resolve just mean "unknown destinations"
        return None
    if typing.get_origin(returned) is not Command:
        return None
    (goto,) = typing.get_args(returned) or (None,)
    return tuple(str(a) for a in typing.get_args(goto)) if typing.get_origin(goto) is Literal else None


_goto_targets: CodeCache[tuple[str, ...] | None] = CodeCache(_read_goto_targets)


def _literal_targets(path: Callable[..., Any]) -> tuple[str, ...] | None:
    try:
        hints = typing.get_type_hints(path)
    except Exception:  # annotations that do not resolve just mean "unknown targets"
        return None
    returned = hints.get("return")
    if typing.get_origin(returned) is Literal:
        return tuple(str(a) for a in typing.get_args(returned))
    return None
