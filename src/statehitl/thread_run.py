"""A thread's run: the step loop, with a checkpoint committed between steps and where the run stops.

``ThreadRun`` is one object per run of a thread (``Runner.run`` builds it). It writes the run's
checkpoints through the engine: a held checkpoint after every step that leaves nodes pending (carrying
the run's lease, unless ``durability="exit"``), and the checkpoint it stops on, which also updates the
thread's index entry. The first checkpoint it writes carries how the run began (a StateGraph's input,
which LangGraph shows as checkpoints of their own: no write of their own here) and the audit entries of
the answers a resume applied; with ``durability="sync"`` the beginning is written before the first step.
How each way of stopping is recorded (a breakpoint, the step limit, a failed step, a cancel, a crash of
the run itself) is here too.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Literal

from statehitl import observe
from statehitl.checkpoint.chain import Cursor
from statehitl.checkpoint.engine import Checkpointer, IndexNotWritten
from statehitl.checkpoint.records import AnswerRecord, RecordStatus, StoredCheckpoint
from statehitl.errors import CheckpointConflict, GraphRecursionError
from statehitl.machine import Machine
from statehitl.position import Position, RunEnd, Writes
from statehitl.refused_answers import withdraw_refused
from statehitl.run_loop import AfterStep, RunLoop
from statehitl.runner_parts import Pauses, StateAdapter, StepFailed, record_source, say_acted
from statehitl.step_run import StepExecutor
from statehitl.supersteps import stored_schedule
from statehitl.telemetry import RunTracer
from statehitl.transitions import CheckpointWritten

if TYPE_CHECKING:
    from statehitl.progress import Schedule


Durability = Literal["sync", "step", "exit"]
"""When checkpoints are written: ``sync`` fsyncs after every step; ``step`` (default) writes every step
and fsyncs the checkpoint ``invoke`` returns on; ``exit`` writes only that one."""

async def write_checkpoint(checkpointer: Checkpointer, machine: Machine, adapter: StateAdapter, cursor: Cursor, *,
                           step: int, state: Any, status: RecordStatus, durable: bool, tracer: RunTracer | None,
                           **fields: Any) -> StoredCheckpoint:
    """Commit one checkpoint of ``machine``'s thread at ``cursor``, in a span when traced."""
    source = fields.pop("source", None) or record_source(status, fields)
    commit = checkpointer.commit(cursor, state, adapter, durable=durable, status=status, machine=machine.name,
                                 fingerprint=machine.fingerprint, step=step, source=source, **fields)
    if tracer is None:
        record = await commit
    else:
        attributes = {"statehitl.thread_id": cursor.thread_id, "statehitl.status": status,
                      "statehitl.step": step, "statehitl.durable": durable}
        with tracer.span("checkpoint.commit", attributes) as span:
            record = await commit
            span.set_attribute("statehitl.checkpoint_id", record.checkpoint_id)
    if observe.observers:
        observe.emit(CheckpointWritten(record.seq, step, status, tuple(record.pending),
                                       tuple(i.name for i in record.interrupts)))
    return record


