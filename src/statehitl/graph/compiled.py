"""``CompiledStateGraph``: a validated machine bound to hooks and a checkpointer, ready to invoke.

``invoke`` decides what the caller's input means for the thread (start, continue, or resume with
interrupt responses), checks it before anything is written, and hands the position to the runner.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from statehitl._sync import iterate_sync, run_sync
from statehitl.channels import StateSchema
from statehitl.checkpoint.answer_records import read_answers
from statehitl.checkpoint.audit import AuditEntry
from statehitl.checkpoint.engine import Checkpointer, Head
from statehitl.checkpoint.memory import MemoryStorage
from statehitl.checkpoint.records import CheckpointRecord, FailureRecord, StoredAnswer
from statehitl.checkpoint.storage import validate_thread_id
from statehitl.errors import CheckpointNotFoundError, MachineChangedError, UnknownNodeError
from statehitl.event_stream import Emit, stream_run
from statehitl.graph.node import StateGraphNode
from statehitl.graph.result import GraphRunResult, run_result
from statehitl.hooks.registry import HookRegistry
from statehitl.interrupt import Interrupt
from statehitl.machine import END, START, Machine, describe_change
from statehitl.position import Position, Writes, resume_position, start_position
from statehitl.resume import ContinueRun, ResumeRun, plan_run
from statehitl.runner import Durability, Runner
from statehitl.status import Status

__all__ = ["CompiledStateGraph", "StateSnapshot"]

M = TypeVar("M", bound=BaseModel)
StreamMode = Literal["updates", "values"]
Migration = Callable[[dict[str, Any], str], dict[str, Any]]
"""``migrate(stored_values, stored_fingerprint) -> values``: converts a thread written by older code."""

@dataclass
class StateSnapshot(Generic[M]):
    """One checkpoint of a thread as the app's types: what ``get_state`` and ``history`` return."""

    values: M
    next: tuple[str, ...]
    status: Status
    step: int
    interrupts: list[Interrupt]
    checkpoint_id: str
    parent_checkpoint_id: str | None
    created_at: float
    writes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cancelled: dict[str, str] = field(default_factory=dict)
    error: FailureRecord | None = None
    """Why the run failed, when a node raised: ``invoke(None, thread_id=...)`` retries that step."""
    answers: dict[str, StoredAnswer] = field(default_factory=dict)
    """Answers stored for ``interrupts`` and not yet applied, by interrupt id (the inbox, the page or an
    expiry answered; ``invoke(None, thread_id=...)`` or a worker applies them)."""


