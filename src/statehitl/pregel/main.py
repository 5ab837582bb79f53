"""``Pregel``: LangGraph's low-level graph of nodes that subscribe to channels, on statehitl's engine.

A step runs every node woken by a channel the previous step updated (the caller's input counts as the
first such write); each node reads its channels, runs, and writes channels; the step's writes apply
together through the channels' reducers. ``Pregel`` compiles its nodes and channels into a StateGraph
(``statehitl.pregel.compile``) and translates at the edges: the caller's input becomes the writes of its
input channels and the nodes they wake, the state becomes the output channels' values, and the stream
shows what LangGraph's does. Checkpoints, interrupts, resumes, history and the store are the StateGraph's.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from typing import Any, cast

from statehitl._sync import iterate_sync, run_sync
from statehitl.channels.base import BaseChannel
from statehitl.commands import Command
from statehitl.errors import EmptyInputError, InvalidUpdateError
from statehitl.graph.caching import CachePolicy
from statehitl.graph.compiled import CompiledStateGraph
from statehitl.graph.retries import RetryPolicy
from statehitl.graph.surface import batch_calls, merged_config
from statehitl.pregel.compile import INPUT_WRITES, compiled_graph, io_schema, validated
from statehitl.pregel.node_builder import NodeBuilder, PregelNode, built
from statehitl.pregel.node_run import NodeRun
from statehitl.pregel.streams import PregelStream

__all__ = ["Pregel"]

INTERRUPT = "__interrupt__"


class Pregel:
    """A graph of ``nodes`` (``NodeBuilder`` or ``PregelNode``) over ``channels``. ``input_channels``: one name
    (``invoke(value)`` writes it) or a list (``invoke({name: value})``); ``output_channels``: one name
    (``invoke`` returns its value) or a list (a dict of those holding a value); ``stream_channels``: what
    ``stream`` shows (default: every channel). The rest as ``StateGraph.compile``."""

    def __init__(self, *, nodes: dict[str, NodeBuilder | PregelNode], channels: dict[str, BaseChannel],
                 input_channels: str | Sequence[str], output_channels: str | Sequence[str],
                 stream_channels: str | Sequence[str] | None = None, stream_mode: Any = "values",
                 interrupt_before_nodes: Sequence[str] | str = (), interrupt_after_nodes: Sequence[str] | str = (),
                 checkpointer: Any = None, store: Any = None, cache: Any = None,
                 retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 cache_policy: CachePolicy | None = None, context_schema: Any = None, name: str = "LangGraph",
                 debug: bool = False, auto_validate: bool = True, config: dict[str, Any] | None = None,
                 **unsupported: Any) -> None:
        for option in unsupported:
            raise TypeError(f"Pregel() got an unexpected keyword argument {option!r}")
        self.nodes = {name: built(node, name) for name, node in nodes.items()}
        self.channels = dict(channels)
        self.input_channels = input_channels if isinstance(input_channels, str) else list(input_channels)
        self.output_channels = output_channels if isinstance(output_channels, str) else list(output_channels)
        self.stream_channels = stream_channels if stream_channels is None or isinstance(stream_channels, str) \
            else list(stream_channels)
        self.stream_mode = stream_mode
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.context_schema = context_schema
        self.store = store
        self.cache = cache
        self.name = name
        self.debug = debug
        self.config = config
        if auto_validate:
            validated(self)
        self._checkpointer = checkpointer
        self.graph: CompiledStateGraph[Any] = compiled_graph(self)

    @property
    def stream_keys(self) -> str | list[str]:
        """The channels ``stream`` shows: ``stream_channels``, else every channel."""
        return self.stream_channels if self.stream_channels is not None else list(self.channels)

    @property
    def checkpointer(self) -> Any:
        return self._checkpointer

    @checkpointer.setter
    def checkpointer(self, checkpointer: Any) -> None:
        """A new checkpointer (or ``False``: none) recompiles the graph over it."""
        self._checkpointer = checkpointer
        self.graph = compiled_graph(self)

    def with_config(self, config: dict[str, Any] | None = None, **kwargs: Any) -> Pregel:
        """A copy whose calls start from ``config`` (and ``kwargs``, config keys such as ``recursion_limit=10``),
        a call's own config laid over it (as ``CompiledStateGraph.with_config``)."""
        clone = copy.copy(self)
        clone.config = merged_config(self.config, {**(config or {}), **kwargs})
        clone.graph = self.graph.with_config(config, **kwargs)
        return clone

    def __repr__(self) -> str:
        return f"Pregel(name={self.name!r}, nodes={list(self.nodes)}, channels={self.channels!r})"

    # -- schemas ----------------------------------------------------------------------------------------

    @property
    def input_schema(self) -> Any:
        return io_schema(self, self.input_channels, "Input")

    @property
    def output_schema(self) -> Any:
        return io_schema(self, self.output_channels, "Output")

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return dict(self.input_schema.model_json_schema())

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return dict(self.output_schema.model_json_schema())

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        return self.graph.get_context_jsonschema()

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        return self.graph.get_graph(config, xray=xray)

    # -- input and output -------------------------------------------------------------------------------

    def input_writes(self, value: Any) -> Any:
        """The caller's input as the StateGraph's: None (go on, or resume) and a ``Command`` as they are, else the
        writes of the input channels; the nodes those wake are where the run begins (``INPUT_WRITES``)."""
        if value is None or isinstance(value, Command):
            INPUT_WRITES.set(())
            return value
        if isinstance(self.input_channels, str):
            given = {self.input_channels: value}
        else:
            if not isinstance(value, dict):
                raise TypeError(f"Expected chunk to be a dict, got {type(value).__name__}: the input of a Pregel "
                                f"with input channels {self.input_channels} is a dict of them")
            given = {k: v for k, v in value.items() if k in self.input_channels}
            if not given:
                raise EmptyInputError(f"Received no input for {self.input_channels}")
        INPUT_WRITES.set(tuple(given))
        return self.stored(given)

    def stored(self, writes: dict[str, Any]) -> dict[str, Any]:
        """Writes to channels as the engine applies them (``BaseChannel.stored``)."""
        return {k: self.channels[k].stored(v) if k in self.channels else v for k, v in writes.items()}

    def output(self, values: Any, keys: str | Sequence[str] | None = None) -> Any:
        """The output channels' values (``keys`` instead, when given) out of the state's values."""
        keys = self.output_channels if keys is None else keys
        if not isinstance(values, dict):
            return values
        if isinstance(keys, str):
            return values.get(keys)
        return {k: values[k] for k in keys if k in values}

    # -- running ----------------------------------------------------------------------------------------

    def invoke(self, input: Any, config: Any = None, **options: Any) -> Any:
        return run_sync(self.ainvoke(input, config, **options))

    async def ainvoke(self, input: Any, config: Any = None, *, stream_mode: Any = "values",
                      output_keys: str | Sequence[str] | None = None, **options: Any) -> Any:
        """Run as ``StateGraph``'s ``ainvoke``. As LangGraph's: the output channels' values (``output_keys``:
        those instead) as the last step that wrote one of them left them (None when no step of this run did),
        with ``"__interrupt__"`` when the run stopped on interrupts; with another ``stream_mode``, the list of
        that stream's chunks."""
        keys = self.output_channels if output_keys is None else output_keys
        if stream_mode != "values":
            return [chunk async for chunk in self.astream(input, config, stream_mode=stream_mode, output_keys=keys,
                                                          **options)]
        latest: Any = None
        interrupts: list[Any] = []
        async for mode, chunk in self.astream(input, config, stream_mode=["updates", "values"], output_keys=keys,
                                              **options):
            if mode == "updates" and isinstance(chunk, dict) and chunk.get(INTERRUPT) is not None:
                interrupts.extend(chunk[INTERRUPT])
            elif mode == "values" and not (isinstance(chunk, dict) and INTERRUPT in chunk):
                latest = chunk
        if not interrupts:
            return latest
        return {**latest, INTERRUPT: interrupts} if isinstance(latest, dict) else {INTERRUPT: interrupts}

    def stream(self, input: Any, config: Any = None, **options: Any) -> Iterator[Any]:
        return iterate_sync(self.astream(input, config, **options))

    async def astream(self, input: Any, config: Any = None, *, stream_mode: Any = None,
                      output_keys: str | Sequence[str] | None = None, **options: Any) -> AsyncIterator[Any]:
        """Stream as LangGraph's ``Pregel.stream`` (default mode: the graph's ``stream_mode``): ``"values"``
        yields the stream channels after each step that wrote one of them, ``"updates"`` each node's writes
        to them; other modes are the StateGraph's chunks."""
        stream = PregelStream(self, stream_mode or self.stream_mode, output_keys)
        stream.resuming = input is None or isinstance(input, Command)
        async for chunk in self.graph.astream(self.input_writes(input), config, stream_mode=stream.modes, **options):
            for shown in stream.shown(chunk):
                yield shown

    def batch(self, inputs: Sequence[Any], config: Any = None, **options: Any) -> list[Any]:
        return run_sync(self.abatch(inputs, config, **options))

    async def abatch(self, inputs: Sequence[Any], config: Any = None, **options: Any) -> list[Any]:
        """``ainvoke`` for each input (with ``config``, or one config per input in a list), concurrently."""
        return await batch_calls(self.ainvoke, inputs, config, **options)

    def map(self) -> Callable[[Sequence[Any]], list[Any]]:
        """A function that runs the graph on each item of a list (LangChain's ``Runnable.map``), e.g. as a
        step of another graph's node: ``NodeBuilder().subscribe_only("items").do(inner.map())``."""

        def each(inputs: Sequence[Any]) -> list[Any]:
            return [self.invoke(item) for item in inputs]

        return each

    # -- threads ----------------------------------------------------------------------------------------

    def get_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        return self._shown(self.graph.get_state(config, subgraphs=subgraphs))

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        return self._shown(await self.graph.aget_state(config, subgraphs=subgraphs))

    def get_state_history(self, config: Any, **options: Any) -> Iterator[Any]:
        return map(self._shown, self.graph.get_state_history(config, **options))

    async def aget_state_history(self, config: Any, **options: Any) -> AsyncIterator[Any]:
        async for snapshot in self.graph.aget_state_history(config, **options):
            yield self._shown(snapshot)

    def _shown(self, snapshot: Any) -> Any:
        """A snapshot as LangGraph shows a low-level graph's: its values are the stream channels' (every channel
        unless ``stream_channels=`` names some), the rest as the StateGraph's."""
        if self.stream_channels is None or not isinstance(snapshot.values, dict):
            return snapshot
        shown = tuple.__new__(type(snapshot), (self.output(snapshot.values, self.stream_channels), *snapshot[1:]))
        shown.__dict__.update(vars(snapshot))  # statehitl's own fields of the snapshot, as they were
        return shown

    def update_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        """Write ``values`` as node ``as_node`` would have written its output (through its writers, waking the
        nodes subscribed to what it wrote). Without ``as_node``, as LangGraph: the graph's one node, else the
        node that ran last (two that ran last in one step are ambiguous: ``InvalidUpdateError``)."""
        return run_sync(self.aupdate_state(config, values, as_node))

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        writer = as_node if as_node is not None else await self._last_writer(config)
        if writer not in self.nodes:
            return await self.graph.aupdate_state(config, values, as_node=writer)
        update = NodeRun(self.nodes[writer], self.channels, self.nodes).writes(values)
        return await self.graph.aupdate_state(config, update, as_node=writer)

    async def _last_writer(self, config: Any) -> str:
        """The node ``update_state`` without ``as_node`` writes as (see ``update_state``)."""
        if len(self.nodes) == 1:
            return next(iter(self.nodes))
        found = cast("AsyncGenerator[Any, None]", self.graph.aget_state_history(config))  # an async generator
        async with contextlib.aclosing(found) as history:
            async for snapshot in history:
                ran: list[str] = [n for n in snapshot.writes if n in self.nodes]
                if len(ran) == 1:
                    return ran[0]
                if ran:
                    raise InvalidUpdateError("Ambiguous update, specify as_node")
        if isinstance(self.input_channels, str) and self.input_channels in self.nodes:
            return self.input_channels
        raise InvalidUpdateError("Ambiguous update, specify as_node")
