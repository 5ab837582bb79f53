"""``CompiledStateGraph``: a validated machine bound to hooks and a checkpointer, ready to invoke.

``invoke`` decides what the caller's input means for the thread (start, continue, or resume with
interrupt responses), checks it before anything is written, and hands the position to the runner.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from statehitl._sync import iterate_sync, run_sync
from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.memory_storage import MemoryStorage
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.records import AuditEntry, CheckpointRecord
from statehitl.checkpoint.saver_hooks import read_through
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.commands import Command
from statehitl.errors import GraphDrained
from statehitl.event_stream import Emit, stream_run
from statehitl.graph.caching import cached_namespaces
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.history import BEGIN, ViewKey
from statehitl.graph.invoke_modes import call_modes, coerced_context, kept_keys, printed
from statehitl.graph.node import StateGraphNode
from statehitl.graph.node_calls import RunScope, current_node, reset_run, set_run
from statehitl.graph.result import GraphRunResult, run_result
from statehitl.graph.run_begin import Migration, Reached, RunBeginnings
from statehitl.graph.run_stream import RunStream
from statehitl.graph.run_targets import (
    RunTarget,
    check_step_limit,
    checkpoint_metadata,
    names_thread,
    run_target,
)
from statehitl.graph.runtime_values import RunControl
from statehitl.graph.snapshots import SnapshotReader
from statehitl.graph.stream_events import CheckpointEvents, RunOrigin
from statehitl.graph.subgraphs import invoke_inside
from statehitl.graph.surface import CompiledNode, GraphSurface, merged_config
from statehitl.graph.time_travel import SchemaValues, ThreadViews
from statehitl.graph.traced_runs import tracing
from statehitl.hooks.registry import HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import START, Machine
from statehitl.position import Position
from statehitl.resumable import ResumableApp, Resumed
from statehitl.runner import Runner
from statehitl.runner_parts import LOOP_SHARED, Pauses, unseen_threads
from statehitl.stream_sink import StreamMode, StreamSink, current_scope, enter_scope, leave_scope
from statehitl.thread_run import Durability

if TYPE_CHECKING:
    from statehitl.cache.base import BaseCache, Namespace
    from statehitl.store.base import BaseStore


_KEEPING = [False]
"""Whether a graph was compiled with ``checkpointer=True`` in this process."""

M = TypeVar("M")


def _began(at: Position, head: Head | None) -> str:
    """The id of the checkpoint a run from ``at`` begins from: its own first-step checkpoint for a new run, else
    the thread's current one."""
    if at.start is not None and at.cursor is not None:
        return str(ViewKey(at.cursor.next_slot, BEGIN))
    return "" if head is None else head.record.checkpoint_id


def _message_stream(send: Callable[..., None]) -> Any:
    """A run's ``stream_mode="messages"`` (``message_stream``), loaded by the runs that ask for it."""
    from statehitl.graph.message_stream import message_stream

    return message_stream(send)


