"""``CompiledStateGraph``: a validated machine bound to hooks and a checkpointer, ready to invoke.

``invoke`` decides what the caller's input means for the thread (start, continue, or resume with
interrupt responses), checks it before anything is written, and hands the position to the runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from statehitl._sync import iterate_sync, run_sync
from statehitl.checkpoint import checkpoint_ids
from statehitl.checkpoint.answer_records import read_answers
from statehitl.checkpoint.audit import AuditEntry
from statehitl.checkpoint.engine import Checkpointer, Head
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.checkpoint.records import CheckpointRecord
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.errors import CheckpointNotFoundError, MachineChangedError, UnknownNodeError
from statehitl.event_stream import MODEL_TEXT, Emit, stream_run
from statehitl.graph.graph_state import GraphState
from statehitl.graph.node import StateGraphNode
from statehitl.graph.node_calls import RunScope, current_node, reset_run, set_run
from statehitl.graph.result import GraphRunResult, run_result
from statehitl.graph.run_targets import RunTarget, check_step_limit, resume_input, run_target
from statehitl.graph.snapshots import SnapshotReader, StateSnapshot, graph_config
from statehitl.graph.stream_events import (
    STREAM_MODES,
    StreamMode,
    checkpoint_events,
    message_events,
    ordered_sender,
    task_events,
)
from statehitl.graph.subgraphs import invoke_inside
from statehitl.hooks.registry import HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import Machine, describe_change
from statehitl.position import Position, Writes, resume_position, start_position
from statehitl.resumable import ResumableApp, Resumed
from statehitl.resume import ContinueRun, ResumeRun, plan_run
from statehitl.runner import Durability, Pauses, Runner
from statehitl.supersteps import plan_start, plan_step

__all__ = ["CompiledStateGraph", "Migration"]

M = TypeVar("M")
Migration = Callable[[dict[str, Any], str], dict[str, Any]]
"""``migrate(stored_values, stored_fingerprint) -> values``: converts a thread written by older code."""

class CompiledStateGraph(ResumableApp, Generic[M]):
    """A runnable StateGraph. Sync methods wrap the async ones (``ainvoke``, ``aget_state``, ...)."""

    def __init__(
        self,
        machine: Machine,
        schema: GraphState,
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
        keeps_state: bool = False,
    ) -> None:
        self.machine = machine
        self.name = machine.name
        self.schema = schema
        self.hooks = hooks
        self.checkpointer = checkpointer or Checkpointer(MemoryStorage())
        self._own_store = checkpointer is not None
        self.keeps_state = keeps_state
        """Compiled with ``checkpointer=True``: as a node of a graph, its state lasts from call to call."""
        self.step_limit = check_step_limit(step_limit)
        self.durability: Durability = durability if checkpointer is not None else "exit"
        self.accept_machine_change = accept_machine_change
        self.migrate = migrate
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.output_schema = output_schema
        self.subgraphs = subgraphs or {}
        """The nodes that are compiled graphs, by name (``get_state(config, subgraphs=True)`` reads into them)."""
        self.snapshots = SnapshotReader(machine, schema, self.subgraphs)
        self._runner = Runner(machine, schema, hooks, self.checkpointer, source=self, run_span="invoke_graph")

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
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        step_limit: int | None = None,
        durability: Durability | None = None,
        invocation_state: dict[str, Any] | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        context: Any = None,
    ) -> Any:
        """Run the thread and return its values (a dict, with ``"__interrupt__"`` when it stopped on interrupts).

        ``config``: LangGraph's ``{"configurable": {"thread_id": ..., "checkpoint_id": ...}, "recursion_limit":
        n}`` (or the thread id itself). ``input``:
        - a dict (or the state's type): a new run from START, on the thread's current state if it has one;
        - ``Command(resume=answer)`` (or ``{interrupt_id: answer}``), or a list of ``{"interruptResponse": {...}}``
          blocks: answers to the interrupts the thread waits on;
        - None: continue a run that stopped mid-way (a crash, the step limit, ``interrupt_before``), or apply
          answers stored by the inbox; with a ``checkpoint_id``, replay from that checkpoint (a fork).
        """
        node = current_node()
        if node is not None and not self._own_store and checkpoint_id is None:
            return await invoke_inside(self, input, node)  # called in a node's code: a subgraph of its graph
        return await self._run(input, run_target(
            config, thread_id, checkpoint_id, step_limit, self.step_limit, durability=durability,
            invocation_state=invocation_state, interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            context=context))

    def stream(self, input: Any, config: dict[str, Any] | str | None = None, **options: Any) -> Iterator[Any]:
        """Run as ``invoke`` does, yielding what happens as it happens (see ``astream``)."""
        return iterate_sync(self.astream(input, config, **options))

    async def astream(self, input: Any, config: dict[str, Any] | str | None = None, *,
                      stream_mode: StreamMode | Sequence[StreamMode] = "updates", thread_id: str | None = None,
                      checkpoint_id: str | None = None, step_limit: int | None = None,
                      durability: Durability | None = None, invocation_state: dict[str, Any] | None = None,
                      interrupt_before: Sequence[str] | None = None, interrupt_after: Sequence[str] | None = None,
                      context: Any = None, subgraphs: bool = False) -> AsyncIterator[Any]:
        """Run as ``ainvoke`` does, yielding chunks as LangGraph's ``stream`` does.

        ``stream_mode="updates"``: ``{node: update}`` as each node finishes, and ``{"__interrupt__": (...)}``
        when the run stops on interrupts. ``"values"``: the whole state, first as the run starts, then after
        each step. ``"custom"``: what nodes write with ``get_stream_writer()`` or their ``writer`` argument.
        A list of modes yields ``(mode, chunk)`` pairs; ``subgraphs=True`` yields ``(namespace, chunk)``
        (this graph's namespace is ``()``). The checkpoints are those ``invoke`` writes.
        """
        modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        unknown = [m for m in modes if m not in STREAM_MODES]
        if unknown or not modes:
            raise ValueError(f"stream_mode must be one of {list(STREAM_MODES)} or a list of them, got "
                             f"{stream_mode!r}")
        paired = not isinstance(stream_mode, str)
        target = run_target(config, thread_id, checkpoint_id, step_limit, self.step_limit, durability=durability,
                            invocation_state=invocation_state, interrupt_before=interrupt_before,
                            interrupt_after=interrupt_after, context=context)

        async def run(emit: Emit) -> Any:
            return await self._run(input, target, ordered_sender(emit, modes, paired, subgraphs), subgraphs)

        async for chunk in stream_run(run, None):
            yield chunk

    def _target(self, config: dict[str, Any] | str | None, checkpoint_id: str | None = None) -> RunTarget:
        return run_target(config, None, checkpoint_id, None, self.step_limit)

    async def _run(self, input: Any, target: RunTarget, send: Callable[..., None] | None = None,
                   subgraphs: bool = False) -> Any:
        thread = target.thread
        head = await self.checkpointer.head(thread, target.checkpoint_id)
        if target.checkpoint_id is not None and input is None and head is not None and not head.record.pending \
                and head.record.status == "completed":
            return self._result(head.record, self.schema.load(head.record.values))  # replaying an end: nothing to run
        at, resumed = await self._position(resume_input(input, head), thread, head)
        after_step = None
        updated = None
        if send is not None:
            send("values", self.schema.shown(at.state))

            async def after_step(state: Any, writes: Writes, pending: list[str]) -> None:
                if any(update for _, update in writes):  # a step that wrote nothing changed no value
                    send("values", self.schema.shown(state))
                await asyncio.sleep(0)  # the reader gets this step before the next one starts

            def updated(node: str, returned: Any) -> None:
                send("updates", {node: self.schema.shown_update(node, returned)})

        pauses = Pauses(self.interrupt_before | target.before, self.interrupt_after | target.after, resumed)
        scope = RunScope(target.config, None if send is None else lambda chunk: send("custom", chunk), updated,
                         tasks=None if send is None else task_events(self.schema, send), context=target.context,
                         sink=(lambda namespace, mode, chunk: send(mode, chunk, namespace))
                         if send is not None and subgraphs else None)
        token = set_run(scope)
        text = MODEL_TEXT.set(None if send is None else message_events(send))
        try:
            record, state = await self._runner.run(
                at,
                step_limit=target.limit,
                durability=target.durability or self.durability,
                invocation_state=target.invocation_state,
                after_step=after_step,
                pauses=pauses if pauses.before or pauses.after else None,
                on_commit=None if send is None else checkpoint_events(self.snapshots, send),
            )
        finally:
            MODEL_TEXT.reset(text)
            reset_run(token)
        if send is not None and record.status == "interrupted":
            asked = tuple(i.to_interrupt() for i in record.interrupts)
            send("updates", {"__interrupt__": asked})
            if asked and not self.schema.native:  # LangGraph's last values chunk says what the run waits on
                send("values", {**self.snapshots.values(record, state), "__interrupt__": asked})
        await self._runner.remember_shape(record)
        return self._result(record, state)

    def _result(self, record: CheckpointRecord, state: Any) -> Any:
        return self._returned(self.snapshots.values(record, state, self.output_schema), record.thread_id,
                              record.status, state, [i.to_interrupt() for i in record.interrupts], record.step,
                              record.cancelled, record.checkpoint_id)

    def result_of(self, result: GraphRunResult[Any]) -> Any:
        """What ``invoke`` returns for a run that ended with ``result`` inside another graph's node."""
        return self._returned(self.schema.kind.values(result.state, self.output_schema), result.thread_id,
                              result.status.value, result.state, result.interrupts, result.step, result.cancelled,
                              result.checkpoint_id)

    def _returned(self, values: Any, thread: str, status: str, state: Any, interrupts: list[Interrupt], step: int,
                  cancelled: dict[str, str], checkpoint_id: str) -> Any:
        """``invoke``'s value: the values (a root state's own value when nothing waits), as a ``GraphRunResult``."""
        if self.schema.kind.kind == "root" and not interrupts:
            return values
        return run_result(thread, status, state, interrupts, step, cancelled, checkpoint_id,
                          values if isinstance(values, dict) else {"root": values})

    async def _position(self, input: Any, thread: str, head: Head | None) -> tuple[Position, bool]:
        """Turn the caller's input into where the runner starts (and whether it continues a stopped run);
        reject misfits before any write.

        Continuing a stopped run (answering interrupts, or ``None`` after a crash) first claims the
        thread, so a second process doing the same gets ``CheckpointConflict`` before anything runs.
        """
        plan = plan_run(input, None if head is None else head.record, label=f"thread {thread!r}",
                        none_continues=True, lists_are_input=self.schema.kind.kind == "root", tagged_answers=True)
        if isinstance(plan, ResumeRun | ContinueRun):
            assert head is not None
            values, migrated = await self._stored_values(head, resuming=True)
            answers = plan.answers if isinstance(plan, ResumeRun) else {}
            return await resume_position(self.checkpointer, head, answers, self.schema.load(values),
                                         rewritten=migrated, meta=plan.meta if isinstance(plan, ResumeRun) else None
                                         ), True
        if head is None:
            state = self.schema.initial(input)
            pending, schedule = plan_start(self.machine, state)
            return start_position(None, thread, state, pending, schedule=schedule), False
        self.checkpointer.ensure_free(head, None)
        values, migrated = await self._stored_values(head, resuming=False)
        update = self.schema.input_update(input)
        state = self.schema.apply(self.schema.load(values), [("input", update)])
        pending, schedule = plan_start(self.machine, state)
        return start_position(head, thread, state, pending, rewritten=migrated, schedule=schedule), False

    async def _stored_values(self, head: Head, *, resuming: bool) -> tuple[dict[str, Any], bool]:
        """The head's values for this machine (migrated, accepted, or refused if the machine changed),
        and whether they were migrated (then the next checkpoint stores them whole).

        Continuing a stopped run on changed code is refused unless the app opted in, because the
        position (which nodes to re-enter) and the state may no longer mean what they meant.
        """
        record = head.record
        if record.fingerprint == self.machine.fingerprint:
            return record.values, False
        if self.migrate is not None:
            return self.migrate(dict(record.values), record.fingerprint), True
        if self.accept_machine_change or not resuming:
            return record.values, False
        old = await self.checkpointer.machine_shape(record.fingerprint)
        raise MachineChangedError(
            f"thread {record.thread_id!r} stopped at checkpoint {record.checkpoint_id} under a different "
            f"version of machine {record.machine!r}: {describe_change(old, self.machine.shape())}. Pass "
            "accept_machine_change=True to compile() to continue it anyway, or migrate=fn(values, "
            "old_fingerprint) to convert its stored state"
        )

    async def aupdate_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        """Write a new checkpoint as if a node had returned ``values`` (merged through the reducers).

        Without ``as_node`` the thread keeps its position and status (a human editing the state of a
        waiting thread); with it, the thread moves on along ``as_node``'s transitions. A config naming an
        earlier checkpoint forks the thread there. Returns the new checkpoint's config when given a config
        (LangGraph's way), its snapshot when given a thread id.
        """
        target = self._target(config)
        head = await self.checkpointer.head(target.thread, target.checkpoint_id)
        if head is None:
            raise CheckpointNotFoundError(f"thread {target.thread!r} has no checkpoint to update")
        if as_node is not None and as_node not in self.machine.nodes:
            raise UnknownNodeError(f"as_node {as_node!r} is not a node of {self.machine.name!r} "
                                   f"(its nodes: {sorted(self.machine.nodes)})")
        self.checkpointer.ensure_free(head, None)
        record = head.record
        writer = as_node or "update_state"
        update = self.schema.normalize_update(writer, values.model_dump(exclude_unset=True)
                                              if isinstance(values, BaseModel) else values)
        stored_values, migrated = await self._stored_values(head, resuming=False)
        state = self.schema.apply(self.schema.load(stored_values), [(writer, update)])
        position: dict[str, Any]
        if as_node is None:
            position = {"status": record.status, "pending": record.pending, "interrupts": record.interrupts,
                        "completed": record.completed, "responses": record.responses,
                        "progress": record.progress, "error": record.error, "schedule": record.schedule}
        else:
            pending, schedule = plan_step(self.machine, self.schema.apply, state, [(as_node, {})], record.schedule)
            position = {"status": "executing" if pending else "completed", "pending": pending, "schedule": schedule}
        # an update is a step of its own, as in LangGraph, except on a thread waiting on interrupts that keeps its
        # position: the ids of the interrupts it waits on derive from the step they were raised in
        step = record.step if as_node is None and record.interrupts else record.step + 1
        stored = await self._runner.commit_update(head.cursor, step, state, writer, update, rewritten=migrated,
                                                  **position)
        if target.named:
            return graph_config(target.thread, stored.checkpoint_id)
        return self.snapshots.snapshot(await self.checkpointer.get(target.thread, stored.seq))

    def update_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        """Write a new checkpoint as if a node had returned ``values``; see ``aupdate_state``."""
        return run_sync(self.aupdate_state(config, values, as_node))

    async def abulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> Any:
        """Several ``update_state`` calls in order, each ``StateUpdate``-like ``(values, as_node)`` pair."""
        result: Any = config
        for superstep in supersteps:
            for update in superstep:
                values, as_node = (update.values, update.as_node) if hasattr(update, "values") else update
                result = await self.aupdate_state(result, values, as_node)
        return result

    def bulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> Any:
        """Several ``update_state`` calls in order; see ``abulk_update_state``."""
        return run_sync(self.abulk_update_state(config, supersteps))

    # -- inspecting -------------------------------------------------------------------------------

    async def aget_state(self, config: dict[str, Any] | str, checkpoint_id: str | None = None, *,
                         subgraphs: bool = False) -> StateSnapshot[Any] | None:
        """The thread's latest checkpoint (or the one named), or None if the thread was never run.
        ``subgraphs=True``: a task that is a subgraph stopped inside has its snapshot as ``task.state``."""
        target = self._target(config, checkpoint_id)
        if target.checkpoint_id is not None:
            return self.snapshots.snapshot(await self.checkpointer.get(target.thread, target.checkpoint_id), subgraphs)
        head = await self.checkpointer.head(target.thread)
        if head is None:
            return None
        snapshot = self.snapshots.snapshot(head.record, subgraphs)
        if head.record.status == "interrupted":
            answers = head.answers if head.answers is not None else await read_answers(self.checkpointer, head.record)
            snapshot.answers.update(answers)
        return snapshot

    def get_state(self, config: dict[str, Any] | str, checkpoint_id: str | None = None, *,
                  subgraphs: bool = False) -> StateSnapshot[Any] | None:
        """The thread's latest checkpoint (or the one ``config`` or ``checkpoint_id`` names), or None if the
        thread was never run; see ``aget_state``."""
        return run_sync(self.aget_state(config, checkpoint_id, subgraphs=subgraphs))

    async def ahistory(self, config: dict[str, Any] | str) -> list[StateSnapshot[Any]]:
        """Every checkpoint of the thread, newest first."""
        target = self._target(config)
        return [self.snapshots.snapshot(r) for r in await self.checkpointer.history(target.thread)]

    def history(self, config: dict[str, Any] | str) -> list[StateSnapshot[Any]]:
        """Every checkpoint of the thread, newest first."""
        return run_sync(self.ahistory(config))

    async def aget_state_history(self, config: dict[str, Any] | str, *, filter: dict[str, Any] | None = None,
                                 before: dict[str, Any] | None = None, limit: int | None = None
                                 ) -> AsyncIterator[StateSnapshot[Any]]:
        """The thread's checkpoints, newest first (LangGraph's ``get_state_history``): ``before`` a
        checkpoint's config, only those whose metadata has ``filter``'s items, at most ``limit``."""
        given = None if before is None else before.get("configurable", {}).get("checkpoint_id")
        ceiling = None if given is None else checkpoint_ids.parse(self._target(config).thread, given)
        count = 0
        for snapshot in await self.ahistory(config):
            if ceiling is not None and int(snapshot.checkpoint_id) >= ceiling:
                continue
            if filter and any(snapshot.metadata.get(k) != v for k, v in filter.items()):
                continue
            if limit is not None and count >= limit:
                return
            count += 1
            yield snapshot

    def get_state_history(self, config: dict[str, Any] | str, *, filter: dict[str, Any] | None = None,
                          before: dict[str, Any] | None = None, limit: int | None = None
                          ) -> Iterator[StateSnapshot[Any]]:
        """The thread's checkpoints, newest first; see ``aget_state_history``."""
        return iterate_sync(self.aget_state_history(config, filter=filter, before=before, limit=limit))

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

    def get_graph(self, config: dict[str, Any] | None = None, *, xray: bool = False) -> Machine:
        """The machine (``get_graph().draw_mermaid()``, as LangGraph's drawable graph offers)."""
        return self.machine

    def as_node(self) -> StateGraphNode[Any]:
        """This app as a node of another machine (a Graph's node): ``statehitl.nesting``."""
        return StateGraphNode(self.machine, self.schema.as_nested(), self.hooks, self.step_limit, self)

    def __repr__(self) -> str:
        return f"CompiledStateGraph({self.machine.name!r}, nodes={list(self.machine.nodes)})"