class ThreadRun(RunLoop):
    """One run of a thread from ``at`` (which carries the thread's cursor) to where it stops."""

    def __init__(self, executor: StepExecutor, at: Position, checkpointer: Checkpointer, *, step_limit: int,
                 durability: Durability, index: bool, pauses: Pauses | None, after_step: AfterStep | None,
                 tracer: RunTracer | None, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(executor, at, step_limit=step_limit, pauses=pauses, after_step=after_step)
        assert at.cursor is not None, "a thread's run starts at a position on the thread"
        self.cursor: Cursor = at.cursor
        self.checkpointer = checkpointer
        self.durability = durability
        self.index = index
        self.tracer = tracer
        self.answered = list(at.answered)
        """Audit entries of this resume's answers, until the first checkpoint after them carries them."""
        self.start = at.start
        """How the run began, until its first checkpoint carries it."""
        self.parent_view = at.parent_view
        self.metadata = metadata
        """What every checkpoint of the run carries of its config (LangGraph's metadata keys), if anything."""
        self.last: tuple[StoredCheckpoint, Any] | None = None
        """The last checkpoint this run wrote, and the state it holds."""
        self.index_error: Exception | None = None
        """Why the index entry of a checkpoint this run stored could not be written (the checkpoint is
        stored), raised once the run is done with the thread (``Runner.run``)."""

    async def write(self, step: int, state: Any, status: RecordStatus, *, durable: bool, held: bool = False,
                    **fields: Any) -> StoredCheckpoint:
        """Commit a checkpoint of this run. A held one is one the run goes on from; any other is the one it
        stops on, which also updates the thread's index entry. While a run acts on answers, its held
        checkpoints say so: should it stop without a checkpoint saying how, its next step's outcome is
        unknown."""
        executor, cursor = self.executor, self.cursor
        if held and cursor.acting is not None:
            fields["acting"] = cursor.acting
        if self.metadata:
            fields["metadata"] = self.metadata
        self._first_fields(fields)
        try:
            record = await write_checkpoint(self.checkpointer, executor.machine, executor.adapter, cursor, step=step,
                                            state=state, status=status, durable=durable, held=held,
                                            index=self.index and not held, tracer=self.tracer, **fields)
        except IndexNotWritten as stale:  # stored: the run goes on, and raises it once done with the thread
            record, self.index_error = stale.record, stale.error
        self.last = (record, state)
        if self.watch is not None:
            self.watch.committed(record, state)
        return record

    def _first_fields(self, fields: dict[str, Any], outcome: Literal["failed"] | None = None) -> None:
        """What only the first checkpoint written after them carries: the audit entries of the answers this
        resume applied (the audit trail, in the step's one write; ``outcome``: the step they were applied to
        failed, and the thread waits to be answered again), and how the run began."""
        if self.answered:
            records = [AnswerRecord.of(entry) for entry in self.answered]
            if outcome is not None:
                records = [record.model_copy(update={"outcome": outcome}) for record in records]
            fields["answered"] = records
            self.answered = []
        if self.start is not None:  # an "exit" run saves no checkpoint of its beginning: none is shown
            shown = self.durability != "exit"
            fields["start"] = self.start if shown else self.start.model_copy(update={"shown": False})
            self.start = None
        if self.parent_view is not None:
            fields["parent_view"] = self.parent_view
            self.parent_view = None

    async def between(self, step: int, state: Any, pending: list[str], applied: Writes,
                      schedule: Schedule | None) -> None:
        if self.durability != "exit":
            await self.write(step, state, "executing", durable=self.durability == "sync", held=True, pending=pending,
                             writes=self.executor.dumped(applied), schedule=stored_schedule(schedule))
        if self.after_step is not None or self.watch is not None:
            await self.seen(state, applied, pending)

    async def to_the_end(self) -> tuple[StoredCheckpoint, RunEnd]:
        """The run's steps, from its input checkpoint (when its policy has one) to the checkpoint it stops on."""
        at, executor = self.at, self.executor
        if at.start is not None and self.durability == "sync":
            # every step persisted before the next runs: the run's beginning too, before its first node
            await self.write(at.step, at.state, "executing", durable=True, held=True, pending=at.pending,
                             schedule=stored_schedule(at.schedule))
        end = await self.steps()
        dumped = executor.dumped(end.applied)
        if end.paused:  # a breakpoint: the thread waits, as on an interrupt, but on nothing to answer
            return await self.write(end.step, end.state, "interrupted", durable=True, pending=end.pending,
                                    writes=dumped, schedule=stored_schedule(end.schedule)), end
        if end.status == "executing":
            await self.write(end.step, end.state, "executing", durable=True, pending=end.pending,
                             schedule=stored_schedule(end.schedule))
            raise GraphRecursionError(
                f"thread {self.cursor.thread_id!r} ran {self.step_limit} steps without reaching END (next: "
                f"{end.pending}); if the loop is intended, raise step_limit= on compile() or invoke(); "
                "the thread is saved and invoke(None, thread_id=...) continues it"
            )
        return await self.write(end.step, end.state, end.status, durable=True, writes=dumped, **end.fields()), end

    async def failed(self, failed: StepFailed) -> None:
        """Record a failed step: the thread says where it failed and why, in a checkpoint no lease holds, so
        it reads as failed and ``invoke(None, ...)`` retries the step. The answers were acted on before the
        step failed, so the checkpoint carries their audit entries, as failed."""
        at = failed.position
        fields: dict[str, Any] = {}
        self._first_fields(fields, "failed")
        executor = self.executor
        with contextlib.suppress(IndexNotWritten):  # the step's own error is the one to report
            await write_checkpoint(self.checkpointer, executor.machine, executor.adapter, self.cursor, step=at.step,
                                   state=at.state, status="failed", durable=True, index=self.index,
                                   tracer=self.tracer, pending=at.pending, completed=at.completed,
                                   responses=at.responses, progress=at.progress, interrupts=at.waiting,
                                   error=failed.record(), schedule=stored_schedule(at.schedule), **fields)

    async def cancelled(self, *, acted: bool) -> None:
        """The run was cancelled (its stream closed early, its task cancelled): record where it stood, so that
        ``invoke(None, ...)`` goes on from there, in a checkpoint no lease holds. Stopped mid-step, the tasks
        that finished keep their updates (LangGraph's pending writes: not run again) and the others run
        again; but a task cut short in a run acting on answers may have acted on them, so then the checkpoint
        says so, as a run that stopped without saying how does (the claim's rule): the next call is told the
        outcome is unknown instead of running it again unasked. Cancelled before anything ran, a resume
        releases its claim (the answers stay bound) and a new run records its beginning."""
        executor, cursor = self.executor, self.cursor
        at = executor.step_at
        mid_step = at is not None
        if at is None:
            at = self.before
            if self.last is None and self.at.start is None:
                await self.crashed(asyncio.CancelledError(), acted=acted)
                return
        finished = executor.finished or {}
        fields: dict[str, Any] = {}
        if mid_step and acted and cursor.acting is not None:
            fields["acting"] = cursor.acting
        if at.waiting:
            fields["interrupts"] = at.waiting
        completed = {**at.completed, **{n: executor.adapter.dump_update(u) for n, u in finished.items()}}
        await self.write(at.step, at.state, "executing", durable=True, pending=at.pending,
                         schedule=stored_schedule(at.schedule),
                         completed=completed, responses=at.responses, progress=at.progress, **fields)

    async def crashed(self, failure: BaseException, *, acted: bool) -> None:
        """The run is over by an error of its own, but the thread may say "held until ...": release it, so
        it can be continued at once instead of after the lease runs out. A claim whose answers a node may
        have acted on (``acted``) stays: no checkpoint says what was done, so the action's outcome is unknown
        and the thread asks a human before anything runs again. A release that fails too (the store is down)
        leaves the lease to run out; the run's own error is the one to report."""
        if isinstance(failure, CheckpointConflict):
            return  # another process owns the thread now: leave its records alone
        cursor, executor = self.cursor, self.executor
        with contextlib.suppress(Exception):
            if self.last is not None and self.last[0].lease_until is not None:
                held, state = self.last
                acting = {} if cursor.acting is None else {"acting": cursor.acting}
                await write_checkpoint(self.checkpointer, executor.machine, executor.adapter, cursor, step=held.step,
                                       state=state, status="executing", durable=True, index=self.index,
                                       tracer=self.tracer, pending=held.pending, schedule=held.schedule, **acting)
            elif self.last is None and not (cursor.acting is not None and acted):
                # an answer refused on re-run: no door's answer may bind; withdrawn while the claim holds
                await withdraw_refused(self.checkpointer, self.at, failure)
                await self.checkpointer.release(cursor)
        say_acted(failure, cursor, acted=acted)  # a store error after acting must not say "nothing was done"
