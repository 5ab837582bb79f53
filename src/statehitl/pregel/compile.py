"""A ``Pregel``'s nodes and channels as the StateGraph that runs them, its checks, and its input/output schemas.

Each channel is a field of one state schema (a TypedDict: values are taken as written, as LangGraph's
channels take them), annotated with the channel's reducer; each node is a StateGraph node that routes
itself to the nodes its writes wake (``node_run``); the entry point goes to those the caller's input wakes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypedDict

from pydantic import BaseModel, RootModel, create_model

from statehitl.graph.builder import StateGraph
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.machine import RESERVED
from statehitl.pregel.node_builder import PregelNode, subscribers
from statehitl.pregel.node_run import NodeRun, node_function
from statehitl.pregel.shape import PregelShape

INPUT_WRITES: ContextVar[tuple[str, ...]] = ContextVar("statehitl_pregel_input_writes", default=())
"""The channels the caller's input wrote, set by ``Pregel`` as a call begins: the entry point reads which nodes
they wake. (The state cannot say: a thread's state holds its earlier runs' values too.)"""


def _woken_by_input(nodes: dict[str, PregelNode]) -> Callable[[Any], list[str]]:
    def woken(state: Any) -> list[str]:
        """The entry point's targets: the nodes subscribed to what the input wrote."""
        return subscribers(nodes, INPUT_WRITES.get())

    return woken


def compiled_graph(pregel: PregelShape) -> CompiledStateGraph[Any]:
    """The StateGraph that runs ``pregel``, compiled over its checkpointer."""
    state = TypedDict(f"{pregel.name}State", {n: c.annotation() for n, c in pregel.channels.items()})  # type: ignore[misc]
    builder: StateGraph[Any] = StateGraph(state, pregel.context_schema)
    defaults = pregel.retry_policy
    for name, node in pregel.nodes.items():
        retry = list(node.retry_policy) or defaults
        builder.add_node(name, node_function(NodeRun(node, pregel.channels, pregel.nodes)),
                         metadata=node.metadata or None, retry_policy=retry or None,
                         cache_policy=node.cache_policy or pregel.cache_policy, timeout=node.timeout)
    builder.set_conditional_entry_point(_woken_by_input(pregel.nodes), list(pregel.nodes))
    checkpointer = pregel.checkpointer if pregel.checkpointer is not False else None
    compiled = builder.compile(checkpointer, interrupt_before=_names(pregel.interrupt_before_nodes),
                               interrupt_after=_names(pregel.interrupt_after_nodes), name=pregel.name,
                               store=pregel.store, cache=pregel.cache, debug=pregel.debug)
    return compiled.with_config(pregel.config) if pregel.config else compiled


def _names(nodes: Sequence[str] | str) -> Any:
    return nodes if nodes == "*" else list(nodes) or None


def validated(pregel: PregelShape) -> None:
    """LangGraph's checks of a graph's shape, as ``ValueError`` naming what is wrong."""
    known = pregel.channels
    for name, node in pregel.nodes.items():
        if name in RESERVED:
            raise ValueError(f"Node name {name!r} is reserved")
        for channel in [*node.triggers, *node.reads]:
            if channel not in known:
                raise ValueError(f"Subscribed channel '{channel}' not in 'channels'")
        for entry in node.writers:
            if entry.channel not in known:
                raise ValueError(f"Node {name!r} writes to channel '{entry.channel}', which is not in 'channels'")
    inputs = _listed(pregel.input_channels)
    for kind, channels in (("Input", inputs), ("Output", _listed(pregel.output_channels)),
                           ("Stream", _listed(pregel.stream_keys))):
        for channel in channels:
            if channel not in known:
                raise ValueError(f"{kind} channel '{channel}' not in 'channels'")
    triggers = {t for node in pregel.nodes.values() for t in node.triggers}
    if not triggers.intersection(inputs):
        raise ValueError(f"Input channels {inputs} are not subscribed to by any node")
    for node_name in [*_listed(pregel.interrupt_before_nodes), *_listed(pregel.interrupt_after_nodes)]:
        if node_name != "*" and node_name not in pregel.nodes:
            raise ValueError(f"Node {node_name} not in nodes")


def _listed(names: str | Sequence[str]) -> list[str]:
    return [names] if isinstance(names, str) else list(names)


def io_schema(pregel: PregelShape, channels: str | Sequence[str], kind: str) -> type[BaseModel]:
    """The pydantic model of what ``invoke`` takes or gives (``kind``: "Input" or "Output"), titled as
    LangGraph titles it: one channel's value type, or an object of the channels' (each may be missing)."""
    title = f"LangGraph{kind}"
    if isinstance(channels, str):
        root: type[BaseModel] = type(title, (RootModel[pregel.channels[channels].ValueType],), {})  # type: ignore[misc,arg-type]
        return root
    fields: dict[str, Any] = {name: (pregel.channels[name].ValueType, None) for name in channels}
    model: type[BaseModel] = create_model(title, **fields)
    return model
