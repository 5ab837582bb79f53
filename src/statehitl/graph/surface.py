"""What a compiled StateGraph offers besides running and reading threads, as LangGraph's compiled graph does:
its ``nodes``, a copy bound to a config (``with_config``, ``copy``), ``batch``, its JSON schemas, its subgraphs,
and ``get_graph()``, the graph to draw.

``with_config`` binds a config the graph's calls start from: the call's own config is laid over it (its
``configurable`` merged key by key), so ``graph.with_config(recursion_limit=10)`` limits every call and
``graph.with_config(configurable={"thread_id": "t"})`` names the thread of every call that names none.
"""

from __future__ import annotations

import asyncio
import copy as copying
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

from statehitl._sync import run_sync
from statehitl.machine import START, Machine

if TYPE_CHECKING:
    from statehitl.graph.drawing import Drawing
    from statehitl.graph.state_kinds import StateKind

_EVERY_LEVEL = 1 << 10
"""How deep ``get_graph(xray=True)`` draws: every level of subgraphs (none nests this deep)."""


class CompiledNode:
    """A node of a compiled graph, as ``graph.nodes[name]`` shows it (LangGraph's ``PregelNode``): what runs
    there (``bound``: the function, or the compiled graph of a subgraph node; None for ``__start__``), its
    ``metadata``, policies, and ``subgraphs``, the compiled graph it runs (as a node, or invoked in its code).
    A plain class, not a dataclass: every compiled graph's import pays for a dataclass, few read nodes."""

    _FIELDS = ("name", "bound", "metadata", "retry_policy", "error_handler", "timeout")

    def __init__(self, name: str, bound: Any = None, *, metadata: dict[str, Any] | None = None,
                 retry_policy: Any = None, error_handler: Any = None, timeout: Any = None,
                 is_graph: Callable[[Any], bool] | None = None) -> None:
        self.name, self.bound, self.metadata = name, bound, metadata
        self.retry_policy, self.error_handler, self.timeout = retry_policy, error_handler, timeout
        self.is_graph = is_graph
        """What counts as a compiled graph when ``subgraphs`` looks through ``bound``'s code."""

    @cached_property
    def subgraphs(self) -> tuple[Any, ...]:
        """The compiled graph the node runs, found when first asked for: reading a function's code for the
        graphs it reaches is not something each ``compile()`` should pay for."""
        from statehitl.graph.subgraph_refs import subgraph_of  # read a node's code only when asked

        sub = None if self.is_graph is None else subgraph_of(self.bound, self.is_graph)
        return () if sub is None else (sub,)

    def copy(self, update: Mapping[str, Any] | None = None) -> CompiledNode:
        """A copy with the fields ``update`` names replaced."""
        fields = {name: getattr(self, name) for name in self._FIELDS}
        return CompiledNode(**{**fields, "is_graph": self.is_graph, **dict(update or {})})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompiledNode):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"CompiledNode({shown})"


def merged_config(bound: Mapping[str, Any] | None, given: Any) -> Any:
    """A call's config laid over the config a graph was bound to (``with_config``): its keys win, except
    ``configurable`` and ``metadata``, merged key by key. A thread id given as a string stays one."""
    if not bound or isinstance(given, str):
        return given
    merged = {**bound, **(given or {})}
    for key in ("configurable", "metadata"):
        if key in bound and given and key in given:
            merged[key] = {**bound[key], **given[key]}
    return merged


async def batch_calls(ainvoke: Callable[..., Awaitable[Any]], inputs: Sequence[Any], config: Any = None,
                      **options: Any) -> list[Any]:
    """LangChain's ``abatch``: ``ainvoke`` each input concurrently, with ``config`` or one config per input
    in a list; the results in the inputs' order. Shared by compiled graphs and low-level ``Pregel``s."""
    configs = list(config) if isinstance(config, list) else [config] * len(inputs)
    if len(configs) != len(inputs):
        raise ValueError(f"batch() got {len(inputs)} inputs and {len(configs)} configs; give one config per input")
    return list(await asyncio.gather(*(ainvoke(i, c, **options) for i, c in zip(inputs, configs, strict=True))))


