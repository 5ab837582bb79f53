"""``StateGraph``: the builder users write by hand, with LangGraph's API.

It only collects nodes and transitions; ``compile()`` turns them into a validated ``Machine`` that runs
supersteps (``statehitl.supersteps``) and a runnable app. The state schema may be a TypedDict, a
dataclass, a pydantic model or a root value (``state_kinds``); node functions are adapted to what their
signatures ask for at compile time (``node_calls``), once every node's input schema is known. Mistakes
that can be seen while building (a reserved or repeated name, a non-callable) are reported at the call
that made them.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Hashable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict, TypeVar

from pydantic import BaseModel

from statehitl._gc import collector_paused
from statehitl.checkpoint.engine import Checkpointer
from statehitl.commands import Command
from statehitl.errors import GraphValidationError
from statehitl.graph.caching import CachePolicy, NodeCache
from statehitl.graph.channel_views import state_channel_views
from statehitl.graph.code_cache import CodeCache
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.node_calls import guarded_node, is_async_callable, node_handler, route_handler
from statehitl.graph.node_guards import DEFAULT_ERROR_HANDLER, ErrorHandler, handler_name
from statehitl.graph.node_specs import StateNodeSpec
from statehitl.graph.retries import Policies
from statehitl.graph.run_begin import Migration
from statehitl.graph.run_targets import check_durability
from statehitl.graph.runnables import is_graph, is_runnable, mapping_runnable, node_name, runnable_node
from statehitl.graph.state_channels import kept_state_channel
from statehitl.graph.state_kinds import StateKind, schema_of, state_kind
from statehitl.graph.subgraphs import keeping_states, subgraph_handler
from statehitl.graph.surface import compiled_nodes
from statehitl.graph.validation import check_breakpoints, check_edges, check_timeouts
from statehitl.graph.value_types import ensure_valid_checkpointer
from statehitl.hooks.registry import HookProvider, HookRegistry
from statehitl.machine import END, RESERVED, START, Edge, Join, Machine, NodeSpec
from statehitl.routers import Router
from statehitl.thread_run import Durability
from statehitl.timeout_policy import TimeoutPolicy

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache
    from statehitl.store.base import BaseStore


M = TypeVar("M")


class _Defaults:
    """``set_node_defaults()``: what every node without its own gets at ``compile()``."""

    __slots__ = ("error_handler", "retry_policy", "timeout")

    def __init__(self) -> None:
        self.retry_policy: Policies | None = None
        self.error_handler: Callable[..., Any] | None = None
        self.timeout: TimeoutPolicy | None = None


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
        self.name, self._given_name = name or f"{getattr(state_schema, '__name__', 'State')}Graph", name
        state_kind(state_schema)  # a schema it cannot read is refused here, not at compile()
        self._nodes: dict[str, StateNodeSpec] = {}
        self._edges: list[Edge] = []
        self._joins: list[Join] = []
        self._routers: list[Router] = []
        self._defaults = _Defaults()

    channels = property(lambda self: state_channel_views(self.state_schema),
                        doc="The state's channels as LangGraph's channel objects (``graph.channel_views``).")

    @property
    def nodes(self) -> dict[str, StateNodeSpec]:
        """The nodes added so far by name, as LangGraph's builder shows them (``nodes[name].runnable``...)."""
        return dict(self._nodes)

    @property
    def managed(self) -> dict[str, Any]:
        """The state's managed keys (``RemainingSteps``...) by name, with how the run fills each in."""
        return dict(state_kind(self.state_schema).managed)

    def add_node(self, node: str | Callable[..., Any] | CompiledStateGraph[Any],
                 action: Callable[..., Any] | CompiledStateGraph[Any] | dict[str, Any] | None = None, *,
                 input_schema: Any = None, destinations: dict[str, str] | Sequence[str] | None = None,
                 metadata: dict[str, Any] | None = None, retry_policy: Policies | None = None, defer: bool = False,
                 cache_policy: CachePolicy | None = None, error_handler: Callable[..., Any] | None = None,
                 timeout: float | timedelta | TimeoutPolicy | None = None, **unsupported: Any) -> StateGraph[M]:
        """Add a node: ``add_node("name", fn)``, ``add_node(fn)`` (named after the function), or a compiled
        StateGraph as a subgraph (``add_node("name", subgraph)``, or ``add_node(subgraph)``: named as compiled).

        ``fn(state)``, sync or async, returns a partial update (a dict), a ``Command``, or None; it may also
        take ``config``, ``writer``, or statehitl's ``NodeContext`` as a second argument. ``input_schema``: the
        schema the node reads (else its first parameter's annotation, else the state's). ``destinations``:
        where a node that returns ``Command(goto=...)`` may go, for drawing. ``retry_policy``: a
        ``RetryPolicy`` (or several, the first that matches the error deciding) to call the node again.
        ``defer=True``: the node runs only once nothing else is left to run (an aggregator after branches
        of any length). ``error_handler``: ``fn(state, error: NodeError, ...)`` runs in the node's place once it
        failed (past its retries); its update or ``Command`` is the step's write (node ``__error_handler__<name>``).
        ``timeout``: seconds (or a ``timedelta``, or a ``TimeoutPolicy``) each attempt of an async node may take;
        past it the attempt is cancelled with ``NodeTimeoutError``, which its retry policy may retry.
        ``cache_policy``: a ``CachePolicy``; with ``compile(cache=...)``, the node is not run
        again for an input it has run on, its cached writes applied instead.
        """
        retry_policy = unsupported.pop("retry", retry_policy)  # LangGraph's older name
        for option in unsupported:
            raise TypeError(f"add_node() got an unexpected keyword argument {option!r}")
        if cache_policy is not None and not isinstance(cache_policy, CachePolicy):
            raise GraphValidationError(f"add_node(cache_policy={cache_policy!r}): give a CachePolicy(ttl=..., "
                                       "key_func=...)")
        if action is None:
            if isinstance(node, str) or not (callable(node) or is_runnable(node) or is_graph(node)):
                raise GraphValidationError(f"add_node({node!r}) needs a handler: add_node(name, fn)")
            name, action = node_name(node), node
        elif isinstance(node, str):
            name = node
        else:
            raise GraphValidationError(f"node name must be a str, got {node!r}")
        if name in RESERVED:
            raise GraphValidationError(f"Node `{name}` is reserved (START/END); pick another name")
        if ":" in name:
            raise GraphValidationError(f"node name {name!r}: ':' is reserved (it names a Send's task)")
        if name in self._nodes:
            raise GraphValidationError(f"Node `{name}` already present; node names must be unique")
        action = mapping_runnable(action) if isinstance(action, dict) else action  # LangGraph's RunnableParallel
        if not isinstance(action, CompiledStateGraph) and not callable(action) and not is_runnable(action):
            raise GraphValidationError(f"node {name!r}: handler must be callable or a Runnable, got {action!r}")
        if error_handler is not None and not callable(error_handler):
            raise GraphValidationError(f"node {name!r}: error_handler must be callable, got {error_handler!r}")
        targets = (dict(destinations) if isinstance(destinations, dict) else tuple(destinations)) \
            if destinations is not None else _goto_targets(action)  # a dict: node -> the label its edge is drawn with
        self._nodes[name] = StateNodeSpec(action, input_schema, targets, metadata, retry_policy, defer, error_handler,
                                  TimeoutPolicy.coerce(timeout), cache_policy, name)
        return self

    def set_node_defaults(self, *, retry_policy: Policies | None = None,
                          error_handler: Callable[..., Any] | None = None,
                          timeout: float | timedelta | TimeoutPolicy | None = None,
                          **unsupported: Any) -> StateGraph[M]:
        """Policies every node gets at ``compile()`` unless ``add_node`` gave it its own (called before or after
        the nodes are added; not inherited by subgraphs). ``retry_policy`` and ``timeout`` apply to error
        handlers too; ``error_handler`` (node ``__default_error_handler__``) to every node without one, never to
        a handler itself: a handler that fails fails the run."""
        for option in unsupported:
            if option == "cache_policy":
                raise GraphValidationError("set_node_defaults(cache_policy=...) is not supported by statehitl: give "
                                           "each node its own with add_node(..., cache_policy=)")
            raise TypeError(f"set_node_defaults() got an unexpected keyword argument {option!r}")
        if error_handler is not None and not callable(error_handler):
            raise GraphValidationError(f"set_node_defaults(error_handler=...) must be callable, got {error_handler!r}")
        if retry_policy is not None:
            self._defaults.retry_policy = retry_policy
        if error_handler is not None:
            self._defaults.error_handler = error_handler
        if timeout is not None:
            self._defaults.timeout = TimeoutPolicy.coerce(timeout)
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
        elif path_map is not None and not isinstance(path_map, str):  # a str is no map, as on LangGraph
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
        debug: bool = False,
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
        ``debug=True``: every call prints its updates and values as they come (``invoke(..., debug=True)``).
        A checkpointer that is not one is LangGraph's ``TypeError``; a mistake in the graph's shape is a
        ``GraphValidationError`` (a ``ValueError``) in LangGraph's words.
        ``store``: long-term memory (a ``statehitl.store`` ``BaseStore``) that nodes asking for ``store`` get.
        ``cache``: where nodes with a ``cache_policy`` keep their writes (``statehitl.cache.InMemoryCache``).
        """
        ensure_valid_checkpointer(checkpointer)
        handlers = self._error_handlers()
        timeouts = self._checked(name, handlers, interrupt_before, interrupt_after)
        functions = {n: node.action for n, node in self._nodes.items()
                     if not isinstance(node.action, CompiledStateGraph)}
        kept = self._kept_channels(functions)
        reads = {n: self._reads(node) for n, node in self._nodes.items()}
        routes = [self._annotated(r.route) for r in self._routers]  # a path function's private schema too
        kind = self._kind(kept, [*reads.values(), *routes])
        state = _state_adapter(kind, self.input_schema, frozenset(kept.values()))
        caches = self._caches(state, cache)
        specs = [NodeSpec.from_callable(n, self._handler(n, node, kind, kept.get(n), reads.get(n),
                                                         timeout=timeouts.get(n), on_error=handlers.get(n),
                                                         cache=caches.get(n)))
                 for n, node in self._nodes.items()]
        routers = [Router(r.source, route_handler(r.route, kind, wants), r.targets, r.path_map,
                          awaits=is_async_callable(r.route)) for r, wants in zip(self._routers, routes, strict=True)]
        machine = Machine(specs, self._edges, routers, name=name or self.name, schema=state.describe(),
                          supersteps=True, joins=self._joins,
                          destinations={n: node.destinations for n, node in self._nodes.items() if node.destinations},
                          deferred=[n for n, node in self._nodes.items() if node.defer])
        return CompiledStateGraph(
            machine,
            state,
            _registry(hooks),
            None if isinstance(checkpointer, bool) else checkpointer,
            step_limit=step_limit,
            durability=check_durability(durability),
            accept_machine_change=accept_machine_change,
            migrate=migrate,
            interrupt_before=_breakpoints(interrupt_before, machine),
            interrupt_after=_breakpoints(interrupt_after, machine),
            output_schema=self.output_schema,
            subgraphs={n: s.action for n, s in self._nodes.items() if isinstance(s.action, CompiledStateGraph)},
            functions=functions,
            keeps_state=checkpointer is True, runnable_name=name or self._given_name,
            input_schema=self.input_schema,
            context_schema=self.context_schema,
            nodes=lambda: compiled_nodes(self._actions(handlers), self._policies(handlers, timeouts),
                                         lambda found: isinstance(found, CompiledStateGraph)),
            debug=debug,
            store=store,
            cache=cache,
            cached={n: c.namespace for n, c in caches.items()},
        )

    def _checked(self, name: str | None, handlers: dict[str, ErrorHandler], interrupt_before: Any,
                 interrupt_after: Any) -> dict[str, TimeoutPolicy]:
        """Check the graph's edges, breakpoints and timeouts (a ``GraphValidationError`` in LangGraph's words),
        and return each node's timeout (its own, else ``set_node_defaults``')."""
        check_edges(name or self.name, self._nodes, self._edges, self._joins, self._routers,
                    destinations={n: node.destinations for n, node in self._nodes.items() if node.destinations})
        for breakpoints in (interrupt_before, interrupt_after):
            if breakpoints and breakpoints != "*":
                check_breakpoints(list(breakpoints), self._nodes, {h.name for h in handlers.values()})
        timeouts = {n: t for n, node in self._nodes.items() if (t := node.timeout or self._defaults.timeout)}
        if timeouts:
            check_timeouts(timeouts, {n: _is_async(self._nodes[n].action) for n in timeouts})
        return timeouts

    def _error_handlers(self) -> dict[str, ErrorHandler]:
        """Each node's error handler: its own (``__error_handler__<node>``), else the default one
        (``__default_error_handler__``), whose name no node may take."""
        default = self._defaults.error_handler
        if default is not None and DEFAULT_ERROR_HANDLER in self._nodes:
            raise GraphValidationError(f"set_node_defaults(error_handler=...) names its node "
                                       f"`{DEFAULT_ERROR_HANDLER}`, which already exists; rename that node")
        handlers = {}
        for name, node in self._nodes.items():
            if node.error_handler is not None:
                handlers[name] = ErrorHandler(handler_name(name), node.error_handler)
            elif default is not None:
                handlers[name] = ErrorHandler(DEFAULT_ERROR_HANDLER, default)
        return handlers

    def _actions(self, handlers: dict[str, ErrorHandler]) -> dict[str, Any]:
        """What runs at each node, error handlers included, in the order LangGraph lists them (a node's own
        handler just before it, the default one first)."""
        actions: dict[str, Any] = {}
        for name, node in self._nodes.items():
            handler = handlers.get(name)
            if handler is not None:
                actions.setdefault(handler.name, handler.fn)
            actions[name] = node.action
        return actions

    def _policies(self, handlers: dict[str, ErrorHandler], timeouts: dict[str, TimeoutPolicy]
                  ) -> dict[str, dict[str, Any]]:
        defaults = self._defaults
        return {name: {"metadata": node.metadata, "retry_policy": node.retry or defaults.retry_policy,
                       "error_handler": handlers.get(name), "timeout": timeouts.get(name)}
                for name, node in self._nodes.items()}

    def _kind(self, kept: dict[str, str], reads: list[Any]) -> StateKind:
        """The state's channels: its schema's, the input/output schemas', those nodes and path functions read
        through (``reads``), and where each subgraph compiled with ``checkpointer=True`` keeps its state
        (``kept``, a channel no node reads)."""
        extra = [s for s in (self.input_schema, self.output_schema) if s is not None]
        if kept:
            extra.append(TypedDict(f"{self.name}SubgraphStates", dict.fromkeys(kept.values(), dict | None)))  # type: ignore[operator]
        extra += reads
        return state_kind(self.state_schema, extra=[s for s in extra if s is not None and s is not self.state_schema])

    def _caches(self, state: StateGraphSchema, cache: BaseCache | None) -> dict[str, NodeCache]:
        """Where each node with a ``cache_policy`` keeps its writes (none without ``compile(cache=)``)."""
        if cache is None:
            return {}
        return {n: NodeCache(n, node.action, node.cache_policy, cache,
                             lambda node, returned: state.dump_update(state.normalize_update(node, returned)))
                for n, node in self._nodes.items()
                if node.cache_policy is not None and not isinstance(node.action, CompiledStateGraph)}

    def _kept_channels(self, functions: dict[str, Callable[..., Any]]) -> dict[str, str]:
        """The parent's channel for each node that runs a graph compiled with ``checkpointer=True``: as a
        node, or invoked in the node's code (found as LangGraph finds a node's subgraphs)."""
        kept = {n: kept_state_channel(n) for n, node in self._nodes.items()
                if isinstance(node.action, CompiledStateGraph) and node.action.keeps_state}
        if CompiledStateGraph.keeping_exists():  # a node's code may invoke one: it keeps that one's state too
            from statehitl.graph.subgraph_refs import graphs_reached  # loaded once such a graph exists

            kept.update({n: kept_state_channel(n) for n, fn in functions.items()
                         if any(g.keeps_state for g in graphs_reached(fn, CompiledStateGraph))})
        return kept

    def _reads(self, node: StateNodeSpec) -> Any:
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

    def _handler(self, name: str, node: StateNodeSpec, kind: StateKind, kept: str | None, reads: Any, *,
                 timeout: TimeoutPolicy | None = None, on_error: ErrorHandler | None = None,
                 cache: NodeCache | None = None) -> Callable[..., Any]:
        if isinstance(node.action, CompiledStateGraph):
            handler = subgraph_handler(name, node.action, kind, kept)
            return handler if on_error is None else guarded_node(handler, on_error, name, kind)
        action = node.action if callable(node.action) else runnable_node(node.action)  # (add_node took only these)
        handler = node_handler(name, action, kind, reads, metadata=node.metadata, joins=self._joins,
                               retry=node.retry or self._defaults.retry_policy,
                               timeout=timeout, on_error=on_error, cache=cache)
        return handler if kept is None else keeping_states(handler, kept)


def _is_async(action: Any) -> bool:
    """Whether a node's function is a coroutine function (a compiled graph runs as one)."""
    return isinstance(action, CompiledStateGraph) or (callable(action) and is_async_callable(action))


def _state_adapter(kind: StateKind, input_schema: Any, hidden: frozenset[str]) -> StateGraphSchema:
    """The runner's adapter for a graph over ``kind`` taking ``input_schema``, whose private ``hidden`` channels
    keep its stateful subgraphs' states: a ``MessagesStateGraphSchema`` when the state has message channels,
    else the plain one."""
    state = StateGraphSchema(kind, input_schema=input_schema, hidden=hidden)
    if not state.message_channels:
        return state
    # loaded by the graphs that have messages
    from statehitl.graph.message_state import MessagesStateGraphSchema

    return MessagesStateGraphSchema(kind, input_schema=input_schema, hidden=hidden)


def _registry(hooks: Sequence[HookProvider | HookRegistry]) -> HookRegistry:
    """One registry of what ``compile(hooks=)`` gave."""
    registry = HookRegistry()
    for hook in hooks:
        registry.add(hook)
    return registry


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