class CompiledStateGraph(Generic[M]):
    """A runnable StateGraph. Sync methods wrap the async ones (``ainvoke``, ``aget_state``, ...)."""

    def __init__(
        self,
        machine: Machine,
        schema: StateSchema[M],
        hooks: HookRegistry,
        checkpointer: Checkpointer | None,
        *,
        step_limit: int,
        durability: Durability,
        accept_machine_change: bool = False,
        migrate: Migration | None = None,
    ) -> None:
        self.machine = machine
        self.schema = schema
        self.hooks = hooks
        self.checkpointer = checkpointer or Checkpointer(MemoryStorage())
        self.step_limit = _check_step_limit(step_limit)
        self.durability: Durability = durability if checkpointer is not None else "exit"
        self.accept_machine_change = accept_machine_change
        self.migrate = migrate
        self._runner = Runner(machine, schema, hooks, self.checkpointer, source=self, run_span="invoke_graph")

    # -- running ----------------------------------------------------------------------------------

    def invoke(
        self,
        input: Any,
        thread_id: str | None = None,
        *,
        checkpoint_id: str | None = None,
        step_limit: int | None = None,
        durability: Durability | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> GraphRunResult[M]:
        """Run the thread: start or continue it with ``input``, or resume it with interrupt responses.

        - a dict / state model: a new run from START (on the thread's current state, merged through
          the reducers, if the thread exists and is not waiting on a human);
        - a list of ``{"interruptResponse": {...}}``: answers to the pending interrupts;
        - None: continue a run that stopped mid-way (a crash, or the step limit).

        ``checkpoint_id`` runs from an earlier checkpoint instead of the latest: time travel. The new
        checkpoints fork from it; the old branch stays in the history.
        """
        return run_sync(self.ainvoke(input, thread_id, checkpoint_id=checkpoint_id, step_limit=step_limit,
                                     durability=durability, invocation_state=invocation_state))

    async def ainvoke(
        self,
        input: Any,
        thread_id: str | None = None,
        *,
        checkpoint_id: str | None = None,
        step_limit: int | None = None,
        durability: Durability | None = None,
        invocation_state: dict[str, Any] | None = None,
    ) -> GraphRunResult[M]:
        """Async ``invoke``."""
        return await self._run(input, thread_id, checkpoint_id, step_limit, durability, invocation_state, None)

    def stream(self, input: Any, thread_id: str | None = None, *, stream_mode: StreamMode | Sequence[StreamMode] =
               "updates", **options: Any) -> Iterator[Any]:
        """Run as ``invoke`` does, yielding what happens as it happens (see ``astream``)."""
        return iterate_sync(self.astream(input, thread_id, stream_mode=stream_mode, **options))

    async def astream(self, input: Any, thread_id: str | None = None, *,
                      stream_mode: StreamMode | Sequence[StreamMode] = "updates", checkpoint_id: str | None = None,
                      step_limit: int | None = None, durability: Durability | None = None,
                      invocation_state: dict[str, Any] | None = None) -> AsyncIterator[Any]:
        """Run as ``ainvoke`` does, yielding after each step, as LangGraph's ``stream`` does.

        ``stream_mode="updates"``: ``{node: update}`` for each node of each step, and
        ``{"__interrupt__": (Interrupt, ...)}`` when the run stops on interrupts. ``"values"``: the
        whole state, first as the run starts, then after each step. A list of modes yields ``(mode,
        chunk)`` pairs. The checkpoints are those ``invoke`` writes.
        """
        modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        unknown = [m for m in modes if m not in ("updates", "values")]
        if unknown or not modes:
            raise ValueError(f"stream_mode must be 'updates', 'values' or a list of them, got {stream_mode!r}")
        paired = not isinstance(stream_mode, str)

        async def run(emit: Emit) -> GraphRunResult[M]:
            def send(mode: StreamMode, chunk: Any) -> None:
                if mode in modes:
                    emit((mode, chunk) if paired else chunk)

            return await self._run(input, thread_id, checkpoint_id, step_limit, durability, invocation_state, send)

        async for chunk in stream_run(run, None):
            yield chunk

    async def _run(self, input: Any, thread_id: str | None, checkpoint_id: str | None, step_limit: int | None,
                   durability: Durability | None, invocation_state: dict[str, Any] | None,
                   send: Callable[[StreamMode, Any], None] | None) -> GraphRunResult[M]:
        thread = validate_thread_id(thread_id) if thread_id is not None else os.urandom(16).hex()
        limit = _check_step_limit(step_limit) if step_limit is not None else self.step_limit
        head = await self.checkpointer.head(thread, checkpoint_id)
        at = await self._position(input, thread, head)
        after_step = None
        if send is not None:
            send("values", at.state)

            async def after_step(state: M, writes: Writes, pending: list[str]) -> None:
                for node, update in writes:
                    send("updates", {node: update})
                send("values", state)
                await asyncio.sleep(0)  # the reader gets this step before the next one starts

        record, state = await self._runner.run(
            at,
            step_limit=limit,
            durability=durability or self.durability,
            invocation_state=invocation_state if invocation_state is not None else {},
            after_step=after_step,
        )
        if send is not None and record.interrupts:
            send("updates", {"__interrupt__": tuple(i.to_interrupt() for i in record.interrupts)})
        await self._runner.remember_shape(record)
        return run_result(thread, record.status, state, [i.to_interrupt() for i in record.interrupts], record.step,
                          record.cancelled, record.checkpoint_id)

    async def _position(self, input: Any, thread: str, head: Head | None) -> Position:
        """Turn the caller's input into where the runner starts; reject misfits before any write.

        Continuing a stopped run (answering interrupts, or ``None`` after a crash) first claims the
        thread, so a second process doing the same gets ``CheckpointConflict`` before anything runs.
        """
        plan = plan_run(input, None if head is None else head.record, label=f"thread {thread!r}",
                        none_continues=True, lists_are_input=False)
        if isinstance(plan, ResumeRun | ContinueRun):
            assert head is not None
            values, migrated = await self._stored_values(head, resuming=True)
            answers = plan.answers if isinstance(plan, ResumeRun) else {}
            return await resume_position(self.checkpointer, head, answers, self.schema.load(values),
                                         rewritten=migrated, meta=plan.meta if isinstance(plan, ResumeRun) else None)
        if head is None:
            state = self.schema.initial(input)
            return start_position(None, thread, state, self.machine.next_nodes(START, state))
        self.checkpointer.ensure_free(head, None)
        values, migrated = await self._stored_values(head, resuming=False)
        update = self.schema.normalize_update("input", input.model_dump(exclude_unset=True)
                                              if isinstance(input, BaseModel) else input)
        state = self.schema.apply(self.schema.load(values), [("input", update)])
        return start_position(head, thread, state, self.machine.next_nodes(START, state), rewritten=migrated)

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

    async def aupdate_state(
        self, thread_id: str, values: dict[str, Any] | M, *, as_node: str | None = None
    ) -> StateSnapshot[M]:
        """Write a new checkpoint as if a node had returned ``values`` (merged through the reducers).

        Without ``as_node`` the thread keeps its position and status (a human editing the state of a
        waiting thread); with it, the thread moves on along ``as_node``'s transitions.
        """
        head = await self.checkpointer.head(validate_thread_id(thread_id))
        if head is None:
            raise CheckpointNotFoundError(f"thread {thread_id!r} has no checkpoint to update")
        if as_node is not None and as_node not in self.machine.nodes:
            raise UnknownNodeError(f"as_node {as_node!r} is not a node of {self.machine.name!r} "
                                   f"(its nodes: {sorted(self.machine.nodes)})")
        self.checkpointer.ensure_free(head, None)
        record = head.record
        writer = as_node or "update_state"
        update = self.schema.normalize_update(writer, values.model_dump(exclude_unset=True)
                                              if isinstance(values, BaseModel) else values)
        values, migrated = await self._stored_values(head, resuming=False)
        state = self.schema.apply(self.schema.load(values), [(writer, update)])
        position: dict[str, Any]
        if as_node is None:
            position = {"status": record.status, "pending": record.pending, "interrupts": record.interrupts,
                        "completed": record.completed, "responses": record.responses,
                        "progress": record.progress, "error": record.error}
        else:
            pending = [n for n in dict.fromkeys(self.machine.next_nodes(as_node, state)) if n != END]
            position = {"status": "executing" if pending else "completed", "pending": pending}
        stored = await self._runner.commit_update(head.cursor, record.step, state, writer, update, rewritten=migrated,
                                                  **position)
        return self._snapshot(await self.checkpointer.get(thread_id, stored.seq))

    def update_state(
        self, thread_id: str, values: dict[str, Any] | M, *, as_node: str | None = None
    ) -> StateSnapshot[M]:
        """Write a new checkpoint as if a node had returned ``values``; see ``aupdate_state``."""
        return run_sync(self.aupdate_state(thread_id, values, as_node=as_node))

    # -- inspecting -------------------------------------------------------------------------------

    def _snapshot(self, record: CheckpointRecord) -> StateSnapshot[M]:
        return StateSnapshot(
            values=self.schema.load(record.values),
            next=tuple(record.pending),
            status=Status(record.status),
            step=record.step,
            interrupts=[i.to_interrupt() for i in record.interrupts],
            checkpoint_id=record.checkpoint_id,
            parent_checkpoint_id=None if record.parent_seq is None else f"{record.parent_seq:012d}",
            created_at=record.created_at,
            writes=record.writes,
            cancelled=record.cancelled,
            error=record.error,
        )

    async def aget_state(self, thread_id: str, checkpoint_id: str | None = None) -> StateSnapshot[M] | None:
        """The thread's latest checkpoint (or the one named), or None if the thread was never run."""
        thread = validate_thread_id(thread_id)
        if checkpoint_id is not None:
            return self._snapshot(await self.checkpointer.get(thread, checkpoint_id))
        head = await self.checkpointer.head(thread)
        if head is None:
            return None
        snapshot = self._snapshot(head.record)
        if head.record.status == "interrupted":
            answers = head.answers if head.answers is not None else await read_answers(self.checkpointer, head.record)
            snapshot.answers.update(answers)
        return snapshot

    def get_state(self, thread_id: str, checkpoint_id: str | None = None) -> StateSnapshot[M] | None:
        """The thread's latest checkpoint (or the one named), or None if the thread was never run."""
        return run_sync(self.aget_state(thread_id, checkpoint_id))

    async def ahistory(self, thread_id: str) -> list[StateSnapshot[M]]:
        """Every checkpoint of the thread, newest first."""
        return [self._snapshot(r) for r in await self.checkpointer.history(validate_thread_id(thread_id))]

    def history(self, thread_id: str) -> list[StateSnapshot[M]]:
        """Every checkpoint of the thread, newest first."""
        return run_sync(self.ahistory(thread_id))

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

    def as_node(self) -> StateGraphNode[M]:
        """This app as a node of another machine (a Graph's node): ``statehitl.nesting``."""
        return StateGraphNode(self.machine, self.schema, self.hooks, self.step_limit, self)

    def __repr__(self) -> str:
        return f"CompiledStateGraph({self.machine.name!r}, nodes={list(self.machine.nodes)})"


def _check_step_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"step_limit must be a positive int, got {limit!r}")
    return limit