class CompiledStateGraph(RunBeginnings, GraphSurface, ResumableApp, Generic[M]):
    """A runnable StateGraph. Sync methods wrap the async ones (``ainvoke``, ``aget_state``, ...)."""

    def __init__(
        self,
        machine: Machine,
        schema: StateGraphSchema,
        hooks: HookRegistry,
        checkpointer: Checkpointer | None,
        *,
        step_limit: int,
        durability: Durability,
        accept_machine_change: bool = False,
        migrate: Migration | None = None,
        interrupt_before: frozenset[str] = frozenset(),
        interrupt_after: frozenset[str] = frozenset(),
        output_schema: Any = None,
        subgraphs: dict[str, CompiledStateGraph[Any]] | None = None,
        functions: dict[str, Callable[..., Any]] | None = None,
        keeps_state: bool = False,
        runnable_name: str | None = None,
        input_schema: Any = None,
        context_schema: Any = None,
        nodes: Callable[[], dict[str, CompiledNode]] | None = None,
        debug: bool = False,
        store: BaseStore | None = None,
        cache: BaseCache | None = None,
        cached: dict[str, Namespace] | None = None,
    ) -> None:
        self.machine = machine
        self.name = runnable_name or "LangGraph"
        """Its name as LangChain's callbacks and events show the run (``compile(name=)``; LangGraph's
        ``"LangGraph"`` when none is given). Its threads' records name its machine (``machine_name``)."""
        self.schema = schema
        self.hooks = hooks
        self.checkpointer = checkpointer or Checkpointer(MemoryStorage())
        self._own_store = checkpointer is not None
        if checkpointer is not None:  # its saver's reads (``get_tuple``, ``list``) read values as this graph does
            self.checkpointer.learn_values(machine.fingerprint, SchemaValues(schema))
        self.keeps_state = keeps_state
        """Compiled with ``checkpointer=True``: as a node of a graph, its state lasts from call to call."""
        self.step_limit = check_step_limit(step_limit)
        self.durability: Durability = durability if checkpointer is not None else "exit"
        self.traced_output: Callable[[Any], Any] | None = None
        """What a run under LangChain callbacks ends its chain run with, from its values (None: the values without
        their interrupts); a workflow's graph shows the workflow's value."""
        self.accept_machine_change = accept_machine_change
        self.migrate = migrate
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.output_schema = output_schema
        self.input_schema = input_schema
        self.context_schema = context_schema
        self.kind = schema.kind
        self.build_nodes = nodes or dict
        self.debug = debug
        """Every call prints its updates and values as they come (``compile(debug=True)``)."""
        self.step_timeout: float | None = None
        """Seconds a step may take (LangGraph's ``graph.step_timeout``): past them its running nodes are cancelled
        and the call raises ``TimeoutError``, the step recorded failed (what finished kept) for a retry."""
        self.config: dict[str, Any] | None = None
        """The config every call starts from (``with_config``)."""
        self.subgraphs = subgraphs or {}
        """The nodes that are compiled graphs, by name (``get_state(config, subgraphs=True)`` reads into them)."""
        self.store = store
        """The long-term memory its nodes get (``compile(store=)``); as a subgraph, its parent's instead."""
        self.cache = cache
        """Where nodes with a ``cache_policy`` keep their writes (``compile(cache=)``)."""
        self._cached = cached or {}
        """The cache namespace of each node with a ``cache_policy``, by node name."""
        self._functions = functions or {}
        self._invoked = None
        if keeps_state:
            _KEEPING[0] = True
        self.snapshots = SnapshotReader(machine, schema, self.subgraphs, self)
        # A graph without a checkpointer keeps its threads in a store of its own, which nothing lists: its
        # runs write no index entries (as an agent without a session writes none).
        self._runner = Runner(machine, schema, hooks, self.checkpointer, source=self, run_span="invoke_graph",
                              index=self._own_store)

    @staticmethod
    def keeping_exists() -> bool:
        """Whether a graph was compiled with ``checkpointer=True`` in this process: until one is, no node's
        code can invoke one, and ``compile()`` looks for none."""
        return _KEEPING[0]

    # -- running ----------------------------------------------------------------------------------

    @property
    def thread_store(self) -> Checkpointer:
        """Where its threads live (``ResumableApp``)."""
        return self.checkpointer

    @property
    def machine_name(self) -> str:
        """The machine it runs (``ResumableApp``)."""
        return self.machine.name

    @property
    def own_thread(self) -> str | None:
        """Any thread of its store (``ResumableApp``)."""
        return None

    async def aresume_stored(self, thread_id: str) -> Resumed:
        """``invoke(None, thread_id=...)``: apply the answers stored for the thread, or continue it
        (``ResumableApp``)."""
        result = await self.ainvoke(None, thread_id=thread_id)
        return Resumed(result.status.value, tuple(result.interrupts), result)

    def invoke(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Any:
        """Run the thread: start or continue it with ``input``, or resume it. See ``ainvoke``."""
        return run_sync(self.ainvoke(input, config, **options))

    async def ainvoke(
        self,
        input: Any,
        config: dict[str, Any] | str | None = None,
        *,
        thread_id: Any = None,
        checkpoint_id: str | None = None,
        step_limit: int | None = None,
        durability: Any = None,
        invocation_state: dict[str, Any] | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: str | Sequence[str] | None = None,
        debug: bool | None = None,
        subgraphs: bool = False,
        control: RunControl | None = None,
    ) -> Any:
        """Run the thread and return its values (a dict, with ``"__interrupt__"`` when it stopped on interrupts).

        ``config``: LangGraph's ``{"configurable": {"thread_id": ..., "checkpoint_id": ...}, "recursion_limit":
        n, "max_concurrency": n}`` (or the thread id itself); a graph with a checkpointer of its own needs the
        thread named in it. ``input``:
        - a dict (or the state's type): a new run from START, on the thread's current state if it has one;
        - ``Command(resume=answer)`` (or ``{interrupt_id: answer}``), or a list of ``{"interruptResponse": {...}}``
          blocks: answers to the interrupts the thread waits on;
        - None: continue a run that stopped mid-way (a crash, the step limit, ``interrupt_before``), or apply
          answers stored by the inbox; with a ``checkpoint_id``, replay from that checkpoint (a fork).

        As LangGraph's: ``stream_mode`` other than ``"values"`` returns the list of that stream's chunks;
        ``print_mode`` (or ``debug=True``: updates and values) prints chunks as they come; ``output_keys`` keeps
        only those keys of the values; ``control=RunControl()`` lets the run be drained between two steps
        (``GraphDrained``, its checkpoint written; ``invoke(None, config)`` goes on).
        """
        node = current_node()
        if node is not None and checkpoint_id is None and not (
                self._own_store and names_thread(merged_config(self.config, config), thread_id)):
            # called in a node's code: a subgraph of its graph; one with a saver of its own too unless the call
            # names a thread (LangGraph's parent lends the subgraph its saver)
            return await invoke_inside(self, input, node)
        if self.keeps_state:
            raise RuntimeError("checkpointer=True cannot be used for root graphs: a graph compiled with it keeps its "
                               "state in the thread of the graph it runs in, as a node or in a node's code")
        target = self._call_target(config, thread_id, checkpoint_id, step_limit, durability=durability,
                                   invocation_state=invocation_state, interrupt_before=interrupt_before,
                                   interrupt_after=interrupt_after, context=context, control=control)
        collect = stream_mode != "values"
        debugging = bool(self.debug if debug is None else debug)
        if not collect and not print_mode and not debugging:  # the common call: its values, nothing else
            return kept_keys(await self._run(input, target), output_keys)
        modes = call_modes(stream_mode if collect else None, print_mode, debugging, subgraphs=subgraphs)
        chunks: list[Any] = []
        sink = StreamSink(printed(modes, chunks.append), modes.every, paired=True, subgraphs=subgraphs)
        try:
            result = await self._run(input, target, sink)
            await asyncio.sleep(0)  # chunks sent from worker threads arrive
        finally:
            sink.close()
        return chunks if collect else kept_keys(result, output_keys)

    def _call_target(self, config: dict[str, Any] | str | None, thread_id: Any, checkpoint_id: str | None,
                     step_limit: int | None, **options: Any) -> RunTarget:
        """What a call runs on: its config laid over the graph's own (``with_config``), the thread it names
        (required with a checkpointer of the graph's own, as LangGraph requires it), its context as the
        ``context_schema``."""
        options["context"] = coerced_context(self.context_schema, options.get("context"), self.name)
        return run_target(merged_config(self.config, config), thread_id, checkpoint_id, step_limit, self.step_limit,
                          require_thread=self._own_store and thread_id is None, **options)

    def stream(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Iterator[Any]:
        """Run as ``invoke`` does, yielding what happens as it happens (see ``astream``)."""
        return iterate_sync(self.astream(input, config, **options))

    async def astream(self, input: Any, config: dict[str, Any] | str | None = None, *,
                      stream_mode: StreamMode | Sequence[StreamMode] = "updates", thread_id: Any = None,
                      checkpoint_id: str | None = None, step_limit: int | None = None,
                      durability: Any = None, invocation_state: dict[str, Any] | None = None,
                      interrupt_before: Sequence[str] | None = None, interrupt_after: Sequence[str] | None = None,
                      context: Any = None, subgraphs: bool = False,
                      print_mode: StreamMode | Sequence[StreamMode] = (), debug: bool | None = None,
                      control: RunControl | None = None) -> AsyncIterator[Any]:
        """Run as ``ainvoke`` does, yielding chunks as LangGraph's ``stream`` does.

        ``stream_mode="updates"``: ``{node: update}`` as each node finishes, and ``{"__interrupt__": (...)}``
        when the run stops on interrupts. ``"values"``: the whole state, first as the run starts, then after
        each step. ``"custom"``: what nodes write with ``get_stream_writer()`` or their ``writer`` argument.
        A list of modes yields ``(mode, chunk)`` pairs; ``subgraphs=True`` yields ``(namespace, chunk)``
        (this graph's namespace is ``()``). The checkpoints are those ``invoke`` writes. ``print_mode`` (or
        ``debug=True``) prints those chunks too, as LangGraph does.
        """
        modes = call_modes(stream_mode, print_mode, bool(self.debug if debug is None else debug),
                           subgraphs=subgraphs)
        target = self._call_target(config, thread_id, checkpoint_id, step_limit, durability=durability,
                                   invocation_state=invocation_state, interrupt_before=interrupt_before,
                                   interrupt_after=interrupt_after, context=context, control=control)
        sinks: list[StreamSink] = []

        async def run(emit: Emit) -> Any:
            if modes.shown:  # every chunk comes to ``printed`` as (namespace, mode, chunk), which shapes the streamed
                sinks.append(StreamSink(printed(modes, emit), modes.every, paired=True, subgraphs=subgraphs))
            else:
                sinks.append(StreamSink(emit, modes.streamed, paired=modes.paired, subgraphs=subgraphs))
            return await self._run(input, target, sinks[0])

        try:
            async with contextlib.aclosing(stream_run(run, None)) as chunks:  # closed early: the run stops now
                async for chunk in chunks:
                    yield chunk
        finally:
            for sink in sinks:
                sink.close()

    async def _run(self, input: Any, target: RunTarget, sink: StreamSink | None = None) -> Any:
        with unseen_threads(self._own_store):  # a run no checkpointer keeps leaves a cancelled sync node's thread
            return await self._run_kept(input, target, sink)

    async def _run_kept(self, input: Any, target: RunTarget, sink: StreamSink | None) -> Any:
        if self.checkpointer.saver_overrides is not None:  # a user's saver subclass reads first (saver_hooks)
            await read_through(self.checkpointer, self.checkpointer.saver_overrides, target.config)
        head = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
        if target.config.get("callbacks") is None:
            return self._result(*await self._run_from(input, target, sink, head))
        from statehitl.graph.run_callbacks import observed_run  # a call with LangChain callbacks has langchain-core

        async def run(callbacks: Any) -> tuple[CheckpointRecord, Any]:  # the nodes' callbacks: the run's children
            config = {**{k: v for k, v in target.config.items() if k not in ("run_name", "run_id")},
                      "callbacks": callbacks}  # the run's own name and id are not its children's
            record, state = await self._run_from(input, dataclasses.replace(target, config=config), sink, head)
            return record, self._result(record, state)

        async def shown() -> str:  # the thread's current checkpoint as get_state names it
            now = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
            view = None if now is None else await self._views(target.thread).at(None, now)
            return "" if view is None else tagged(target.thread, view.id)

        resumes = head is not None and (input is None or isinstance(input, Command))
        with tracing():
            return await observed_run(target.config, input, name=self.get_name(), run=run, shown=shown,
                                      resumes=(target.checkpoint_id or "") if resumes else None,
                                      before=self.interrupt_before | target.before, output=self.traced_output)

    async def _run_from(self, input: Any, target: RunTarget, sink: StreamSink | None, head: Head | None
                        ) -> tuple[CheckpointRecord, Any]:
        if head is None and not self.machine.transitions[START][1]:  # a new run whose first step is fixed
            begun = await self._begin(input, target, head)
        else:  # paths run while the position is worked out: they see the run's config, store and step limit
            starting = set_run(RunScope(target.config, context=target.context, store=self.store,
                                        step_limit=target.limit))
            try:
                begun = await self._begin(input, target, head)
            finally:
                reset_run(starting)
        if isinstance(begun, Reached):  # nothing to run: a finished thread, a replayed end, an answer given before
            return begun.record, begun.state
        at, resumed = begun
        stream = None if sink is None else await self._stream(sink, at, head,
                                                              sync=(target.durability or self.durability) == "sync")
        control = target.control
        pauses = Pauses(self.interrupt_before | target.before, self.interrupt_after | target.after, resumed,
                        drained=None if control is None else lambda: control.drain_requested)
        token = set_run(RunScope(target.config, context=target.context, store=self.store, step_limit=target.limit,
                                 first_step=at.step, control=control, began=_began(at, head)))
        # None too, inside a streamed node's code: a graph run there streams nothing into it (and a run nobody
        # streams, outside one, leaves the context as it is: each node call's context costs by its size)
        streaming = enter_scope(stream) if stream is not None or current_scope() is not None else None
        shared = None if stream is None else LOOP_SHARED.set(True)  # its reader is served while sync nodes run
        try:
            if stream is not None:
                stream.begin(at.state, shown=not (at.start is not None and at.start.kind == "input"
                                                  and not at.start.update  # no chunk for an input of nothing
                                                  and not (isinstance(input, dict)  # (what it stores leaves out
                                                           and self.schema.untracked.intersection(input))))  # these)
            record, state = await self._runner.run(
                at,
                step_limit=target.limit,
                durability=target.durability or self.durability,
                invocation_state=target.invocation_state,
                pauses=pauses if pauses.before or pauses.after or control is not None else None,
                watch=stream,
                max_concurrency=target.max_concurrency,
                metadata=checkpoint_metadata(target.config),
                step_timeout=self.step_timeout,
            )
        finally:
            if shared is not None:
                LOOP_SHARED.reset(shared)
            if streaming is not None:
                leave_scope(streaming)
            reset_run(token)
        if stream is not None:
            stream.finish(record, self.snapshots.values(record, state) if record.status == "interrupted" else None)
        if control is not None and control.drain_requested and record.pending and not record.interrupts:
            raise GraphDrained(control.drain_reason or "shutdown")  # stopped between steps, its checkpoint written
        await self._runner.remember_shape(record)
        return record, state

    async def _stream(self, sink: StreamSink, at: Position, head: Head | None, *, sync: bool) -> RunStream:
        """The stream of a run from ``at``: its checkpoints too, when the graph has a checkpointer to show
        (``sync``: the run writes its beginning before its first step)."""
        checkpoints = None
        if self._own_store:
            put = functools.partial(sink.put, ())
            checkpoints = CheckpointEvents(self.snapshots, put, await self._origin(at, head),
                                           self._beginning(at, sync=sync))
        messages = None
        if "messages" in sink.modes:
            messages = _message_stream(lambda mode, chunk, namespace: sink.put(namespace, mode, chunk))
        return RunStream(sink, self.schema, self.machine, checkpoints=checkpoints, messages=messages)

    async def _origin(self, at: Position, head: Head | None) -> RunOrigin:
        """Where the run from ``at`` began, for the checkpoints stream (what a run's first record shows)."""
        views = ThreadViews(self.checkpointer, self.machine, self.schema, head.record.thread_id) if head else None
        follows_head = head is not None and at.cursor is not None and at.cursor.parent == head.record.seq
        if views is None or head is None:
            return RunOrigin(ThreadViews.empty(self.schema), at.state, None)
        parent = None
        current = None
        if follows_head:
            shown = await views.at(None, head)
            parent = (head.record.seq, shown.key, head.record.step, head.record.pending)
            current = shown if at.start is None else None  # a resume goes on from it: LangGraph shows it again
        before = self.schema.load(head.record.values) if follows_head and at.start and at.start.kind == "input" \
            else at.state
        return RunOrigin(before, at.state, parent, current)

    def _beginning(self, at: Position, *, sync: bool) -> CheckpointRecord | None:
        """The run's first record as far as it is known before the run (its number, parent and ``start``): what
        the checkpoints stream shows of how the run began before any node runs. ``sync``: that record is written
        before the first step (its own checkpoint is the first step's)."""
        if at.start is None or at.cursor is None:
            return None
        fields: dict[str, Any] = {"thread_id": at.cursor.thread_id, "seq": at.cursor.next_slot,
                                  "parent_seq": at.cursor.parent,
                  "created_at": time.time(), "machine": self.machine.name, "fingerprint": self.machine.fingerprint,
                  "status": "executing", "step": at.start.step + (0 if sync else 1), "start": at.start,
                  "parent_view": at.parent_view, "pending": list(at.start.pending) if sync else []}
        return CheckpointRecord.model_construct(**fields)

    def _result(self, record: CheckpointRecord, state: Any) -> Any:
        return self._returned(self.snapshots.values(record, state, self.output_schema), record.thread_id,
                              record.status, state, interrupts=[i.to_interrupt() for i in record.interrupts],
                              step=record.step, cancelled=record.cancelled, checkpoint_id=record.checkpoint_id)

    def result_of(self, result: GraphRunResult[Any]) -> Any:
        """What ``invoke`` returns for a run that ended with ``result`` inside another graph's node."""
        return self._returned(self.schema.kind.values(result.state, self.output_schema), result.thread_id,
                              result.status.value, result.state, interrupts=result.interrupts, step=result.step,
                              cancelled=result.cancelled, checkpoint_id=result.checkpoint_id)

    def _returned(self, values: Any, thread: str, status: str, state: Any, *, interrupts: list[Interrupt],
                  step: int, cancelled: dict[str, str], checkpoint_id: str) -> Any:
        """``invoke``'s value: the values as a ``GraphRunResult``; a root state's own value when nothing waits,
        else only what it waits on, as LangGraph returns it (the result's ``.state`` holds the value)."""
        if self.schema.kind.kind == "root" and not interrupts:
            return values
        return run_result(thread, status, state, interrupts=interrupts, step=step, cancelled=cancelled,
                          checkpoint_id=checkpoint_id, values=values if isinstance(values, dict) else {})

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached writes of ``nodes`` (of every cached node when None)."""
        if self.cache is not None:
            await self.cache.aclear(cached_namespaces(self._cached, nodes, self.machine))

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached writes of ``nodes`` (of every cached node when None); see ``aclear_cache``."""
        run_sync(self.aclear_cache(nodes))

    async def aaudit(self, thread_id: str) -> list[AuditEntry]:
        """Every answer given to the thread's interrupts, oldest first (see ``audit``)."""
        return await self.checkpointer.audit(validate_thread_id(thread_id))

    def audit(self, thread_id: str) -> list[AuditEntry]:
        """Every answer given to the thread's interrupts, oldest first: the interrupt, the reason shown,
        the response, who gave it and their comment, when, and its outcome. Kept through ``prune``."""
        return run_sync(self.aaudit(thread_id))

    def draw_mermaid(self) -> str:
        """The machine as a Mermaid flowchart."""
        return self.machine.draw_mermaid()

    def as_node(self, *, breakpoints: bool = False) -> StateGraphNode[Any]:
        """This app as a node of another machine (a Graph's node): ``statehitl.nesting``. ``breakpoints``: its
        ``interrupt_before``/``interrupt_after`` stop it there (a subgraph of a StateGraph, whose parent stops
        too); a node of a Strands Graph or Swarm runs through them."""
        pauses = Pauses(self.interrupt_before, self.interrupt_after) \
            if breakpoints and (self.interrupt_before or self.interrupt_after) else None
        return StateGraphNode(self.machine, self.schema.as_nested(), self.hooks, self.step_limit, self, pauses=pauses)

    def __repr__(self) -> str:
        return f"CompiledStateGraph({self.machine.name!r}, nodes={list(self.machine.nodes)})"