class GraphSurface:
    """LangGraph's compiled-graph surface besides running and threads; ``CompiledStateGraph`` sets these."""

    machine: Machine
    name: str
    config: dict[str, Any] | None
    build_nodes: Callable[[], dict[str, CompiledNode]]
    subgraphs: Mapping[str, Any]
    input_schema: Any
    output_schema: Any
    context_schema: Any
    kind: StateKind
    interrupt_before: frozenset[str]
    interrupt_after: frozenset[str]

    ainvoke: Callable[..., Awaitable[Any]]

    @property
    def nodes(self) -> dict[str, CompiledNode]:
        """The graph's nodes by name, ``__start__`` first, as LangGraph lists them (``list(graph.nodes)``)."""
        return self.compiled_nodes

    @cached_property
    def compiled_nodes(self) -> dict[str, CompiledNode]:
        """``nodes``, built when first read: most compiled graphs only ever run."""
        return self.build_nodes()

    @property
    def channels(self) -> dict[str, Any]:
        """The state's channels as LangGraph's channel objects (``statehitl.graph.channel_views``)."""
        from statehitl.graph.channel_views import state_channel_views

        return state_channel_views(self.kind.schema)

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name (``compile(name=)``) with ``suffix`` as LangChain joins them: ``OrdersInput`` after
        a capital, ``orders_input`` after a small letter."""
        base = name or self.name
        if not suffix:
            return base
        return f"{base}{suffix.title()}" if base[:1].isupper() else f"{base}_{suffix.lower()}"

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Self:
        """A copy of the graph whose calls start from ``config`` (and ``kwargs``, config keys such as
        ``recursion_limit=10``), the call's own config laid over it."""
        return self.copy({"config": merged_config(self.config, {**(config or {}), **kwargs})})

    def copy(self, update: Mapping[str, Any] | None = None) -> Self:
        """A shallow copy (sharing its checkpointer, so its threads) with the attributes ``update`` names set."""
        clone = copying.copy(self)
        for key, value in (update or {}).items():
            setattr(clone, key, value)
        return clone

    def astream_events(self, input: Any, config: dict[str, Any] | None = None, *, version: str = "v2",
                       **options: Any) -> AsyncIterator[dict[str, Any]]:
        """LangChain's event stream of a run (needs langchain-core): the run's ``on_chain_start``, each node's
        start, output and end with the events of what it calls, each chunk ``astream`` yields as
        ``on_chain_stream``, the run's end (``statehitl.graph.run_events``)."""
        from statehitl.graph.run_events import stream_events

        return stream_events(self, input, config, version=version, **options)

    def astream_log(self, input: Any, config: dict[str, Any] | None = None, **options: Any) -> AsyncIterator[Any]:
        """LangChain's run log of a run (needs langchain-core): JSON patches of the run and of each node's run
        (``/logs/<node>/final_output``...), built from the same runs as ``astream_events``."""
        from statehitl.graph.run_events import stream_log

        return stream_log(self, input, config, **options)

    def batch(self, inputs: Sequence[Any], config: Any = None, **options: Any) -> list[Any]:
        """``invoke`` for each input (with ``config``, or one config per input in a list), run concurrently."""
        return run_sync(self.abatch(inputs, config, **options))

    async def abatch(self, inputs: Sequence[Any], config: Any = None, **options: Any) -> list[Any]:
        """``ainvoke`` for each input, concurrently; the results in the inputs' order."""
        return await batch_calls(self.ainvoke, inputs, config, **options)

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The JSON schema of what ``invoke`` takes: the input schema's, else the state schema's."""
        from statehitl.graph.json_schemas import state_json_schema  # a graph that only runs never loads it

        return state_json_schema(self.input_schema or self.kind.schema, self.kind, self.get_name("Input"))

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """The JSON schema of what ``invoke`` returns: the output schema's, else the state schema's."""
        from statehitl.graph.json_schemas import state_json_schema

        return state_json_schema(self.output_schema or self.kind.schema, self.kind, self.get_name("Output"))

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """The JSON schema of ``invoke(..., context=)``'s ``context_schema``, None without one."""
        from statehitl.graph.json_schemas import context_json_schema

        return context_json_schema(self.context_schema)

    def get_subgraphs(self, *, namespace: str | None = None, recurse: bool = False) -> Iterator[tuple[str, Any]]:
        """``(name, compiled graph)`` for each node that runs a compiled graph (``namespace``: only that node;
        ``recurse``: theirs too, named ``node|inner``)."""
        for name, node in self.compiled_nodes.items():
            if not node.subgraphs or (namespace is not None and not namespace.startswith(name)):
                continue
            graph = node.subgraphs[0]
            if namespace is None or namespace == name:
                yield name, graph
            if recurse and isinstance(graph, GraphSurface):
                inner = None if namespace is None or namespace == name else namespace[len(name) + 1:]
                for sub_name, sub in graph.get_subgraphs(namespace=inner, recurse=True):
                    yield f"{name}|{sub_name}", sub

    async def aget_subgraphs(self, *, namespace: str | None = None, recurse: bool = False
                             ) -> AsyncIterator[tuple[str, Any]]:
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        """The graph to draw: LangChain's ``Graph`` (``draw_mermaid()``, ``draw_ascii()``, ``to_json()``,
        ``nodes``, ``edges``) when ``langchain-core`` is installed, else statehitl's ``Machine`` (which draws
        with ``draw_mermaid()`` too, and stays at ``graph.machine``). ``xray``: draw subgraph nodes as their own
        nodes (``True``: every level, or how many levels deep)."""
        from statehitl.graph.drawing import langchain_graph  # drawing is not running

        depth = xray if not isinstance(xray, bool) else _EVERY_LEVEL if xray else 0
        try:
            return langchain_graph(self.drawing(depth))
        except ImportError:  # no langchain-core: the machine draws itself
            return self.machine

    async def aget_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        """``get_graph`` from async code (drawing does no I/O)."""
        return self.get_graph(config, xray=xray)

    def drawing(self, xray: int) -> Drawing:
        """This graph's nodes and edges as ``get_graph`` draws them, its subgraphs ``xray`` levels deep."""
        from statehitl.graph.drawing import drawing

        nodes = self.compiled_nodes
        return drawing(self.machine, {n: node if n == START else node.bound for n, node in nodes.items()},
                       self._subgraph_drawing, xray,
                       metadata={n: self._drawn_metadata(node) for n, node in nodes.items()})

    def _drawn_metadata(self, node: CompiledNode) -> dict[str, Any]:
        """A node's metadata as LangGraph draws it: ``add_node(metadata=)``'s, ``defer`` for a deferred node,
        ``__interrupt`` for a node the graph was compiled to stop before and/or after, ``__tools`` the names of
        a tool node's tools."""
        drawn = dict(node.metadata or {})
        if node.name in self.machine.deferred:
            drawn["defer"] = True
        stops = [when for when, names in (("before", self.interrupt_before), ("after", self.interrupt_after))
                 if node.name in names]
        if stops:
            drawn["__interrupt"] = ",".join(stops)
        tools = getattr(node.bound, "tools_by_name", None)
        if isinstance(tools, Mapping) and tools:
            drawn["__tools"] = list(tools)
        return drawn

    def _subgraph_drawing(self, node: str, xray: int) -> Drawing | None:
        compiled = self.compiled_nodes.get(node)
        inner = compiled.subgraphs[0] if compiled is not None and compiled.subgraphs else None
        return inner.drawing(xray) if isinstance(inner, GraphSurface) else None


def compiled_nodes(actions: Mapping[str, Any], policies: Mapping[str, dict[str, Any]],
                   is_graph: Callable[[Any], bool]) -> dict[str, CompiledNode]:
    """The ``nodes`` of a compiled graph: ``__start__``, then each node with what runs there, its policies
    (``metadata``, ``retry_policy``, ``error_handler``, ``timeout``) and the graph it runs, if any."""
    nodes = {START: CompiledNode(START)}
    for name, action in actions.items():
        nodes[name] = CompiledNode(name, action, is_graph=is_graph, **policies.get(name, {}))
    return nodes
